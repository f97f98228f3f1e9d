"""``cce workspace init|list``: write and show the workspace manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

workspace_app = typer.Typer(help="Manage a workspace: several codebases under one root, searched together.",
                            no_args_is_help=True)


def register(app: Any) -> None:
    app.add_typer(workspace_app, name="workspace")


@workspace_app.command()
def init(
    directory: Annotated[Path, typer.Argument(help="Workspace root (default: .).")] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing manifest.")] = False,
) -> None:
    """Detect the members under DIRECTORY and write DIRECTORY/.cce/workspace.yml."""
    from cce_core.services.workspace_manifest import create_manifest
    from cce_core.workspace.manifest import member_line

    written = create_manifest(directory, force=force)
    manifest = written.manifest
    typer.echo(f"Wrote {written.path}")
    typer.echo(f"workspace: {manifest.name}")
    typer.echo(f"members ({len(manifest.members)}):")
    for m in manifest.members:
        typer.echo(member_line(m))


@workspace_app.command(name="list")
def list_(
    directory: Annotated[Path, typer.Argument(help="Workspace root (default: .).")] = Path("."),
) -> None:
    """Show the members of the workspace and the dependency edges between them."""
    from cce_core.services.workspace_manifest import workspace_layout
    from cce_core.workspace.manifest import edge_line, member_line

    layout = workspace_layout(directory)
    manifest, graph = layout.manifest, layout.graph
    typer.echo(f"workspace: {manifest.name}")
    typer.echo(f"members ({len(manifest.members)}):")
    for m in manifest.members:
        typer.echo(member_line(m))
    typer.echo(f"edges ({len(graph.edges)}):")
    for e in graph.edges:
        typer.echo(edge_line(e))

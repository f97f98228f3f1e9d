"""``cce workspace init|list``: write and show the workspace manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

workspace_app = typer.Typer(
    name="workspace",
    help="Manage a workspace: several codebases under one root, searched together.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


def register(app: Any) -> None:
    app.add_typer(workspace_app, name="workspace")


@workspace_app.command()
def init(
    directory: Annotated[Path, typer.Argument(help="Workspace root (default: .).")] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing manifest.")] = False,
) -> None:
    """Detect the members under DIRECTORY and write DIRECTORY/.cce/workspace.yml."""
    from cce_core.foundation.errors import CceError
    from cce_core.workspace.manifest import build_manifest, manifest_path, member_line, save_manifest

    if not directory.is_dir():
        raise CceError(f"not a directory: {directory}")
    path = manifest_path(directory)
    if Path(path).exists() and not force:
        raise CceError(f"{path} already exists — pass --force to overwrite")
    manifest = build_manifest(directory)
    if not manifest.members:
        raise CceError("no workspace members detected under this root")
    save_manifest(manifest, directory)
    typer.echo(f"Wrote {path}")
    typer.echo(f"workspace: {manifest.name}")
    typer.echo(f"members ({len(manifest.members)}):")
    for m in manifest.members:
        typer.echo(member_line(m))


@workspace_app.command(name="list")
def list_(
    directory: Annotated[Path, typer.Argument(help="Workspace root (default: .).")] = Path("."),
) -> None:
    """Show the members of the workspace and the dependency edges between them."""
    from cce_core.workspace.manifest import build_graph, edge_line, load_manifest, member_line

    manifest = load_manifest(directory)
    graph = build_graph(directory, manifest)
    typer.echo(f"workspace: {manifest.name}")
    typer.echo(f"members ({len(manifest.members)}):")
    for m in manifest.members:
        typer.echo(member_line(m))
    typer.echo(f"edges ({len(graph.edges)}):")
    for e in graph.edges:
        typer.echo(edge_line(e))

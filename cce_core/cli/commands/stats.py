"""``cce stats``: summarise a store (or every workspace member)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cce_core.cli.options import IndexedDirOption, StoreOverridesDirOption
from cce_core.cli.shared import store_for_read


def register(app: typer.Typer) -> None:
    app.command(name="stats")(stats)


def stats(
    directory: Annotated[Path | None, typer.Argument(help="Indexed directory (same as --dir).")] = None,
    dir_: IndexedDirOption = None,
    store: StoreOverridesDirOption = None,
    workspace: Annotated[
        bool, typer.Option("--workspace", help="Per-member statistics of the workspace at DIRECTORY.")
    ] = False,
) -> None:
    """Summarise an index: chunks, files, tokens, and counts by language and kind."""
    from collections import Counter

    from cce_core.indexing.store import load_store

    if workspace:
        _stats_workspace(directory if directory is not None else dir_ if dir_ is not None else Path("."))
        return

    store_path = store_for_read(store, dir_ or directory)
    data = load_store(store_path)
    n = len(data.chunks)
    total_tokens = sum(c.token_count for c in data.chunks)
    by_lang = Counter(c.language for c in data.chunks)
    by_kind = Counter(c.kind for c in data.chunks)
    typer.echo(f"Store: {store_path}")
    typer.echo(f"  chunks         : {n}")
    typer.echo(f"  files          : {len(data.files)}")
    typer.echo(f"  avg token/chunk: {(total_tokens / n if n else 0.0):.1f}")
    typer.echo(f"  store size     : {data.size_bytes} bytes")
    typer.echo(f"  embedder       : {data.embedder}")
    typer.echo("  by language:")
    for lang in sorted(by_lang):
        typer.echo(f"    {lang:<12}: {by_lang[lang]}")
    typer.echo("  by kind:")
    for kind in sorted(by_kind):
        typer.echo(f"    {kind:<20}: {by_kind[kind]}")


def _stats_workspace(root: Path) -> None:
    from cce_core.services.workspace_stats import workspace_statistics
    from cce_core.workspace.manifest import edge_line

    stats = workspace_statistics(root)
    typer.echo(f"workspace: {stats.name}")
    for s in stats.members:
        typer.echo(f"  {s.name} (package {s.package})")
        typer.echo(f"    files : {s.files}")
        typer.echo(f"    chunks: {s.chunks}")
        for kind, n in s.by_kind.items():
            typer.echo(f"      {kind:<18}: {n}")
    typer.echo(f"totals: files {stats.total_files} · chunks {stats.total_chunks}")
    typer.echo(f"edges ({len(stats.edges)}):")
    for e in stats.edges:
        typer.echo(edge_line(e))

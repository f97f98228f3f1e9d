"""``cce stats``: summarise a store (or every workspace member)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cce_core.cli.shared import store_for_read


def register(app: typer.Typer) -> None:
    app.command(name="stats")(stats)


def stats(
    directory: Annotated[Path | None, typer.Argument(help="Indexed directory (same as --dir).")] = None,
    dir_: Annotated[Path | None, typer.Option("--dir", help="Indexed directory (default: .).")] = None,
    store: Annotated[Path | None, typer.Option(help="Store file (overrides --dir).")] = None,
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
    from cce_core.workspace.federation import load_member_stores, workspace_stats
    from cce_core.workspace.manifest import edge_line, load_graph_or_empty, load_manifest

    manifest = load_manifest(root)
    members = load_member_stores(root, manifest, None)
    graph = load_graph_or_empty(root, manifest)
    typer.echo(f"workspace: {manifest.name}")
    total_files = total_chunks = 0
    for s in workspace_stats(members):
        total_files += s.files
        total_chunks += s.chunks
        typer.echo(f"  {s.name} (package {s.package})")
        typer.echo(f"    files : {s.files}")
        typer.echo(f"    chunks: {s.chunks}")
        for kind, n in s.by_kind.items():
            typer.echo(f"      {kind:<18}: {n}")
    typer.echo(f"totals: files {total_files} · chunks {total_chunks}")
    typer.echo(f"edges ({len(graph.edges)}):")
    for e in graph.edges:
        typer.echo(edge_line(e))

"""``cce index DIR`` (and ``--workspace``): build or refresh the store and report what was indexed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from cce_core.cli.shared import command_host, require_dir
from cce_core.foundation.errors import CceError


def register(app: typer.Typer) -> None:
    app.command(name="index")(index)


def index(
    directory: Annotated[Path | None, typer.Argument(help="Repository to index (the workspace root with "
                                                     "--workspace, default: .).")] = None,
    store: Annotated[Path | None, typer.Option(help="Store file (default: DIR/.cce/index.cce).")] = None,
    embedder: Annotated[str, typer.Option(help="Embedder: hash (default) or any installed one, e.g. ollama.")] = "hash",
    allow_secrets: Annotated[
        bool, typer.Option("--allow-secrets", help="Index sensitive files and keep secrets verbatim (unsafe).")
    ] = False,
    no_metrics: Annotated[
        bool, typer.Option("--no-metrics", help="Do not append an index event to the metrics log.")
    ] = False,
    workspace: Annotated[
        bool, typer.Option("--workspace", help="Index every member of the workspace at DIRECTORY into its own store.")
    ] = False,
) -> None:
    """Walk DIRECTORY, chunk every file, embed the chunks and save the index."""
    from cce_core.cli.index_runs import index_one
    from cce_core.indexing.store import default_store_path

    if workspace:
        _index_workspace(directory if directory is not None else Path("."), embedder, allow_secrets, no_metrics)
        return
    if directory is None:
        raise CceError("index requires a directory (or pass --workspace)")
    require_dir(directory)
    host = command_host()
    emb = host.ready_embedder(embedder, "index")
    if allow_secrets:
        typer.echo(
            "warning: --allow-secrets set — secret protection is DISABLED; sensitive files will be indexed "
            "and secrets stored verbatim",
            err=True,
        )
    store_path = store if store is not None else default_store_path(directory)
    _data, stats = index_one(directory, store_path, host, emb, protect_secrets=not allow_secrets,
                             log_metrics=not no_metrics)
    typer.echo(f"Indexed {directory}")
    typer.echo(f"  files indexed     : {stats.files_indexed}")
    typer.echo(f"  files skipped     : {stats.files_skipped}")
    typer.echo(f"  sensitive skipped : {stats.sensitive_skipped}")
    typer.echo(f"  total chunks      : {stats.total_chunks}")
    typer.echo(f"  embedder          : {emb.name}")
    typer.echo(f"  store             : {store_path}")
    typer.echo(f"  elapsed           : {stats.seconds:.3f}s")


def _index_workspace(root: Path, embedder: str, allow_secrets: bool, no_metrics: bool) -> None:
    """Index each member exactly as ``cce index MEMBER`` would, then write the member graph."""
    from cce_core.cli.index_runs import MemberRun, check_member_dirs, index_workspace
    from cce_core.workspace.manifest import graph_path, load_manifest

    if not root.is_dir():
        raise CceError(f"not a directory: {root}")
    manifest = load_manifest(root)  # before plugin discovery: a bad manifest fails fast
    check_member_dirs(root, manifest)
    host = command_host()
    emb = host.ready_embedder(embedder, "index")
    if allow_secrets:
        typer.echo("warning: --allow-secrets set — secret protection is DISABLED for every member", err=True)
    typer.echo(f"Indexing workspace: {manifest.name}")

    def report(run: MemberRun) -> None:
        shown = os.path.join(str(root), run.path, *run.store_path.relative_to(root / run.path).parts)
        counts = f"files {run.stats.files_indexed:>4} · chunks {run.stats.total_chunks:>4}"
        typer.echo(f"  {run.name:<16} {counts} · {shown}")

    _manifest, graph, runs = index_workspace(root, host, emb, protect_secrets=not allow_secrets,
                                             log_metrics=not no_metrics, on_member=report)
    total_files = sum(r.stats.files_indexed for r in runs)
    total_chunks = sum(r.stats.total_chunks for r in runs)
    typer.echo(f"workspace totals: files {total_files} · chunks {total_chunks}")
    typer.echo(f"cross-member edges ({len(graph.edges)}) → {graph_path(root)}")

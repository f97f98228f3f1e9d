"""``cce index DIR`` (``--workspace``, ``--watch``, ``--rebuild``): build or refresh the store, report what went in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cce_core.cli.shared import command_host, require_dir
from cce_core.foundation.errors import CceError

if TYPE_CHECKING:
    from cce_core.hookspecs import Embedder
    from cce_core.indexing.indexer import IndexStats
    from cce_core.indexing.watch import DirectoryWatcher
    from cce_core.plugins.host import PluginHost


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
    plan: Annotated[
        bool, typer.Option("--plan", help="Only walk DIRECTORY and show what would be indexed and skipped; write "
                                          "nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --plan: print the plan as JSON.")] = False,
    allow_outside_root: Annotated[
        bool, typer.Option("--allow-outside-root", help="With --workspace: let this LOCAL manifest name members "
                                                        "outside the workspace root (never a published one).")
    ] = False,
    watch: Annotated[
        bool, typer.Option("--watch", help="After indexing, keep watching DIRECTORY and re-index changed files as "
                                           "they are saved (one line per pass; Ctrl-C stops).")
    ] = False,
    compact: Annotated[
        bool, typer.Option("--compact", help="Also rewrite the store as fresh segments, dropping the rows that "
                                             "re-indexes superseded (a later run does it on its own past a "
                                             "threshold).")
    ] = False,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Build the store from scratch, reusing nothing from the old one (after "
                                             "editing a pack, say); the old store keeps answering until the new "
                                             "one replaces it.")
    ] = False,
) -> None:
    """Walk DIRECTORY, chunk every file, embed the chunks and save the index."""
    from cce_core.cli.index_runs import index_one, redaction_line
    from cce_core.indexing.store import default_store_path

    if as_json and not plan:
        raise CceError("--json goes with --plan")
    if watch and (plan or workspace):
        raise CceError("--watch takes one directory to index; it does not go with --plan or --workspace")
    if compact and (plan or workspace):
        raise CceError("--compact takes one directory's store; it does not go with --plan or --workspace")
    if rebuild and plan:
        raise CceError("--rebuild writes a store; it does not go with --plan")
    if plan:
        _plan(directory, store, embedder, allow_secrets, workspace, as_json)
        return
    if workspace:
        _index_workspace(directory if directory is not None else Path("."), embedder, allow_secrets, no_metrics,
                         allow_outside_root, reuse=not rebuild)
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
    watcher = _start_watcher(directory, store_path, host, emb, not allow_secrets) if watch else None
    try:
        # A rebuild writes fresh segments beside the old ones and switches the manifest in one rename.
        _data, stats = index_one(directory, store_path, host, emb, protect_secrets=not allow_secrets,
                                 log_metrics=not no_metrics, compact=compact, reuse=not rebuild)
    except BaseException:
        if watcher is not None:
            watcher.close()
        raise
    typer.echo(f"Indexed {directory}")
    typer.echo(f"  files indexed     : {stats.files_indexed}")
    typer.echo(f"  files skipped     : {stats.files_skipped}")
    typer.echo(f"  sensitive skipped : {stats.sensitive_skipped}")
    if (redacted := redaction_line(stats)) is not None:  # only when something was redacted
        typer.echo(redacted)
    if stats.walk_errors:  # only when nonzero: the usual summary stays the family's
        typer.echo(f"  walk errors       : {stats.walk_errors}")
    typer.echo(f"  total chunks      : {stats.total_chunks}")
    typer.echo(f"  embedder          : {emb.name}")
    typer.echo(f"  store             : {store_path}")
    typer.echo(f"  elapsed           : {stats.seconds:.3f}s")
    _report_skips(stats)
    if watcher is not None:
        _keep_watching(watcher, directory)


def _start_watcher(directory: Path, store_path: Path, host: PluginHost, emb: Embedder,
                   protect_secrets: bool) -> DirectoryWatcher[IndexStats]:
    """The observer, started before the first index so a save made during it is not missed."""
    from cce_core.cli.index_runs import watch_pass
    from cce_core.indexing.watch import DirectoryWatcher, describe_pass

    def reindex(_changed: frozenset[str]) -> IndexStats:
        return watch_pass(directory, store_path, host, emb, protect_secrets=protect_secrets)

    def on_error(exc: BaseException) -> None:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        typer.echo(f"warning: re-index failed: {first} — still watching", err=True)

    watcher: DirectoryWatcher[IndexStats] = DirectoryWatcher(
        directory, reindex, on_pass=lambda report: typer.echo(describe_pass(report, report.result.total_chunks)),
        on_error=on_error, store_path=store_path)
    watcher.start()  # WatcherStopped (a CceError) when it cannot: the inotify limit, say
    return watcher


def _keep_watching(watcher: DirectoryWatcher[IndexStats], directory: Path) -> None:
    """Re-index after each burst of saves until Ctrl-C (exit 0) or the watcher dies (its error line, exit 1)."""
    typer.echo(f"watching {directory} for changes (Ctrl-C to stop)")
    try:
        watcher.run()
    except KeyboardInterrupt:
        typer.echo("stopped watching", err=True)
    finally:
        watcher.close()


def _report_skips(stats: IndexStats, member: str | None = None) -> None:
    """The skip counts by reason (stdout) and the unreadable-directory warning (stderr)."""
    from cce_core.cli.index_runs import skip_reason_line, walk_error_warning

    line = skip_reason_line(stats) if member is None else None
    if line:
        typer.echo(line)
    warning = walk_error_warning(stats, member)
    if warning:
        typer.echo(warning, err=True)


def _plan(directory: Path | None, store: Path | None, embedder: str, allow_secrets: bool, workspace: bool,
          as_json: bool) -> None:
    """``--plan``: walk only (the indexer's own walker), print what the run would take in and leave out."""
    import json

    from cce_core.cli.commands import write_utf8
    from cce_core.indexing.plan import plan_index
    from cce_core.indexing.store import default_store_path

    if workspace:
        raise CceError("--plan takes one directory; run it on each workspace member")
    if directory is None:
        raise CceError("index --plan requires a directory")
    require_dir(directory)
    host = command_host()
    dim = host.embedder(embedder).dim  # never contacted: the plan embeds nothing
    result = plan_index(directory, host, protect_secrets=not allow_secrets, embed_dim=dim,
                        store_path=store if store is not None else default_store_path(directory))
    if as_json:
        write_utf8(json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        write_utf8(result.render())


def _index_workspace(root: Path, embedder: str, allow_secrets: bool, no_metrics: bool,
                     allow_outside_root: bool = False, *, reuse: bool = True) -> None:
    """Index each member exactly as ``cce index MEMBER`` would, then write the member graph."""
    from cce_core.cli.index_runs import MemberRun, check_member_dirs, index_workspace
    from cce_core.workspace.manifest import graph_path, load_manifest

    if not root.is_dir():
        raise CceError(f"not a directory: {root}")
    opt_in = True if allow_outside_root else None  # None: the CCE_ALLOW_OUTSIDE_ROOT environment decides
    manifest = load_manifest(root, allow_outside_root=opt_in)  # before plugin discovery: a bad manifest fails fast
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
        _report_skips(run.stats, run.name)

    _manifest, graph, runs = index_workspace(root, host, emb, protect_secrets=not allow_secrets,
                                             log_metrics=not no_metrics, on_member=report,
                                             allow_outside_root=opt_in, reuse=reuse)
    total_files = sum(r.stats.files_indexed for r in runs)
    total_chunks = sum(r.stats.total_chunks for r in runs)
    typer.echo(f"workspace totals: files {total_files} · chunks {total_chunks}")
    typer.echo(f"cross-member edges ({len(graph.edges)}) → {graph_path(root)}")

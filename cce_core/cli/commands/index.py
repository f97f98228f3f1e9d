"""``cce index DIR`` (``--workspace``, ``--watch``, ``--rebuild``): build or refresh the store, report what went in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cce_core.cli.options import StoreDefaultOption, no_metrics_flag, watch_flag, workspace_flag
from cce_core.cli.shared import command_host, require_dir, store_for_write
from cce_core.foundation.errors import CceError

if TYPE_CHECKING:
    from cce_core.indexing.indexer import IndexStats
    from cce_core.indexing.watch import DirectoryWatcher
    from cce_core.services.index_project import WatchHooks


def register(app: typer.Typer) -> None:
    app.command(name="index")(index)


def index(
    directory: Annotated[Path | None, typer.Argument(help="Repository to index (the workspace root with "
                                                     "--workspace, default: .).")] = None,
    store: StoreDefaultOption = None,
    embedder: Annotated[str, typer.Option(help="Embedder: hash (default) or any installed one, e.g. ollama.")] = "hash",
    allow_secrets: Annotated[
        bool, typer.Option("--allow-secrets", help="Index sensitive files and keep secrets verbatim (unsafe).")
    ] = False,
    no_metrics: Annotated[bool, no_metrics_flag("an index")] = False,
    workspace: Annotated[bool, workspace_flag("Index every member of the workspace at DIRECTORY into its own "
                                              "store.")] = False,
    plan: Annotated[
        bool, typer.Option("--plan", help="Only walk DIRECTORY and show what would be indexed and skipped; write "
                                          "nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --plan: print the plan as JSON.")] = False,
    allow_outside_root: Annotated[
        bool, typer.Option("--allow-outside-root", help="With --workspace: let this LOCAL manifest name members "
                                                        "outside the workspace root (never a published one).")
    ] = False,
    watch: Annotated[bool, watch_flag("After indexing, keep watching DIRECTORY and re-index changed files as "
                                      "they are saved (one line per pass; Ctrl-C stops).")] = False,
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
    from cce_core.cli.index_runs import progress_bar, redaction_line
    from cce_core.services.index_project import index_project

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
    store_path = store_for_write(store, directory)
    run = index_project(directory, store_path, host, emb, protect_secrets=not allow_secrets,
                        log_metrics=not no_metrics, progress=progress_bar, compact=compact, reuse=not rebuild,
                        watch=_watch_lines() if watch else None)
    stats = run.stats
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
    if run.watcher is not None:
        _keep_watching(run.watcher, directory)


def _watch_lines() -> WatchHooks:
    """``--watch``: one stdout line per re-index pass, one stderr warning per failed one."""
    from cce_core.services.index_project import WatchHooks

    def on_pass(report: Any) -> None:
        from cce_core.indexing.watch import describe_pass

        typer.echo(describe_pass(report, report.result.total_chunks))

    def on_error(line: str) -> None:
        typer.echo(line, err=True)

    return WatchHooks(on_pass, on_error)


def _keep_watching(watcher: DirectoryWatcher[IndexStats], directory: Path) -> None:
    """Re-index after each burst of saves until Ctrl-C (exit 0) or the watcher dies (its error line, exit 1)."""
    try:  # from the line on: a Ctrl-C right after it is a stop too
        typer.echo(f"watching {directory} for changes (Ctrl-C to stop)")
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

    if workspace:
        raise CceError("--plan takes one directory; run it on each workspace member")
    if directory is None:
        raise CceError("index --plan requires a directory")
    require_dir(directory)
    host = command_host()
    dim = host.embedder(embedder).dim  # never contacted: the plan embeds nothing
    result = plan_index(directory, host, protect_secrets=not allow_secrets, embed_dim=dim,
                        store_path=store_for_write(store, directory))
    if as_json:
        write_utf8(json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        write_utf8(result.render())


def _index_workspace(root: Path, embedder: str, allow_secrets: bool, no_metrics: bool,
                     allow_outside_root: bool = False, *, reuse: bool = True) -> None:
    """Index each member exactly as ``cce index MEMBER`` would, then write the member graph."""
    from cce_core.cli.index_runs import progress_bar
    from cce_core.services.index_workspace import MemberRun, index_workspace

    def start(manifest: Any) -> None:
        if allow_secrets:
            typer.echo("warning: --allow-secrets set — secret protection is DISABLED for every member", err=True)
        typer.echo(f"Indexing workspace: {manifest.name}")

    def report(run: MemberRun) -> None:
        shown = os.path.join(str(root), run.path, *run.store_path.relative_to(root / run.path).parts)
        counts = f"files {run.stats.files_indexed:>4} · chunks {run.stats.total_chunks:>4}"
        typer.echo(f"  {run.name:<16} {counts} · {shown}")
        _report_skips(run.stats, run.name)

    opt_in = True if allow_outside_root else None  # None: the CCE_ALLOW_OUTSIDE_ROOT environment decides
    done = index_workspace(root, command_host, embedder, protect_secrets=not allow_secrets,
                           log_metrics=not no_metrics, progress=progress_bar, on_start=start, on_member=report,
                           allow_outside_root=opt_in, reuse=reuse)
    total_files = sum(r.stats.files_indexed for r in done.runs)
    total_chunks = sum(r.stats.total_chunks for r in done.runs)
    typer.echo(f"workspace totals: files {total_files} · chunks {total_chunks}")
    typer.echo(f"cross-member edges ({len(done.graph.edges)}) → {done.graph_file}")

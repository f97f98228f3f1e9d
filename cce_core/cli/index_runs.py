"""One index run the way the commands perform it: progress, the metrics event, workspace members.

`cce index`, `cce index --workspace`, `cce index --watch` and `cce init` all build stores; this
module holds the steps they share so each command only adds its own output.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_core.foundation.errors import CceError
from cce_core.hookspecs import Embedder
from cce_core.indexing.indexer import IndexStats, index_directory
from cce_core.indexing.store import StoreData, default_store_path
from cce_core.plugins.host import PluginHost


class progress_bar:
    """A rich progress bar on a terminal; silence when output is piped."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Callable[[int, int], None] | None:
        if not sys.stdout.isatty():
            return None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TimeElapsedColumn(), transient=True)
        self._bar.__enter__()
        self._task = self._bar.add_task(self.label, total=None)

        def update(done: int, total: int) -> None:
            self._bar.update(self._task, completed=done, total=total)

        return update

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def git_head(directory: Path) -> str | None:
    """The commit checked out in ``directory``, or None outside a git work tree (or without git)."""
    try:
        done = subprocess.run(["git", "-C", str(directory), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and sha else None


def log_index_event(directory: Path, store_path: Path, embedder_name: str, stats: IndexStats) -> None:
    """Append the `index` event beside the store (fail-open, like every metrics write)."""
    from cce_core.observability.metrics import IndexRecord, MetricsWriter, metrics_beside

    try:
        index_bytes = store_path.stat().st_size
    except OSError:
        index_bytes = 0
    MetricsWriter(metrics_beside(store_path)).log_index(IndexRecord(
        files_indexed=stats.files_indexed, chunks=stats.total_chunks, index_bytes=index_bytes,
        duration_ms=stats.seconds * 1000.0, embedder=embedder_name, full=True, sha=git_head(directory),
        source="local", sensitive_skipped=stats.sensitive_skipped,
    ))


def index_one(directory: Path, store_path: Path, host: PluginHost, embedder: Embedder, *, protect_secrets: bool,
              log_metrics: bool, label: str = "indexing",
              event_dir: Path | None = None, reuse: bool = True,
              compact: bool = False) -> tuple[StoreData, IndexStats]:
    """Build and save one store with a progress bar, then log its index event.

    ``reuse=False`` rebuilds every file; ``compact`` rewrites the store as fresh segments.
    """
    with progress_bar(label) as progress:
        data, stats = index_directory(directory, store_path, host, embedder, protect_secrets=protect_secrets,
                                      progress=progress, reuse=reuse, compact=compact)
    if store_path.resolve() == default_store_path(directory).resolve():
        # The directory's own store is now a local build: a pull marker no longer describes it.
        from cce_core.sync.service import forget_pull

        forget_pull(directory)
    if log_metrics:
        log_index_event(event_dir or directory, store_path, data.embedder or embedder.name, stats)
    return data, stats


def watch_pass(directory: Path, store_path: Path, host: PluginHost, embedder: Embedder, *,
               protect_secrets: bool) -> IndexStats:
    """One ``--watch`` pass: the same incremental index as ``cce index``, silent, with no metrics event.

    A pass runs after every burst of saves, so it logs nothing (the metrics log
    would fill with one index event per save); the first, full run did.
    """
    _data, stats = index_directory(directory, store_path, host, embedder, protect_secrets=protect_secrets)
    if store_path.resolve() == default_store_path(directory).resolve():
        from cce_core.sync.service import forget_pull

        forget_pull(directory)
    return stats


def skip_reason_line(stats: IndexStats) -> str | None:
    """``  skip reasons      : *.jsonl log 1 · not UTF-8 2`` — the counted skips by walker reason, or None."""
    from cce_core.indexing.walker import SkipReason

    parts = [f"{r.label} {stats.skip_counts[r.value]}" for r in SkipReason
             if r.tally in ("skipped", "walk_errors") and stats.skip_counts.get(r.value)]
    return f"  skip reasons      : {' · '.join(parts)}" if parts else None


def redaction_line(stats: IndexStats) -> str | None:
    """``  redacted          : 3 values (SECRET 2, AWS_ACCESS_KEY 1)`` — what the redactor replaced, or None.

    Counts cover the files read this run; files reused unchanged from the previous
    store were redacted when they were first indexed and are not re-read.
    """
    total = sum(stats.redactions.values())
    if not total:
        return None
    ordered = sorted(stats.redactions.items(), key=lambda kv: (-kv[1], kv[0]))
    by_label = ", ".join(f"{label} {n}" for label, n in ordered)
    noun = "value" if total == 1 else "values"
    reused = f" · in files read this run ({stats.reused_files} unchanged not re-read)" if stats.reused_files else ""
    return f"  redacted          : {total} {noun} ({by_label}){reused}"


def walk_error_warning(stats: IndexStats, member: str | None = None) -> str | None:
    """The stderr warning when directories could not be read (their files are missing from the store)."""
    if not stats.walk_errors:
        return None
    plural = "directory" if stats.walk_errors == 1 else "directories"
    scope = f" in member '{member}'" if member else ""
    return (f"warning: {stats.walk_errors} {plural}{scope} could not be read; files under them were NOT "
            "indexed — the index may be incomplete and may differ across machines")


def check_member_dirs(root: Path, manifest: Any) -> None:
    """Every member directory exists — checked before any store is written."""
    for m in manifest.members:
        if not (root / m.path).is_dir():
            raise CceError(f"member '{m.name}' has no directory at {root / m.path} — fix .cce/workspace.yml "
                           "or run `cce workspace init --force`")


@dataclass
class MemberRun:
    name: str
    path: str
    store_path: Path
    stats: IndexStats


def index_workspace(root: Path, host: PluginHost, embedder: Embedder, *, protect_secrets: bool, log_metrics: bool,
                    on_member: Callable[[MemberRun], None] | None = None,
                    allow_outside_root: bool | None = None, reuse: bool = True) -> tuple[Any, Any, list[MemberRun]]:
    """Index every member exactly as ``cce index MEMBER`` would, then write the member graph.

    Returns the manifest, the graph and one :class:`MemberRun` per member. A
    member outside the root is refused unless ``allow_outside_root`` (or, when
    None, the environment opt-in of ``load_manifest``) says otherwise.
    """
    from cce_core.workspace.manifest import build_graph, load_manifest, save_graph

    manifest = load_manifest(root, allow_outside_root=allow_outside_root)
    check_member_dirs(root, manifest)
    runs: list[MemberRun] = []
    for m in manifest.members:
        member_dir = root / m.path
        store_path = default_store_path(member_dir)
        _data, stats = index_one(member_dir, store_path, host, embedder, protect_secrets=protect_secrets,
                                 log_metrics=log_metrics, label=f"indexing {m.name}", event_dir=root, reuse=reuse)
        run = MemberRun(m.name, m.path, store_path, stats)
        runs.append(run)
        if on_member is not None:
            on_member(run)
    graph = build_graph(root, manifest)
    save_graph(graph, root)
    return manifest, graph, runs

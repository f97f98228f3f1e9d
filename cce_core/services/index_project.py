"""Index one project: build or refresh its store, retire a stale pull marker, record the ``index`` event.

``cce index``, ``cce index --watch``, ``cce init`` and the MCP server's
``--watch`` all build stores through here, so the rules after a build are
written once: a project's own store rebuilt locally is no longer the one a
sync pull installed (its pull marker goes), and a run that asked for metrics
appends one ``index`` event beside the store (never one per watch pass).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cce_core.indexing.indexer import IndexStats, index_directory
from cce_core.indexing.store import STORE_DIR, StoreData, default_store_path
from cce_core.sync import SYNC_MARKER_FILE

if TYPE_CHECKING:
    from cce_core.hookspecs import Embedder
    from cce_core.indexing.watch import DirectoryWatcher
    from cce_core.plugins.host import PluginHost

Progress = Callable[[int, int], None]
ProgressDisplay = Callable[[str], AbstractContextManager[Progress | None]]
"""A front-end's progress display for a labelled run (the CLI: a rich bar on a terminal)."""


@dataclass
class WatchHooks:
    """What a front-end wants told while ``--watch`` keeps the store fresh."""

    on_pass: Callable[[Any], None]  # indexing.watch pass report, after every re-index
    on_error: Callable[[str], None]  # the warning line of a failed re-index; watching goes on


@dataclass
class ProjectIndexRun:
    """One project's index run: the store it saved, its counts, and the watcher when asked to keep watching."""

    data: StoreData
    stats: IndexStats
    watcher: DirectoryWatcher[IndexStats] | None = None  # started before the build when watching


def reindex_failure_line(exc: BaseException) -> str:
    """The one warning line a failed ``--watch`` pass gets (the watcher keeps going)."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"warning: re-index failed: {first} — still watching"


def retire_pull_marker(directory: Path, store_path: Path) -> None:
    """After a local build of the directory's own store: a sync pull marker no longer describes it."""
    # Only a directory a pull wrote into has a marker: the usual index skips importing Sync (~30 ms).
    if store_path.resolve() == default_store_path(directory).resolve() and \
            (directory / STORE_DIR / SYNC_MARKER_FILE).exists():
        from cce_core.sync.service import forget_pull

        forget_pull(directory)


def log_index_event(directory: Path, store_path: Path, embedder_name: str, stats: IndexStats) -> None:
    """Append the ``index`` event beside the store (fail-open, like every metrics write)."""
    from cce_core.foundation.git_facts import head_sha
    from cce_core.observability.metrics import IndexRecord, MetricsWriter, metrics_beside

    try:
        index_bytes = store_path.stat().st_size
    except OSError:
        index_bytes = 0
    MetricsWriter(metrics_beside(store_path)).log_index(IndexRecord(
        files_indexed=stats.files_indexed, chunks=stats.total_chunks, index_bytes=index_bytes,
        duration_ms=stats.seconds * 1000.0, embedder=embedder_name, full=True, sha=head_sha(directory),
        source="local", sensitive_skipped=stats.sensitive_skipped,
    ))


def reindex_pass(directory: Path, store_path: Path, host: PluginHost, embedder: Embedder, *,
                 protect_secrets: bool) -> IndexStats:
    """One ``--watch`` pass: the same incremental index, silent, with no metrics event.

    A pass runs after every burst of saves, so it logs nothing (the metrics log
    would fill with one index event per save); the first, full run did.
    """
    _data, stats = index_directory(directory, store_path, host, embedder, protect_secrets=protect_secrets)
    retire_pull_marker(directory, store_path)
    return stats


def build_store(directory: Path, store_path: Path, host: PluginHost, embedder: Embedder, *, protect_secrets: bool,
                log_metrics: bool, progress: ProgressDisplay | None = None, label: str = "indexing",
                event_dir: Path | None = None, reuse: bool = True,
                compact: bool = False) -> tuple[StoreData, IndexStats]:
    """Build and save one store, then log its index event (``event_dir``: where the event's sha is read).

    ``reuse=False`` rebuilds every file; ``compact`` rewrites the store as fresh segments.
    """
    with (progress(label) if progress is not None else nullcontext()) as update:
        data, stats = index_directory(directory, store_path, host, embedder, protect_secrets=protect_secrets,
                                      progress=update, reuse=reuse, compact=compact)
    retire_pull_marker(directory, store_path)
    if log_metrics:
        log_index_event(event_dir or directory, store_path, data.embedder or embedder.name, stats)
    return data, stats


def index_project(directory: Path, store_path: Path, host: PluginHost, embedder: Embedder, *,
                  protect_secrets: bool, log_metrics: bool, progress: ProgressDisplay | None = None,
                  reuse: bool = True, compact: bool = False, watch: WatchHooks | None = None) -> ProjectIndexRun:
    """Index ``directory`` into ``store_path``; with ``watch``, a watcher started first keeps it fresh after.

    The watcher starts before the build so a save made during it is not
    missed; it is closed again when the build fails. The caller runs it.
    """
    watcher = _start_watcher(directory, store_path, host, embedder, protect_secrets, watch) if watch else None
    try:
        # A rebuild writes fresh segments beside the old ones and switches the manifest in one rename.
        data, stats = build_store(directory, store_path, host, embedder, protect_secrets=protect_secrets,
                                  log_metrics=log_metrics, progress=progress, reuse=reuse, compact=compact)
    except BaseException:
        if watcher is not None:
            watcher.close()
        raise
    return ProjectIndexRun(data, stats, watcher)


def _start_watcher(directory: Path, store_path: Path, host: PluginHost, embedder: Embedder, protect_secrets: bool,
                   hooks: WatchHooks) -> DirectoryWatcher[IndexStats]:
    from cce_core.indexing.watch import DirectoryWatcher

    def reindex(_changed: frozenset[str]) -> IndexStats:
        return reindex_pass(directory, store_path, host, embedder, protect_secrets=protect_secrets)

    watcher: DirectoryWatcher[IndexStats] = DirectoryWatcher(
        directory, reindex, on_pass=hooks.on_pass, on_error=lambda exc: hooks.on_error(reindex_failure_line(exc)),
        store_path=store_path)
    watcher.start()  # WatcherStopped (a CceError) when it cannot: the inotify limit, say
    return watcher

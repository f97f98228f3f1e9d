"""One index run the way the commands perform it: progress, the metrics event, workspace members.

`cce index`, `cce index --workspace` and `cce init` all build stores; this
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
              event_dir: Path | None = None) -> tuple[StoreData, IndexStats]:
    """Build and save one store with a progress bar, then log its index event."""
    with progress_bar(label) as progress:
        data, stats = index_directory(directory, store_path, host, embedder, protect_secrets=protect_secrets,
                                      progress=progress)
    if store_path.resolve() == default_store_path(directory).resolve():
        # The directory's own store is now a local build: a pull marker no longer describes it.
        from cce_core.sync.service import forget_pull

        forget_pull(directory)
    if log_metrics:
        log_index_event(event_dir or directory, store_path, data.embedder or embedder.name, stats)
    return data, stats


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
                    on_member: Callable[[MemberRun], None] | None = None) -> tuple[Any, Any, list[MemberRun]]:
    """Index every member exactly as ``cce index MEMBER`` would, then write the member graph.

    Returns the manifest, the graph and one :class:`MemberRun` per member.
    """
    from cce_core.workspace.manifest import build_graph, load_manifest, save_graph

    manifest = load_manifest(root)
    check_member_dirs(root, manifest)
    runs: list[MemberRun] = []
    for m in manifest.members:
        member_dir = root / m.path
        store_path = default_store_path(member_dir)
        _data, stats = index_one(member_dir, store_path, host, embedder, protect_secrets=protect_secrets,
                                 log_metrics=log_metrics, label=f"indexing {m.name}", event_dir=root)
        run = MemberRun(m.name, m.path, store_path, stats)
        runs.append(run)
        if on_member is not None:
            on_member(run)
    graph = build_graph(root, manifest)
    save_graph(graph, root)
    return manifest, graph, runs

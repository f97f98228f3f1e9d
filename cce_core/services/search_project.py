"""Search one project's code index: open it with the embedder that built it, rank, record the event.

The searcher honours the ranking profile (``--ranking``, ``CCE_RANKING_PROFILE``,
``ranking.profile`` in the project's config) and the stages the config turns
off; the event carries the profile that ran.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cce_core.services.plugin_warnings import Warn, warn_once_about_hooks

if TYPE_CHECKING:
    from cce_core.retrieval.searcher import Searcher


@dataclass(frozen=True)
class ProjectSearch:
    """The ranked results, the profile that ranked them and the event id (None: not recorded)."""

    results: list[Any]
    profile: str
    query_id: str | None


@dataclass(frozen=True)
class TimedSearch:
    """One ranking with what its event needs: the store searched and how long it took."""

    searcher: Searcher
    results: list[Any]
    latency_ms: float


def open_searcher(store_path: Path, ranking: str | None, warn: Warn) -> Searcher:
    """A searcher over the store at ``store_path`` with the embedder that built it.

    ``ranking`` is the profile as the user typed it (None when absent); it is
    resolved with the environment and the project's config, as are the
    disabled ranking stages.
    """
    from cce_core.indexing.store import load_store
    from cce_core.plugins.host import host_for_embedder
    from cce_core.retrieval.profiles import resolve_ranking, root_of_store
    from cce_core.retrieval.searcher import Searcher
    from cce_core.retrieval.store_embedder import embedder_for_store, store_embedder_name

    choice = resolve_ranking(ranking, root_of_store(store_path))
    data = load_store(store_path)
    # A search needs the embedder that built the store, not the language packs.
    host = host_for_embedder(store_embedder_name(data))
    host.require_healthy()
    warn_once_about_hooks(host, warn)
    return Searcher(data, embedder_for_store(host, data), profile=choice.profile, disabled_stages=choice.disabled)


def timed_search(searcher: Searcher, query: str, top_k: int, graph: bool) -> TimedSearch:
    started = time.perf_counter()
    results = searcher.search(query, top_k=top_k, graph=graph)
    return TimedSearch(searcher, results, (time.perf_counter() - started) * 1000.0)


def search_project(store_path: Path, query: str, *, top_k: int, graph: bool, ranking: str | None,
                   record_event: bool, warn: Warn) -> ProjectSearch:
    """Rank the store at ``store_path`` for ``query``; the event goes beside the store unless not wanted.

    A pack-drift note (the installed packs would chunk some files differently)
    goes to ``warn`` before the search.
    """
    from cce_core.indexing.pack_drift import search_warning

    searcher = open_searcher(store_path, ranking, warn)
    if (drift := search_warning(searcher.store)) is not None:
        warn(drift)
    run = timed_search(searcher, query, top_k, graph)
    query_id = None
    if record_event:
        # Imported only here: the event record and metrics modules cost a --no-metrics search ~4 ms.
        from cce_core.services.search_event import record_cli_search

        query_id = record_cli_search(store_path, searcher.store, run.results, query=query, top_k=top_k, graph=graph,
                                     latency_ms=run.latency_ms, ranking=searcher.profile)
    return ProjectSearch(run.results, searcher.profile, query_id)

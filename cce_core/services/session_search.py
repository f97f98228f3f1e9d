"""Search from a resident session (the MCP server): the code search with the session's cached index.

A session keeps the loaded index (or the workspace union) between queries,
falls back to a keyword-only ranking when the store's embedder is down, and
writes its events into its own metrics log. The ranking, the workspace scope
rules and the event are the ones ``cce search`` uses; only the caching and
the fallback belong to the session, which is passed in (see :class:`SearchSession`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from cce_core.foundation.errors import CceError
from cce_core.services.search_event import record_search


class SearchSession(Protocol):
    """What a session offers the search (``cce_core.agents.mcp_session.SessionState`` is one)."""

    workspace: bool
    root: Path
    metrics_path: Path
    ranking_profile: str
    disabled_stages: frozenset[str]  # the ranking stages the project's config turns off

    def load_index(self) -> Any: ...
    def query_searcher(self, loaded: Any, make: Any = None) -> tuple[Any, str | None]: ...
    def manifest(self) -> Any: ...
    def workspace_bundle(self, manifest: Any, scope: list[str] | None) -> Any: ...


@dataclasses.dataclass
class CodeSearch:
    """One code ranking before it is recorded and rendered (a ``both`` search blends it with knowledge)."""

    data: Any
    results: list[Any]
    rows: list[Any]  # observability.result_line.GrammarRow per result
    total: int
    notice: str | None  # the degradation notice when only keywords could rank
    latency_ms: float


@dataclasses.dataclass(frozen=True)
class NothingToSearch:
    """No ranking: ``reason`` is ``index`` (no code index), ``workspace`` (no manifest) or ``scope``."""

    reason: str
    message: str = ""  # for ``scope``: the federation's own words (unknown member, unindexed member)


class _KeywordOnly:
    """The degraded BM25-only ranking behind the searcher interface ``federated_search`` calls."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def search(self, query: str, top_k: int, graph: bool = True) -> list[Any]:
        from cce_core.retrieval.single_signal import bm25_only_search

        return bm25_only_search(self.data, query, top_k)


def session_code_search(session: SearchSession, query: str, top_k: int, graph: bool,
                        package: str | None) -> CodeSearch | NothingToSearch:
    """Rank the session's code index, or its workspace union scoped by ``package``."""
    if session.workspace:
        return _workspace_search(session, query, top_k, graph, package)
    loaded = session.load_index()
    if loaded is None:
        return NothingToSearch("index")
    searcher, notice = session.query_searcher(loaded)
    ranker = searcher if searcher is not None else _KeywordOnly(loaded.data)
    started = time.perf_counter()
    results = ranker.search(query, top_k=top_k, graph=graph)
    latency_ms = (time.perf_counter() - started) * 1000.0
    from cce_core.observability.result_line import GrammarRow

    rows = [GrammarRow.from_result(r) for r in results]
    return CodeSearch(loaded.data, results, rows, len(loaded.data.chunks), notice, latency_ms)


def _workspace_search(session: SearchSession, query: str, top_k: int, graph: bool,
                      package: str | None) -> CodeSearch | NothingToSearch:
    """One ranking over the in-scope members, rows labelled by package, the event in the root log."""
    from cce_core.services.search_workspace import rank_members
    from cce_core.workspace.federation import FederatedSearcher, check_same_embedder, parse_scope
    from cce_core.workspace.manifest import load_graph_or_empty

    try:
        manifest = session.manifest()
    except CceError:
        return NothingToSearch("workspace")
    try:
        scope = parse_scope(package)
        bundle = session.workspace_bundle(manifest, scope)
        check_same_embedder(bundle.members)
        loaded = bundle.union
    except CceError as exc:  # empty or unknown scope, an unindexed member: guidance, not a failure
        return NothingToSearch("scope", str(exc))
    ws_graph = load_graph_or_empty(session.root, manifest)
    searcher, notice = session.query_searcher(
        loaded, lambda data, embedder: FederatedSearcher(data, embedder, ws_graph, profile=session.ranking_profile,
                                                         disabled_stages=session.disabled_stages))
    if searcher is not None:
        searcher.graph = ws_graph  # the member graph is re-read per call, like the manifest
        ranked = rank_members(searcher, bundle.members, query, top_k, graph)
    else:
        ranked = rank_members(_KeywordOnly(loaded.data), bundle.members, query, top_k, graph)
    from cce_core.observability.result_line import GrammarRow

    # The federated results carry member-namespaced chunks, so the event and the ledger name `member/path`;
    # the rows show the package and the path inside it.
    rows = [dataclasses.replace(GrammarRow.from_result(r, r.package), file_path=r.file_path) for r in ranked.results]
    return CodeSearch(loaded.data, ranked.results, rows, bundle.total_chunks, notice, ranked.latency_ms)


def record_session_search(session: SearchSession, found: CodeSearch, *, query: str, top_k: int, graph: bool,
                          served_bodies: Sequence[str] | None, knowledge_results: int = 0) -> tuple[Any, str | None]:
    """The session's ``search`` event (source ``mcp``); (the record, its id or None)."""
    return record_search(session.metrics_path, found.data, found.results, query=query, top_k=top_k, graph=graph,
                         latency_ms=found.latency_ms, source="mcp", ranking=session.ranking_profile,
                         knowledge_results=knowledge_results, served_bodies=served_bodies)

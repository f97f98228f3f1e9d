"""Search every member of a workspace (or the ``--package`` scope) as one index.

The members' stores become one in-memory union ranked once, with the member
dependency graph for expansion; every member must have been built with the
same embedder. Like the reference, a workspace search records no metrics
event; its JSON still carries a fresh id.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_core.services.plugin_warnings import Warn, healthy_host


@dataclass(frozen=True)
class WorkspaceSearch:
    results: list[Any]  # workspace.federation.FedResult
    profile: str
    query_id: str


@dataclass(frozen=True)
class WorkspaceRanking:
    results: list[Any]
    latency_ms: float


def rank_members(searcher: Any, members: list[Any], query: str, top_k: int, graph: bool) -> WorkspaceRanking:
    """One timed federated ranking; ``searcher`` is a ``FederatedSearcher`` or anything with its ``search``."""
    from cce_core.workspace.federation import federated_search

    started = time.perf_counter()
    results = federated_search(searcher, members, query, top_k, graph)
    return WorkspaceRanking(results, (time.perf_counter() - started) * 1000.0)


def search_workspace(root: Path, query: str, package: str | None, *, top_k: int, graph: bool,
                     ranking: str | None, warn: Warn) -> WorkspaceSearch:
    """Rank the in-scope members of the workspace at ``root`` for ``query``."""
    from cce_core.observability.metrics import new_event_id
    from cce_core.retrieval.profiles import resolve_ranking
    from cce_core.retrieval.store_embedder import embedder_for_store
    from cce_core.workspace.federation import (
        FederatedSearcher,
        check_same_embedder,
        combined_store,
        load_member_stores,
        parse_scope,
    )
    from cce_core.workspace.manifest import load_graph_or_empty, load_manifest

    manifest = load_manifest(root)
    members = load_member_stores(root, manifest, parse_scope(package))
    check_same_embedder(members)
    ws_graph = load_graph_or_empty(root, manifest)
    union = combined_store(members)
    host = healthy_host(warn)
    embedder = embedder_for_store(host, members[0].data) if members else host.embedder("hash")
    choice = resolve_ranking(ranking, root)
    searcher = FederatedSearcher(union, embedder, ws_graph, profile=choice.profile, disabled_stages=choice.disabled)
    ranked = rank_members(searcher, members, query, top_k, graph)
    return WorkspaceSearch(ranked.results, choice.profile, new_event_id())

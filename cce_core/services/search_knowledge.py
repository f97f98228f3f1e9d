"""Search a project's knowledge store, alone or blended with its code index by one score.

``knowledge`` alone records no event and returns no query id; ``both``
records the code search's event with the number of knowledge sections shown
beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_core.foundation.errors import CceError
from cce_core.services.plugin_warnings import Warn


@dataclass(frozen=True)
class KnowledgeSearch:
    """The merged rows (code and knowledge, best first), the event id and how record ids are shown."""

    root: Path
    rows: list[Any]  # knowledge.blend.Blended
    query_id: str | None
    secrets_profile: str


@dataclass(frozen=True)
class BlendedRows:
    """Code results and knowledge hits merged by score, and how many knowledge sections made the cut."""

    rows: list[Any]  # knowledge.blend.Blended, best first
    knowledge_shown: int  # the ``knowledge_results`` of the search event


def blend(code_results: list[Any], hits: list[Any], top_k: int) -> BlendedRows:
    """One ranking of both pools, cut at ``top_k`` (the rule every front-end's ``both`` search follows)."""
    from cce_core.knowledge.blend import merge

    rows = merge(code_results, hits, top_k)
    return BlendedRows(rows, sum(1 for row in rows if row.is_knowledge))


def search_with_knowledge(root: Path, query: str, source: str, *, top_k: int, graph: bool, ranking: str | None,
                          record_event: bool, warn: Warn) -> KnowledgeSearch:
    """``source`` is ``knowledge`` or ``both``; refused when the project turned knowledge off."""
    from cce_core.foundation.config import load_config
    from cce_core.indexing.store import default_store_path
    from cce_core.knowledge.blend import search_knowledge
    from cce_core.knowledge.store import load_store
    from cce_core.services.search_event import record_cli_search
    from cce_core.services.search_project import open_searcher, timed_search

    config = load_config(root)
    if not config.knowledge_enabled:
        raise CceError("knowledge is disabled (knowledge.enabled: false in .cce/config)")
    hits = search_knowledge(load_store(root), query, top_k, config.knowledge_min_score)
    if source != "both":
        return KnowledgeSearch(root, blend([], hits, top_k).rows, None, config.secrets_profile)
    store_path = default_store_path(root)
    run = timed_search(open_searcher(store_path, ranking, warn), query, top_k, graph)
    blended = blend(run.results, hits, top_k)
    query_id = None
    if record_event:
        query_id = record_cli_search(store_path, run.searcher.store, run.results, query=query, top_k=top_k,
                                     graph=graph, latency_ms=run.latency_ms, knowledge_results=blended.knowledge_shown,
                                     ranking=run.searcher.profile)
    return KnowledgeSearch(root, blended.rows, query_id, config.secrets_profile)

"""Record one answered search in the metrics log: the event every front-end writes the same way.

The CLI writes it beside the store (``source: cli``), the MCP server into the
session's log (``source: mcp``, with the bodies it actually served); the
fields, the savings buckets and the ranking profile come from one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cce_core.observability.search_record import build_search_record


def record_search(metrics_path: Path, data: Any, results: Sequence[Any], *, query: str, top_k: int, graph: bool,
                  latency_ms: float, source: str, ranking: str, knowledge_results: int = 0,
                  served_bodies: Sequence[str] | None = None) -> tuple[Any, str | None]:
    """Append the ``search`` event for ``results`` ranked from store ``data``; (the record, its id or None).

    The id is None when the write failed (metrics are fail-open).
    """
    from cce_core.observability.metrics import MetricsWriter

    record = build_search_record(results, data.file_tokens, query, top_k, graph, data.embedder or "hash",
                                 latency_ms, source=source, served_bodies=served_bodies,
                                 knowledge_results=knowledge_results, ranking=ranking)
    return record, MetricsWriter(metrics_path).log_search(record)


def record_cli_search(store_path: Path, data: Any, results: Sequence[Any], *, query: str, top_k: int, graph: bool,
                      latency_ms: float, ranking: str, knowledge_results: int = 0) -> str | None:
    """The CLI's event, beside the store it searched; its id, or None when the write failed."""
    from cce_core.observability.metrics import metrics_beside

    _record, query_id = record_search(metrics_beside(store_path), data, results, query=query, top_k=top_k,
                                      graph=graph, latency_ms=latency_ms, source="cli", ranking=ranking,
                                      knowledge_results=knowledge_results)
    return query_id

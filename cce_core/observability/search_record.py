"""One answered query → the ``search`` metrics record with its savings buckets.

Kept apart from :mod:`cce_core.observability.savings` (the bucket arithmetic)
because it needs both the metrics record type and the result-line grammar,
which themselves build on the buckets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cce_core.foundation.textrules import estimate_tokens, plain_sum
from cce_core.observability.metrics import SearchRecord
from cce_core.observability.result_line import grammar_savings_for_results
from cce_core.observability.savings import LOW_CONFIDENCE_THRESHOLD


def build_search_record(results: Sequence[Any], file_tokens: Mapping[str, int], query: str, top_k: int,
                        graph_enabled: bool, embedder: str, latency_ms: float, source: str = "cli",
                        served_bodies: Sequence[str] | None = None, knowledge_results: int = 0,
                        ranking: str = "family") -> SearchRecord:
    """The :class:`~cce_core.observability.metrics.SearchRecord` for one answered query.

    ``results`` are :class:`~cce_core.retrieval.searcher.SearchResult` objects in rank
    order; ``file_tokens`` the store's whole-file token counts. When the caller
    served compressed bodies, ``served_bodies`` holds them (one per result) and
    feeds the chunk_compression bucket; ``None`` means full bodies were served.
    ``knowledge_results`` counts the knowledge sections served beside the code
    results (a ``both`` search); they add no savings, only a count.
    """
    from cce_core.observability.metrics import SearchRecord

    baseline = 0
    seen: set[str] = set()
    for r in results:
        path = r.chunk.file_path
        if path not in seen:
            seen.add(path)
            baseline += int(file_tokens.get(path, 0))
    full_tokens = [estimate_tokens(r.chunk.content) for r in results]
    served = sum(full_tokens)
    saved = max(0, baseline - served)
    ratio = saved / baseline if baseline else 0.0
    top = results[0].score if results else 0.0
    mean = plain_sum(r.score for r in results) / len(results) if results else 0.0
    empty = not results

    chunk_base = chunk_saved = 0
    if served_bodies is not None:
        for full, body in zip(full_tokens, served_bodies, strict=True):
            chunk_base += full
            chunk_saved += max(0, full - estimate_tokens(body))
    grammar = grammar_savings_for_results(results)

    return SearchRecord(
        query=query, top_k=top_k, graph_enabled=graph_enabled, embedder=embedder,
        result_count=len(results), baseline_tokens=baseline, served_tokens=served, tokens_saved=saved,
        savings_ratio=ratio, top_score=top, mean_score=mean, empty=empty,
        low_confidence=(not empty) and top < LOW_CONFIDENCE_THRESHOLD, latency_ms=latency_ms, source=source,
        chunk_baseline_tokens=chunk_base, chunk_saved_tokens=chunk_saved,
        grammar_baseline_tokens=grammar.baseline_tokens, grammar_saved_tokens=grammar.saved_tokens,
        knowledge_results=knowledge_results, ranking=ranking,
    )

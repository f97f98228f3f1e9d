"""Token-savings accounting: the seven buckets and the per-search record.

Every search event carries seven buckets of ``{saved_tokens, baseline_tokens}``.
Only three can be measured by the engine itself while it answers a query:

* ``retrieval`` — whole files the results came from versus the chunks served;
* ``chunk_compression`` — full chunk bodies versus the compact or signature
  bodies actually served (zero when the full body is served);
* ``grammar`` — a verbose per-result framing versus the compact result lines.

The rest (``output``, ``memory``, ``turn_summarization``,
``progressive_disclosure``) are always recorded as zero here. All counts use
the one ``cce.tokens/v1`` estimator.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

BUCKET_NAMES: tuple[str, ...] = (
    "retrieval",
    "chunk_compression",
    "grammar",
    "output",
    "memory",
    "turn_summarization",
    "progressive_disclosure",
)
SAVINGS_NOTE = "vs full-file baseline — not your real end-to-end agent cost"
LOW_CONFIDENCE_THRESHOLD = 0.30

_U64_MAX = (1 << 64) - 1


def _sat_add(a: int, b: int) -> int:
    return min(a + b, _U64_MAX)


@dataclass(frozen=True)
class Bucket:
    saved_tokens: int = 0
    baseline_tokens: int = 0

    def __add__(self, other: Bucket) -> Bucket:
        return Bucket(_sat_add(self.saved_tokens, other.saved_tokens),
                      _sat_add(self.baseline_tokens, other.baseline_tokens))

    def as_json(self) -> dict[str, int]:
        return {"baseline_tokens": self.baseline_tokens, "saved_tokens": self.saved_tokens}


Buckets = dict[str, Bucket]


def empty_buckets() -> Buckets:
    return {name: Bucket() for name in BUCKET_NAMES}


def search_buckets(retrieval: tuple[int, int], chunk_compression: tuple[int, int] = (0, 0),
                   grammar: tuple[int, int] = (0, 0)) -> Buckets:
    """The buckets of one search; each argument is ``(saved, baseline)``."""
    out = empty_buckets()
    out["retrieval"] = Bucket(*retrieval)
    out["chunk_compression"] = Bucket(*chunk_compression)
    out["grammar"] = Bucket(*grammar)
    return out


def _u64(obj: Any, key: str) -> int:
    v = obj.get(key) if isinstance(obj, dict) else None
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= _U64_MAX:
        return v
    return 0


def buckets_from_event(event: Mapping[str, Any]) -> Buckets:
    """The buckets a logged search event carries.

    A ``savings`` key (whatever its value) means a current-format event: each
    bucket is read from it and a missing one is zero. Without it the event
    predates the buckets, and its top-level ``tokens_saved``/``baseline_tokens``
    become the retrieval bucket.
    """
    if "savings" not in event:
        return search_buckets((_u64(event, "tokens_saved"), _u64(event, "baseline_tokens")))
    obj = event["savings"]
    out = empty_buckets()
    for name in BUCKET_NAMES:
        b = obj.get(name) if isinstance(obj, dict) else None
        if b is not None:
            out[name] = Bucket(_u64(b, "saved_tokens"), _u64(b, "baseline_tokens"))
    return out


def buckets_json(buckets: Mapping[str, Bucket]) -> dict[str, dict[str, int]]:
    return {name: buckets.get(name, Bucket()).as_json() for name in BUCKET_NAMES}


def sum_by_layer(per_event: Iterable[Mapping[str, Bucket]]) -> dict[str, Any]:
    """Bucket-wise totals over many searches, plus their ``total`` and the standing caveat ``note``."""
    acc = empty_buckets()
    for buckets in per_event:
        for name in BUCKET_NAMES:
            b = buckets.get(name)
            if b is not None:
                acc[name] = acc[name] + b
    total = Bucket()
    for name in BUCKET_NAMES:
        total = total + acc[name]
    out: dict[str, Any] = {name: acc[name].as_json() for name in BUCKET_NAMES}
    out["total"] = total.as_json()
    out["note"] = SAVINGS_NOTE
    return out


def build_search_record(results: Sequence[Any], file_tokens: Mapping[str, int], query: str, top_k: int,
                        graph_enabled: bool, embedder: str, latency_ms: float, source: str = "cli",
                        served_bodies: Sequence[str] | None = None):
    """The :class:`~cce_core.metrics.SearchRecord` for one answered query.

    ``results`` are :class:`~cce_core.retrieval.SearchResult` objects in rank
    order; ``file_tokens`` the store's whole-file token counts. When the caller
    served compressed bodies, ``served_bodies`` holds them (one per result) and
    feeds the chunk_compression bucket; ``None`` means full bodies were served.
    """
    from .grammar import grammar_savings_for_results
    from .metrics import SearchRecord
    from .textrules import estimate_tokens, plain_sum

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
    )

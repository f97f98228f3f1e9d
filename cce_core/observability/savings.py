"""Token-savings accounting: the seven buckets every search event carries.

Every search event carries seven buckets of ``{saved_tokens, baseline_tokens}``.
Only three can be measured by the engine itself while it answers a query:

* ``retrieval`` — whole files the results came from versus the chunks served;
* ``chunk_compression`` — full chunk bodies versus the compact or signature
  bodies actually served (zero when the full body is served);
* ``grammar`` — a verbose per-result framing versus the compact result lines.

The rest (``output``, ``memory``, ``turn_summarization``,
``progressive_disclosure``) are always recorded as zero here. All counts use
the one ``cce.tokens/v1`` estimator. The per-search record built from a
search's results is :mod:`cce_core.observability.search_record`.

:func:`savings_report` is the whole ``cce savings`` computation — the
bucket totals of a log's searches and their price — so that the command and
the dashboard, which both call it, can never show two different totals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

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


class LoggedEvent(Protocol):
    """What the report needs of a metrics-log event (``metrics.Event`` has it; this module cannot import that)."""

    kind: str
    savings: dict[str, Bucket]


@dataclass(frozen=True)
class SavingsReport:
    """The savings ledger of a log and its estimated price."""

    ledger: dict[str, Any]  # :func:`sum_by_layer` over every search event
    pricing_id: str  # the embedded price table's id, whatever rate priced the dollars
    rate_per_million: float  # dollars per million saved tokens
    dollars_saved: float  # the ledger's total saved tokens at that rate, in cents

    @property
    def saved_tokens(self) -> int:
        return int(self.ledger["total"]["saved_tokens"])


def savings_report(events: Iterable[LoggedEvent], rate_per_million: float | None = None) -> SavingsReport:
    """``cce savings``: every search event's buckets summed, priced at the embedded table's default input
    rate (or at ``rate_per_million`` when the caller was given one)."""
    from cce_core.observability.pricing import builtin_table, dollars_at

    ledger = sum_by_layer(e.savings for e in events if e.kind == "search")
    table = builtin_table()
    rate = rate_per_million if rate_per_million is not None else table.default_input_price_per_million() or 0.0
    return SavingsReport(ledger, table.id, rate, dollars_at(ledger["total"]["saved_tokens"], rate))


def _sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted_keys(value[k]) for k in sorted(value)}
    return value


def savings_json(report: SavingsReport, source: str) -> dict[str, Any]:
    """The ``cce savings --json`` body for ``report`` read from ``source`` (keys sorted at every level)."""
    return _sorted_keys({"savings_by_layer": report.ledger, "pricing_id": report.pricing_id,
                         "estimated_dollars_saved": f"{report.dollars_saved:.2f}", "source": source})

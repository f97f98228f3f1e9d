"""Turn a metrics log into the dashboard aggregate (pure: no clock, no I/O).

``aggregate(events, now_secs, price)`` returns plain dicts and lists ready for
``json.dumps(..., sort_keys=True)``. The caller supplies ``now``; the HTTP layer
adds ``generated_ts`` itself. A workspace passes ``packages`` too — each
member's package name with that member's own events — and gets one more key,
``by_package``; without it the result is exactly the single-repo aggregate.

Conventions every engine shares, so the numbers match to the last digit:
means are plain left-to-right sums divided by the count, rounded half away
from zero to 6 decimals (money to 2); window deltas are taken between the
already-rounded window means; windows are half-open ``[start, end)`` in seconds.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from cce_core.foundation import textrules
from cce_core.foundation.textrules import plain_sum, round2
from cce_core.observability.metrics import METRICS_SCHEMA, Event, date_str
from cce_core.observability.savings import sum_by_layer

DAY_SECS = 86_400
TREND_WINDOW_DAYS = 7
DIRECTION_EPSILON = 1e-9
RECENT_SEARCHES_LIMIT = 20
DEFAULT_PRICE_PER_MTOK = 3.00


def round6(x: float) -> float:
    """Six decimals, halves away from zero; a value whose scaling by 1e6 overflows comes out as that overflow.

    The family's engines scale, round and divide in doubles, so a forged 1e305 becomes infinity (printed as
    JSON null) instead of failing the whole aggregate; every value of a real log rounds as before.
    """
    scaled = x * 1_000_000.0
    if not math.isfinite(scaled):
        return scaled / 1_000_000.0
    return textrules.round6(x)


def direction(delta: float) -> str:
    if delta > DIRECTION_EPSILON:
        return "up"
    if delta < -DIRECTION_EPSILON:
        return "down"
    return "flat"


def _mean(values: Sequence[float]) -> float:
    return plain_sum(values) / len(values) if values else 0.0


def _helpful_rate(helpful: int, not_helpful: int) -> float | None:
    total = helpful + not_helpful
    return round6(helpful / total) if total else None


def _mean_top_score(searches: Sequence[Event]) -> float:
    return round6(_mean([s.top_score for s in searches if s.result_count > 0]))


def _is_mcp(source: str) -> bool:
    return source == "mcp"


U64_MAX = (1 << 64) - 1


def saturating_sum(values: Iterable[int], what: str) -> int:
    """The sum of per-event counters, clamped at 2**64-1 as the family's engines clamp it.

    Each value is already below 2**64 (the log reader refuses bigger ones), but
    a forged log can make the sum pass it; the clamp keeps the aggregate equal to
    the other engines', and a warning on stderr says the figure is meaningless.
    """
    total = sum(values)
    if total > U64_MAX:
        sys.stderr.write(f"warning: {what} overflowed 64 bits and was clamped to {U64_MAX}; the total (and any "
                         "cost derived from it) is not meaningful — check the metrics log for a corrupt or "
                         "forged value\n")
        return U64_MAX
    return total


def source_usage(searches: Sequence[Event]) -> dict[str, Any]:
    """One row of the agent-vs-human split."""
    return {
        "searches": len(searches),
        "tokens_saved": saturating_sum((s.tokens_saved for s in searches), "tokens_saved (by source)"),
        "mean_savings_ratio": round6(_mean([s.savings_ratio for s in searches])),
        "mean_top_score": _mean_top_score(searches),
        "mean_latency_ms": round6(_mean([s.latency_ms for s in searches])),
    }


def _secs(event: Event) -> int:
    """When a search, index or feedback event happened: always known (a line without a valid ``ts`` is skipped)."""
    if event.ts_secs is None:
        raise ValueError(f"{event.kind} event at position {event.position} has no timestamp")
    return event.ts_secs


def _in_window(secs: int, start: int, end: int) -> bool:
    return start <= secs < end


def _windows(now_secs: int) -> tuple[tuple[int, int], tuple[int, int]]:
    w = TREND_WINDOW_DAYS * DAY_SECS
    return (now_secs - w, now_secs), (now_secs - 2 * w, now_secs - w)


def _savings_window(searches: Sequence[Event], win: tuple[int, int]) -> dict[str, Any]:
    inside = [s for s in searches if _in_window(_secs(s), *win)]
    return {
        "searches": len(inside),
        "tokens_saved": saturating_sum((s.tokens_saved for s in inside), "tokens_saved (savings window)"),
        "mean_savings_ratio": round6(_mean([s.savings_ratio for s in inside])),
    }


def _quality_window(searches: Sequence[Event], feedback: Sequence[Event], win: tuple[int, int]) -> dict[str, Any]:
    inside = [s for s in searches if _in_window(_secs(s), *win)]
    n = len(inside)
    empty = sum(1 for s in inside if s.empty)
    low = sum(1 for s in inside if s.low_confidence)
    fb = [f for f in feedback if _in_window(_secs(f), *win)]
    helpful = sum(1 for f in fb if f.helpful)
    return {
        "mean_top_score": _mean_top_score(inside),
        "empty_rate": round6(empty / n) if n else 0.0,
        "low_conf_rate": round6(low / n) if n else 0.0,
        "helpful_rate": _helpful_rate(helpful, len(fb) - helpful),
    }


def _daily(searches: Sequence[Event], feedback: Sequence[Event]) -> list[dict[str, Any]]:
    days: dict[str, dict[str, Any]] = {}

    def day(secs: int) -> dict[str, Any]:
        key = date_str(secs)
        if key not in days:
            days[key] = {"searches": 0, "tokens_saved": 0, "ratios": [], "tops": [], "empty": 0, "low": 0,
                         "helpful": 0, "not_helpful": 0}
        return days[key]

    for s in searches:
        acc = day(_secs(s))
        acc["searches"] += 1
        acc["tokens_saved"] += s.tokens_saved
        acc["ratios"].append(s.savings_ratio)
        if s.result_count > 0:
            acc["tops"].append(s.top_score)
        acc["empty"] += 1 if s.empty else 0
        acc["low"] += 1 if s.low_confidence else 0
    for f in feedback:
        day(_secs(f))["helpful" if f.helpful else "not_helpful"] += 1

    out = []
    for key in sorted(days):
        a = days[key]
        n = a["searches"]
        out.append({
            "date": key,
            "searches": n,
            "tokens_saved": saturating_sum((a["tokens_saved"],), "daily tokens_saved"),
            "mean_savings_ratio": round6(_mean(a["ratios"])),
            "mean_top_score": round6(_mean(a["tops"])),
            "empty_rate": round6(a["empty"] / n) if n else 0.0,
            "low_conf_rate": round6(a["low"] / n) if n else 0.0,
            "helpful": a["helpful"],
            "not_helpful": a["not_helpful"],
        })
    return out


def _recent(searches: list[tuple[int, Event]], feedback: list[tuple[int, Event]]) -> list[dict[str, Any]]:
    verdicts: dict[str, tuple[int, int, bool]] = {}
    for pos, f in feedback:
        seen = verdicts.get(f.target_id)
        if seen is None or (seen[0], seen[1]) < (_secs(f), pos):
            verdicts[f.target_id] = (_secs(f), pos, f.helpful)
    ordered = sorted(searches, key=lambda item: (item[1].ts_secs, item[0]), reverse=True)
    out = []
    for _, s in ordered[:RECENT_SEARCHES_LIMIT]:
        verdict = verdicts.get(s.id)
        out.append({
            "ts": s.ts,
            "id": s.id,
            "query": s.query,
            "result_count": s.result_count,
            "tokens_saved": s.tokens_saved,
            "savings_ratio": round6(s.savings_ratio),
            "top_score": round6(s.top_score),
            "empty": s.empty,
            "feedback": "none" if verdict is None else ("helpful" if verdict[2] else "not_helpful"),
            "source": s.source,
        })
        if s.knowledge_results:
            out[-1]["knowledge_results"] = s.knowledge_results
    return out


def package_row(package: str, events: Sequence[Event], now_secs: int,
                price: float = DEFAULT_PRICE_PER_MTOK) -> dict[str, Any]:
    """One ``by_package`` row: a member's own totals, from that member's log alone."""
    totals = aggregate(events, now_secs, price)["totals"]
    return {
        "package": package,
        "searches": totals["searches"],
        "tokens_saved": totals["tokens_saved"],
        "mean_savings_ratio": round6(totals["mean_savings_ratio"]),
        "mean_top_score": round6(totals["mean_top_score"]),
    }


def by_package(packages: Sequence[tuple[str, Sequence[Event]]], now_secs: int,
               price: float = DEFAULT_PRICE_PER_MTOK) -> list[dict[str, Any]]:
    """Rows for every ``(package, events)`` pair, ordered by package name (stable for equal names)."""
    rows = [package_row(name, evs, now_secs, price) for name, evs in packages]
    rows.sort(key=lambda r: r["package"])
    return rows


def aggregate(events: Sequence[Event], now_secs: int, price: float = DEFAULT_PRICE_PER_MTOK, *,
              packages: Sequence[tuple[str, Sequence[Event]]] | None = None) -> dict[str, Any]:
    """The full aggregate of ``events`` (in log order) as seen at ``now_secs``.

    ``packages`` (workspace mode only) adds ``by_package``; the roll-up itself
    is still computed from ``events`` alone, so the caller decides which logs
    count in the totals and which per package.
    """
    searches: list[tuple[int, Event]] = []
    feedback: list[tuple[int, Event]] = []
    indexes: list[tuple[int, Event]] = []
    for pos, ev in enumerate(events):
        if ev.kind == "search":
            searches.append((pos, ev))
        elif ev.kind == "feedback":
            feedback.append((pos, ev))
        elif ev.kind == "index":
            indexes.append((pos, ev))
    all_searches = [s for _, s in searches]
    all_feedback = [f for _, f in feedback]

    tokens_saved = saturating_sum((s.tokens_saved for s in all_searches), "tokens_saved (totals)")
    helpful = sum(1 for f in all_feedback if f.helpful)
    not_helpful = len(all_feedback) - helpful
    totals = {
        "searches": len(all_searches),
        "indexes": len(indexes),
        "feedback": len(all_feedback),
        "tokens_saved": tokens_saved,
        "cost_saved_usd": round2(tokens_saved / 1_000_000.0 * price),
        "mean_savings_ratio": round6(_mean([s.savings_ratio for s in all_searches])),
        "mean_top_score": _mean_top_score(all_searches),
        "helpful": helpful,
        "not_helpful": not_helpful,
        "helpful_rate": _helpful_rate(helpful, not_helpful),
    }

    current, prior = _windows(now_secs)
    sav_cur, sav_prior = _savings_window(all_searches, current), _savings_window(all_searches, prior)
    delta_ratio = round6(sav_cur["mean_savings_ratio"] - sav_prior["mean_savings_ratio"])
    q_cur = _quality_window(all_searches, all_feedback, current)
    q_prior = _quality_window(all_searches, all_feedback, prior)
    delta_top = round6(q_cur["mean_top_score"] - q_prior["mean_top_score"])

    latest = max(indexes, key=lambda item: (item[1].ts_secs, item[0]))[1] if indexes else None

    body: dict[str, Any] = {
        "schema": METRICS_SCHEMA,
        "totals": totals,
        "north_star": {
            "savings": {"current": sav_cur, "prior": sav_prior, "delta_ratio": delta_ratio,
                        "direction": direction(delta_ratio)},
            "quality": {"current": q_cur, "prior": q_prior, "delta_top_score": delta_top,
                        "direction": direction(delta_top)},
        },
        "by_source": {
            "cli": source_usage([s for s in all_searches if not _is_mcp(s.source)]),
            "mcp": source_usage([s for s in all_searches if _is_mcp(s.source)]),
        },
        "secret_safety": {
            "sensitive_skipped": saturating_sum((x.sensitive_skipped for _, x in indexes), "sensitive_skipped"),
            "index_runs": len(indexes),
        },
        "index_freshness": {
            "indexes": len(indexes),
            "source": latest.source if latest else None,
            "sha": latest.sha if latest else None,
            "indexed_ts": latest.ts if latest else None,
        },
        "savings_by_layer": sum_by_layer(s.savings for s in all_searches),
        "series": {"daily": _daily(all_searches, all_feedback)},
        "recent_searches": _recent(searches, feedback),
    }
    if packages is not None:
        body["by_package"] = by_package(packages, now_secs, price)
    return body

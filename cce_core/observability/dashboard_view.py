"""Everything the dashboard page shows, computed from one read of the metrics log (pure: no clock, no I/O).

The page must never show a figure that disagrees with the command line, so
the figures that have a CLI counterpart come from the CLI's own functions:

* ``savings`` is the ``cce savings --json`` body (:func:`savings.savings_report`),
  and the headline tokens and dollars are its total — all seven layers;
* ``usage`` is the ``cce usage --json`` body over all time (:func:`usage.usage_json`
  of the aggregate), behind the search counts and the agent/person split;
* ``metrics`` is the family's aggregate, unchanged (``/api/metrics`` serves it alone).

What no command prints is computed here, once:

* ``trend`` — the last 7 days against the 7 before, per figure, with a
  verdict only when both windows hold data (``no comparison`` and the reason
  otherwise) and judged by what *better* means for that figure; the mean top
  score is reported but never judged, since a confident wrong hit scores high;
* ``daily_savings`` — every layer's saved tokens per UTC day, so the daily bars
  add up to the headline;
* ``latency`` — p50/p95 of the recorded search latencies per day and per window
  (nearest rank: always a latency that was observed); searches logged without
  a latency are counted apart, never as zero;
* ``weak_queries`` — the queries that returned no code and those whose best hit
  scored under the low-confidence threshold, grouped by query text;
* ``searches`` — for every search the page lists, everything its event
  recorded. The log keeps counts, scores and tokens, not which chunks were
  returned, so the detail says so and gives the command that shows today's
  answer.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cce_core.observability.aggregate import (
    DAY_SECS,
    DEFAULT_PRICE_PER_MTOK,
    TREND_WINDOW_DAYS,
    aggregate,
    direction,
    round6,
)
from cce_core.observability.metrics import Event, date_str
from cce_core.observability.pricing import dollars_at
from cce_core.observability.savings import LOW_CONFIDENCE_THRESHOLD, savings_json, savings_report, sum_by_layer
from cce_core.observability.usage import usage_json

VIEW_SCHEMA = "cce.dashboard/v1"
WEAK_QUERIES_LIMIT = 25
NO_COMPARISON = "no comparison"

_VERDICT = {("higher", "up"): "improving", ("higher", "down"): "degrading",
            ("lower", "down"): "improving", ("lower", "up"): "degrading"}


def dashboard_view(events: Sequence[Event], now_secs: int, *, source: str, price: float | None = None,
                   packages: Sequence[tuple[str, Sequence[Event]]] | None = None) -> dict[str, Any]:
    """The page's data for ``events`` (in log order) as seen at ``now_secs``.

    ``source`` names the log(s) in the savings body, as ``cce savings`` does.
    ``price`` is the dashboard's ``--price``: it reprices the headline only;
    without it the headline uses the embedded table's rate, like ``cce savings``.
    ``packages`` (workspace mode) adds the per-member rows, as in ``cce usage --workspace``.
    """
    agg = aggregate(events, now_secs, price if price is not None else DEFAULT_PRICE_PER_MTOK, packages=packages)
    report = savings_report(events)
    searches = [e for e in events if e.kind == "search"]
    feedback = [e for e in events if e.kind == "feedback"]
    weak = weak_queries(searches)
    wanted = {r["id"] for r in agg["recent_searches"]}
    wanted |= {row["last_id"] for group in ("zero_result", "low_score") for row in weak[group]}
    dollars = report.dollars_saved if price is None else dollars_at(report.saved_tokens, price)
    return {
        "schema": VIEW_SCHEMA,
        "metrics": agg,
        "savings": savings_json(report, source),
        "usage": usage_json(agg, now_secs, None, "all", workspace=packages is not None),
        "cost": {
            "tokens_saved": report.saved_tokens,
            "dollars_saved": f"{dollars:.2f}",
            "rate_per_million": report.rate_per_million if price is None else float(price),
            "rate_from": report.pricing_id if price is None else "--price",
        },
        "trend": trend(agg, searches, feedback, now_secs),
        "daily_savings": daily_savings(searches),
        "latency": latency(searches, now_secs),
        "weak_queries": weak,
        "searches": search_details(searches, feedback, wanted),
    }


# --------------------------------------------------------------------------- trend


def _windows(now_secs: int) -> tuple[tuple[int, int], tuple[int, int]]:
    span = TREND_WINDOW_DAYS * DAY_SECS
    return (now_secs - span, now_secs), (now_secs - 2 * span, now_secs - span)


def _inside(secs: int | None, window: tuple[int, int]) -> bool:
    return secs is not None and window[0] <= secs < window[1]


def compare(current: float | None, prior: float | None, current_count: int, prior_count: int, better: str,
            what: str) -> dict[str, Any]:
    """One figure over the two windows; ``what`` names the things counted ("searches", "feedback")."""
    out: dict[str, Any] = {"current": current if current_count else None,
                           "prior": prior if prior_count else None,
                           "current_count": current_count, "prior_count": prior_count, "better": better}
    if not current_count or not prior_count:
        days = TREND_WINDOW_DAYS
        reason = (f"no {what} in the last {2 * days} days" if not current_count and not prior_count
                  else f"no {what} in the prior {days} days" if not prior_count
                  else f"no {what} in the last {days} days")
        out.update(delta=None, direction=None, verdict=NO_COMPARISON, reason=reason)
        return out
    delta = round6(float(current or 0.0) - float(prior or 0.0))
    moved = direction(delta)
    out.update(delta=delta, direction=moved, verdict=_VERDICT.get((better, moved), "flat"), reason="")
    return out


def trend(agg: dict[str, Any], searches: Sequence[Event], feedback: Sequence[Event],
          now_secs: int) -> dict[str, Any]:
    """Per-figure comparisons of the last 7 days with the 7 before, read from the aggregate's windows.

    Each rate also carries the counts behind it (``*_matches`` of ``*_count``).
    """
    windows = _windows(now_secs)
    savings, quality = agg["north_star"]["savings"], agg["north_star"]["quality"]
    n_cur, n_prior = savings["current"]["searches"], savings["prior"]["searches"]
    q_cur, q_prior = quality["current"], quality["prior"]

    def matches(events: Sequence[Event], pick: Callable[[Event], bool]) -> tuple[int, int]:
        cur, prior = (sum(1 for e in events if pick(e) and _inside(e.ts_secs, w)) for w in windows)
        return cur, prior

    def rate(name: str, better: str, pick: Callable[[Event], bool]) -> dict[str, Any]:
        out = compare(q_cur[name], q_prior[name], n_cur, n_prior, better, "searches")
        out["current_matches"], out["prior_matches"] = matches(searches, pick)
        return out

    v_cur, v_prior = matches(feedback, lambda f: True)
    helpful = compare(q_cur["helpful_rate"], q_prior["helpful_rate"], v_cur, v_prior, "higher", "feedback")
    helpful["current_matches"], helpful["prior_matches"] = matches(feedback, lambda f: f.helpful)
    return {
        "window_days": TREND_WINDOW_DAYS,
        "savings_ratio": compare(savings["current"]["mean_savings_ratio"], savings["prior"]["mean_savings_ratio"],
                                 n_cur, n_prior, "higher", "searches"),
        "helpful_rate": helpful,
        "zero_result_rate": rate("empty_rate", "lower", lambda s: s.empty),
        "low_score_rate": rate("low_conf_rate", "lower", lambda s: s.low_confidence),
        # Reported for what it is — the similarity of the best hit — and never judged.
        "mean_top_score": {"current": q_cur["mean_top_score"] if n_cur else None,
                           "prior": q_prior["mean_top_score"] if n_prior else None,
                           "current_count": n_cur, "prior_count": n_prior, "better": None},
    }


# --------------------------------------------------------------------------- daily savings


def daily_savings(searches: Iterable[Event]) -> list[dict[str, Any]]:
    """Saved tokens per UTC day over all seven layers (and the retrieval layer alone), days ascending."""
    by_day: dict[str, list[Event]] = {}
    for s in searches:
        if s.ts_secs is not None:
            by_day.setdefault(date_str(s.ts_secs), []).append(s)
    out = []
    for day in sorted(by_day):
        ledger = sum_by_layer(s.savings for s in by_day[day])
        out.append({"date": day, "saved_tokens": ledger["total"]["saved_tokens"],
                    "retrieval_saved_tokens": ledger["retrieval"]["saved_tokens"]})
    return out


# --------------------------------------------------------------------------- latency


def percentile(values: Sequence[float], pct: int) -> float | None:
    """The nearest-rank ``pct``-th percentile of ``values``: the smallest observed value with at least
    ``pct`` percent of the values at or below it; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-pct * len(ordered) // 100))  # ceil(pct/100 * n), in integers
    return ordered[rank - 1]


def _recorded_latency(event: Event) -> float | None:
    """The event's own ``latency_ms``; None when the line carries none (older logs) or not a number."""
    raw = event.raw.get("latency_ms") if isinstance(event.raw, dict) else None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    return event.latency_ms


def _latency_summary(values: Sequence[float]) -> dict[str, Any]:
    p50, p95 = percentile(values, 50), percentile(values, 95)
    return {"searches": len(values), "p50_ms": None if p50 is None else round6(p50),
            "p95_ms": None if p95 is None else round6(p95)}


def latency(searches: Iterable[Event], now_secs: int) -> dict[str, Any]:
    """p50/p95 latency per UTC day (days with a timed search, ascending) and for the two trend windows."""
    timed: list[tuple[int, float]] = []
    untimed = 0
    for s in searches:
        value = _recorded_latency(s)
        if value is None or s.ts_secs is None:
            untimed += 1
        else:
            timed.append((s.ts_secs, value))
    by_day: dict[str, list[float]] = {}
    for secs, value in timed:
        by_day.setdefault(date_str(secs), []).append(value)
    cur_win, prior_win = _windows(now_secs)
    current = _latency_summary([v for secs, v in timed if _inside(secs, cur_win)])
    prior = _latency_summary([v for secs, v in timed if _inside(secs, prior_win)])
    return {
        "method": "nearest-rank",
        "daily": [{"date": day, **_latency_summary(by_day[day])} for day in sorted(by_day)],
        "untimed_searches": untimed,
        "current": current,
        "prior": prior,
        "p95_trend": compare(current["p95_ms"], prior["p95_ms"], current["searches"], prior["searches"], "lower",
                             "timed searches"),
    }


# --------------------------------------------------------------------------- weak queries


def _group(searches: Iterable[Event]) -> list[list[Event]]:
    groups: dict[str, list[Event]] = {}
    for s in searches:
        groups.setdefault(s.query, []).append(s)
    # Most frequent first, then the most recently seen (time, then log position), then the text.
    ordered = sorted(groups.values(), key=lambda g: g[0].query)
    ordered.sort(key=lambda g: max((s.ts_secs or 0, s.position) for s in g), reverse=True)
    ordered.sort(key=len, reverse=True)
    return ordered


def _latest(group: Sequence[Event]) -> Event:
    return max(group, key=lambda s: (s.ts_secs or 0, s.position))


def _weak_row(group: Sequence[Event]) -> dict[str, Any]:
    last = _latest(group)
    return {"query": last.query, "searches": len(group), "last_ts": last.ts, "last_id": last.id,
            "sources": sorted({s.source for s in group})}


def weak_queries(searches: Sequence[Event]) -> dict[str, Any]:
    """Queries that returned no code (the log's ``empty``) and queries whose best hit scored under the
    low-confidence threshold (the log's ``low_confidence``), each grouped by exact query text."""
    zero = _group(s for s in searches if s.empty)
    low = _group(s for s in searches if s.low_confidence)
    zero_rows = [{**_weak_row(g), "knowledge_results": _latest(g).knowledge_results} for g in zero]
    low_rows = [{**_weak_row(g), "best_top_score": round6(max(s.top_score for s in g))} for g in low]
    return {
        "limit": WEAK_QUERIES_LIMIT,
        "low_score_threshold": LOW_CONFIDENCE_THRESHOLD,
        "zero_result": zero_rows[:WEAK_QUERIES_LIMIT],
        "zero_result_queries": len(zero_rows),
        "zero_result_searches": sum(len(g) for g in zero),
        "low_score": low_rows[:WEAK_QUERIES_LIMIT],
        "low_score_queries": len(low_rows),
        "low_score_searches": sum(len(g) for g in low),
    }


# --------------------------------------------------------------------------- click-through


def _raw(event: Event, key: str) -> Any:
    return event.raw.get(key) if isinstance(event.raw, dict) else None


def rerun_command(query: str, top_k: int | None, graph_enabled: bool | None) -> str:
    """The ``cce search`` line that asks the same question of today's index, quoted for a POSIX shell."""
    parts = ["cce", "search", shlex.quote(query)]
    if top_k is not None:
        parts += ["--top-k", str(top_k)]
    if graph_enabled is False:
        parts.append("--no-graph")
    return " ".join(parts)


def search_details(searches: Sequence[Event], feedback: Sequence[Event], wanted: set[str]) -> dict[str, Any]:
    """What each search in ``wanted`` (by event id) recorded; a later event with the same id wins."""
    votes: dict[str, list[Event]] = {}
    for f in feedback:
        if f.target_id in wanted:
            votes.setdefault(f.target_id, []).append(f)
    out: dict[str, Any] = {}
    for s in searches:
        if s.id not in wanted:
            continue
        top_k = _raw(s, "top_k")
        top_k = top_k if isinstance(top_k, int) and not isinstance(top_k, bool) and top_k >= 0 else None
        graph = _raw(s, "graph_enabled")
        graph = graph if isinstance(graph, bool) else None
        embedder = _raw(s, "embedder")
        # Events of the family's ranking carry no "ranking" field (the other engines' bytes).
        ranking = _raw(s, "ranking")
        mine = votes.get(s.id, [])
        latest = max(mine, key=lambda f: (f.ts_secs or 0, f.position)) if mine else None
        out[s.id] = {
            "id": s.id, "ts": s.ts, "query": s.query, "source": s.source,
            "top_k": top_k, "embedder": embedder if isinstance(embedder, str) else None, "graph_enabled": graph,
            "ranking": ranking if isinstance(ranking, str) else "family",
            "result_count": s.result_count, "knowledge_results": s.knowledge_results,
            "empty": s.empty, "low_confidence": s.low_confidence,
            "top_score": round6(s.top_score), "mean_score": round6(s.mean_score),
            "baseline_tokens": s.baseline_tokens, "served_tokens": s.served_tokens,
            "tokens_saved": s.tokens_saved, "savings_ratio": round6(s.savings_ratio),
            "savings_by_layer": {k: v for k, v in sum_by_layer([s.savings]).items() if k != "note"},
            "latency_ms": None if _recorded_latency(s) is None else round6(s.latency_ms),
            "feedback": "none" if latest is None else ("helpful" if latest.helpful else "not_helpful"),
            "votes": [{"ts": f.ts, "helpful": f.helpful, "note": f.note} for f in mine],
            # The log records what each search cost and scored, not which chunks it returned.
            "results_recorded": False,
            "rerun": rerun_command(s.query, top_k, graph),
        }
    return out

"""What the dashboard page shows (``dashboard_view``): the CLI's own figures plus the trend, latency,
weak-query and click-through additions, computed in-process from the week log of issue #19."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dashboard_proc import WEEK_RETRIEVAL_SAVED, WEEK_TOTAL_SAVED, week_events

from cce_core.observability.aggregate import aggregate
from cce_core.observability.dashboard_view import VIEW_SCHEMA, dashboard_view, percentile
from cce_core.observability.metrics import parse_iso, parse_log
from cce_core.observability.savings import savings_json, savings_report
from cce_core.observability.usage import usage_json

MIDNIGHT = parse_iso("2026-07-05T00:00:00Z")
NOW = MIDNIGHT + 6 * 3600  # a quarter past the day: every week-log event lies in the last seven days


def _log(events: list[dict]):
    return parse_log("".join(json.dumps(e) + "\n" for e in events))


@pytest.fixture
def week():
    return _log(week_events(MIDNIGHT)).events


@pytest.fixture
def view(week):
    return dashboard_view(week, NOW, source="metrics.jsonl")


def test_the_view_carries_the_family_aggregate_unchanged(week, view):
    assert view["schema"] == VIEW_SCHEMA
    assert view["metrics"] == aggregate(week, NOW, 3.00)


def test_savings_are_the_cce_savings_body(week, view):
    """The headline and the layer panel read one ledger: the one ``cce savings --json`` prints."""
    assert view["savings"] == savings_json(savings_report(week), "metrics.jsonl")
    ledger = view["savings"]["savings_by_layer"]
    assert ledger["total"]["saved_tokens"] == WEEK_TOTAL_SAVED
    assert ledger["retrieval"]["saved_tokens"] == WEEK_RETRIEVAL_SAVED
    assert view["savings"]["estimated_dollars_saved"] == "0.67"
    assert view["cost"] == {"tokens_saved": WEEK_TOTAL_SAVED, "dollars_saved": "0.67", "rate_per_million": 3.0,
                            "rate_from": "cce.pricing/builtin-v1"}


def test_an_explicit_price_reprices_the_same_tokens(week):
    view = dashboard_view(week, NOW, source="m", price=15.0)
    assert view["cost"] == {"tokens_saved": WEEK_TOTAL_SAVED, "dollars_saved": "3.36", "rate_per_million": 15.0,
                            "rate_from": "--price"}
    assert view["savings"]["estimated_dollars_saved"] == "0.67"  # still exactly `cce savings`
    assert view["metrics"]["totals"]["cost_saved_usd"] == 3.0  # the family's field keeps its own rule


def test_usage_is_the_cce_usage_body(week, view):
    assert view["usage"] == usage_json(aggregate(week, NOW, 3.00), NOW, None, "all")
    assert view["usage"]["totals"]["tokens_saved"] == WEEK_RETRIEVAL_SAVED


def test_daily_savings_add_up_to_the_headline(view):
    days = view["daily_savings"]
    assert [d["date"] for d in days] == ["2026-07-02", "2026-07-03", "2026-07-04"]
    assert sum(d["saved_tokens"] for d in days) == WEEK_TOTAL_SAVED
    assert sum(d["retrieval_saved_tokens"] for d in days) == WEEK_RETRIEVAL_SAVED
    assert days[0] == {"date": "2026-07-02", "saved_tokens": 134_988 + 6_000 + 6_348,
                       "retrieval_saved_tokens": 134_988}


def test_no_trend_verdict_without_a_prior_window(view):
    """Issue #19: "↑ improving" was shown beside "no searches in the prior 7 days"."""
    savings = view["trend"]["savings_ratio"]
    assert savings["verdict"] == "no comparison"
    assert savings["reason"] == "no searches in the prior 7 days"
    assert savings["prior"] is None and savings["delta"] is None
    assert savings["current_count"] == 8 and savings["prior_count"] == 0
    for name in ("zero_result_rate", "low_score_rate", "helpful_rate"):
        assert view["trend"][name]["verdict"] == "no comparison", name
    assert view["trend"]["helpful_rate"]["reason"] == "no feedback in the prior 7 days"


def test_search_outcomes_replace_mean_top_score_as_quality(view):
    trend = view["trend"]
    assert trend["helpful_rate"]["current"] == 0.5 and trend["helpful_rate"]["current_count"] == 2
    assert trend["zero_result_rate"]["current"] == 0.25
    assert trend["low_score_rate"]["current"] == 0.25
    assert trend["helpful_rate"]["better"] == "higher" and trend["zero_result_rate"]["better"] == "lower"
    # the counts behind each rate: 1 of 2 votes helpful, 2 of 8 searches empty, 2 of 8 with a weak best hit
    assert (trend["helpful_rate"]["current_matches"], trend["helpful_rate"]["prior_matches"]) == (1, 0)
    assert trend["zero_result_rate"]["current_matches"] == trend["low_score_rate"]["current_matches"] == 2
    # the mean top score is still reported, as what it is, and never judged
    assert trend["mean_top_score"]["better"] is None and "verdict" not in trend["mean_top_score"]


def test_verdicts_follow_what_better_means_for_each_figure(reference: Path):
    """The anchor log moved so both windows hold searches: more empty searches is worse, not better."""
    from cce_core.observability.metrics import read_log

    log = read_log(reference / "test" / "fixture" / "base" / "metrics_sample.jsonl")
    view = dashboard_view(log.events, parse_iso("2026-07-05T00:00:00Z"), source="m")
    trend = view["trend"]
    assert (trend["savings_ratio"]["verdict"], trend["savings_ratio"]["delta"]) == ("improving", 0.033333)
    assert (trend["zero_result_rate"]["current"], trend["zero_result_rate"]["prior"]) == (0.333333, 0.0)
    assert trend["zero_result_rate"]["verdict"] == "degrading"
    assert trend["low_score_rate"]["verdict"] == "flat"
    assert trend["helpful_rate"]["verdict"] == "no comparison"


def test_nothing_to_compare_when_the_log_is_empty():
    view = dashboard_view([], NOW, source="m")
    assert view["trend"]["savings_ratio"]["reason"] == "no searches in the last 14 days"
    assert view["latency"] == {"method": "nearest-rank", "daily": [], "untimed_searches": 0,
                               "current": {"searches": 0, "p50_ms": None, "p95_ms": None},
                               "prior": {"searches": 0, "p50_ms": None, "p95_ms": None},
                               "p95_trend": view["latency"]["p95_trend"]}
    assert view["weak_queries"]["zero_result"] == [] and view["searches"] == {}
    assert view["cost"]["dollars_saved"] == "0.00"


def test_percentile_is_nearest_rank():
    assert percentile([10.0, 20.0, 30.0, 40.0], 50) == 20.0
    assert percentile([10.0, 20.0, 30.0, 40.0], 95) == 40.0
    assert percentile([7.0], 50) == percentile([7.0], 95) == 7.0
    assert percentile(list(map(float, range(1, 101))), 95) == 95.0
    assert percentile([], 50) is None


def test_latency_p50_and_p95_per_day(view):
    latency = view["latency"]
    assert latency["daily"] == [
        {"date": "2026-07-02", "searches": 4, "p50_ms": 20.0, "p95_ms": 40.0},
        {"date": "2026-07-03", "searches": 2, "p50_ms": 25.0, "p95_ms": 35.0},
        {"date": "2026-07-04", "searches": 2, "p50_ms": 15.0, "p95_ms": 90.0},
    ]
    assert latency["current"] == {"searches": 8, "p50_ms": 25.0, "p95_ms": 90.0}
    assert latency["prior"] == {"searches": 0, "p50_ms": None, "p95_ms": None}
    assert latency["p95_trend"]["verdict"] == "no comparison"


def test_searches_without_a_recorded_latency_are_left_out_not_counted_as_zero():
    events = _log([
        {"event": "search", "ts": "2026-07-04T10:00:00Z", "id": "old", "query": "q", "result_count": 1},
        {"event": "search", "ts": "2026-07-04T11:00:00Z", "id": "new", "query": "q", "result_count": 1,
         "latency_ms": 12.5},
        {"event": "search", "ts": "2026-07-04T12:00:00Z", "id": "odd", "query": "q", "result_count": 1,
         "latency_ms": True},
    ]).events
    latency = dashboard_view(events, NOW, source="m")["latency"]
    assert latency["daily"] == [{"date": "2026-07-04", "searches": 1, "p50_ms": 12.5, "p95_ms": 12.5}]
    assert latency["untimed_searches"] == 2


def test_zero_and_low_result_queries_are_grouped_by_query(view):
    weak = view["weak_queries"]
    assert weak["zero_result"] == [{"query": "zzz nothing", "searches": 2, "last_ts": "2026-07-03T10:00:00Z",
                                    "last_id": "a00000000006", "sources": ["mcp"], "knowledge_results": 0}]
    assert weak["low_score"] == [{"query": "teardown appcontext", "searches": 2, "last_ts": "2026-07-04T10:00:00Z",
                                  "last_id": "a00000000008", "sources": ["cli", "mcp"], "best_top_score": 0.27}]
    assert (weak["zero_result_queries"], weak["low_score_queries"]) == (1, 1)
    assert weak["low_score_threshold"] == 0.3


def test_weak_queries_order_by_count_then_recency_and_stop_at_the_limit():
    from cce_core.observability.dashboard_view import WEAK_QUERIES_LIMIT

    lines = [{"event": "search", "ts": f"2026-07-0{1 + i % 3}T{i % 24:02d}:00:00Z", "id": f"z{i:03d}",
              "query": f"q{i % 30}", "result_count": 0, "empty": True} for i in range(40)]
    zero = dashboard_view(_log(lines).events, NOW, source="m")["weak_queries"]
    assert len(zero["zero_result"]) == WEAK_QUERIES_LIMIT == 25
    assert zero["zero_result_queries"] == 30
    counts = [r["searches"] for r in zero["zero_result"]]
    assert counts == sorted(counts, reverse=True) and counts[:10] == [2] * 10


def test_click_through_shows_everything_the_event_recorded(view):
    """The log keeps counts and scores per search, not the chunks; the detail says so and how to look again."""
    detail = view["searches"]["a00000000001"]
    assert detail == {
        "id": "a00000000001", "ts": "2026-07-02T09:00:00Z", "query": "parse config", "source": "cli",
        "top_k": 5, "embedder": "hash", "graph_enabled": True, "ranking": "family",
        "result_count": 5, "knowledge_results": 0, "empty": False, "low_confidence": False,
        "top_score": 0.846, "mean_score": 0.6768,
        "baseline_tokens": 60_000, "served_tokens": 6_000, "tokens_saved": 54_000, "savings_ratio": 0.9,
        "savings_by_layer": detail["savings_by_layer"],
        "latency_ms": 10.0,
        "feedback": "not_helpful",
        "votes": [{"ts": "2026-07-02T13:00:00Z", "helpful": False, "note": "wrong file: the hit was the CLI parser"}],
        "results_recorded": False,
        "rerun": "cce search 'parse config' --top-k 5",
    }
    assert detail["savings_by_layer"]["grammar"] == {"saved_tokens": 2_000, "baseline_tokens": 3_000}
    assert detail["savings_by_layer"]["total"] == {"saved_tokens": 56_000, "baseline_tokens": 63_000}


def test_every_search_the_page_lists_has_its_detail(view):
    listed = {r["id"] for r in view["metrics"]["recent_searches"]}
    listed |= {r["last_id"] for group in ("zero_result", "low_score") for r in view["weak_queries"][group]}
    assert set(view["searches"]) == listed


def test_the_rerun_command_is_quoted_for_a_shell():
    events = _log([{"event": "search", "ts": "2026-07-04T10:00:00Z", "id": "x1", "query": "it's $HOME; rm -rf /",
                    "result_count": 1, "top_k": 3, "graph_enabled": False}]).events
    detail = dashboard_view(events, NOW, source="m")["searches"]["x1"]
    assert detail["rerun"] == "cce search 'it'\"'\"'s $HOME; rm -rf /' --top-k 3 --no-graph"
    bare = _log([{"event": "search", "ts": "2026-07-04T10:00:00Z", "id": "x2", "query": "q"}]).events
    detail = dashboard_view(bare, NOW, source="m")["searches"]["x2"]
    assert detail["rerun"] == "cce search q"
    assert (detail["top_k"], detail["embedder"], detail["graph_enabled"], detail["latency_ms"]) == (
        None, None, None, None)


def test_a_workspace_view_adds_packages_and_the_workspace_usage_body(week):
    packages = [("app", week[:4]), ("web", [])]
    view = dashboard_view(week, NOW, source="ws", packages=packages)
    assert [p["package"] for p in view["metrics"]["by_package"]] == ["app", "web"]
    assert view["usage"] == usage_json(aggregate(week, NOW, 3.00, packages=packages), NOW, None, "all",
                                       workspace=True)


def test_the_view_is_plain_json(view):
    text = json.dumps(view, allow_nan=False)
    assert json.loads(text) == view

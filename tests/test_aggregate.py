"""The dashboard aggregate: the conformance anchor and the other pinned cases."""

from __future__ import annotations

import json

import pytest
from helpers import REPO_ROOT

from cce_core.observability.aggregate import aggregate, direction
from cce_core.observability.metrics import parse_iso, parse_log, read_log

NOW = parse_iso("2026-07-05T00:00:00Z")
ANCHOR_EXPECTED = REPO_ROOT.parent / "shared" / "notes" / "metrics_anchor_expected.json"


@pytest.fixture
def anchor(reference):
    log = read_log(reference / "test" / "fixture" / "base" / "metrics_sample.jsonl")
    assert (len(log.events), log.skipped) == (7, 0)
    return aggregate(log.events, NOW, 3.00)


def _line(**fields) -> str:
    return json.dumps(fields)


def test_anchor_matches_the_expected_body_exactly(anchor):
    if not ANCHOR_EXPECTED.is_file():
        pytest.skip(f"expected anchor body not found at {ANCHOR_EXPECTED}")
    expected = ANCHOR_EXPECTED.read_text(encoding="utf-8")
    assert "generated_ts" not in anchor  # only the HTTP layer adds the wall clock
    assert json.dumps(anchor, sort_keys=True, indent=2, ensure_ascii=False) + "\n" == expected


def test_anchor_totals(anchor):
    assert anchor["schema"] == "cce.metrics/v1"
    assert anchor["totals"] == {"searches": 4, "indexes": 1, "feedback": 2, "tokens_saved": 53000,
                                "cost_saved_usd": 0.16, "mean_savings_ratio": 0.525, "mean_top_score": 0.633333,
                                "helpful": 1, "not_helpful": 1, "helpful_rate": 0.5}


def test_anchor_north_star(anchor):
    savings = anchor["north_star"]["savings"]
    assert savings["current"] == {"searches": 3, "tokens_saved": 48000, "mean_savings_ratio": 0.533333}
    assert savings["prior"] == {"searches": 1, "tokens_saved": 5000, "mean_savings_ratio": 0.5}
    assert (savings["delta_ratio"], savings["direction"]) == (0.033333, "up")
    quality = anchor["north_star"]["quality"]
    assert quality["current"] == {"mean_top_score": 0.75, "empty_rate": 0.333333, "low_conf_rate": 0.0,
                                  "helpful_rate": 0.5}
    assert quality["prior"] == {"mean_top_score": 0.4, "empty_rate": 0.0, "low_conf_rate": 0.0, "helpful_rate": None}
    assert (quality["delta_top_score"], quality["direction"]) == (0.35, "up")


def test_anchor_daily_series_and_recent(anchor):
    daily = {d["date"]: d for d in anchor["series"]["daily"]}
    assert list(daily) == ["2026-06-25", "2026-07-01", "2026-07-02", "2026-07-03"]
    assert (daily["2026-07-02"]["searches"], daily["2026-07-02"]["empty_rate"], daily["2026-07-02"]["helpful"]) == (
        2, 0.5, 1)
    assert (daily["2026-07-03"]["searches"], daily["2026-07-03"]["not_helpful"]) == (0, 1)
    recent = anchor["recent_searches"]
    assert [(r["id"][:4], r["feedback"], r["source"]) for r in recent] == [
        ("cccc", "none", "cli"), ("bbbb", "not_helpful", "cli"), ("aaaa", "helpful", "cli"), ("dddd", "none", "cli")]
    assert recent[0]["empty"] is True


def test_anchor_panels(anchor):
    assert anchor["by_source"]["cli"] == {"searches": 4, "tokens_saved": 53000, "mean_savings_ratio": 0.525,
                                          "mean_top_score": 0.633333, "mean_latency_ms": 4.5}
    assert anchor["by_source"]["mcp"] == {"searches": 0, "tokens_saved": 0, "mean_savings_ratio": 0.0,
                                          "mean_top_score": 0.0, "mean_latency_ms": 0.0}
    assert anchor["secret_safety"] == {"sensitive_skipped": 0, "index_runs": 1}
    assert anchor["index_freshness"] == {"indexes": 1, "source": "local", "sha": None,
                                         "indexed_ts": "2026-07-01T09:00:00Z"}
    layers = anchor["savings_by_layer"]
    assert layers["retrieval"] == layers["total"] == {"saved_tokens": 53000, "baseline_tokens": 70000}
    assert layers["grammar"] == {"saved_tokens": 0, "baseline_tokens": 0}
    assert layers["note"] == "vs full-file baseline — not your real end-to-end agent cost"


def test_empty_log_is_a_valid_all_zero_aggregate():
    agg = aggregate([], NOW)
    assert agg["totals"] == {"searches": 0, "indexes": 0, "feedback": 0, "tokens_saved": 0, "cost_saved_usd": 0.0,
                             "mean_savings_ratio": 0.0, "mean_top_score": 0.0, "helpful": 0, "not_helpful": 0,
                             "helpful_rate": None}
    assert agg["north_star"]["savings"]["direction"] == agg["north_star"]["quality"]["direction"] == "flat"
    assert agg["index_freshness"] == {"indexes": 0, "source": None, "sha": None, "indexed_ts": None}
    assert agg["series"] == {"daily": []} and agg["recent_searches"] == []
    assert agg["savings_by_layer"]["total"] == {"saved_tokens": 0, "baseline_tokens": 0}
    unknown_only = aggregate(parse_log('{"event":"later"}\n42\n').events, NOW)
    assert unknown_only == agg


def test_a_savings_object_beats_the_legacy_fields():
    line = _line(event="search", ts="2026-07-02T10:00:00Z", id="s0", result_count=2, tokens_saved=1,
                 baseline_tokens=2, savings_ratio=0.5, top_score=0.8, source="mcp",
                 savings={"retrieval": {"saved_tokens": 900, "baseline_tokens": 1000}})
    layers = aggregate(parse_log(line).events, NOW)["savings_by_layer"]
    assert layers["retrieval"] == layers["total"] == {"saved_tokens": 900, "baseline_tokens": 1000}


def test_mcp_split_and_index_freshness():
    text = "\n".join([
        _line(event="index", ts="2026-07-01T08:00:00Z", sha="aaaa1111", source="local", sensitive_skipped=1),
        _line(event="index", ts="2026-07-02T08:00:00Z", sha="bbbb2222", source="local", sensitive_skipped=3),
        _line(event="search", ts="2026-07-02T10:00:00Z", id="s0", result_count=2, tokens_saved=100,
              savings_ratio=0.5, top_score=0.8, source="cli"),
        _line(event="search", ts="2026-07-02T11:00:00Z", id="s1", result_count=3, tokens_saved=300,
              savings_ratio=0.75, top_score=0.9, source="mcp"),
    ])
    agg = aggregate(parse_log(text).events, NOW)
    assert agg["secret_safety"] == {"sensitive_skipped": 4, "index_runs": 2}
    assert (agg["index_freshness"]["sha"], agg["index_freshness"]["indexed_ts"]) == ("bbbb2222",
                                                                                     "2026-07-02T08:00:00Z")
    mcp = agg["by_source"]["mcp"]
    assert (mcp["searches"], mcp["tokens_saved"], mcp["mean_savings_ratio"], mcp["mean_top_score"]) == (
        1, 300, 0.75, 0.9)
    assert agg["by_source"]["cli"]["searches"] == 1


def test_latest_index_ties_break_on_log_position_and_only_exact_mcp_is_mcp():
    text = "\n".join([
        _line(event="index", ts="2026-07-02T08:00:00Z", sha="first"),
        _line(event="index", ts="2026-07-02T08:00:00Z", sha="second"),
        _line(event="index", ts="2026-07-01T08:00:00Z", sha="older"),
        _line(event="search", ts="2026-07-02T10:00:00Z", id="s", result_count=1, source="MCP"),
    ])
    agg = aggregate(parse_log(text).events, NOW)
    assert agg["index_freshness"]["sha"] == "second"
    assert (agg["by_source"]["cli"]["searches"], agg["by_source"]["mcp"]["searches"]) == (1, 0)
    assert agg["recent_searches"][0]["source"] == "MCP"


def test_feedback_resolution_latest_wins_and_windows_are_half_open():
    text = "\n".join([
        _line(event="search", ts="2026-06-28T00:00:00Z", id="edge", result_count=1, top_score=0.5),  # now-7d: current
        _line(event="search", ts="2026-06-21T00:00:00Z", id="old", result_count=1, top_score=0.2),  # now-14d: prior
        _line(event="search", ts="2026-06-20T23:59:59Z", id="gone", result_count=1),  # before both windows
        _line(event="search", ts="2026-07-05T00:00:00Z", id="now", result_count=1),  # at now: outside
        _line(event="feedback", ts="2026-07-01T00:00:00Z", target_id="edge", helpful=True),
        _line(event="feedback", ts="2026-07-01T00:00:00Z", target_id="edge", helpful=False),
        _line(event="feedback", ts="2026-06-30T00:00:00Z", target_id="old", helpful=True),
        _line(event="feedback", ts="2026-06-29T00:00:00Z", target_id="old", helpful=False),
    ])
    agg = aggregate(parse_log(text).events, NOW)
    assert agg["north_star"]["savings"]["current"]["searches"] == 1
    assert agg["north_star"]["savings"]["prior"]["searches"] == 1
    assert agg["north_star"]["quality"]["delta_top_score"] == 0.3
    verdicts = {r["id"]: r["feedback"] for r in agg["recent_searches"]}
    assert verdicts == {"now": "none", "edge": "not_helpful", "old": "helpful", "gone": "none"}
    assert [r["id"] for r in agg["recent_searches"]] == ["now", "edge", "old", "gone"]


def test_recent_is_capped_at_twenty_newest_first():
    lines = [_line(event="search", ts=f"2026-07-01T{h:02d}:00:00Z", id=f"q{h}") for h in range(24)]
    recent = aggregate(parse_log("\n".join(lines)).events, NOW)["recent_searches"]
    assert [r["id"] for r in recent] == [f"q{h}" for h in range(23, 3, -1)]


def test_means_round_half_away_from_zero_and_cost_uses_price():
    line = _line(event="search", ts="2026-07-01T00:00:00Z", id="a", tokens_saved=2_500_000,
                 savings_ratio=0.0000005, result_count=1, top_score=0.1234565)
    agg = aggregate(parse_log(line).events, NOW, price=0.5)
    assert agg["totals"]["cost_saved_usd"] == 1.25
    assert agg["totals"]["mean_savings_ratio"] == 0.000001
    assert agg["totals"]["mean_top_score"] == 0.123457


def test_direction_rule():
    assert direction(0.01) == "up"
    assert direction(-0.01) == "down"
    assert direction(0.0) == "flat"
    assert direction(1e-12) == direction(-1e-12) == "flat"


def test_recent_rows_carry_knowledge_counts_only_when_knowledge_was_served():
    lines = [_line(event="search", ts="2026-07-01T00:00:00Z", id="code", result_count=2),
             _line(event="search", ts="2026-07-01T01:00:00Z", id="both", result_count=1, knowledge_results=2)]
    recent = aggregate(parse_log("\n".join(lines)).events, NOW)["recent_searches"]
    assert recent[0]["id"] == "both" and recent[0]["knowledge_results"] == 2
    assert recent[1]["id"] == "code" and "knowledge_results" not in recent[1]  # the family's row, unchanged


def test_numbers_too_large_to_round_come_out_infinite_not_as_a_crash():
    """A forged line (scores of 1e305) once crashed the aggregate, so `cce usage` and both dashboard routes.

    The family's engines scale by 1e6 before rounding; a value that overflows there comes out infinite (and a
    JSON writer prints it as null), and the figures of every other event are untouched.
    """
    line = _line(event="search", ts="2026-07-04T10:00:00Z", id="f", result_count=1, top_score=1e305,
                 savings_ratio=1e305, latency_ms=1e305, source="mcp")
    agg = aggregate(parse_log(line).events, NOW)
    assert agg["totals"]["mean_top_score"] == float("inf")
    assert agg["by_source"]["mcp"]["mean_latency_ms"] == float("inf")
    assert agg["recent_searches"][0]["top_score"] == float("inf")
    assert agg["north_star"]["quality"]["direction"] == "up"
    assert agg["by_source"]["cli"]["mean_top_score"] == 0.0

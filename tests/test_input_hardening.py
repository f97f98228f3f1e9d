"""Numbers and instants a user or a forged log can feed the usage summary and the dashboard.

The family's later fix sweep found a ``--since`` offset read as UTC, impossible
dates rolled into the next month, a multibyte timezone crashing the parser,
and roll-up sums overflowing on a forged ``tokens_saved``. Python integers do
not overflow, but the figures must still equal the other engines' (clamped at
2**64-1) and every bad value must be one ``error:`` line, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run_cce

from cce_core.foundation.errors import CceError
from cce_core.observability.aggregate import U64_MAX, aggregate, saturating_sum
from cce_core.observability.metrics import parse_iso, parse_log
from cce_core.observability.usage import parse_instant, parse_since

NOW = parse_iso("2026-07-05T00:00:00Z")
assert NOW is not None


@pytest.mark.parametrize(("given", "utc"), [
    ("2026-07-01T09:45:00+09:00", "2026-07-01T00:45:00Z"),
    ("2026-07-01T09:45:00+0900", "2026-07-01T00:45:00Z"),
    ("2026-07-01T09:45:00+09", "2026-07-01T00:45:00Z"),
    ("2026-07-01T00:45:00-05:00", "2026-07-01T05:45:00Z"),
    ("2026-07-01T09:45:00Z", "2026-07-01T09:45:00Z"),
    ("2026-07-01T09:45:00z", "2026-07-01T09:45:00Z"),
    ("2026-07-01T09:45:00", "2026-07-01T09:45:00Z"),
    ("2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"),
    ("2000-02-29T00:00:00Z", "2000-02-29T00:00:00Z"),
])
def test_an_offset_is_applied(given: str, utc: str) -> None:
    assert parse_instant(given) == parse_iso(utc)
    assert parse_since(given, NOW).cutoff_secs == parse_iso(utc)


@pytest.mark.parametrize("bad", [
    "2026-02-31T00:00:00Z", "2026-04-31T00:00:00Z", "2025-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-02-31",
    "2026-07-01T09:45:00.500Z", "2026-07-01T09:45:00+1€", "2026-07-01T09:45:00+€€:00", "2026-07-01T09:45:00Zé",
    "2026-07-01T09:45:00+24:00", "2026-07-01T09:45:00+09:60", "2026-07-01T09:45:00+09:", "2026-07-01T09:45:00 UTC",
    "2026-07-01T09:45:00+9", "+026-07-01T09:45:00Z", "2026-07-01T09:45:00ZZ", "2026-07-01T09:45:00+09:00:00",
    "999999999999999d", "99999999999999999999w", "9223372036854775807h",
])
def test_a_malformed_instant_or_span_is_refused(bad: str) -> None:
    with pytest.raises(CceError) as info:
        parse_since(bad, NOW)
    assert str(info.value).startswith("invalid --since value ")
    assert "90m, 24h, 7d, 4w" in str(info.value)


def test_usage_since_with_a_multibyte_timezone_is_one_error_line(tmp_path: Path) -> None:
    done = run_cce("usage", tmp_path, "--since", "2026-07-01T09:45:00+1€")
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: invalid --since value")
    assert "Traceback" not in done.stderr
    assert run_cce("usage", tmp_path, "--since", "2026-07-01T09:45:00+09:00").returncode == 0


def _search(event_id: str, ts: str, tokens: int, source: str = "cli") -> str:
    return json.dumps({"schema": "cce.metrics/v1", "event": "search", "ts": ts, "id": event_id, "query": "q",
                       "result_count": 1, "tokens_saved": tokens, "savings_ratio": 0.5, "top_score": 0.9,
                       "empty": False, "low_confidence": False, "source": source})


def test_forged_token_counts_clamp_at_64_bits(capsys: pytest.CaptureFixture[str]) -> None:
    text = "\n".join([_search("aaaaaaaaaaaa", "2026-07-04T10:00:00Z", U64_MAX),
                      _search("bbbbbbbbbbbb", "2026-07-04T11:00:00Z", U64_MAX)]) + "\n"
    log = parse_log(text)
    assert len(log.events) == 2
    agg = aggregate(log.events, NOW, 3.0)
    assert agg["totals"]["tokens_saved"] == U64_MAX
    assert agg["by_source"]["cli"]["tokens_saved"] == U64_MAX
    assert agg["north_star"]["savings"]["current"]["tokens_saved"] == U64_MAX
    day = next(d for d in agg["series"]["daily"] if d["date"] == "2026-07-04")
    assert day["tokens_saved"] == U64_MAX
    assert "clamped" in capsys.readouterr().err
    # One value past 64 bits is read as 0, as the family's log reader reads it.
    [event] = parse_log(_search("cccccccccccc", "2026-07-04T10:00:00Z", U64_MAX + 1) + "\n").events
    assert event.tokens_saved == 0


def test_saturating_sum_is_a_plain_sum_below_the_clamp(capsys: pytest.CaptureFixture[str]) -> None:
    assert saturating_sum([1, 2, 3], "x") == 6
    assert saturating_sum([], "x") == 0
    assert saturating_sum([U64_MAX, 0], "x") == U64_MAX
    assert capsys.readouterr().err == ""
    assert saturating_sum([U64_MAX, 1], "x") == U64_MAX
    assert capsys.readouterr().err.startswith("warning: x overflowed 64 bits")


def test_a_forged_log_is_served_by_the_dashboard_as_json(tmp_path: Path) -> None:
    from dashboard_proc import Dashboard

    log = tmp_path / "metrics.jsonl"
    log.write_text(_search("aaaaaaaaaaaa", "2026-07-04T10:00:00Z", U64_MAX) + "\n"
                   + _search("bbbbbbbbbbbb", "2026-07-04T11:00:00Z", U64_MAX) + "\n", encoding="utf-8")
    d = Dashboard("--metrics", log, "--port", "0", "--no-open")
    try:
        body = d.get_json("/api/metrics")
        assert isinstance(body, dict) and body["totals"]["tokens_saved"] == U64_MAX
    finally:
        d.stop()


@pytest.mark.parametrize("price", ["inf", "nan", "1e400"])
def test_a_non_finite_dashboard_price_is_refused(price: str) -> None:
    done = run_cce("dashboard", "--price", price, "--port", "0", timeout=30)
    assert done.returncode == 1
    assert done.stderr.startswith("error: invalid --price value") and done.stderr.count("\n") == 1

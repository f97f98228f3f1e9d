"""``cce usage``: the byte-pinned human block, the cce.usage/v1 JSON, the flags and their errors.

The golden log is the reference's ``test/fixture/usage/metrics_usage.jsonl``:
one index event, one cli search (2026-07-01 09:00) and two mcp searches
(2026-07-05 09:52 and 09:58).
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
from helpers import run_cce

from cce_core.foundation.errors import CceError
from cce_core.observability.aggregate import aggregate
from cce_core.observability.metrics import json_float, parse_iso, parse_log, read_log
from cce_core.observability.usage import (
    SinceCut,
    debug_quote,
    filter_since,
    parse_since,
    parse_source,
    project,
    render_human,
    short_tokens,
    thousands,
)

NOW = parse_iso("2026-07-06T10:00:00Z")
SINCE_HELP = ("use a relative duration (90m, 24h, 7d, 4w) or an ISO UTC instant/date "
              "(2026-07-01T09:00:00Z, 2026-07-01)")

ALL_TIME = (
    "CCE usage — all time\n"
    "  agent (mcp) : 2 searches · saved ~16,500 tok (88%) · quality 0.79 · 58 ms avg\n"
    "  human (cli) : 1 searches · saved ~ 2,100 tok (81%) · quality 0.74 · 12 ms avg\n"
    "  recent (newest first)\n"
    '    mcp  09:58  "how does the payment flow create a new case"  5 hits  ~8.6k saved\n'
    '    mcp  09:52  "where is the retry idempotency boundary"      5 hits  ~7.9k saved\n'
    '    cli  09:00  "rrf fusion constant"                          3 hits  ~2.1k saved\n'
)

SINCE_JULY_5_MCP = (
    "CCE usage — since 2026-07-05T00:00:00Z\n"
    "  agent (mcp) : 2 searches · saved ~16,500 tok (88%) · quality 0.79 · 58 ms avg\n"
    "  recent (newest first)\n"
    '    mcp  09:58  "how does the payment flow create a new case"  5 hits  ~8.6k saved\n'
    '    mcp  09:52  "where is the retry idempotency boundary"      5 hits  ~7.9k saved\n'
)

JSON_7D = """{
  "schema": "cce.usage/v1",
  "generated_ts": "2026-07-06T10:00:00Z",
  "window": {
    "since": "2026-06-29T10:00:00Z",
    "until": "2026-07-06T10:00:00Z"
  },
  "source_filter": "all",
  "totals": {
    "searches": 3,
    "tokens_saved": 18600,
    "mean_savings_ratio": 0.856667,
    "mean_top_score": 0.773333
  },
  "by_source": {
    "cli": {
      "mean_latency_ms": 12.0,
      "mean_savings_ratio": 0.81,
      "mean_top_score": 0.74,
      "searches": 1,
      "tokens_saved": 2100
    },
    "mcp": {
      "mean_latency_ms": 58.0,
      "mean_savings_ratio": 0.88,
      "mean_top_score": 0.79,
      "searches": 2,
      "tokens_saved": 16500
    }
  },
  "recent": [
    {
      "ts": "2026-07-05T09:58:00Z",
      "source": "mcp",
      "query": "how does the payment flow create a new case",
      "result_count": 5,
      "tokens_saved": 8600
    },
    {
      "ts": "2026-07-05T09:52:00Z",
      "source": "mcp",
      "query": "where is the retry idempotency boundary",
      "result_count": 5,
      "tokens_saved": 7900
    },
    {
      "ts": "2026-07-01T09:00:00Z",
      "source": "cli",
      "query": "rrf fusion constant",
      "result_count": 3,
      "tokens_saved": 2100
    }
  ]
}
"""

REJECTED_SINCE = ["", "yesterday", "24", "h", "0d", "-3d", "2026-13-40", "1.5h"]


@pytest.fixture
def usage_log(reference) -> Path:
    path = reference / "test" / "fixture" / "usage" / "metrics_usage.jsonl"
    if not path.is_file():
        pytest.skip(f"usage golden log not found at {path} (set CCE_REFERENCE_DIR to the shared/reference folder)")
    return path


def _events(path: Path):
    return read_log(path).events


def _search_line(i: int, *, source: str = "cli", query: str | None = None, ts: str | None = None,
                 hits: int = 1, saved: int = 10) -> str:
    return json.dumps({
        "schema": "cce.metrics/v1", "event": "search", "ts": ts or f"2026-07-05T09:{i:02d}:00Z",
        "id": f"q{i:011d}", "query": query if query is not None else f"q{i}", "result_count": hits,
        "tokens_saved": saved, "savings_ratio": 0.5, "top_score": 0.4, "empty": False,
        "low_confidence": False, "latency_ms": 1.0, "source": source,
    }) + "\n"


# --------------------------------------------------------------------------- the real CLI


def _ok(proc) -> str:
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return proc.stdout


def test_all_time_block_is_byte_pinned(usage_log):
    assert _ok(run_cce("usage", "--metrics", usage_log)) == ALL_TIME


def test_iso_since_and_mcp_source_narrow_the_block(usage_log):
    proc = run_cce("usage", "--since", "2026-07-05", "--source", "mcp", "--metrics", usage_log)
    assert _ok(proc) == SINCE_JULY_5_MCP


def test_flag_values_are_case_insensitive(usage_log):
    proc = run_cce("usage", "--since", " 2026-07-05 ", "--source", "MCP", "--metrics", usage_log)
    assert _ok(proc) == SINCE_JULY_5_MCP


def test_a_window_after_every_event_prints_the_empty_block(usage_log):
    proc = run_cce("usage", "--since", "2027-01-01", "--metrics", usage_log)
    assert _ok(proc) == "CCE usage — since 2027-01-01T00:00:00Z\n  no searches in this window\n"


def test_relative_since_header_counts_back_from_the_clock(usage_log):
    before = int(time.time())
    out = _ok(run_cce("usage", "--since", "4W", "--metrics", usage_log))
    after = int(time.time())
    header = out.splitlines()[0]
    m = re.fullmatch(r"CCE usage — last 4w \(since (\S+)\)", header)
    assert m, header
    cutoff = parse_iso(m.group(1))
    assert before - 28 * 86_400 <= cutoff <= after - 28 * 86_400


@pytest.mark.parametrize("bad", REJECTED_SINCE)
def test_rejected_since_values_are_one_error_line(usage_log, bad):
    proc = run_cce("usage", f"--since={bad}", "--metrics", usage_log)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == f'error: invalid --since value "{bad}" — {SINCE_HELP}\n'


@pytest.mark.parametrize(("given", "echoed"), [("agents", "agents"), ("AGENTS", "agents"), ("", "")])
def test_unknown_source_is_one_error_line(usage_log, given, echoed):
    proc = run_cce("usage", f"--source={given}", "--metrics", usage_log)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == f'error: invalid --source value "{echoed}" — use mcp, cli, or all\n'


def test_source_is_checked_before_since(usage_log):
    proc = run_cce("usage", "--since=yesterday", "--source=agents", "--metrics", usage_log)
    assert proc.returncode == 1
    assert proc.stderr.startswith('error: invalid --source value "agents"')


def test_json_matches_the_aggregate_field_for_field(usage_log):
    out = _ok(run_cce("usage", "--json", "--metrics", usage_log))
    assert out.endswith("}\n")
    body = json.loads(out)
    assert list(body) == ["schema", "generated_ts", "window", "source_filter", "totals", "by_source", "recent"]
    assert body["schema"] == "cce.usage/v1"
    assert body["source_filter"] == "all"
    assert body["window"]["since"] is None
    assert body["window"]["until"] == body["generated_ts"]

    agg = aggregate(_events(usage_log), NOW)
    assert list(body["totals"]) == ["searches", "tokens_saved", "mean_savings_ratio", "mean_top_score"]
    for key, value in body["totals"].items():
        assert value == agg["totals"][key], key
    assert body["by_source"] == agg["by_source"]
    for split in body["by_source"].values():
        assert list(split) == sorted(split)
    assert len(body["recent"]) == len(agg["recent_searches"])
    for row, want in zip(body["recent"], agg["recent_searches"], strict=True):
        assert list(row) == ["ts", "source", "query", "result_count", "tokens_saved"]
        assert row == {key: want[key] for key in row}
    assert body["by_source"]["mcp"] == {"mean_latency_ms": 58.0, "mean_savings_ratio": 0.88, "mean_top_score": 0.79,
                                        "searches": 2, "tokens_saved": 16500}


def test_json_keeps_both_splits_whatever_the_source_filter(usage_log):
    body = json.loads(_ok(run_cce("usage", "--json", "--source", "mcp", "--metrics", usage_log)))
    assert body["source_filter"] == "mcp"
    assert body["by_source"]["cli"]["searches"] == 1
    assert body["by_source"]["mcp"]["searches"] == 2
    assert [r["source"] for r in body["recent"]] == ["mcp", "mcp", "cli"]


def test_the_log_is_found_from_dir_store_positional_and_cwd(usage_log, tmp_path):
    project_dir = tmp_path / "proj"
    (project_dir / ".cce").mkdir(parents=True)
    shutil.copy(usage_log, project_dir / ".cce" / "metrics.jsonl")
    assert _ok(run_cce("usage", "--dir", project_dir)) == ALL_TIME
    assert _ok(run_cce("usage", project_dir)) == ALL_TIME
    assert _ok(run_cce("usage", "--store", project_dir / ".cce" / "index.cce")) == ALL_TIME
    assert _ok(run_cce("usage", cwd=project_dir)) == ALL_TIME
    # --metrics beats --store, which beats --dir.
    assert _ok(run_cce("usage", "--dir", tmp_path, "--store", project_dir / ".cce" / "index.cce")) == ALL_TIME


def test_a_missing_log_is_an_empty_window(tmp_path):
    proc = run_cce("usage", "--metrics", tmp_path / "nowhere.jsonl")
    assert _ok(proc) == "CCE usage — all time\n  no searches in this window\n"


# --------------------------------------------------------------------------- the projection, with an injected now


def test_json_for_the_last_seven_days_is_byte_pinned(usage_log):
    assert project(_events(usage_log), NOW, since="7d", as_json=True) == JSON_7D


def test_human_block_from_the_projection_matches_the_cli_pin(usage_log):
    assert project(_events(usage_log), NOW) == ALL_TIME


def test_relative_window_shows_a_zero_line_for_an_idle_source(usage_log):
    assert project(_events(usage_log), NOW, since="48h") == (
        "CCE usage — last 48h (since 2026-07-04T10:00:00Z)\n"
        "  agent (mcp) : 2 searches · saved ~16,500 tok (88%) · quality 0.79 · 58 ms avg\n"
        "  human (cli) : 0 searches · saved ~     0 tok (0%) · quality 0.00 · 0 ms avg\n"
        "  recent (newest first)\n"
        '    mcp  09:58  "how does the payment flow create a new case"  5 hits  ~8.6k saved\n'
        '    mcp  09:52  "where is the retry idempotency boundary"      5 hits  ~7.9k saved\n'
    )


def test_cli_source_realigns_to_the_lines_it_shows(usage_log):
    assert project(_events(usage_log), NOW, source="cli") == (
        "CCE usage — all time\n"
        "  human (cli) : 1 searches · saved ~2,100 tok (81%) · quality 0.74 · 12 ms avg\n"
        "  recent (newest first)\n"
        '    cli  09:00  "rrf fusion constant"  3 hits  ~2.1k saved\n'
    )


def test_filtered_source_with_no_rows_keeps_its_zero_line(usage_log):
    assert project(_events(usage_log), NOW, since="2026-07-05", source="cli") == (
        "CCE usage — since 2026-07-05T00:00:00Z\n"
        "  human (cli) : 0 searches · saved ~0 tok (0%) · quality 0.00 · 0 ms avg\n"
    )


def test_empty_relative_window(usage_log):
    assert project(_events(usage_log), NOW, since="1h") == (
        "CCE usage — last 1h (since 2026-07-06T09:00:00Z)\n  no searches in this window\n"
    )


def test_recent_rows_stop_at_ten_with_an_elision_line():
    log = parse_log("".join(_search_line(i) for i in range(12)))
    out = project(log.events, NOW)
    assert out.count(" hits ") == 10
    assert out.endswith("    … (2 more; --json for all)\n")
    assert len(json.loads(project(log.events, NOW, as_json=True))["recent"]) == 12


def test_long_queries_are_cut_and_columns_align():
    long_query = "x" * 45
    log = parse_log(_search_line(1, query=long_query, hits=12, saved=310_880)
                    + _search_line(2, query="ok", ts="2026-07-05T10:00:00Z", source="mcp", saved=999))
    lines = project(log.events, NOW).splitlines()
    assert lines[-2] == '    mcp  10:00  "ok"                                             1 hits  ~999 saved'
    assert lines[-1] == f'    cli  09:01  "{"x" * 43}…"  12 hits  ~310k saved'


def test_a_timestamp_too_short_for_a_clock_shows_dashes():
    agg = {"totals": {"searches": 1}, "by_source": {},
           "recent_searches": [{"ts": "2026-07-05", "source": "cli", "query": "q", "result_count": 1,
                                "tokens_saved": 5}]}
    assert render_human(agg, None).splitlines()[-1] == '    cli  --:--  "q"  1 hits  ~5 saved'


def test_unknown_events_pass_the_window_and_old_ones_do_not(usage_log):
    log = parse_log((usage_log.read_text(encoding="utf-8")) + '{"event":"later","ts":"2000-01-01T00:00:00Z"}\n')
    kept = filter_since(log.events, parse_iso("2026-07-05T00:00:00Z"))
    assert [e.kind for e in kept] == ["search", "search", "unknown"]


# --------------------------------------------------------------------------- flag parsing


@pytest.mark.parametrize(("spec", "seconds", "label"), [
    ("90m", 90 * 60, "90m"), ("24h", 24 * 3600, "24h"), ("7d", 7 * 86_400, "7d"), ("4w", 28 * 86_400, "4w"),
    ("24H", 24 * 3600, "24h"), (" 7D ", 7 * 86_400, "7d"), ("007d", 7 * 86_400, "007d"),
])
def test_relative_since(spec, seconds, label):
    assert parse_since(spec, NOW) == SinceCut(NOW - seconds, label)


@pytest.mark.parametrize(("spec", "iso"), [
    ("2026-07-01T09:00:00Z", "2026-07-01T09:00:00Z"),
    ("2026-07-01", "2026-07-01T00:00:00Z"),
    ("\t2026-07-01\n", "2026-07-01T00:00:00Z"),
])
def test_iso_since(spec, iso):
    cut = parse_since(spec, NOW)
    assert cut == SinceCut(parse_iso(iso), None)
    assert cut.cutoff_iso == iso


@pytest.mark.parametrize("bad", [*REJECTED_SINCE, "  ", "0w", "7 d", "+3d", "1e3h", "٣d", "2026-07",
                                 "2026-07-01T09:00", "99999999999999999999d", "16000000000000w"])
def test_rejected_since(bad):
    with pytest.raises(CceError) as info:
        parse_since(bad, NOW)
    assert str(info.value) == f"invalid --since value {debug_quote(bad)} — {SINCE_HELP}"


def test_since_error_quotes_the_value_on_one_line():
    assert debug_quote('a"b\\c\n\t\0\x7f\u00a0é\u0301 ') == '"a\\"b\\\\c\\n\\t\\0\\u{7f}\\u{a0}é\\u{301} "'
    with pytest.raises(CceError) as info:
        parse_since("two\nweeks", NOW)
    assert len(str(info.value).splitlines()) == 1


@pytest.mark.parametrize(("given", "want"), [("all", "all"), ("mcp", "mcp"), ("CLI", "cli"), (" all ", "all")])
def test_source_values(given, want):
    assert parse_source(given) == want


def test_unknown_source():
    with pytest.raises(CceError, match=r'^invalid --source value "agents" — use mcp, cli, or all$'):
        parse_source(" Agents ")


# --------------------------------------------------------------------------- number forms


def test_thousands_and_short_token_forms():
    assert [thousands(n) for n in (0, 999, 38_628, 1_234_567)] == ["0", "999", "38,628", "1,234,567"]
    assert [short_tokens(n) for n in (0, 999, 1000, 8600, 99_950, 310_880)] == [
        "0", "999", "1.0k", "8.6k", "100.0k", "310k"]


@pytest.mark.parametrize(("x", "text"), [
    (12.0, "12.0"), (0.856667, "0.856667"), (0.0, "0.0"), (-0.0, "-0.0"), (1e-4, "0.0001"), (1e-5, "0.00001"),
    (1e-6, "1e-6"), (1.5e-7, "1.5e-7"), (1e15, "1000000000000000.0"), (1e16, "1e16"), (1.5e16, "1.5e16"),
    (9999999999999998.0, "9999999999999998.0"), (0.1 + 0.2, "0.30000000000000004"), (-2.5, "-2.5"),
    (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e308"), (float("nan"), "null"),
])
def test_json_floats_are_written_like_the_reference(x, text):
    assert json_float(x) == text


def test_a_forged_huge_score_is_printed_not_a_crash(tmp_path):
    log = tmp_path / "metrics.jsonl"
    log.write_text('{"event":"search","ts":"2026-07-04T10:00:00Z","id":"a","query":"q","result_count":1,'
                   '"top_score":1e305,"savings_ratio":1e305,"latency_ms":1e305,"source":"mcp"}\n', encoding="utf-8")
    human = run_cce("usage", "--metrics", log)
    assert human.returncode == 0, human.stderr
    assert "agent (mcp) : 1 searches · saved ~0 tok (9223372036854775807%) · quality inf · inf ms avg" in human.stdout
    as_json = run_cce("usage", "--json", "--metrics", log)
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["by_source"]["mcp"]["mean_top_score"] is None

"""The metrics log: ISO time, ids, the fail-open writer, the forgiving reader, savings buckets, grammar."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from cce_core.observability import metrics as m
from cce_core.observability.result_line import GrammarRow, compact_line, grammar_savings, render_compact, render_verbose
from cce_core.observability.savings import (
    BUCKET_NAMES,
    SAVINGS_NOTE,
    Bucket,
    buckets_from_event,
    search_buckets,
    sum_by_layer,
)
from cce_core.observability.search_record import build_search_record


def _line(**fields) -> str:
    return json.dumps(fields, separators=(", ", ": "))


# -- time ---------------------------------------------------------------------


def test_iso_round_trips_and_known_instants():
    assert m.parse_iso("1970-01-01T00:00:00Z") == 0
    now = m.parse_iso("2026-07-05T00:00:00Z")
    assert m.format_iso(now) == "2026-07-05T00:00:00Z"
    assert m.date_str(now) == "2026-07-05"
    ten = m.parse_iso("2026-07-01T10:00:00Z")
    assert ten - m.parse_iso("2026-07-01T00:00:00Z") == 10 * 3600
    assert m.format_iso(-1) == "1969-12-31T23:59:59Z"
    assert m.date_str(-1) == "1969-12-31"
    for secs in (0, 951_782_400, 4_102_444_800, 1_782_900_000):  # incl. 2000-02-29 and 2100-01-01
        assert m.parse_iso(m.format_iso(secs)) == secs


@pytest.mark.parametrize("text", [
    "", "not-a-date", "2026-07-01", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-07-00T00:00:00Z",
    "2026-07-32T00:00:00Z", "2026-07-01T24:00:00Z", "2026-07-01T99:00:00Z", "2026-07-01T00:60:00Z",
    "2026-07-01T00:00:61Z", "2026/07/01T00:00:00Z", "2026-07-01T00-00:00Z", "２026-07-01T00:00:00Z",
    "2026-07-01T 1:00:00Z", "2026-07-01T0_:00:00Z", "20a6-07-01T00:00:00Z", "2026-07-+-T00:00:00Z",
])
def test_malformed_timestamps_parse_to_none(text):
    assert m.parse_iso(text) is None


def test_iso_parse_quirks_are_kept():
    base = m.parse_iso("2026-07-01T10:00:00Z")
    assert m.parse_iso("2026-07-01 10:00:00") == base  # the T is not checked
    assert m.parse_iso("2026-07-01x10:00:00+05:00") == base  # offsets ignored, always UTC
    assert m.parse_iso("2026-07-01T10:00:00.123456Z") == base  # suffix ignored
    assert m.parse_iso("2026-07-01T10:00:60Z") == base + 60  # leap second accepted
    assert m.parse_iso("2026-02-31T00:00:00Z") == m.parse_iso("2026-03-03T00:00:00Z")  # day 31 rolls over
    assert m.parse_iso("+026-07-01T10:00:00Z") == m.parse_iso("0026-07-01T10:00:00Z")  # signed fields
    assert m.parse_iso("2026-+7-01T10:00:00Z") == base
    assert m.parse_iso("2026-07-01T-1:00:00Z") == m.parse_iso("2026-07-01T00:00:00Z") - 3600


# -- ids and the writer -------------------------------------------------------


def test_event_ids_are_12_lowercase_hex_and_unique():
    ids = {m.new_event_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"[0-9a-f]{12}", i) for i in ids)


def _record(**over) -> m.SearchRecord:
    base = dict(query="login", top_k=5, graph_enabled=True, embedder="hash", result_count=3, baseline_tokens=40000,
                served_tokens=8000, tokens_saved=32000, savings_ratio=0.8, top_score=0.9, mean_score=0.7, empty=False,
                low_confidence=False, latency_ms=5.0, source="cli", chunk_baseline_tokens=8000,
                chunk_saved_tokens=6000, grammar_baseline_tokens=260, grammar_saved_tokens=150)
    base.update(over)
    return m.SearchRecord(**base)


def test_written_events_round_trip_with_an_injected_clock_and_ids(tmp_path):
    path = tmp_path / ".cce" / m.METRICS_FILE
    ids = iter(["aaaaaaaaaaaa", "000000000002", "000000000003"])
    w = m.MetricsWriter(path, clock=lambda: "2026-07-05T13:04:11Z", ids=lambda: next(ids))
    assert w.log_search(_record()) == "aaaaaaaaaaaa"
    assert w.log_feedback("aaaaaaaaaaaa", True, "spot on") == "000000000002"
    assert w.log_index(m.IndexRecord(files_indexed=2, chunks=7, index_bytes=99, duration_ms=1.5,
                                     embedder="hash", sha=None, sensitive_skipped=1)) == "000000000003"
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and len(lines) == 4
    first = json.loads(lines[0])
    assert list(first) == sorted(first)  # keys sorted, compact
    assert " " not in lines[0].replace("spot on", "")
    assert set(first) == {"baseline_tokens", "embedder", "empty", "event", "graph_enabled", "id", "latency_ms",
                          "low_confidence", "mean_score", "query", "result_count", "savings", "savings_ratio",
                          "schema", "served_tokens", "source", "tokens_saved", "top_k", "top_score", "ts"}
    assert list(first["savings"]) == sorted(BUCKET_NAMES)
    assert first["savings"]["grammar"] == {"baseline_tokens": 260, "saved_tokens": 150}
    assert json.loads(lines[2])["sha"] is None and json.loads(lines[2])["full"] is True

    log = m.read_log(path)
    assert (log.skipped, len(log.events)) == (0, 3)
    s, f, x = log.events
    assert (s.kind, s.id, s.ts, s.ts_secs) == ("search", "aaaaaaaaaaaa", "2026-07-05T13:04:11Z",
                                                m.parse_iso("2026-07-05T13:04:11Z"))
    assert (s.tokens_saved, s.baseline_tokens, s.savings_ratio, s.source, s.empty) == (32000, 40000, 0.8, "cli", False)
    assert s.savings["chunk_compression"] == Bucket(6000, 8000)
    assert s.savings["grammar"] == Bucket(150, 260)
    assert (f.kind, f.target_id, f.helpful, f.note) == ("feedback", "aaaaaaaaaaaa", True, "spot on")
    assert (x.kind, x.sha, x.source, x.sensitive_skipped) == ("index", None, "local", 1)
    assert [e.position for e in log.events] == [0, 1, 2]


def test_clock_may_return_epoch_seconds(tmp_path):
    path = tmp_path / "metrics.jsonl"
    m.MetricsWriter(path, clock=lambda: 0, ids=lambda: "0" * 12).log_feedback("q", False, "")
    assert json.loads(path.read_text())["ts"] == "1970-01-01T00:00:00Z"


def test_disabled_writer_writes_nothing(tmp_path):
    path = tmp_path / "sub" / "metrics.jsonl"
    w = m.MetricsWriter(path, enabled=False)
    assert w.log_search(_record()) is None
    assert w.log_feedback("x", True, "") is None
    assert w.log_index(m.IndexRecord(1, 2, 3, 4.0, "hash")) is None
    assert not path.exists() and not path.parent.exists()


def test_unwritable_path_warns_and_returns_no_id(tmp_path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory")
    path = blocker / "sub" / "metrics.jsonl"
    assert m.MetricsWriter(path).log_search(_record(result_count=0, empty=True)) is None
    err = capsys.readouterr().err
    assert err.startswith(f"warning: could not write metrics to {path}: ") and err.count("\n") == 1


def test_non_ascii_is_written_raw_and_floats_like_the_reference(tmp_path):
    path = tmp_path / "metrics.jsonl"
    w = m.MetricsWriter(path, clock=lambda: 0, ids=lambda: "a" * 12)
    w.log_search(_record(query="café ünïcode \"quoted\"\n", latency_ms=1e-7, savings_ratio=1e-05, top_score=0.0))
    text = path.read_bytes().decode("utf-8")
    assert '"query":"café ünïcode \\"quoted\\"\\n"' in text
    assert '"latency_ms":1e-7' in text and '"savings_ratio":0.00001' in text and '"top_score":0.0' in text


@pytest.mark.parametrize(("value", "text"), [
    (0.0, "0.0"), (-0.0, "-0.0"), (2.0, "2.0"), (0.525, "0.525"), (123.456, "123.456"), (1e15, "1000000000000000.0"),
    (1e16, "1e16"), (1.5e17, "1.5e17"), (1e-5, "0.00001"), (1.25e-6, "1.25e-6"), (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e308"), (float("nan"), "null"), (float("inf"), "null"),
])
def test_float_text(value, text):
    assert m.dumps_compact(value) == text


# -- the reader -----------------------------------------------------------------


def test_blank_corrupt_unknown_and_ts_less_lines():
    text = "\n".join([
        "",
        "not json at all",
        _line(schema="cce.metrics/v1", event="search", ts="2026-07-01T10:00:00Z", id="aaaaaaaaaaaa", result_count=1,
              tokens_saved=10, savings_ratio=0.5, top_score=0.4, empty=False, low_confidence=False),
        "   ",
        _line(event="feedback", ts="2026-07-02T10:00:00Z", id="x", target_id="aaaaaaaaaaaa", helpful=True),
        _line(event="search", id="noTs"),
        _line(event="futuretype", ts="2026-07-02T10:00:00Z"),
    ]) + "\n"
    log = m.parse_log(text)
    assert log.skipped == 4
    assert [e.kind for e in log.events] == ["search", "feedback", "unknown"]
    assert log.events[2].ts_secs is None


def test_any_other_json_value_is_an_unknown_event():
    text = "42\n[]\n\"search\"\nnull\n{}\n" + _line(event=7, ts="2026-07-01T10:00:00Z") + "\n"
    log = m.parse_log(text)
    assert (len(log.events), log.skipped) == (6, 0)
    assert {e.kind for e in log.events} == {"unknown"}


@pytest.mark.parametrize("ts", [None, 5, "", "yesterday", "2026-13-01T00:00:00Z"])
def test_known_events_without_a_usable_ts_are_skipped(ts):
    fields = {"ts": ts} if ts is not None else {}
    for kind in ("search", "index", "feedback"):
        log = m.parse_log(_line(event=kind, **fields))
        assert (len(log.events), log.skipped) == (0, 1)


@pytest.mark.parametrize("line", [
    '{"event":"unknown","x":NaN}', '{"event":"unknown","x":Infinity}', '{"event":"unknown","x":-Infinity}',
    '{"event":"unknown","x":1e400}', '{"event":"unknown","x":"\\ud800"}', '{"event":"unknown", "x": 1,}',
    '{"event":"unknown","x":' + "9" * 400 + "}",
    "[" * 128 + "]" * 128, "\ufeff{}",
])
def test_lines_a_strict_reader_rejects_are_skipped(line):
    log = m.parse_log(line + "\n")
    assert (len(log.events), log.skipped) == (0, 1)


def test_deep_but_legal_nesting_and_paired_surrogates_are_accepted():
    log = m.parse_log("[" * 127 + "]" * 127 + "\n" + '{"event":"x","q":"\\ud83d\\ude00"}\n')
    assert (len(log.events), log.skipped) == (2, 0)


def test_lines_split_on_newline_only():
    # \x85 and \u2028 inside a JSON string must not split the line; \r\n endings are fine.
    text = _line(event="feedback", ts="2026-07-02T10:00:00Z", target_id="a\x85b\u2028c", helpful=True).replace(
        "\\u0085", "\x85").replace("\\u2028", "\u2028") + "\r\n"
    log = m.parse_log(text)
    assert (len(log.events), log.skipped) == (1, 0)
    assert log.events[0].target_id == "a\x85b\u2028c"


def test_field_coercion_follows_strict_typing():
    line = _line(event="search", ts="2026-07-01T10:00:00Z", id=12, query=["q"], result_count=5.0, tokens_saved=-1,
                 baseline_tokens=True, savings_ratio=3, top_score="0.9", empty=1, low_confidence="true",
                 latency_ms=False, source="  ")
    (s,) = m.parse_log(line).events
    assert (s.id, s.query, s.result_count, s.tokens_saved) == ("", "", 0, 0)
    assert s.savings_ratio == 3.0 and isinstance(s.savings_ratio, float)
    assert (s.top_score, s.empty, s.low_confidence, s.latency_ms, s.source) == (0.0, False, False, 0.0, "cli")
    assert s.savings["retrieval"] == Bucket(0, 0)  # legacy fields: -1 and true read as 0
    big = m.parse_log(_line(event="search", ts="2026-07-01T10:00:00Z", tokens_saved=2**64 - 1,
                            result_count=2**64, top_score=-0.0)).events[0]
    assert (big.tokens_saved, big.result_count) == (2**64 - 1, 0)
    neg_zero = m.parse_log('{"event":"search","ts":"2026-07-01T10:00:00Z","result_count":-0}').events[0]
    assert neg_zero.result_count == 0


def test_source_sha_and_freshness_defaults():
    text = "\n".join([
        _line(event="search", ts="2026-07-01T10:00:00Z", id="a", source="mcp"),
        _line(event="search", ts="2026-07-01T11:00:00Z", id="b"),
        _line(event="index", ts="2026-07-01T09:00:00Z", sha="deadbeef", source="local", sensitive_skipped=2),
        _line(event="index", ts="2026-07-01T08:00:00Z"),
        _line(event="index", ts="2026-07-01T08:00:00Z", sha=12, source="sync-pull"),
    ])
    a, b, i, j, k = m.parse_log(text).events
    assert (a.source, b.source) == ("mcp", "cli")
    assert (i.sha, i.source, i.sensitive_skipped) == ("deadbeef", "local", 2)
    assert (j.sha, j.source, j.sensitive_skipped) == (None, "local", 0)
    assert (k.sha, k.source) == (None, "sync-pull")


def test_missing_unreadable_or_non_utf8_log_is_empty(tmp_path):
    assert m.read_log(tmp_path / "nope.jsonl") == m.MetricsLog()
    assert m.read_log(tmp_path) == m.MetricsLog()  # a directory
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(_line(event="x").encode() + b"\n\xff\xfe\n")
    assert (len(m.read_log(bad).events), m.read_log(bad).skipped) == (0, 0)


def test_metrics_path_resolution(tmp_path):
    assert m.metrics_beside(tmp_path / "s" / "index.cce") == tmp_path / "s" / "metrics.jsonl"
    assert str(m.metrics_beside(m.Path("index.cce"))) == "metrics.jsonl"
    given = tmp_path / "x.jsonl"
    assert m.resolve_metrics_path(given, tmp_path / "a" / "i.cce", tmp_path) == given
    assert m.resolve_metrics_path(None, tmp_path / "a" / "i.cce", tmp_path / "d") == tmp_path / "a" / "metrics.jsonl"
    assert m.resolve_metrics_path(None, None, tmp_path / "d") == tmp_path / "d" / ".cce" / "metrics.jsonl"
    assert m.resolve_metrics_path(None, None, None) == m.Path(".cce") / "metrics.jsonl"


# -- savings buckets --------------------------------------------------------------


def test_savings_object_wins_over_legacy_fields():
    event = {"tokens_saved": 1, "baseline_tokens": 2,
             "savings": {"retrieval": {"saved_tokens": 100, "baseline_tokens": 400},
                         "grammar": {"saved_tokens": "x"}}}
    b = buckets_from_event(event)
    assert list(b) == list(BUCKET_NAMES)
    assert b["retrieval"] == Bucket(100, 400)
    assert b["grammar"] == Bucket() and b["output"] == Bucket()
    assert buckets_from_event({"tokens_saved": 32000, "baseline_tokens": 40000})["retrieval"] == Bucket(32000, 40000)
    assert buckets_from_event({"tokens_saved": 5, "savings": None})["retrieval"] == Bucket()


def test_bucket_roll_up():
    one = search_buckets((100, 400), (30, 90), (77, 134))
    roll = sum_by_layer([one, one])
    assert roll["grammar"] == {"baseline_tokens": 268, "saved_tokens": 154}
    assert roll["total"]["saved_tokens"] == (100 + 30 + 77) * 2
    assert roll["note"] == SAVINGS_NOTE
    roll = sum_by_layer([search_buckets((100, 400)), search_buckets((50, 90))])
    assert roll["retrieval"] == roll["total"] == {"baseline_tokens": 490, "saved_tokens": 150}
    empty = sum_by_layer([])
    assert all(empty[name] == {"baseline_tokens": 0, "saved_tokens": 0} for name in (*BUCKET_NAMES, "total"))


# -- grammar ------------------------------------------------------------------------


def _grammar_rows() -> list[GrammarRow]:
    return [
        GrammarRow(1, "0.912345", None, "src/auth.py", 10, 24, "function", "function_definition", "039f8bd5b80a698e"),
        GrammarRow(2, "0.500000", "billing", "lib/charge.rb", 3, 7, "method", "method", "61707be0deb092a1"),
        GrammarRow(3, "0.048000", None, "app/models/user.rb", 1, 2, "class", "class", "aaaabbbbccccdddd"),
    ]


def test_grammar_renderings_match_the_reference_fixtures(reference):
    folder = reference / "test" / "fixture" / "savings"
    rows = _grammar_rows()
    assert compact_line(rows[1]) == " 2. [0.500000] billing · lib/charge.rb:3-7 (method/method) #61707be0deb092a1"
    assert render_compact(rows) == (folder / "grammar_compact.txt").read_text(encoding="utf-8")
    assert render_verbose(rows) == (folder / "grammar_verbose_baseline.txt").read_text(encoding="utf-8")


def test_grammar_bucket_is_pinned():
    assert grammar_savings(_grammar_rows()) == Bucket(saved_tokens=77, baseline_tokens=134)
    assert grammar_savings([]) == Bucket()


# -- the search record -----------------------------------------------------------------


def _result(rank, path, content, score, start=1, end=2):
    chunk = SimpleNamespace(file_path=path, content=content, start_line=start, end_line=end, chunk_type="function",
                            kind="fn", chunk_id=f"{rank:016x}")
    return SimpleNamespace(rank=rank, chunk=chunk, score=score)


def test_search_record_accounting():
    results = [_result(1, "a.x", "x" * 400, 0.5), _result(2, "a.x", "y" * 41, 0.25), _result(3, "b.x", "z", 0.125)]
    rec = build_search_record(results, {"a.x": 1000, "b.x": 7}, "q", 10, True, "hash", 2.5, source="mcp")
    assert (rec.baseline_tokens, rec.served_tokens, rec.tokens_saved) == (1007, 100 + 10 + 1, 1007 - 111)
    assert rec.savings_ratio == (1007 - 111) / 1007
    assert (rec.top_score, rec.mean_score, rec.result_count) == (0.5, 0.875 / 3, 3)
    assert (rec.empty, rec.low_confidence, rec.source, rec.latency_ms) == (False, False, "mcp", 2.5)
    assert (rec.chunk_saved_tokens, rec.chunk_baseline_tokens) == (0, 0)
    assert rec.grammar_baseline_tokens > rec.grammar_saved_tokens > 0

    low = build_search_record([_result(1, "gone.x", "abcdefgh", 0.2999)], {}, "q", 10, False, "hash", 1.0)
    assert (low.baseline_tokens, low.tokens_saved, low.savings_ratio, low.low_confidence) == (0, 0, 0.0, True)

    none = build_search_record([], {"a.x": 5}, "q", 10, True, "hash", 1.0)
    assert (none.empty, none.low_confidence, none.top_score, none.mean_score) == (True, False, 0.0, 0.0)
    assert (none.grammar_saved_tokens, none.grammar_baseline_tokens) == (0, 0)

    compressed = build_search_record(results, {"a.x": 1000, "b.x": 7}, "q", 10, True, "hash", 1.0,
                                     served_bodies=["x" * 40, "y" * 41, "zzzzzzzz"])
    assert (compressed.chunk_baseline_tokens, compressed.chunk_saved_tokens) == (111, 90)

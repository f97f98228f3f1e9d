"""``cce knowledge ask SUITE``: a ``cce.knowledge.ask/v1`` suite of questions pinned to the records that answer them.

Each question runs through the same knowledge search ``context_search`` uses
for ``source: knowledge``; a question is proven when every expected record
id surfaces in its top ``k``. The command exits non-zero as soon as one is
not, so it gates a corpus rebuild. The ``--json`` report
(``cce.knowledge.ask.report/v1``: sorted keys, scores as six-decimal strings)
must equal the reference's golden byte for byte; those files come from the
reference at HEAD (``eval/knowledge/`` and ``test/fixture/knowledge/`` under
``CCE_REFERENCE_DIR``) and the golden tests skip, saying so, without them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import reference_dir, run_cce

from cce_core.foundation.errors import CceError
from cce_core.knowledge.ask import (
    ASK_REPORT_SCHEMA,
    ASK_SCHEMA,
    DEFAULT_K,
    AskCase,
    evaluate,
    parse_suite,
    render_human,
    render_json,
    score_case,
)
from cce_core.knowledge.feed import parse_feed
from cce_core.knowledge.ingest import build_store
from cce_core.plugins.host import document_chunker_for

SUITE = reference_dir() / "eval" / "knowledge" / "ask.jsonl"
GOLDEN = reference_dir() / "test" / "fixture" / "knowledge" / "ask.golden.json"

FEED = "\n".join(json.dumps(r) for r in [
    {"id": "k:lockout", "title": "Lock accounts after five failed logins",
     "body": "After five consecutive failed login attempts the account is locked for fifteen minutes.",
     "source": "github-issues"},
    {"id": "k:retry", "title": "Webhook retry uses exponential backoff with jitter",
     "body": "Failed webhook deliveries retry on an exponential backoff schedule with random jitter.",
     "source": "github-issues"},
]) + "\n"


def needs_reference_suite() -> None:
    if not (SUITE.is_file() and GOLDEN.is_file()):
        pytest.skip(f"the reference's knowledge-ask suite and golden are not under {reference_dir()} "
                    "(eval/knowledge/ask.jsonl, test/fixture/knowledge/ask.golden.json from Davidslv/cce-rust HEAD)")


def hits(*record_ids: str) -> list[str]:
    """Ranked hits as scoring sees them: the record id of each, best first."""
    return list(record_ids)


def tiny_store():
    chunker = document_chunker_for("markdown")
    return build_store(parse_feed(FEED), FEED.encode(), 400, chunker)


def write_suite(tmp_path: Path, lines: list[dict], corpus: str | None = "feed.jsonl") -> Path:
    (tmp_path / "feed.jsonl").write_text(FEED, encoding="utf-8")
    header = [{"schema": ASK_SCHEMA, "corpus": corpus}] if corpus is not None else []
    suite = tmp_path / "ask.jsonl"
    suite.write_text("".join(json.dumps(x) + "\n" for x in header + lines), encoding="utf-8")
    return suite


LOCKOUT = {"id": "lockout", "query": "how many failed login attempts before the account is locked",
           "expect": ["k:lockout"], "k": 5}
RETRY = {"id": "retry", "query": "webhook retry backoff jitter schedule", "expect": ["k:retry"], "k": 5}


# --------------------------------------------------------------------------- the suite format


def test_a_suite_has_an_optional_header_then_cases_with_defaults() -> None:
    text = ('{"schema":"cce.knowledge.ask/v1","corpus":"c.jsonl"}\n'
            '{"id":"a","query":"q one","expect":["r1"],"k":3}\n'
            '\n'
            '{"query":"q two","expect":["r2","r3",7],"note":"ignored"}\n')
    suite = parse_suite(text)
    assert suite.corpus == "c.jsonl"
    assert suite.cases == [AskCase("a", "q one", ("r1",), 3), AskCase("q4", "q two", ("r2", "r3"), DEFAULT_K)]
    assert DEFAULT_K == 10 and ASK_SCHEMA == "cce.knowledge.ask/v1"
    assert parse_suite('{"query":"q","expect":["r"]}\r\n').corpus is None


@pytest.mark.parametrize(("text", "message"), [
    ('{"schema":"cce.knowledge.ask/v9"}\n', 'line 1: unknown schema "cce.knowledge.ask/v9" '
                                            '(expected "cce.knowledge.ask/v1")'),
    ('{"query":"q","expect":[]}\n', "line 1: case needs a non-empty `expect` array"),
    ('{"query":"q","expect":[1]}\n', "line 1: case needs a non-empty `expect` array"),
    ('{"query":"q","expect":["r"],"k":0}\n', "line 1: `k` must be >= 1"),
    ('{"query":"q","expect":["r"],"k":-2}\n', "line 1: `k` must be a positive integer"),
    ('{"query":"q","expect":["r"],"k":2.5}\n', "line 1: `k` must be a positive integer"),
    ('\n{"expect":["r"]}\n', "line 2: case missing string `query`"),
    ("[1]\n", "line 1: case missing string `query`"),
    ("\n  \n", "suite has no cases"),
    ('{"query":"q","expect":["r"]}\n{"schema":"cce.knowledge.ask/v1"}\n', "line 2: header must be the first line"),
])
def test_a_bad_suite_line_is_named(text: str, message: str) -> None:
    with pytest.raises(CceError) as caught:
        parse_suite(text)
    assert str(caught.value) == message


def test_invalid_json_names_its_line() -> None:
    with pytest.raises(CceError, match=r"^line 2: invalid JSON: "):
        parse_suite('{"query":"q","expect":["r"]}\n{nope\n')


# --------------------------------------------------------------------------- scoring


def test_full_recall_is_proven_and_precision_is_over_k() -> None:
    s = score_case(AskCase("c", "q", ("r1", "r2"), 5), hits("r1", "x", "r2"))
    assert (s.proven, s.recall, s.first_hit_rank, s.precision, s.expected) == (True, 1.0, 1, 2 / 5, 2)
    assert s.f1 == 2 * 0.4 / 1.4


def test_a_missing_record_is_not_proven() -> None:
    s = score_case(AskCase("c", "q", ("r1", "gone"), 5), hits("r1"))
    assert (s.proven, s.recall, s.mrr) == (False, 0.5, 1.0)


def test_a_hit_below_k_does_not_count() -> None:
    s = score_case(AskCase("c", "q", ("r2",), 2), hits("a", "b", "r2"))
    assert (s.proven, s.first_hit_rank, s.mrr, s.f1) == (False, None, 0.0, 0.0)


def test_a_tiny_corpus_proves_its_questions_and_renders_deterministically() -> None:
    suite = parse_suite("\n".join(json.dumps(c) for c in (LOCKOUT, RETRY)))
    report = evaluate(tiny_store(), suite, 0.30, "feed.jsonl")
    assert (report.queries, report.proven, report.all_proven()) == (2, 2, True), render_human(report)
    text = render_json(report)
    assert text == render_json(evaluate(tiny_store(), suite, 0.30, "feed.jsonl"))
    body = json.loads(text)
    assert body["schema"] == ASK_REPORT_SCHEMA == "cce.knowledge.ask.report/v1"
    assert list(body) == sorted(body) and text.endswith("}\n") and body["min_score"] == "0.300000"
    assert render_human(report).split("\n")[1:4] == ["  corpus   : feed.jsonl", "  min_score: 0.300000",
                                                    "  proven   : 2/2"]


# --------------------------------------------------------------------------- the reference's golden suite


def test_the_reference_suite_report_is_byte_identical_to_its_golden() -> None:
    needs_reference_suite()
    done = run_cce("knowledge", "ask", SUITE, "--json")
    assert done.returncode == 0, done.stderr
    assert done.stdout == GOLDEN.read_text(encoding="utf-8")


def test_the_reference_suite_proves_every_question() -> None:
    needs_reference_suite()
    done = run_cce("knowledge", "ask", SUITE)
    assert done.returncode == 0, done.stderr
    assert "  proven   : 7/7\n" in done.stdout and "  NO\n" not in done.stdout


# --------------------------------------------------------------------------- the command


def test_an_unanswered_question_fails_the_command(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [LOCKOUT, {"id": "impossible", "query": "quarterly revenue in the finance ledger",
                                             "expect": ["k:nowhere"], "k": 5}])
    done = run_cce("knowledge", "ask", suite)
    assert done.returncode == 1
    assert done.stderr == "error: knowledge-ask regression: 1/2 queries proven from the corpus\n"
    assert "  proven   : 1/2\n" in done.stdout
    rows = {line.split()[0]: line.split()[-1] for line in done.stdout.split("\n")[6:8]}
    assert rows == {"lockout": "yes", "impossible": "NO"}


def test_dir_runs_the_suite_against_the_installed_store(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [LOCKOUT, RETRY], corpus=None)
    root = tmp_path / "proj"
    root.mkdir()
    assert run_cce("knowledge", "index", tmp_path / "feed.jsonl", "--dir", root).returncode == 0
    done = run_cce("knowledge", "ask", suite, "--dir", root, "--json")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["corpus"] == str(root / ".cce" / "knowledge") and body["proven"] == 2


def test_min_score_is_an_option_and_a_high_floor_fails(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [LOCKOUT])
    done = run_cce("knowledge", "ask", suite, "--min-score", "0.99")
    assert done.returncode == 1 and "  min_score: 0.990000\n" in done.stdout


@pytest.mark.parametrize(("setup", "message"), [
    (lambda p: write_suite(p, [LOCKOUT], corpus=None),
     "error: the suite has no `corpus` header; pass --dir ROOT to run it against an installed knowledge store\n"),
    (lambda p: write_suite(p, [LOCKOUT], corpus="absent.jsonl"), "error: could not read corpus feed "),
    (lambda p: p / "nope.jsonl", "error: could not read suite "),
])
def test_a_suite_that_cannot_run_is_one_line(tmp_path: Path, setup, message: str) -> None:
    done = run_cce("knowledge", "ask", setup(tmp_path))
    assert done.returncode == 1 and done.stderr.startswith(message) and done.stderr.count("\n") == 1
    assert done.stdout == ""

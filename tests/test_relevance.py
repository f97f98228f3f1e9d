"""`cce relevance`: the fixture contract, the metrics, the paired t-test and both reports.

The acceptance oracle is the reference engine's golden JSON report over its
code fixture set: reproducing it byte for byte proves the walker, chunker,
hash embedder, BM25, cosine order, hybrid ranking and every metric at once.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from helpers import REPO_ROOT, run_cce

from cce_core.evaluation import relevance as rel
from cce_core.evaluation.paired_stats import ln_gamma, paired_t, regularized_incomplete_beta, t_critical, t_two_sided_p
from cce_core.foundation.errors import CceError
from cce_core.indexing.chunker import Chunk

CODE_IDS = ["code-read-config", "code-parse-json", "code-build-index", "code-loader-class", "code-sum-node",
            "code-interface-kind", "code-read-config-span"]


def chunk(path: str = "auth.py", kind: str = "function_definition", start: int = 1, end: int = 2,
          content: str = "def login():\n    pass") -> Chunk:
    return Chunk(chunk_id=f"{path}:{start}", file_path=path, start_line=start, end_line=end, chunk_type="function",
                 kind=kind, language="x", content=content, token_count=1)


# --------------------------------------------------------------------------- anchors


@pytest.mark.parametrize(("text", "expected"), [
    ("auth.py", rel.Anchor("auth.py", None, None)),
    ("auth.py#function_definition", rel.Anchor("auth.py", "function_definition", None)),
    ("#interface_declaration", rel.Anchor(None, "interface_declaration", None)),
    ("src/auth.py@10-42", rel.Anchor("src/auth.py", None, (10, 42))),
    ("auth.py#function_definition@3-4", rel.Anchor("auth.py", "function_definition", (3, 4))),
    ("f.py@7-7", rel.Anchor("f.py", None, (7, 7))),
    ("user@host.py", rel.Anchor("user@host.py", None, None)),
    ("v2@latest.md#section", rel.Anchor("v2@latest.md", "section", None)),
    (" auth.py # kind ", rel.Anchor("auth.py", "kind", None)),
])
def test_anchor_forms(text, expected):
    assert rel.parse_anchor(text) == expected


RANGE = "has an invalid line range after '@' — expected `a-b` with 1 ≤ a ≤ b"


@pytest.mark.parametrize(("text", "message"), [
    ("f.py@10-", f'anchor "f.py@10-" {RANGE}'),
    ("f.py@-42", f'anchor "f.py@-42" {RANGE}'),
    ("f.py@42", f'anchor "f.py@42" {RANGE}'),
    ("f.py@42-10", f'anchor "f.py@42-10" {RANGE}'),
    ("f.py@0-4", f'anchor "f.py@0-4" {RANGE}'),
    ("f.py@1-2-3", f'anchor "f.py@1-2-3" {RANGE}'),
    ("#function_definition@1-5", 'anchor "#function_definition@1-5" has a line range but no file path — a range '
                                 "needs `path@a-b` or `path#kind@a-b`"),
    ("@1-5", "anchor is empty — expected `path`, `path#kind`, `#kind`, or `path@a-b`"),
    ("", "anchor is empty — expected `path`, `path#kind`, `#kind`, or `path@a-b`"),
    ("   ", "anchor is empty — expected `path`, `path#kind`, `#kind`, or `path@a-b`"),
    ("auth.py#", "anchor \"auth.py#\" has an empty kind after '#'"),
    ("#", "anchor \"#\" has an empty kind after '#'"),
    ('a"b#', "anchor \"a\\\"b#\" has an empty kind after '#'"),
])
def test_anchor_errors(text, message):
    with pytest.raises(CceError) as err:
        rel.parse_anchor(text)
    assert str(err.value) == message


def test_anchor_matching():
    c = chunk(start=1, end=2)
    assert rel.parse_anchor("auth.py").matches(c)
    assert rel.parse_anchor("auth.py#function_definition").matches(c)
    assert rel.parse_anchor("#function_definition").matches(c)
    assert not rel.parse_anchor("payments.py").matches(c)
    assert not rel.parse_anchor("auth.py#class_definition").matches(c)
    assert not rel.parse_anchor("#class_definition").matches(c)
    assert rel.parse_anchor("auth.py@2-10").matches(c)  # partial overlap
    assert rel.parse_anchor("auth.py@1-1").matches(c)
    assert not rel.parse_anchor("auth.py@3-10").matches(c)
    assert not rel.parse_anchor("auth.py#class_definition@1-2").matches(c)


# --------------------------------------------------------------------------- fixture lines

LINE_ERRORS = [
    ('[1]', "fixture line 1: expected a JSON object"),
    ('{"query":"a","expected":["f"]}\n{"schema":"cce.relevance/v1"}',
     "fixture line 2: header must be the first non-blank line"),
    ('{"schema":"cce.relevance/v1"}\n\n{"schema":"cce.relevance/v1"}',
     "fixture line 3: header must be the first non-blank line"),
    ('{"schema":"cce.relevance/v9"}', 'fixture line 1: unsupported schema "cce.relevance/v9" '
                                      '(expected "cce.relevance/v1")'),
    ('{"schema":7}', 'fixture line 1: unsupported schema "" (expected "cce.relevance/v1")'),
    ('{"query":"","expected":["f"]}', 'fixture line 1: missing or empty "query"'),
    ('{"query":"  ","expected":["f"]}', 'fixture line 1: missing or empty "query"'),
    ('{"expected":["f"]}', 'fixture line 1: missing or empty "query"'),
    ('{"query":3,"expected":["f"]}', 'fixture line 1: missing or empty "query"'),
    ('{"query":"a","expected":[]}', 'fixture line 1: "expected" must be a non-empty array of anchors'),
    ('{"query":"a"}', 'fixture line 1: "expected" must be a non-empty array of anchors'),
    ('{"query":"a","expected":"f.py"}', 'fixture line 1: "expected" must be a non-empty array of anchors'),
    ('{"query":"a","expected":["f.py",1]}', "fixture line 1: anchors must be strings"),
    ('{"query":"a","expected":["f.py@9-1"]}', f'fixture line 1: anchor "f.py@9-1" {RANGE}'),
    ('{"query":"a","expected":["f"],"k":0}', 'fixture line 1: "k" must be a positive integer'),
    ('{"query":"a","expected":["f"],"k":-3}', 'fixture line 1: "k" must be a positive integer'),
    ('{"query":"a","expected":["f"],"k":2.0}', 'fixture line 1: "k" must be a positive integer'),
    ('{"query":"a","expected":["f"],"k":"5"}', 'fixture line 1: "k" must be a positive integer'),
    ('{"query":"a","expected":["f"],"k":true}', 'fixture line 1: "k" must be a positive integer'),
    ('{"query":"a","expected":["f"],"k":null}', 'fixture line 1: "k" must be a positive integer'),
    ("", "fixture set contains no query cases"),
    ('\n  \n{"schema":"cce.relevance/v1","corpus":"x"}\n', "fixture set contains no query cases"),
]


@pytest.mark.parametrize(("text", "message"), LINE_ERRORS)
def test_fixture_errors(text, message):
    with pytest.raises(CceError) as err:
        rel.parse_fixtures(text)
    assert str(err.value) == message


def test_invalid_json_names_the_line():
    for text in ("not json", '{"query": "a", "expected": ["f"]} trailing', '{"k": NaN}'):
        with pytest.raises(CceError) as err:
            rel.parse_fixtures('\n\n' + text)
        assert str(err.value).startswith("fixture line 3: invalid JSON: ")


def test_header_and_defaults():
    s = rel.parse_fixtures('\n{"schema":"cce.relevance/v1","corpus":"../c"}\n'
                           '{"query":"  find x ","expected":["a.py"],"note":"ignored"}\n'
                           '{"id":"two","query":"y","expected":["#k"],"k":3}\n')
    assert s.corpus == "../c"
    assert [(c.id, c.query, c.k) for c in s.cases] == [("q3", "find x", 10), ("two", "y", 3)]
    assert rel.parse_fixtures('{"query":"a","expected":["f"]}').corpus is None
    assert rel.parse_fixtures('{"schema":"cce.relevance/v1","corpus":""}\n{"query":"a","expected":["f"]}').corpus \
        is None
    # schema beside a query is a case, not a header
    assert len(rel.parse_fixtures('{"schema":"x","query":"a","expected":["f"]}').cases) == 1


def test_corpus_resolution_is_a_plain_join():
    s = rel.parse_fixtures('{"schema":"cce.relevance/v1","corpus":"../../samples"}\n{"query":"a","expected":["f"]}')
    assert rel.corpus_dir("eval/relevance/code.jsonl", s, None) == "eval/relevance/../../samples"
    assert rel.corpus_dir("code.jsonl", s, None) == "../../samples"
    assert rel.corpus_dir("eval/relevance/code.jsonl", s, "elsewhere/") == "elsewhere/"
    bare = rel.parse_fixtures('{"query":"a","expected":["f"]}')
    with pytest.raises(CceError, match=r'^no corpus: pass --dir <corpus>, or declare "corpus" in the fixture '
                                       r'header line$'):
        rel.corpus_dir("x.jsonl", bare, None)


def test_backend_lists():
    assert rel.parse_backends("hybrid, bm25,hybrid,") == ["hybrid", "bm25"]
    assert rel.select_backends(None, None) == ["bm25", "vector", "hybrid"]
    assert rel.select_backends(None, "vector,bm25") == ["vector", "bm25"]
    with pytest.raises(CceError, match=r'^unknown backend "bm42" \(expected bm25, vector, or hybrid\)$'):
        rel.parse_backends("bm25,bm42")
    with pytest.raises(CceError, match=r"^--backend requires at least one of bm25, vector, hybrid$"):
        rel.parse_backends(" , ")
    with pytest.raises(CceError, match="exactly two distinct backends"):
        rel.select_backends(None, "bm25,bm25")


# --------------------------------------------------------------------------- metrics


class _Result:
    def __init__(self, c: Chunk) -> None:
        self.chunk = c


def test_query_metrics_divide_by_k_and_take_the_first_relevant_rank():
    case = rel.Case("q", "x", (rel.parse_anchor("auth.py"), rel.parse_anchor("pay.py")), 4)
    results = [_Result(chunk("other.py")), _Result(chunk("auth.py")), _Result(chunk("auth.py", start=5, end=6))]
    s = rel.score_query(case, results, rel.LineWeights([]))
    assert (s.precision, s.recall, s.mrr, s.first_relevant_rank) == (0.5, 0.5, 0.5, 2)
    assert s.f1 == pytest.approx(0.5)
    assert s.tokens is None
    miss = rel.score_query(case, [_Result(chunk("x.py"))], rel.LineWeights([]))
    assert (miss.precision, miss.recall, miss.mrr, miss.f1, miss.first_relevant_rank) == (0, 0, 0, 0, None)


def test_token_metrics_weigh_lines_and_count_gaps_as_one():
    # lines 1-4 of f.py: 8, 4, 1 (empty line: the floor), 12 bytes -> 2, 1, 1, 3 tokens
    c = chunk("f.py", start=1, end=4, content="aaaaaaaa\nbbbb\n\ncccccccccccc")
    weights = rel.LineWeights([c, chunk("f.py", start=2, end=2, content="x" * 400)])  # the first chunk wins
    case = rel.Case("q", "x", (rel.parse_anchor("f.py@2-5"), rel.parse_anchor("g.py")), 5)
    t = rel.score_query(case, [_Result(chunk("f.py", start=1, end=2))], weights).tokens
    # expected 2..5 = 1+1+3+1 (line 5 is past the chunk) = 6; retrieved 1..2 = 3; overlap line 2 = 1
    assert (t.precision, t.recall, t.iou) == (1 / 3, 1 / 6, 1 / 8)
    none = rel.score_query(case, [], weights).tokens
    assert (none.precision, none.recall, none.iou) == (0.0, 0.0, 0.0)


# --------------------------------------------------------------------------- paired statistics


def test_special_functions():
    assert abs(ln_gamma(1.0)) < 1e-10 and abs(ln_gamma(2.0)) < 1e-10
    assert ln_gamma(5.0) == pytest.approx(math.log(24.0), abs=1e-10)
    assert ln_gamma(0.5) == pytest.approx(math.log(math.sqrt(math.pi)), abs=1e-10)
    assert regularized_incomplete_beta(2, 3, 0.0) == 0.0 and regularized_incomplete_beta(2, 3, 1.0) == 1.0
    assert regularized_incomplete_beta(1, 3, 0.2) == pytest.approx(1 - 0.8 ** 3, abs=1e-12)
    assert t_two_sided_p(1.0, 1.0) == pytest.approx(0.5, abs=1e-10)  # Cauchy
    assert t_two_sided_p(math.sqrt(2), 2.0) == pytest.approx(1 - math.sqrt(2) / 2, abs=1e-10)
    for df, t in [(1, 12.706205), (2, 4.302653), (5, 2.570582), (10, 2.228139), (30, 2.042272)]:
        assert t_critical(0.05, df) == pytest.approx(t, abs=1e-4)


def test_paired_t_hand_example():
    s = paired_t([0.2, 0.1, 0.0, 0.3, -0.1, 0.1])
    assert s.n == 6 and s.mean_delta == pytest.approx(0.1)
    assert s.t == pytest.approx(math.sqrt(3), abs=1e-9)
    assert 0.10 < s.p < 0.20
    assert s.ci95 == pytest.approx((-0.048413, 0.248413), abs=1e-4)


def test_paired_t_degenerate_inputs():
    assert paired_t([0.0, 0.0, 0.0]) == rel.PairedStats(3, 0.0, None, 1.0, (0.0, 0.0))
    assert paired_t([0.1, 0.1, 0.1]) == rel.PairedStats(3, 0.1, None, 0.0, (0.1, 0.1))
    one = paired_t([0.3])
    assert (one.n, one.mean_delta, one.t, one.p, one.ci95) == (1, 0.3, None, None, None)
    assert paired_t([]).n == 0
    # mathematically equal deltas from different bases differ in the last bits: still constant
    s = paired_t([0.6 - 0.4, 0.3 - 0.1, 0.5 - 0.3, 0.7 - 0.5])
    assert s.t is None and s.p == 0.0 and s.ci95[0] == s.ci95[1]


def test_signed_format():
    assert rel.format6_signed(0.0) == "+0.000000"
    assert rel.format6_signed(-1e-9) == "+0.000000"
    assert rel.format6_signed(-0.0344504) == "-0.034450"
    assert rel.format6_signed(0.1666666) == "+0.166667"


def test_quoted_like_the_family():
    assert rel.quoted('a"b\\c\n\td\x01é') == '"a\\"b\\\\c\\n\\td\\u{1}é"'


# --------------------------------------------------------------------------- the command


@pytest.fixture
def golden(reference) -> bytes:
    path = reference / "test" / "fixture" / "relevance" / "code.golden.json"
    if not path.is_file():
        pytest.skip(f"relevance golden not found at {path}")
    return path.read_bytes()


def _run(*args, cwd: Path = REPO_ROOT):
    return run_cce("relevance", *args, cwd=cwd)


def test_reference_golden_byte_for_byte(reference, golden):
    """The reference's own fixture set, run from the reference root: every byte of its golden."""
    proc = _run("eval/relevance/code.jsonl", "--json", cwd=reference)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.encode("utf-8") == golden


def test_shipped_code_set_matches_the_golden(golden):
    """Our shipped copy points at our samples/; apart from that path every metric and row is the golden's."""
    proc = _run("eval/relevance/code.jsonl", "--json")
    assert proc.returncode == 0, proc.stderr
    ours, theirs = json.loads(proc.stdout), json.loads(golden)
    assert ours["corpus"] == "eval/relevance/../../samples"
    ours["corpus"] = theirs["corpus"]
    assert ours == theirs
    hybrid = ours["backends"][2]
    assert [q["id"] for q in hybrid["per_query"]] == CODE_IDS


def test_human_report(tmp_path):
    proc = _run("eval/relevance/code.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        "CCE relevance — ranking quality vs labeled fixtures (cce.relevance/v1)\n"
        "  corpus  : eval/relevance/../../samples\n"
        "  embedder: hash\n"
        "  queries : 7\n"
        "\n"
        "  backend            P@k      recall         MRR          F1\n"
        "  bm25          0.457143    1.000000    0.904762    0.581633\n"
        "  vector        0.485714    1.000000    1.000000    0.601474\n"
        "  hybrid        0.457143    1.000000    0.928571    0.581633\n"
        "\n"
        "  token-level span metrics (1 of 7 queries carry ranged anchors)\n"
        "  backend          tok-P  tok-recall     tok-IoU\n"
        "  bm25          0.294118    1.000000    0.294118\n"
        "  vector        0.238095    1.000000    0.238095\n"
        "  hybrid        0.223881    1.000000    0.223881\n"
    )


COMPARE_TAIL = (
    "\n"
    "  per-query deltas (bm25 → hybrid; positive = hybrid wins)\n"
    "  query                           dP@k     drecall        dMRR         dF1\n"
    "  code-read-config           +0.000000   +0.000000   +0.166667   +0.000000\n"
    "  code-parse-json            +0.000000   +0.000000   +0.000000   +0.000000\n"
    "  code-build-index           +0.000000   +0.000000   +0.000000   +0.000000\n"
    "  code-loader-class          +0.000000   +0.000000   +0.000000   +0.000000\n"
    "  code-sum-node              +0.000000   +0.000000   +0.000000   +0.000000\n"
    "  code-interface-kind        +0.000000   +0.000000   +0.000000   +0.000000\n"
    "  code-read-config-span      +0.000000   +0.000000   +0.000000   +0.000000\n"
    "  mean                       +0.000000   +0.000000   +0.023810   +0.000000\n"
    "\n"
    "  paired t-test on the per-query deltas (two-sided, n=7, df=6)\n"
    "  metric        mean-delta           t           p                    95% CI\n"
    "  P@k            +0.000000         n/a    1.000000    [+0.000000, +0.000000]\n"
    "  recall         +0.000000         n/a    1.000000    [+0.000000, +0.000000]\n"
    "  MRR            +0.023810   +1.000000    0.355918    [-0.034450, +0.082069]\n"
    "  F1             +0.000000         n/a    1.000000    [+0.000000, +0.000000]\n"
)


def test_compare_prints_the_paired_comparison():
    proc = _run("eval/relevance/code.jsonl", "--compare", "bm25,hybrid")
    assert proc.returncode == 0, proc.stderr
    assert "  bm25          0.457143" in proc.stdout and "  vector" not in proc.stdout
    assert proc.stdout.endswith(COMPARE_TAIL)


def test_compare_json_block():
    proc = _run("eval/relevance/code.jsonl", "--compare", "bm25,hybrid", "--json")
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert body["schema"] == "cce.relevance.report/v2"
    assert [b["backend"] for b in body["backends"]] == ["bm25", "hybrid"]
    assert body["compare"]["a"] == "bm25" and body["compare"]["b"] == "hybrid"
    assert body["compare"]["metrics"]["mrr"] == {"ci95_high": "+0.082069", "ci95_low": "-0.034450",
                                                 "mean_delta": "+0.023810", "n": 7, "p": "0.355918",
                                                 "t": "+1.000000"}
    assert body["compare"]["metrics"]["f1"] == {"ci95_high": "+0.000000", "ci95_low": "+0.000000",
                                                "mean_delta": "+0.000000", "n": 7, "p": "1.000000", "t": None}
    assert list(body) == sorted(body)
    assert '\n  "compare": {\n    "a": "bm25",' in proc.stdout


def test_backend_flag_scopes_the_report():
    proc = _run("eval/relevance/code.jsonl", "--backend", "vector,bm25,vector", "--json")
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert [b["backend"] for b in body["backends"]] == ["vector", "bm25"]
    assert "compare" not in body


def test_docs_set_runs_and_is_deterministic():
    first = _run("eval/relevance/docs.jsonl")
    assert first.returncode == 0, first.stderr
    assert "  corpus  : eval/relevance/docs-corpus\n" in first.stdout
    assert "  queries : 4\n" in first.stdout
    assert "token-level" not in first.stdout
    a, b = _run("eval/relevance/docs.jsonl", "--json"), _run("eval/relevance/docs.jsonl", "--json")
    assert a.returncode == 0 and a.stdout == b.stdout
    body = json.loads(a.stdout)
    assert body["queries"] == 4 and all("tokens" not in be for be in body["backends"])


def test_dir_overrides_the_header_corpus():
    proc = _run("eval/relevance/code.jsonl", "--dir", "eval/relevance/docs-corpus")
    assert proc.returncode == 0, proc.stderr
    assert "  corpus  : eval/relevance/docs-corpus\n" in proc.stdout
    assert "  hybrid        0.000000    0.000000    0.000000    0.000000\n" in proc.stdout


def test_store_scores_like_the_corpus_directory(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(REPO_ROOT / "samples", corpus, ignore=shutil.ignore_patterns(".cce"))
    built = run_cce("index", corpus, "--no-metrics")
    assert built.returncode == 0, built.stderr
    store = corpus / ".cce" / "index.cce"  # beside it: the segments folder and the writers' lock file
    by_store = _run("eval/relevance/code.jsonl", "--store", store, "--json")
    by_dir = _run("eval/relevance/code.jsonl", "--dir", corpus, "--json")
    assert by_store.returncode == 0, by_store.stderr
    assert json.loads(by_store.stdout)["corpus"] == str(store)
    a, b = json.loads(by_store.stdout), json.loads(by_dir.stdout)
    assert a.pop("corpus") != b.pop("corpus")
    assert a == b
    assert not (corpus / ".cce" / "metrics.jsonl").exists()  # measurement records nothing


def test_corpus_directory_is_never_written(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(REPO_ROOT / "samples", corpus, ignore=shutil.ignore_patterns(".cce"))
    proc = _run("eval/relevance/code.jsonl", "--dir", corpus)
    assert proc.returncode == 0, proc.stderr
    assert not (corpus / ".cce").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["eval/relevance/nope.jsonl"], "error: could not read fixtures eval/relevance/nope.jsonl: No such file or "
                                    "directory (os error 2)"),
    (["eval/relevance/code.jsonl", "--backend", "bm42"],
     'error: unknown backend "bm42" (expected bm25, vector, or hybrid)'),
    (["eval/relevance/code.jsonl", "--compare", "bm25"],
     "error: --compare requires exactly two distinct backends, e.g. bm25,hybrid"),
    (["eval/relevance/code.jsonl", "--dir", "eval/nowhere"], "error: corpus is not a directory: eval/nowhere"),
    (["eval/relevance/code.jsonl", "--dir", "samples", "--store", "x"], "error: --dir cannot be used with --store"),
    (["eval/relevance/code.jsonl", "--backend", "bm25", "--compare", "bm25,hybrid"],
     "error: --backend cannot be used with --compare"),
])
def test_bad_arguments_are_one_error_line(args, message):
    proc = _run(*args)
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines()[0] == message
    assert "Traceback" not in proc.stderr


def test_missing_store_is_an_error(tmp_path):
    proc = _run("eval/relevance/code.jsonl", "--store", tmp_path / "none.cce")
    assert proc.returncode == 1 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


@pytest.mark.parametrize(("text", "message"), [
    *LINE_ERRORS[:6],
    ('{"query":"a","expected":["auth.py#"]}', "fixture line 1: anchor \"auth.py#\" has an empty kind after '#'"),
    ('{"query":"a","expected":["#k@1-5"]}', 'fixture line 1: anchor "#k@1-5" has a line range but no file path '
                                            "— a range needs `path@a-b` or `path#kind@a-b`"),
    ('\n\n{"query":"a","expected":["f@0-1"]}', f'fixture line 3: anchor "f@0-1" {RANGE}'),
    ('{"query":"a","expected":["f"]}', 'no corpus: pass --dir <corpus>, or declare "corpus" in the fixture header '
                                       "line"),
])
def test_malformed_fixture_files_fail_with_their_exact_error(tmp_path, text, message):
    fixtures = tmp_path / "bad.jsonl"
    fixtures.write_text(text, encoding="utf-8")
    proc = _run(fixtures)
    assert proc.returncode == 1
    assert proc.stderr == f"error: {message}\n"


def test_eval_runs_from_the_repo_root_with_the_shipped_questions():
    proc = run_cce("eval", "eval/runs.example.jsonl", cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("  paired cost: off $2.45 · on $0.67 · saved $1.78  (72.7%)\n")


def test_shipped_fixtures_are_the_reference_data(reference):
    """eval/ carries the reference's data unchanged, except the code set's corpus path (our samples/)."""
    ref = reference / "eval"
    for name in ("questions.jsonl", "runs.example.jsonl", "relevance/docs.jsonl"):
        assert (REPO_ROOT / "eval" / name).read_bytes() == (ref / name).read_bytes(), name
    for doc in sorted((ref / "relevance" / "docs-corpus").iterdir()):
        assert (REPO_ROOT / "eval" / "relevance" / "docs-corpus" / doc.name).read_bytes() == doc.read_bytes()
    ours = (REPO_ROOT / "eval" / "relevance" / "code.jsonl").read_text(encoding="utf-8")
    theirs = (ref / "relevance" / "code.jsonl").read_text(encoding="utf-8")
    assert ours == theirs.replace('"corpus":"../../test/fixture/samples"', '"corpus":"../../samples"')


# --------------------------------------------------------------------------- single-signal rankings


def test_single_signal_rankings_are_the_hybrid_candidate_lists():
    """BM25-only and cosine-only results are exactly the kernels' candidate orders, ranked from 1."""
    from cce_core.cli.shared import command_host
    from cce_core.retrieval.numpy_kernel import NumpyKernel
    from cce_core.retrieval.single_signal import bm25_only_search, vector_only_search

    searcher = rel.corpus_searcher(str(REPO_ROOT / "samples"), command_host())
    store, embedder = searcher.store, searcher.embedder
    kernel = NumpyKernel(store)
    for query in ("read config path", "class Loader load", "sum node value struct"):
        bm25 = bm25_only_search(store, query, 6)
        ids = [store.chunks.index(r.chunk) for r in bm25]
        assert ids == kernel.bm25_top(query.lower().split(), 6)
        assert [r.rank for r in bm25] == list(range(1, len(bm25) + 1))
        vector = vector_only_search(store, embedder, query, 6)
        cosines = kernel.cosines(embedder.embed_query(query))
        assert [store.chunks.index(r.chunk) for r in vector] == [int(i) for i in cosines.top(6)]
        assert [r.score for r in vector] == [cosines.at(int(i)) for i in cosines.top(6)]
    assert bm25_only_search(store, "!!!", 5) == [] and vector_only_search(store, embedder, " \t", 5) == []
    assert bm25_only_search(store, "zzzunknownzzz", 5) == []
    assert len(vector_only_search(store, embedder, "zzzunknownzzz", 5)) == 5  # every chunk takes part

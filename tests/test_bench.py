"""``cce bench``: the measurement formulas on a tiny generated corpus, and the CLI contract."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cce_core.evaluation.bench import (
    builtin_languages,
    builtin_query_set,
    load_queries_file,
    nearest_rank,
    run_bench,
)
from cce_core.foundation.errors import CceError

GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2  # 44 bytes; redacted to [REDACTED:GITHUB_TOKEN]

# path -> exact bytes. Ten chunks in all: three Python functions and seven one-chunk text files,
# so a top-10 search returns every chunk and the savings can be worked out by hand.
CORPUS: dict[str, bytes] = {
    "pkg/alpha.py": b"def alpha_one():\n    return 1\n\n\ndef alpha_two():\n    return 2\n",
    "pkg/beta.py": ('def beta_main(x):\n    token = "' + GITHUB_TOKEN + '"\n    return x * 2\n').encode(),
    "gamma.txt": b"gamma notes about routing\n",
    "fruit1.txt": b"apple pie recipe with apple slices\n",
    "fruit2.txt": b"apple crumble and apple pie\n",
    "fruit3.txt": b"baked apple pie, warm apple\n",
    "fruit4.txt": b"apple pie apple tart apple\n",
    "fruit5.txt": b"green apple pie filling\n",
    "zebra.txt": b"zebra stripes on the savannah\n",
}

# The chunk bodies the Python pack cuts out of the two .py files (function nodes, no trailing newline).
PY_CHUNKS = {
    "pkg/alpha.py": [b"def alpha_one():\n    return 1", b"def alpha_two():\n    return 2"],
    "pkg/beta.py": [b'def beta_main(x):\n    token = "[REDACTED:GITHUB_TOKEN]"\n    return x * 2'],
}

QUERIES = [
    {"query": "alpha one", "expected": ["alpha"]},
    {"query": "apple pie", "expected": ["zebra"]},  # the zebra file shares no word with the query
    {"query": "???", "expected": ["gamma"]},  # no token: no result at all, so a miss with no savings
    {"query": "delta", "expected": ["delta"]},  # no such path: dropped
    {"query": "beta main", "expected": ["nowhere", "beta.py"]},  # any-of
]


def tokens(raw: bytes) -> int:
    return max(1, len(raw) // 4)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    for rel, raw in CORPUS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
    return root


@pytest.fixture
def queries_file(tmp_path: Path) -> Path:
    path = tmp_path / "queries.json"
    path.write_text(json.dumps(QUERIES), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def host():
    from cce_core.plugins.host import default_host

    h = default_host()
    h.require_healthy()
    return h


def _bench(root: Path, queries: Path, host, **kw):
    args = {"lang": "python", "name": None, "commit": "abc123", "queries_file": queries}
    args.update(kw)
    return run_bench(root, host=host, embedder=host.embedder("hash"), **args)


def test_recall_and_savings_match_the_hand_computation(corpus, queries_file, host):
    report = _bench(corpus, queries_file, host)
    data = report.to_json()

    assert data["files"] == 9
    assert data["chunks"] == 10
    assert data["queries_used"] == 4
    assert data["queries_dropped"] == 1
    assert [d["query"] for d in data["dropped"]] == ["delta"]

    by_query = {q["query"]: q for q in data["per_query"]}
    assert by_query["alpha one"]["first_hit_rank"] == 1
    assert 5 < by_query["apple pie"]["first_hit_rank"] <= 10
    assert by_query["???"]["first_hit_rank"] is None
    assert by_query["beta main"]["first_hit_rank"] == 1
    # alpha one and beta main hit in the top 5; apple pie only in the top 10; ??? never.
    assert data["recall_at_5"] == pytest.approx(2 / 4)
    assert data["recall_at_10"] == pytest.approx(3 / 4)

    # Every query with a token returns all ten chunks, so served and baseline are corpus totals.
    served = sum(tokens(c) for chunks in PY_CHUNKS.values() for c in chunks)
    served += sum(tokens(raw) for rel, raw in CORPUS.items() if rel.endswith(".txt"))
    baseline = sum(tokens(raw) for raw in CORPUS.values())  # raw files: the token is not redacted
    for q in ("alpha one", "apple pie", "beta main"):
        assert by_query[q]["served_tokens"] == served
        assert by_query[q]["baseline_tokens"] == baseline
    assert by_query["???"]["baseline_tokens"] == 0
    assert by_query["???"]["savings"] is None
    # The query without results does not enter the mean.
    assert data["token_savings_pct"] == pytest.approx((1 - served / baseline) * 100, abs=1e-6)
    assert served < baseline


def test_recall_agrees_with_an_independent_search(corpus, queries_file, host):
    from cce_core.indexing.indexer import build_index
    from cce_core.retrieval.searcher import Searcher

    report = _bench(corpus, queries_file, host)
    embedder = host.embedder("hash")
    store, _ = build_index(corpus, host, embedder, protect_secrets=True)
    searcher = Searcher(store, embedder)
    used = [q for q in QUERIES if q["query"] != "delta"]
    hits = {5: 0, 10: 0}
    for q in used:
        paths = [r.chunk.file_path for r in searcher.search(q["query"], top_k=10, graph=False)]
        for k in hits:
            hits[k] += any(any(e in p for e in q["expected"]) for p in paths[:k])
    assert report.recall_at_5 == hits[5] / len(used)
    assert report.recall_at_10 == hits[10] / len(used)


def test_latency_samples_and_nearest_rank(corpus, queries_file, host):
    report = _bench(corpus, queries_file, host)
    assert len(report.latencies_ms) == 4 * 5  # used queries x five repeats
    ordered = sorted(report.latencies_ms)
    assert report.query_p50_ms == ordered[9]  # ceil(0.50 * 20) = 10th sample
    assert report.query_p95_ms == ordered[18]  # ceil(0.95 * 20) = 19th sample
    assert nearest_rank([1.0, 2.0, 3.0, 4.0, 5.0], 50) == 3.0
    assert nearest_rank([1.0, 2.0, 3.0, 4.0, 5.0], 95) == 5.0
    assert nearest_rank([], 50) == 0.0


def test_summary_and_markdown(corpus, queries_file, host):
    report = _bench(corpus, queries_file, host, name="tiny/corpus")
    lines = report.summary_lines()
    assert lines[0] == "Benchmark finished (tiny/corpus, python, commit abc123):"
    assert "  files/chunks : 9/10" in lines
    assert "  recall@5/@10 : 50.0% / 75.0%" in lines
    assert any(line.startswith("  token savings: ") and line.endswith("%") for line in lines)
    assert any(line.startswith("  latency      : p50 ") for line in lines)
    md = report.markdown()
    assert "| Recall@5 | 50.0% |" in md
    assert "| Recall@10 | 75.0% |" in md
    assert "| Files indexed | 9 |" in md
    assert "`abc123`" in md
    assert '"delta"' in md  # dropped queries are listed


def test_commit_defaults_to_git_head_or_unknown(corpus, queries_file, host, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(corpus.parent))
    assert _bench(corpus, queries_file, host, commit=None).commit == "unknown"
    git = ["git", "-C", str(corpus), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "x"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    assert _bench(corpus, queries_file, host, commit=None).commit == head


EXPECTED_SUBSTRINGS = {
    "python": ["blueprints", "app", "config", "sessions", "app|blueprints", "templating", "cli", "json", "ctx",
               "helpers"],
    "ruby": ["base"] * 6 + ["show_exceptions"] + ["base"] * 3,
    "rust": ["benchmark", "options", "export", "export", "benchmark", "command", "outlier", "benchmark",
             "parameter", "timer"],
    "typescript": ["vanilla", "react", "middleware", "middleware", "shallow", "middleware", "middleware", "vanilla",
                   "middleware", "context"],
    "c": ["jv", "builtin", "execute", "jv_print", "lexer", "compile", "jv", "jv", "main", "jv_unicode"],
}


def test_builtin_query_sets():
    assert builtin_languages() == list(EXPECTED_SUBSTRINGS)
    for lang, expected in EXPECTED_SUBSTRINGS.items():
        _name, queries = builtin_query_set(lang)
        assert ["|".join(q.expected) for q in queries] == expected, lang
    name, queries = builtin_query_set("python")
    assert name == "pallets/flask@3.0.3"
    assert queries[4].query == "url routing and rule mapping"
    assert builtin_query_set("ruby")[0] == "sinatra/sinatra"
    assert builtin_query_set(None) == builtin_query_set("python")
    with pytest.raises(CceError, match="python, ruby, rust, typescript, c"):
        builtin_query_set("cobol")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not valid JSON"),
        ("{}", "non-empty JSON list"),
        ("[]", "non-empty JSON list"),
        ('[{"query": "x"}]', '"expected"'),
        ('[{"query": "", "expected": ["a"]}]', '"query"'),
        ('[{"query": "x", "expected": [""]}]', '"expected"'),
        ('["x"]', "not an object"),
    ],
)
def test_bad_queries_files(tmp_path, content, message):
    path = tmp_path / "q.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CceError, match=message):
        load_queries_file(path)


def test_queries_file_accepts_a_single_expected_string(tmp_path):
    path = tmp_path / "q.json"
    path.write_text('[{"query": "x", "expected": "app"}]', encoding="utf-8")
    assert load_queries_file(path)[0].expected == ("app",)
    with pytest.raises(CceError, match="no such queries file"):
        load_queries_file(tmp_path / "missing.json")


def test_no_lang_means_the_default_set(corpus, queries_file, host):
    assert _bench(corpus, queries_file, host, lang=None).lang == "python"


def test_every_query_dropped_is_an_error(corpus, tmp_path, host):
    path = tmp_path / "q.json"
    path.write_text('[{"query": "x", "expected": ["nothing-like-this"]}]', encoding="utf-8")
    with pytest.raises(CceError, match="nothing to measure"):
        _bench(corpus, path, host)


# -- through the installed command -------------------------------------------------


def test_cli_json(cce, corpus, queries_file, tmp_path):
    proc = cce("bench", corpus, "--queries", queries_file, "--json", "--commit", "deadbeef", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    for key in ("files", "chunks", "recall_at_5", "recall_at_10", "token_savings_pct", "index_seconds",
                "query_p50_ms", "query_p95_ms", "corpus", "lang", "commit", "queries_used",
                "queries_dropped", "runtime", "machine"):
        assert key in data, key
    assert (data["files"], data["chunks"]) == (9, 10)
    assert (data["recall_at_5"], data["recall_at_10"]) == (0.5, 0.75)
    assert data["commit"] == "deadbeef"
    assert data["corpus"] == "corpus"  # a custom query set is labelled by the directory name
    assert not (tmp_path / "docs").exists()


def test_cli_output_writes_markdown_only_there(cce, corpus, queries_file, tmp_path):
    work = tmp_path / "cwd"
    work.mkdir()
    out = tmp_path / "report" / "bench.md"
    out.parent.mkdir()
    proc = cce("bench", corpus, "--queries", queries_file, "--output", out, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8").startswith("# cce bench report\n")
    assert "recall@5/@10 : 50.0% / 75.0%" in proc.stdout
    assert str(out) in proc.stdout
    assert list(work.iterdir()) == []  # nothing under the caller's cwd, no docs/BENCHMARKS.md


@pytest.mark.parametrize("args", [("--lang", "cobol"), ("--lang", "Python")])
def test_cli_unknown_lang(cce, corpus, tmp_path, args):
    proc = cce("bench", corpus, *args, cwd=tmp_path)
    assert proc.returncode != 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "python, ruby, rust, typescript, c" in lines[0]
    assert "Traceback" not in proc.stderr


def test_cli_missing_directory(cce, tmp_path):
    proc = cce("bench", tmp_path / "nope", cwd=tmp_path)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "Traceback" not in proc.stderr

"""``cce relevance --compare A,B`` with two embedders: each indexes the corpus in memory, one backend is scored.

The second embedder is a toy registered by a test plugin (a module plus a
``dist-info`` folder with a ``cce`` entry point, put on ``PYTHONPATH`` for the
process tests), so nothing is installed, nothing is fetched and the figures are
exact. The hash rows must equal the backend rows of the plain report: the
comparison runs through the same index build and the same rankings.
"""

from __future__ import annotations

import json
import shutil
import textwrap

import numpy as np
import pytest
from helpers import REPO_ROOT, run_cce

from cce_core.api import Embedder, hookimpl
from cce_core.evaluation import relevance as rel
from cce_core.foundation.errors import CceError
from cce_core.plugins.host import PluginHost

CODE_SET = "eval/relevance/code.jsonl"
# The plain report's rows for the code set (tests/test_relevance.py pins the whole table).
HASH_HYBRID = "  hash          0.457143    1.000000    0.928571    0.581633\n"
HASH_VECTOR = "  hash          0.485714    1.000000    1.000000    0.601474\n"

TOY_SOURCE = '''
"""A toy embedder for tests: letter counts a-z, L2-normalised (deterministic, meaning-free)."""
import numpy as np
from cce_core.api import Embedder, hookimpl

def _vector(text):
    out = np.zeros(26, dtype=np.float64)
    for ch in text.lower():
        if "a" <= ch <= "z":
            out[ord(ch) - 97] += 1.0
    norm = float(np.sqrt(np.dot(out, out)))
    return out / norm if norm > 0 else out

class ToyEmbedder(Embedder):
    name = "toy"
    model = "letters-v1"
    dim = 26

    def embed_batch(self, texts):
        return np.array([_vector(t) for t in texts], dtype=np.float64).reshape(len(texts), 26)

    def embed_query(self, text):
        return _vector(text)

@hookimpl
def cce_register_embedders(register):
    register("toy", ToyEmbedder)
'''


class _Letters(Embedder):
    """The same toy, in process."""

    name = "toy"
    model = "letters-v1"
    dim = 26

    def embed_batch(self, texts):
        return np.array([self.embed_query(t) for t in texts], dtype=np.float64).reshape(len(texts), 26)

    def embed_query(self, text):
        out = np.zeros(26, dtype=np.float64)
        for ch in text.lower():
            if "a" <= ch <= "z":
                out[ord(ch) - 97] += 1.0
        norm = float(np.sqrt(np.dot(out, out)))
        return out / norm if norm > 0 else out


class _ToyPlugin:
    @hookimpl
    def cce_register_embedders(self, register):
        register("toy", _Letters)


class _Unready(Embedder):
    name = "unready"

    def embed_batch(self, texts):
        raise AssertionError("never called")

    def embed_query(self, text):
        raise AssertionError("never called")

    def healthy(self):
        return False

    def unavailable_message(self, purpose):
        return f"the unready embedder cannot start ({purpose})"


class _UnreadyPlugin:
    @hookimpl
    def cce_register_embedders(self, register):
        register("unready", _Unready)


def _names(*extra: str):
    return lambda: ["hash", "ollama", *extra]


# --------------------------------------------------------------------------- parsing


def test_backend_lists_keep_their_meaning():
    asked: list[bool] = []

    def names():
        asked.append(True)
        return ["hash"]

    spec = rel.parse_compare("bm25, hybrid", names)
    assert spec == rel.CompareSpec("backends", ("bm25", "hybrid"))
    assert asked == []  # the installed embedders are not even looked up
    assert rel.only_backends("bm25,hybrid") and not rel.only_backends("hash,bm25")
    with pytest.raises(CceError, match=r"exactly two distinct backends, e\.g\. bm25,hybrid"):
        rel.parse_compare("bm25,bm25", names)


def test_two_embedders_in_the_order_given():
    assert rel.parse_compare("toy, hash,toy", _names("toy")) == rel.CompareSpec("embedders", ("toy", "hash"))


@pytest.mark.parametrize(("text", "message"), [
    ("hash,nope", 'unknown backend or embedder "nope" (backends: bm25, vector, hybrid; '
                  "installed embedders: hash, ollama, toy)"),
    ("hash,bm25", "--compare takes two backends (e.g. bm25,hybrid) or two embedders (e.g. hash,minilm), not a mix"),
    ("hash,hash", "--compare requires exactly two distinct embedders, e.g. hash,minilm"),
    ("hash,ollama,toy", "--compare requires exactly two distinct embedders, e.g. hash,minilm"),
])
def test_compare_list_errors(text, message):
    with pytest.raises(CceError) as caught:
        rel.parse_compare(text, _names("toy"))
    assert str(caught.value) == message


def test_the_embedder_comparison_scores_one_backend():
    assert rel.embedder_backend(None) == "hybrid"
    assert rel.embedder_backend(" vector ") == "vector"
    with pytest.raises(CceError, match="scores one backend"):
        rel.embedder_backend("bm25,vector")
    with pytest.raises(CceError, match='unknown backend "x"'):
        rel.embedder_backend("x")


# --------------------------------------------------------------------------- the library


def _code_cases():
    return rel.parse_fixtures((REPO_ROOT / CODE_SET).read_text(encoding="utf-8")).cases


def test_hash_rows_equal_the_backend_report():
    host = PluginHost([(_ToyPlugin(), "toy-plugin")])
    cases = _code_cases()
    corpus = str(REPO_ROOT / "samples")
    plain = rel.evaluate(rel.corpus_searcher(corpus, host), cases, ["vector", "hybrid"])
    for backend, expected in zip(("vector", "hybrid"), plain, strict=True):
        hash_report, toy_report = rel.evaluate_embedders(corpus, host, ("hash", "toy"), backend, cases)
        assert hash_report.backend == "hash" and toy_report.backend == "toy"
        assert hash_report.queries == expected.queries
        assert (hash_report.precision, hash_report.mrr) == (expected.precision, expected.mrr)
    # The toy's index really is a different one: its vector ranking differs from hash's.
    hash_v, toy_v = rel.evaluate_embedders(corpus, host, ("hash", "toy"), "vector", cases)
    assert [q.first_relevant_rank for q in hash_v.queries] != [q.first_relevant_rank for q in toy_v.queries]
    # bm25 ignores the vectors: the two embedders tie on every query.
    hash_b, toy_b = rel.evaluate_embedders(corpus, host, ("hash", "toy"), "bm25", cases)
    assert hash_b.queries == toy_b.queries


def test_every_embedder_is_ranked_under_the_profile_asked_for():
    host = PluginHost([(_ToyPlugin(), "toy-plugin")])
    cases = _code_cases()
    corpus = str(REPO_ROOT / "samples")
    for profile in ("family", "default"):
        plain = rel.evaluate(rel.corpus_searcher(corpus, host, profile=profile), cases, ["hybrid"])[0]
        hash_report, _toy = rel.evaluate_embedders(corpus, host, ("hash", "toy"), "hybrid", cases, profile)
        assert hash_report.queries == plain.queries, profile
    # The two profiles really rank differently here, so the check above can fail.
    family = rel.evaluate_embedders(corpus, host, ("hash", "toy"), "hybrid", cases, "family")[0]
    default = rel.evaluate_embedders(corpus, host, ("hash", "toy"), "hybrid", cases, "default")[0]
    assert family.queries != default.queries


def test_an_embedder_that_cannot_start_is_refused_before_indexing():
    host = PluginHost([(_UnreadyPlugin(), "unready-plugin")])
    with pytest.raises(CceError, match=r"^the unready embedder cannot start \(index\)$"):
        rel.evaluate_embedders(str(REPO_ROOT / "samples"), host, ("hash", "unready"), "hybrid", _code_cases())


# --------------------------------------------------------------------------- the command


@pytest.fixture(scope="module")
def toy_env(tmp_path_factory) -> dict[str, str]:
    """An environment in which the installed ``cce`` also finds the toy embedder plugin."""
    import os

    root = tmp_path_factory.mktemp("toy-plugin")
    (root / "cce_toy_embedder.py").write_text(textwrap.dedent(TOY_SOURCE), encoding="utf-8")
    info = root / "cce_toy_embedder-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cce-toy-embedder\nVersion: 0.1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text("[cce]\ntoy = cce_toy_embedder\n", encoding="utf-8")
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "CCE_NO_PLUGIN_CACHE": "1"}


def _run(*args, env=None):
    return run_cce("relevance", *args, cwd=REPO_ROOT, env=env)


def test_compare_two_embedders_human(toy_env):
    proc = _run(CODE_SET, "--compare", "hash,toy", env=toy_env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(
        "CCE relevance — ranking quality vs labeled fixtures (cce.relevance/v1)\n"
        "  corpus  : eval/relevance/../../samples\n"
        "  embedder: hash vs toy\n"
        "  backend : hybrid\n"
        "  queries : 7\n"
        "\n"
        "  embedder           P@k      recall         MRR          F1\n"
        + HASH_HYBRID
    )
    assert "  embedder         tok-P  tok-recall     tok-IoU\n" in out
    assert "\n  per-query deltas (hash → toy; positive = toy wins)\n" in out
    assert "\n  paired t-test on the per-query deltas (two-sided, n=7, df=6)\n" in out
    again = _run(CODE_SET, "--compare", "hash,toy", env=toy_env)
    assert again.stdout == out  # deterministic


def test_compare_two_embedders_json_and_backend(toy_env):
    proc = _run(CODE_SET, "--compare", "hash,toy", "--backend", "vector", "--json", env=toy_env)
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert list(body) == sorted(body)
    assert body["schema"] == "cce.relevance.embedders/v1"
    assert body["backend"] == "vector" and body["queries"] == 7
    assert [e["embedder"] for e in body["embedders"]] == ["hash", "toy"]
    assert body["compare"]["a"] == "hash" and body["compare"]["b"] == "toy"
    assert set(body["compare"]["metrics"]) == {"f1", "mrr", "precision_at_k", "recall"}
    # The hash entry is the vector backend's entry of the plain v2 report, under another key.
    plain = json.loads(_run(CODE_SET, "--backend", "vector", "--json").stdout)["backends"][0]
    plain["embedder"] = plain.pop("backend")
    assert body["embedders"][0] == {**plain, "embedder": "hash"}
    human = _run(CODE_SET, "--compare", "hash,toy", "--backend", "vector", env=toy_env)
    assert HASH_VECTOR in human.stdout


def test_reversed_pair_flips_the_deltas(toy_env):
    ab = json.loads(_run(CODE_SET, "--compare", "hash,toy", "--json", env=toy_env).stdout)["compare"]["metrics"]
    ba = json.loads(_run(CODE_SET, "--compare", "toy,hash", "--json", env=toy_env).stdout)["compare"]["metrics"]
    for key in ab:
        a, b = ab[key]["mean_delta"], ba[key]["mean_delta"]
        assert float(a) == -float(b)


def test_the_corpus_is_never_written(tmp_path, toy_env):
    corpus = tmp_path / "corpus"
    shutil.copytree(REPO_ROOT / "samples", corpus, ignore=shutil.ignore_patterns(".cce"))
    proc = _run(CODE_SET, "--dir", corpus, "--compare", "hash,toy", env=toy_env)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in corpus.iterdir()) == sorted(p.name for p in (REPO_ROOT / "samples").iterdir()
                                                            if p.name != ".cce")


@pytest.mark.parametrize(("args", "message"), [
    (["--compare", "hash,nope"], 'error: unknown backend or embedder "nope" (backends: bm25, vector, hybrid; '
                                 "installed embedders: "),
    (["--compare", "hash,bm25"], "error: --compare takes two backends (e.g. bm25,hybrid) or two embedders "
                                 "(e.g. hash,minilm), not a mix"),
    (["--compare", "hash,toy", "--store", "x.cce"], "error: --store cannot be used with --compare of two embedders"),
    (["--compare", "hash,toy", "--backend", "bm25,hybrid"], "error: an embedder comparison scores one backend"),
    (["--compare", "hash,toy", "--dir", "eval/nowhere"], "error: corpus is not a directory: eval/nowhere"),
])
def test_bad_embedder_comparisons_are_one_error_line(args, message, toy_env):
    proc = _run(CODE_SET, *args, env=toy_env)
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines()[0].startswith(message)
    assert "Traceback" not in proc.stderr


def test_unknown_name_lists_the_installed_embedders():
    proc = _run(CODE_SET, "--compare", "hash,nope")
    assert proc.returncode == 1
    first = proc.stderr.splitlines()[0]
    assert first.startswith('error: unknown backend or embedder "nope"') and "hash" in first
    assert len(proc.stderr.strip().splitlines()) == 1


def test_store_path_with_a_missing_corpus_is_unaffected(tmp_path):
    """A backend comparison still never asks which embedders exist (no plugin host for --store)."""
    proc = _run(CODE_SET, "--compare", "bm25,hybrid", "--store", tmp_path / "none.cce")
    assert proc.returncode == 1 and proc.stderr.startswith("error: ") and "embedder" not in proc.stderr


# --------------------------------------------------------------------------- cce bench --embedder


def test_bench_indexes_with_the_chosen_embedder(tmp_path, toy_env):
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"query": "read config", "expected": ["python.py"]}]), encoding="utf-8")
    runs = {}
    for embedder in ("hash", "toy"):
        proc = run_cce("bench", REPO_ROOT / "samples", "--queries", queries, "--commit", "x", "--json",
                       "--embedder", embedder, env=toy_env)
        assert proc.returncode == 0, proc.stderr
        runs[embedder] = json.loads(proc.stdout)
    assert runs["hash"]["embedder"] == "hash" and runs["toy"]["embedder"] == "toy"
    assert runs["hash"]["chunks"] == runs["toy"]["chunks"]
    default = json.loads(run_cce("bench", REPO_ROOT / "samples", "--queries", queries, "--commit", "x",
                                 "--json").stdout)
    assert default["embedder"] == "hash" and default["per_query"] == runs["hash"]["per_query"]


def test_bench_refuses_an_unknown_embedder(tmp_path):
    proc = run_cce("bench", REPO_ROOT / "samples", "--embedder", "nope")
    assert proc.returncode == 1
    assert proc.stderr.startswith('error: unknown embedder "nope" (available: ')
    assert "Traceback" not in proc.stderr

"""A one-shot search's start-up shortcuts answer exactly like the long way round (#24, third pass).

A fresh ``cce search`` now keeps a sparse query's cosines for the touched
chunks only, reads a re-indexed store's live rows through one gather, sums a
file's length only when a query needs it, matches plugin path patterns
without fnmatch's regexes, and chooses the plain-Python kernel by the work a
query would really cost. Each shortcut is compared here with the form it
replaces, floats compared exactly, on a fresh and on a re-indexed store.
"""

from __future__ import annotations

import os
import subprocess
import sys
from fnmatch import fnmatchcase
from pathlib import Path

import pytest
from helpers import OLD_MTIME, index_with_hash, sample_corpus

from cce_core.foundation.path_patterns import PathPatterns, component_matcher
from cce_core.indexing.store import SegmentedStore, load_store, open_segments
from cce_core.plugins.host import default_host
from cce_core.retrieval import pure_kernel
from cce_core.retrieval.default_ranking import DefaultRanker
from cce_core.retrieval.pure_kernel import LeanKernel, SparseCosines, in_store_order, lean_work, sparse_coordinates
from cce_core.retrieval.searcher import Searcher

OLD = OLD_MTIME
QUERIES = ["segment manifest", "bm25 postings", "def search", "compaction threshold", "zzzz_not_a_word",
           "Loader load", "where is the store defined", "x", "read configuration from a file", "the"]


def _corpus(tmp_path: Path) -> Path:
    return sample_corpus(tmp_path, "indexing")


def _edit(root: Path, n: int) -> None:
    path = root / "indexing" / "bm25.py"
    path.write_text(path.read_text(encoding="utf-8") + f"\n\ndef edit_number_{n}():\n    return {n}\n",
                    encoding="utf-8")
    os.utime(path, (OLD + n, OLD + n))


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    """A fresh store (rows in store order) and a store re-indexed three times (a live view)."""
    base = tmp_path_factory.mktemp("startup")
    root = _corpus(base)
    fresh = base / "fresh" / "index.cce"
    index_with_hash(root, fresh)
    reindexed = base / "reindexed" / "index.cce"
    index_with_hash(root, reindexed)
    for n in (1, 2, 3):
        _edit(root, n)
        index_with_hash(root, reindexed)
    return {"fresh": fresh, "reindexed": reindexed}


def _open(stores: dict[str, Path], kind: str) -> SegmentedStore:
    """``no_view``: the re-indexed store resolved from its segments, as a store without a live view reads."""
    if kind != "no_view":
        return load_store(stores[kind])
    opened = open_segments(stores["reindexed"])
    return SegmentedStore(opened.meta, opened.segments, opened.refs, stores["reindexed"], opened.size,
                          opened.ordered)


def _loop_order(store: SegmentedStore, per_row: list, fill):
    """The per-row loop ``in_store_order`` replaced."""
    if store.identity:
        return per_row
    positions = store.position_of_row
    live = [fill] * store.rows
    for row, value in enumerate(per_row):
        if positions[row] >= 0:
            live[positions[row]] = value
    return live


def test_the_reindexed_store_really_has_a_live_view(stores):
    data = load_store(stores["reindexed"])
    assert isinstance(data, SegmentedStore)
    assert data.view is not None and not data.identity and data.total_rows > data.rows
    resolved = _open(stores, "no_view")
    assert resolved.view is None and not resolved.identity


@pytest.mark.parametrize("kind", ["fresh", "reindexed", "no_view"])
def test_the_gather_through_the_view_equals_the_row_loop(stores, kind):
    data = _open(stores, kind)
    per_row = [float(i) * 0.5 for i in range(data.total_rows)]
    assert in_store_order(data, per_row, 0.0) == _loop_order(data, per_row, 0.0)


@pytest.mark.parametrize("kind", ["fresh", "reindexed", "no_view"])
def test_touched_cosines_equal_the_per_chunk_list(stores, kind, monkeypatch):
    data = _open(stores, kind)
    embedder = default_host().embedder("hash")
    for q in QUERIES:
        nonzero = sparse_coordinates(embedder.embed_query(q))
        monkeypatch.setattr(pure_kernel, "TOUCHED_SHARE", 1e9)
        touched = SparseCosines(data, nonzero, data.chunk_ids)
        monkeypatch.setattr(pure_kernel, "TOUCHED_SHARE", -1.0)
        listed = SparseCosines(data, nonzero, data.chunk_ids)
        assert touched.touched is not None and listed.touched is None
        assert [touched.at(i).hex() for i in range(data.rows)] == [listed.at(i).hex() for i in range(data.rows)], q
        for limit in (1, 3, 10, 60, data.rows - 1, data.rows, data.rows + 5):
            assert touched.top(limit) == listed.top(limit), (q, limit)


@pytest.mark.parametrize("kind", ["fresh", "reindexed"])
@pytest.mark.parametrize("profile", ["family", "default"])
def test_lean_and_numpy_kernels_answer_alike_on_fresh_and_reindexed_stores(stores, kind, profile):
    data = load_store(stores[kind])
    embedder = default_host().embedder("hash")
    lean = Searcher(data, embedder, kernel="lean", profile=profile)
    vectorised = Searcher(data, embedder, kernel="numpy", profile=profile)
    for q in QUERIES:
        for top_k in (1, 10):
            a = [(r.rank, r.chunk.chunk_id, r.score.hex()) for r in lean.search(q, top_k=top_k)]
            b = [(r.rank, r.chunk.chunk_id, r.score.hex()) for r in vectorised.search(q, top_k=top_k)]
            assert a == b, (kind, profile, q, top_k)


@pytest.mark.parametrize("kind", ["fresh", "reindexed", "no_view"])
def test_file_lengths_summed_on_demand_equal_the_full_table(stores, kind):
    ranker = DefaultRanker(_open(stores, kind))
    assert [ranker._file_length(f) for f in range(len(ranker.paths))] == ranker.file_len
    avgdl, avgfl = ranker._average_lengths
    assert avgdl == ((sum(ranker.doc_len) / max(len(ranker.doc_len), 1)) or 1.0)
    assert avgfl == ((sum(ranker.file_len) / max(len(ranker.paths), 1)) or 1.0)


def test_the_work_estimate_counts_rows_cells_and_postings(stores):
    data = load_store(stores["reindexed"])
    embedder = default_host().embedder("hash")
    nonzero = sparse_coordinates(embedder.embed_query("def search"))
    rows_only = lean_work(data, [], [], 10**12)
    with_cells = lean_work(data, nonzero, [], 10**12)
    with_postings = lean_work(data, nonzero, ["def", "search"], 10**12)
    assert rows_only == data.total_rows
    assert rows_only < with_cells < with_postings
    # The budget decides: a query costing more than it is left to numpy.
    assert LeanKernel.suits(data, nonzero, ["def", "search"], budget=with_postings)
    assert not LeanKernel.suits(data, nonzero, ["def", "search"], budget=with_postings - 1)


@pytest.mark.parametrize(("profile", "budget_name"), [("family", "MAX_LEAN_WORK"),
                                                     ("default", "MAX_LEAN_WORK_DEFAULT_RANKING")])
def test_the_auto_kernel_follows_the_budget_of_its_profile(stores, profile, budget_name):
    def kernel_with(budget: int) -> list[str]:
        script = (
            "import sys\n"
            "from cce_core.plugins.host import host_for_embedder\n"
            "from cce_core.retrieval import pure_kernel\n"
            "from cce_core.retrieval.searcher import Searcher\n"
            "from cce_core.indexing.store import load_store\n"
            f"pure_kernel.{budget_name} = {budget}\n"
            f"data = load_store({str(stores['reindexed'])!r})\n"
            f"s = Searcher(data, host_for_embedder('hash').embedder('hash'), profile={profile!r})\n"
            "s.search('def search')\n"
            # (not numpy itself: a cold conventions cache loads every plugin, and an embedder pack may import it)
            "print(s.last_kernel, 'cce_core.retrieval.numpy_kernel' in sys.modules)\n"
        )
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              check=True).stdout.split()

    assert kernel_with(10**12) == ["lean", "False"]
    assert kernel_with(0) == ["numpy", "True"]


PATTERNS = ["*_test.go", "test_*.py", "conftest.py", "*.spec.ts", "a*a", "*", "x?y", "[ab]*.c", "*.*.js",
            "__tests__", "t*", "*t", "", "spec", "*.test-d.ts"]
NAMES = ["a", "aa", "aba", "foo_test.go", "_test.go", "test_.py", "test_x.py", "conftest.py", "x.spec.ts",
         ".spec.ts", "xzy", "xy", "b.c", "ab.c", "c.c", "a.b.js", "t", "tt", "spec", "", "ünï_test.go",
         "x.test-d.ts", "line\nbreak_test.go"]


def test_the_component_matcher_answers_like_fnmatchcase():
    for pattern in PATTERNS:
        match = component_matcher(pattern)
        for name in NAMES:
            assert match(name) == fnmatchcase(name, pattern), (pattern, name)


def test_path_patterns_still_match_by_name_directory_and_tail():
    patterns = PathPatterns(["*_test.go", "spec/", "src/test/", "test/*_test.rb", "__snapshots__/"])
    assert patterns.matches("a/b/x_test.go")
    assert patterns.matches("spec/models/user_spec.rb") and patterns.matches("a/spec/b.rb")
    assert patterns.matches("x/src/test/y.java") and not patterns.matches("src/x/test/y.java")
    assert patterns.matches("a/test/x_test.rb") and not patterns.matches("a/tests/x_test.rb")
    assert patterns.matches("./__snapshots__/a.snap")
    assert not patterns.matches("specs/x.rb") and not patterns.matches("x_test.gox")


def test_a_search_without_metrics_does_not_import_the_event_modules(stores):
    script = (
        "import sys\n"
        "from cce_core.cli.app import main\n"
        "try:\n"
        f"    main(['search', 'segment manifest', '--store', {str(stores['reindexed'])!r}, '--no-metrics'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('event modules: %s' % ('cce_core.services.search_event' in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stderr.strip().endswith("event modules: False"), out.stderr

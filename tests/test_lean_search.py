"""The plain-Python ranking kernel gives bit-identical results to the numpy one, and a one-shot search uses it.

A fresh ``cce search`` ranks with ``lean_scoring`` so it never imports numpy;
these tests pin that both kernels return the same chunks, in the same order,
with the same float scores (compared exactly, not approximately), and that the
real CLI path really stays numpy-free.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import REPO_ROOT, copy_tree, reference_dir

from cce_core.hookspecs import Embedder
from cce_core.indexing.bm25 import bm25_scores
from cce_core.indexing.indexer import index_directory
from cce_core.indexing.store import SegmentedStore, load_store
from cce_core.plugins.host import default_host
from cce_core.retrieval.pure_kernel import bm25_scores_segments
from cce_core.retrieval.searcher import Searcher

QUERIES = [
    "Loader load", "parse json", "where is the user defined", "render template function", "config",
    "find function that handles errors", "class Parser", "validate input", "main entry point", "x",
    "authenticate user password", "database connection pool", "loader.rb", "http request handler",
    "read configuration from a file", "zzzz_not_a_word", "def", "graph import", "test helpers",
]


def _stores(tmp_path: Path) -> list[Path]:
    host = default_host()
    roots = [REPO_ROOT / "samples"]
    base = reference_dir() / "test" / "fixture" / "base"
    if base.is_dir():
        roots.append(base)
    roots.append(REPO_ROOT / "cce_core")  # a bigger tree with many files and import edges
    out = []
    for n, root in enumerate(roots):
        copy = copy_tree(root, tmp_path / f"tree{n}")
        store = tmp_path / f"store{n}" / "index.cce"
        index_directory(copy, store, host, host.embedder("hash"))
        out.append(store)
    return out


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> list[Path]:
    return _stores(tmp_path_factory.mktemp("lean"))


def _as_tuples(results) -> list[tuple[int, str, str, float]]:
    return [(r.rank, r.chunk.chunk_id, r.chunk.file_path, r.score) for r in results]


@pytest.mark.parametrize("top_k", [1, 3, 10, 40])
@pytest.mark.parametrize("graph", [True, False])
def test_both_kernels_rank_identically(stores, top_k, graph):
    embedder = default_host().embedder("hash")
    compared = 0
    for store in stores:
        data = load_store(store)
        lean = Searcher(data, embedder, kernel="lean")
        vectorised = Searcher(data, embedder, kernel="numpy")
        for q in QUERIES:
            a = _as_tuples(lean.search(q, top_k=top_k, graph=graph))
            b = _as_tuples(vectorised.search(q, top_k=top_k, graph=graph))
            assert a == b, (store, q)  # floats compared exactly
            assert lean.last_kernel == "lean" and vectorised.last_kernel == "numpy"
            compared += len(a)
    assert compared > 0


def test_lean_bm25_equals_the_numpy_scores_bit_for_bit(stores):
    for store in stores:
        data = load_store(store)
        assert isinstance(data, SegmentedStore)
        for q in QUERIES:
            terms = list(dict.fromkeys(q.lower().replace(".", " ").split()))
            dense = bm25_scores(data.bm25_source, terms)
            assert np.array_equal(dense, bm25_scores(data.bm25, terms))  # merged arrays score the same
            sparse = bm25_scores_segments(data, terms)
            assert sorted(sparse) == np.nonzero(dense)[0].tolist()
            assert all(dense[doc] == value for doc, value in sparse.items())


def test_hash_query_vector_in_plain_python_equals_the_batch_row():
    embedder = default_host().embedder("hash")
    texts = ["Loader load", "", "a a a b", "parse JSON from a string", "ünïcode ßtring and 42", "x " * 300,
             "def render(self): return template.render(**ctx)"]
    for text in texts:
        query = embedder.embed_query(text)
        assert isinstance(query, list)
        assert query == embedder.embed_batch([text])[0].tolist()


def test_auto_uses_the_lean_kernel_only_while_numpy_is_not_loaded(stores):
    script = (
        "import sys\n"
        "from cce_core.plugins.host import host_for_embedder\n"
        "from cce_core.retrieval.searcher import Searcher\n"
        "from cce_core.indexing.store import load_store\n"
        f"data = load_store({str(stores[0])!r})\n"
        "s = Searcher(data, host_for_embedder('hash').embedder('hash'))\n"
        "s.search('Loader load')\n"
        "first = (s.last_kernel, 'numpy' in sys.modules)\n"
        "import numpy\n"
        "s.search('Loader load')\n"
        "print(first[0], first[1], s.last_kernel)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["lean", "False", "numpy"]


def test_the_search_command_never_imports_numpy(stores):
    script = (
        "import sys\n"
        "from cce_core.cli.app import main\n"
        f"main(['search', 'Loader load', '--store', {str(stores[0])!r}, '--no-metrics', '--json'])\n"
        "sys.stderr.write('numpy loaded: %s' % ('numpy' in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["results"], out.stdout
    assert out.stderr.strip().endswith("numpy loaded: False")


def test_a_dense_query_vector_falls_back_to_numpy(stores):
    data = load_store(stores[0])

    class Dense(Embedder):
        name = "hash"

        def embed_query(self, text):
            return [1.0 / 16.0] * 256  # every coordinate non-zero: not worth the Python loops

    searcher = Searcher(data, Dense())
    searcher.search("Loader load")
    assert searcher.last_kernel == "numpy"


def test_an_unknown_kernel_is_refused(stores):
    with pytest.raises(ValueError, match="unknown kernel"):
        Searcher(load_store(stores[0]), default_host().embedder("hash"), kernel="gpu")

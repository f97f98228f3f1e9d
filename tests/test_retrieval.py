"""Ranking anchors: BM25 worked example, RRF, intent, graph edges and expansion."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cce_core.foundation.textrules import tokenize_bytes
from cce_core.hookspecs import Embedder
from cce_core.indexing.bm25 import bm25_scores, build_bm25
from cce_core.indexing.chunker import Chunk
from cce_core.indexing.graph import build_edges, neighbours
from cce_core.indexing.store import FileEntry, StoreData
from cce_core.retrieval.searcher import RRF_K, Searcher, file_hints, is_code_lookup


def test_bm25_worked_anchor():
    index = build_bm25([[b"user", b"login", b"user"], [b"payment", b"process"]])
    assert index.doc_len.tolist() == [3, 2]
    scores = bm25_scores(index, ["user"])
    assert scores[0] == pytest.approx(0.902273, abs=1e-4)
    assert scores[1] == 0.0
    assert math.log(2) == pytest.approx(0.693147, abs=1e-6)


def test_bm25_ignores_unknown_terms():
    index = build_bm25([[b"alpha", b"beta"], [b"gamma"]])
    assert bm25_scores(index, ["nonexistent"]).tolist() == [0.0, 0.0]


def test_rrf_anchor():
    assert pytest.approx(0.032796, abs=1e-6) == 1 / (RRF_K + 0) + 1.0 * (1 / (RRF_K + 2))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("find the login function", True),
        ("where is session created", True),
        ("class Loader", True),
        ("auth.py hashing", True),
        ("auth.pyc hashing", False),
        ("how is config defined", True),
        ("payment refund flow", False),
        ("functional style", False),
    ],
)
def test_code_lookup_intent(query, expected):
    assert is_code_lookup(query) is expected


def test_file_hints_are_dotted_tokens():
    assert file_hints("look in Auth.PY please") == ["auth.py"]


def test_graph_edges_by_stem_then_suffix():
    files = ["auth.py", "lib/oauth.py", "payments.py", "web/app.js"]
    imports = {"payments.py": ["auth", "os"], "web/app.js": ["oauth", "app"], "auth.py": []}
    edges = build_edges(imports, files, [".py", ".js"])
    assert edges == [("payments.py", "auth.py"), ("web/app.js", "lib/oauth.py")]
    assert neighbours(edges)["auth.py"] == ["payments.py"]
    # Without declared suffixes only exact stems resolve.
    assert build_edges({"x.py": ["uth"]}, ["auth.py", "x.py"], []) == []


class _FixedEmbedder(Embedder):
    name = "fixed"

    def __init__(self, vectors: dict[str, np.ndarray]):
        self.vectors = vectors

    def embed_batch(self, texts):
        return np.vstack([self.embed_query(t) for t in texts])

    def embed_query(self, text):
        return self.vectors.get(text, np.ones(4) / 2.0)


def _store(chunks: list[Chunk], vectors: np.ndarray, edges) -> StoreData:
    files: list[FileEntry] = []
    for i, c in enumerate(chunks):
        if files and files[-1].path == c.file_path:
            files[-1].chunk_count += 1
        else:
            files.append(FileEntry(c.file_path, "", 10, i, 1, []))
    bm25 = build_bm25([tokenize_bytes(c.content.encode()) for c in chunks])
    return StoreData({"embedder": "fixed"}, chunks, vectors, files, edges, bm25)


def _chunk(cid: str, path: str, start: int, content: str) -> Chunk:
    return Chunk(cid, path, start, start + 1, "function", "function_definition", "python", content, 5)


def test_diversity_cap_and_graph_expansion():
    chunks = [_chunk(f"a{i}", "a.py", i * 10, "login user session") for i in range(5)]
    chunks += [_chunk("b0", "b.py", 1, "helper code"), _chunk("b1", "b.py", 5, "other helper")]
    vectors = np.array([[1.0, 0, 0, 0]] * 5 + [[0.6, 0.8, 0, 0], [0.0, 1.0, 0, 0]])
    store = _store(chunks, vectors, [("a.py", "b.py")])
    searcher = Searcher(store, _FixedEmbedder({"login user": np.array([1.0, 0, 0, 0])}))
    plain = searcher.search("login user", top_k=10, graph=False)
    assert [r.chunk.file_path for r in plain].count("a.py") == 3  # at most three chunks per file
    top3 = searcher.search("login user", top_k=3, graph=False)
    assert {r.chunk.file_path for r in top3} == {"a.py"}
    expanded = searcher.search("login user", top_k=3, graph=True)
    bonus = expanded[3:]
    assert [r.chunk.chunk_id for r in bonus] == ["b0", "b1"]  # best cosine first
    assert [round(r.score, 6) for r in bonus] == [round(0.6 * 0.85, 6), 0.0]
    assert [r.rank for r in expanded] == [1, 2, 3, 4, 5]
    assert len(searcher.search("login user", top_k=3, graph=False)) == 3


def test_empty_query_and_empty_store_give_no_results():
    chunks = [_chunk("a0", "a.py", 1, "alpha")]
    store = _store(chunks, np.ones((1, 4)) / 2.0, [])
    searcher = Searcher(store, _FixedEmbedder({}))
    assert searcher.search("  ...  ") == []
    empty = _store([], np.zeros((0, 4)), [])
    assert Searcher(empty, _FixedEmbedder({})).search("alpha") == []

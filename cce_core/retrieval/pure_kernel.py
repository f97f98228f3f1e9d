"""The ranking kernel in plain Python, for a one-shot search over a mapped store.

A fresh ``cce search`` process would spend longer importing numpy (tens of
milliseconds) than answering a hash-embedded query: such a query vector has
only a handful of non-zero coordinates, so every chunk's exact cosine is a sum
over a few columns of the mapped embedding matrix, and BM25 touches only the
query terms' postings. This kernel does that work on the store's bytes without
numpy. Each value is the same float expression, evaluated in the same order,
as in the numpy kernel (``scoring.NumpyKernel``), so rankings and printed
scores are bit-identical; the tests run both kernels side by side.

It is chosen only when it pays: numpy not yet loaded, a sparse query, and an
index small enough that the Python loops stay well under numpy's import cost.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

from cce_core.foundation.textrules import score_key
from cce_core.indexing.bm25 import bm25_scores_sparse
from cce_core.indexing.store import MappedStore

# A query vector with at most this many non-zero coordinates counts as sparse (as in scoring.py).
SPARSE_QUERY_DIMS = 48
# Multiply-adds (chunks x non-zero query coordinates) the Python cosine pass may take: about
# 20-40 ms on a laptop core, roughly what importing numpy costs.
MAX_COSINE_WORK = 600_000
# A six-decimal key can only tie the limit-th best key within one key step (1e-6) of its value.
_KEY_MARGIN = 2e-6


def sparse_coordinates(query_vector: Sequence[float]) -> list[tuple[int, float]]:
    return [(j, float(v)) for j, v in enumerate(query_vector) if v != 0.0]


class SparseCosines:
    """Exact cosines of a sparse query against every chunk of a mapped store."""

    def __init__(self, embeddings: memoryview, rows: int, dim: int, nonzero: list[tuple[int, float]],
                 chunk_ids: Sequence[str]) -> None:
        values = [0.0] * rows
        for j, weight in nonzero:
            if j >= dim:
                continue
            column = embeddings[j::dim].tolist()
            # Left to right from 0.0, one product then one sum per coordinate: the numpy
            # kernel's `values += matrix[:, j] * vector[j]` exactly.
            values = [acc + x * weight for acc, x in zip(values, column, strict=True)]
        self.values = values
        self.chunk_ids = chunk_ids

    def tie(self, index: int) -> tuple[str, int]:
        # Chunk id, then position: the order of a stable sort by chunk id (the numpy kernel's ranks).
        return self.chunk_ids[index], index

    def at(self, index: int) -> float:
        return self.values[index]

    def ensure(self, indices: Iterable[int]) -> None:
        """Every value is exact already."""

    def top(self, limit: int) -> list[int]:
        values = self.values
        n = len(values)
        if n == 0 or limit <= 0:
            return []
        if limit < n:
            kth = heapq.nlargest(limit, values)[-1]
            floor = kth - _KEY_MARGIN
            pool = [i for i, v in enumerate(values) if v >= floor]
        else:
            pool = list(range(n))
        pool.sort(key=lambda i: (-score_key(values[i]), self.tie(i)))
        return pool[:limit]


class LeanKernel:
    """Sparse cosines and BM25 straight from a mapped store's sections."""

    name = "lean"

    def __init__(self, store: MappedStore) -> None:
        self.store = store
        self.rows, self.dim = store.embedding_rows()
        sections = store.sections
        self._embeddings = sections.view("embeddings")
        self._ptr = sections.view("bm25_ptr")
        self._docs = sections.view("bm25_docs")
        self._tfs = sections.view("bm25_tfs")
        self._doc_len = sections.view("doc_len")

    @staticmethod
    def suits(store: object, nonzero: list[tuple[int, float]]) -> bool:
        if not isinstance(store, MappedStore) or len(nonzero) > SPARSE_QUERY_DIMS:
            return False
        return store.embedding_rows()[0] * max(len(nonzero), 1) <= MAX_COSINE_WORK

    def cosines(self, query_vector: Sequence[float]) -> SparseCosines:
        return SparseCosines(self._embeddings, self.rows, self.dim, sparse_coordinates(query_vector),
                             self.store.chunk_ids)

    def bm25_top(self, unique_query: list[str], limit: int) -> list[int]:
        scores = bm25_scores_sparse(self.store.vocab, self._ptr, self._docs, self._tfs, self._doc_len, unique_query)
        if limit <= 0 or not scores:
            return []
        # Only chunks within a key step of the limit-th best score can make the cut: key just those.
        floor = heapq.nlargest(limit, scores.values())[-1] - _KEY_MARGIN if len(scores) > limit else -1.0
        keyed = [(key, doc) for doc, value in scores.items() if value >= floor and (key := score_key(value)) > 0]
        ids = self.store.chunk_ids
        keyed.sort(key=lambda kd: (-kd[0], ids[kd[1]], kd[1]))
        return [doc for _key, doc in keyed[:limit]]

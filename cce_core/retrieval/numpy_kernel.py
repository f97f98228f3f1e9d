"""Vectorised forms of the family's scoring primitives.

The ranking sorts by ``score_key`` (a score rounded half away from zero to six
decimals) and breaks ties by chunk id; cosine is a strictly left-to-right dot
product. These helpers do the same on numpy arrays without changing one bit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from cce_core.indexing.bm25 import bm25_scores

if TYPE_CHECKING:  # pragma: no cover - typing only
    from cce_core.indexing.store import StoreData

_DOT_BLOCK = 4096
# Queries with at most this many non-zero coordinates are scored exactly in one pass.
SPARSE_QUERY_DIMS = 48


def score_keys(values: np.ndarray) -> np.ndarray:
    """round(x * 1e6), halves away from zero, as int64."""
    scaled = values * 1_000_000.0
    mag = np.abs(scaled)
    floor = np.floor(mag)
    rounded = floor + (mag - floor >= 0.5)
    return (np.sign(scaled) * rounded).astype(np.int64)


def sequential_dot(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Row-wise dot products summed left to right (BLAS would reorder the sum)."""
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    dim = min(matrix.shape[1], vector.shape[0])
    if dim == 0:
        return np.zeros(matrix.shape[0], dtype=np.float64)
    out = np.empty(matrix.shape[0], dtype=np.float64)
    v = vector[:dim]
    # In blocks, so a large index never needs a second full-size temporary.
    for lo in range(0, matrix.shape[0], _DOT_BLOCK):
        products = matrix[lo : lo + _DOT_BLOCK, :dim] * v
        out[lo : lo + products.shape[0]] = np.cumsum(products, axis=1)[:, -1]
    return out


def rank_order(keys: np.ndarray, tie_ranks: np.ndarray, limit: int | None = None) -> np.ndarray:
    """Indices sorted by key descending then tie rank ascending, optionally only the first ``limit``."""
    n = keys.shape[0]
    if limit is not None and 0 < limit < n // 4:
        # Everything tied with the limit-th best key must stay in play for the tie-break.
        threshold = np.partition(keys, n - limit)[n - limit]
        subset = np.nonzero(keys >= threshold)[0]
        order = subset[np.lexsort((tie_ranks[subset], -keys[subset]))]
        return order[:limit]
    order = np.lexsort((tie_ranks, -keys))
    return order if limit is None else order[:limit]


class ExactCosines:
    """Cosines of one query against every chunk, exact where it matters.

    A BLAS matrix-vector product scores every chunk quickly but may differ from
    the family's left-to-right sum in the last bits. Those bits can only move a
    six-decimal key by one, so candidates are chosen with a two-key margin and
    every cosine that reaches a ranking or a printed score is recomputed exactly.
    """

    def __init__(self, matrix: np.ndarray, vector: np.ndarray, ties: np.ndarray | None = None) -> None:
        self.matrix = matrix
        self.vector = vector
        self.ties = ties
        n = matrix.shape[0]
        dim = min(matrix.shape[1], vector.shape[0]) if n else 0
        nonzero = np.flatnonzero(vector[:dim])
        if n and nonzero.size <= SPARSE_QUERY_DIMS:
            # A zero coordinate adds an exact zero to the running sum, so the
            # left-to-right sum over the non-zero coordinates alone is the exact
            # cosine: a hash-embedded query touches only a handful of columns.
            values = np.zeros(n, dtype=np.float64)
            for j in nonzero:
                values += matrix[:, j] * vector[j]
            self.values = values
            self.exact = np.ones(n, dtype=bool)
            return
        # einsum, not `@`: BLAS would start a thread pool for one product.
        self.values = np.einsum("ij,j->i", matrix[:, :dim], vector[:dim]) if n else np.zeros(0, dtype=np.float64)
        self.exact = np.zeros(n, dtype=bool)

    def ensure(self, indices: np.ndarray | Iterable[int]) -> None:
        if not isinstance(indices, np.ndarray):
            indices = np.fromiter(indices, dtype=np.int64)
        todo = indices[~self.exact[indices]]
        if todo.size:
            self.values[todo] = sequential_dot(self.matrix[todo], self.vector)
            self.exact[todo] = True

    def at(self, index: int) -> float:
        if not self.exact[index]:
            self.ensure(np.asarray([index], dtype=np.int64))
        return float(self.values[index])

    def tie(self, index: int) -> int:
        """The tie-break key of one chunk (its rank in chunk-id order)."""
        assert self.ties is not None
        return int(self.ties[index])

    def top(self, limit: int, tie_ranks: np.ndarray | None = None) -> np.ndarray:
        """The first ``limit`` chunks by exact key (desc), ties by ``tie_ranks`` (default: the constructor's)."""
        if tie_ranks is None:
            assert self.ties is not None
            tie_ranks = self.ties
        n = self.values.shape[0]
        if n == 0 or limit <= 0:
            return np.zeros(0, dtype=np.int64)
        approx_keys = score_keys(self.values)
        if limit < n:
            threshold = np.partition(approx_keys, n - limit)[n - limit]
            pool = np.nonzero(approx_keys >= threshold - 2)[0]
        else:
            pool = np.arange(n, dtype=np.int64)
        self.ensure(pool)
        keys = score_keys(self.values[pool])
        order = pool[np.lexsort((tie_ranks[pool], -keys))]
        return order[:limit]


class NumpyKernel:
    """The vectorised ranking kernel: what a resident process (MCP, bench) uses for every query."""

    name = "numpy"

    def __init__(self, store: StoreData) -> None:
        self.store = store

    def cosines(self, query_vector: Sequence[float]) -> ExactCosines:
        vector = np.asarray(query_vector, dtype=np.float64)
        return ExactCosines(self.store.embeddings, vector, self.store.chunk_id_rank)

    def bm25_top(self, unique_query: list[str], limit: int) -> list[int]:
        """Chunks with a positive BM25 key, best first (ties by chunk id), at most ``limit``."""
        keys = score_keys(bm25_scores(self.store.bm25, unique_query))
        positive = np.nonzero(keys > 0)[0]
        ties = self.store.chunk_id_rank
        return positive[rank_order(keys[positive], ties[positive], limit)].tolist()

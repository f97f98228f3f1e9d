"""Vectorised forms of the family's scoring primitives.

The ranking sorts by ``score_key`` (a score rounded half away from zero to six
decimals) and breaks ties by chunk id; cosine is a strictly left-to-right dot
product. These helpers do the same on numpy arrays without changing one bit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

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


def pool_tie_ranks(ids: Sequence[str], pool: np.ndarray) -> np.ndarray:
    """Ranks of the ``pool`` chunks in (chunk id, position) order: the family's tie-break, for a subset.

    Only the candidates of one ranking are ever compared, so no process has to
    sort every chunk id of a large store to answer a query.
    """
    members = pool.tolist()
    order = sorted(range(len(members)), key=lambda k: (ids[members[k]], members[k]))
    ranks = np.empty(len(members), dtype=np.int64)
    ranks[np.asarray(order, dtype=np.int64)] = np.arange(len(members), dtype=np.int64)
    return ranks


class _MatrixVectors:
    """A bare matrix seen through the accessors a store offers (tests and callers without a store)."""

    def __init__(self, matrix: np.ndarray) -> None:
        self.embeddings = matrix

    def embedding_rows(self) -> tuple[int, int]:
        shape = self.embeddings.shape
        return int(shape[0]), int(shape[1]) if len(shape) == 2 else 0

    def vector_rows(self, rows: np.ndarray) -> np.ndarray:
        return self.embeddings[rows]

    def column_sums(self, dims: Sequence[int], weights: Sequence[float]) -> np.ndarray:
        values = np.zeros(self.embeddings.shape[0], dtype=np.float64)
        for j, weight in zip(dims, weights, strict=True):  # the order StoreData.column_sums keeps
            values += self.embeddings[:, j] * weight
        return values


class ExactCosines:
    """Cosines of one query against every chunk, exact where it matters.

    A sparse query (a hash-embedded one touches a handful of dimensions) is
    scored exactly in one pass over its columns, which a store keeping its
    vectors column-wise reads without touching the other dimensions. Otherwise
    a BLAS matrix-vector product scores every chunk quickly but may differ from
    the family's left-to-right sum in the last bits. Those bits can only move a
    six-decimal key by one, so candidates are chosen with a two-key margin and
    every cosine that reaches a ranking or a printed score is recomputed exactly.

    ``source`` is a store (anything with ``column_sums``/``vector_rows``) or a
    bare matrix; ties go by chunk id (``ids``), ranked only among the candidates.
    """

    def __init__(self, source: Any, vector: np.ndarray, ids: Sequence[str]) -> None:
        if isinstance(source, np.ndarray):
            source = _MatrixVectors(source)
        self.source = source
        self.vector = vector
        self.ids = ids
        n, width = source.embedding_rows()
        dim = min(width, vector.shape[0]) if n else 0
        nonzero = np.flatnonzero(vector[:dim])
        if n and nonzero.size <= SPARSE_QUERY_DIMS:
            # A zero coordinate adds an exact zero to the running sum, so the
            # left-to-right sum over the non-zero coordinates alone is the exact
            # cosine: a hash-embedded query touches only a handful of columns.
            dims = nonzero.tolist()
            self.values = source.column_sums(dims, [vector[j] for j in dims])
            self.exact = np.ones(n, dtype=bool)
            return
        matrix = source.embeddings
        # einsum, not `@`: BLAS would start a thread pool for one product.
        self.values = np.einsum("ij,j->i", matrix[:, :dim], vector[:dim]) if n else np.zeros(0, dtype=np.float64)
        self.exact = np.zeros(n, dtype=bool)

    def ensure(self, indices: np.ndarray | Iterable[int]) -> None:
        if not isinstance(indices, np.ndarray):
            indices = np.fromiter(indices, dtype=np.int64)
        todo = indices[~self.exact[indices]]
        if todo.size:
            self.values[todo] = sequential_dot(self.source.vector_rows(todo), self.vector)
            self.exact[todo] = True

    def at(self, index: int) -> float:
        if not self.exact[index]:
            self.ensure(np.asarray([index], dtype=np.int64))
        return float(self.values[index])

    def tie(self, index: int) -> tuple[str, int]:
        """The tie-break key of one chunk: its id, then its position (a stable sort by chunk id)."""
        return self.ids[index], index

    def top(self, limit: int) -> np.ndarray:
        """The first ``limit`` chunks by exact key (desc), ties by chunk id."""
        n = self.values.shape[0]
        if n == 0 or limit <= 0:
            return np.zeros(0, dtype=np.int64)
        pool = _candidate_pool(self.values, limit, margin=2)
        self.ensure(pool)
        keys = score_keys(self.values[pool])
        order = pool[np.lexsort((pool_tie_ranks(self.ids, pool), -keys))]
        return order[:limit]


def _candidate_pool(values: np.ndarray, limit: int, margin: int) -> np.ndarray:
    """Positions whose key may reach the ``limit``-th best key (within ``margin`` key steps), ascending.

    Most chunks of a large store score exactly 0 for a given query; when
    ``limit`` positive values exist, only they are keyed and partitioned — a
    value that is not positive has a key of at most 0, below any positive
    threshold minus the margin, so the pool is the same as over every chunk.
    """
    n = values.shape[0]
    if limit >= n:
        return np.arange(n, dtype=np.int64)
    positive = np.flatnonzero(values > 0.0)
    if positive.size >= limit:
        keys = score_keys(values[positive])
        threshold = np.partition(keys, keys.size - limit)[keys.size - limit]
        if threshold - margin > 0:
            return positive[keys >= threshold - margin]
    keys = score_keys(values)
    threshold = np.partition(keys, n - limit)[n - limit]
    return np.nonzero(keys >= threshold - margin)[0]


def top_by_key(keys: np.ndarray, ids: Sequence[str], limit: int) -> np.ndarray:
    """Positions of the ``limit`` best ``keys`` (desc), ties by chunk id, sorting only what can make the cut."""
    n = keys.shape[0]
    if n == 0 or limit <= 0:
        return np.zeros(0, dtype=np.int64)
    if limit < n:
        threshold = np.partition(keys, n - limit)[n - limit]
        pool = np.nonzero(keys >= threshold)[0]
    else:
        pool = np.arange(n, dtype=np.int64)
    order = pool[np.lexsort((pool_tie_ranks(ids, pool), -keys[pool]))]
    return order[:limit]


class NumpyKernel:
    """The vectorised ranking kernel: what a resident process (MCP, bench) uses for every query."""

    name = "numpy"

    def __init__(self, store: StoreData) -> None:
        self.store = store

    def cosines(self, query_vector: Sequence[float]) -> ExactCosines:
        vector = np.asarray(query_vector, dtype=np.float64)
        return ExactCosines(self.store, vector, ids=self.store.chunk_ids)

    def bm25_top(self, unique_query: list[str], limit: int) -> list[int]:
        """Chunks with a positive BM25 key, best first (ties by chunk id), at most ``limit``."""
        scores = bm25_scores(self.store.bm25_source, unique_query)
        scored = np.flatnonzero(scores > 0.0)  # only these can have a positive key
        keys = score_keys(scores[scored])
        positive = scored[keys > 0]
        return positive[top_by_key(keys[keys > 0], _Subset(self.store.chunk_ids, positive), limit)].tolist()


class _Subset(Sequence[str]):
    """``ids`` seen through a position array (no copy)."""

    def __init__(self, ids: Sequence[str], positions: np.ndarray) -> None:
        self._ids, self._positions = ids, positions

    def __len__(self) -> int:
        return len(self._positions)

    def __getitem__(self, index: Any) -> Any:
        return self._ids[int(self._positions[index])]

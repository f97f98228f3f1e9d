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
import math
from collections.abc import Iterable, Sequence

from cce_core.foundation.textrules import score_key
from cce_core.indexing.bm25 import BM25_B, BM25_K1
from cce_core.indexing.store import SegmentedStore

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

    def __init__(self, store: SegmentedStore, nonzero: list[tuple[int, float]], chunk_ids: Sequence[str]) -> None:
        # Accumulated over the concatenated segments' rows, superseded ones included, then
        # read out in store order (a no-op when the rows are in store order already).
        values = [0.0] * store.total_rows
        for base, segment in zip(store.seg_base, store.segments, strict=True):
            dim = segment.dim
            if segment.sparse:
                ptr = segment.view("csc_ptr")
                rows = segment.view("csc_row")
                cells = segment.view("csc_val")
            else:
                dense = segment.view("vectors")
            for j, weight in nonzero:
                if j >= dim:
                    continue
                # Left to right from 0.0, one product then one sum per coordinate: the numpy
                # kernel's `values += column_j * vector[j]` exactly (a missing cell adds 0.0).
                if segment.sparse:
                    lo, hi = ptr[j], ptr[j + 1]
                    for row, x in zip(rows[lo:hi].tolist(), cells[lo:hi].tolist(), strict=True):
                        values[base + row] = values[base + row] + x * weight
                else:
                    column = dense[j::dim].tolist()
                    for row, x in enumerate(column):
                        values[base + row] = values[base + row] + x * weight
        if not store.identity:
            positions = store.position_of_row
            live = [0.0] * store.rows
            for row, value in enumerate(values):
                if positions[row] >= 0:
                    live[positions[row]] = value
            values = live
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


def bm25_scores_segments(store: SegmentedStore, unique_query: list[str]) -> dict[int, float]:
    """BM25 of every chunk that scores, in plain Python, over a mapped store's segments.

    The numpy form's expression in the same order (term by term, each chunk
    starting from 0.0); a term's document frequency adds up over segments.
    """
    positions = None if store.identity else store.position_of_row
    doc_len: list[int] = []
    for segment in store.segments:
        doc_len.extend(segment.view("doc_len").tolist())
    if positions is not None:  # the live rows' lengths, in store order
        live_len = [0] * store.rows
        for row, length in enumerate(doc_len):
            if positions[row] >= 0:
                live_len[positions[row]] = length
        doc_len = live_len
    n = len(doc_len)
    scores: dict[int, float] = {}
    if n == 0:
        return scores
    avgdl = float(sum(doc_len)) / n
    vocabs = [segment.vocab() for segment in store.segments]
    for term in unique_query:
        hits: list[tuple[int, int]] = []  # (store position, term frequency) of the live chunks
        for base, segment, vocab in zip(store.seg_base, store.segments, vocabs, strict=True):
            pos = vocab.find(term)
            if pos >= 0:
                ptr = segment.view("bm25_ptr")
                lo, hi = ptr[pos], ptr[pos + 1]
                for local, tf in zip(segment.view("bm25_docs")[lo:hi].tolist(),
                                     segment.view("bm25_tfs")[lo:hi].tolist(), strict=True):
                    doc = base + local if positions is None else positions[base + local]
                    if doc >= 0:
                        hits.append((doc, tf))
        n_q = len(hits)
        if not n_q:
            continue
        idf = math.log(1.0 + (n - n_q + 0.5) / (n_q + 0.5))
        for doc, tf in hits:
            f = float(tf)
            denom = f + BM25_K1 * ((1.0 - BM25_B) + BM25_B * float(doc_len[doc]) / avgdl)
            scores[doc] = scores.get(doc, 0.0) + idf * (f * (BM25_K1 + 1.0)) / denom
    return scores


class LeanKernel:
    """Sparse cosines and BM25 straight from a mapped store's segments."""

    name = "lean"

    def __init__(self, store: SegmentedStore) -> None:
        self.store = store

    @staticmethod
    def suits(store: object, nonzero: list[tuple[int, float]]) -> bool:
        # Chosen on its own only for stores whose rows are in store order, or whose re-index wrote
        # the positions out (a mapped live view: the reordering pass reads them, nothing is built).
        if not isinstance(store, SegmentedStore) or not (store.identity or store.view is not None) or \
                len(nonzero) > SPARSE_QUERY_DIMS:
            return False
        return store.rows * max(len(nonzero), 1) <= MAX_COSINE_WORK

    def cosines(self, query_vector: Sequence[float]) -> SparseCosines:
        return SparseCosines(self.store, sparse_coordinates(query_vector), self.store.chunk_ids)

    def bm25_top(self, unique_query: list[str], limit: int) -> list[int]:
        scores = bm25_scores_segments(self.store, unique_query)
        if limit <= 0 or not scores:
            return []
        # Only chunks within a key step of the limit-th best score can make the cut: key just those.
        floor = heapq.nlargest(limit, scores.values())[-1] - _KEY_MARGIN if len(scores) > limit else -1.0
        keyed = [(key, doc) for doc, value in scores.items() if value >= floor and (key := score_key(value)) > 0]
        ids = self.store.chunk_ids
        keyed.sort(key=lambda kd: (-kd[0], ids[kd[1]], kd[1]))
        return [doc for _key, doc in keyed[:limit]]

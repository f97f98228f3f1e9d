"""The ranking kernel in plain Python, for a one-shot search over a mapped store.

A fresh ``cce search`` process would spend longer importing numpy (tens of
milliseconds) than answering a hash-embedded query: such a query vector has
only a handful of non-zero coordinates, so every chunk's exact cosine is a sum
over a few columns of the mapped embedding matrix, and BM25 touches only the
query terms' postings. This kernel does that work on the store's bytes without
numpy. Each value is the same float expression, evaluated in the same order,
as in the numpy kernel (``scoring.NumpyKernel``), so rankings and printed
scores are bit-identical; the tests run both kernels side by side.

It is chosen only when it pays: numpy not yet loaded, a sparse query, and a
query whose work on this store (:func:`lean_work`: chunks, stored cells of its
columns, postings of its terms) stays under what importing numpy and running
the vectorised kernel would cost.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence
from typing import TypeVar

from cce_core.foundation.textrules import score_key
from cce_core.indexing.bm25 import BM25_B, BM25_K1
from cce_core.indexing.store import SegmentedStore

# A query vector with at most this many non-zero coordinates counts as sparse (as in scoring.py).
SPARSE_QUERY_DIMS = 48
# Steps (see lean_work) a query may cost this kernel: about 50 ms of Python on a laptop core,
# which is what importing numpy (~35 ms) and running the vectorised kernel cost a one-shot search.
# Measured per query on 4xrails (219k chunks), family ranking: under this line the lean kernel's
# process is the cheaper one, above it numpy's (docs/BENCHMARKS.md, "Search start-up after re-index").
MAX_LEAN_WORK = 700_000
# The default ranking adds its own per-chunk tables and BM25, which cost more in numpy's form
# when numpy has to be imported for them: the lean path pays up to this much (same measurement).
MAX_LEAN_WORK_DEFAULT_RANKING = 1_200_000
# One posting's BM25 update, in steps: measured ~6x a cosine multiply-add.
POSTING_STEPS = 6
# Cells (of the query's columns) per chunk up to which cosines are kept for the touched chunks only;
# measured on 4xrails: the dict form wins below ~0.3 cells per chunk, the list form above.
TOUCHED_SHARE = 0.3
T = TypeVar("T")
# A six-decimal key can only tie the limit-th best key within one key step (1e-6) of its value.
_KEY_MARGIN = 2e-6


def sparse_coordinates(query_vector: Sequence[float]) -> list[tuple[int, float]]:
    return [(j, float(v)) for j, v in enumerate(query_vector) if v != 0.0]


class SparseCosines:
    """Exact cosines of a sparse query against every chunk of a mapped store.

    When every segment stores its vectors column-wise and the query's columns
    hold few cells against the chunk count, only the chunks sharing a
    coordinate with the query get a value (``touched``, by store position);
    every other cosine is exactly 0.0, and no per-chunk list is built unless
    the top-k needs one (fewer positive cosines than asked). A dictionary update
    costs two to three times a list's, so past ``TOUCHED_SHARE`` cells per chunk
    the per-chunk list (and its full top-k scan) is the cheaper form.
    """

    def __init__(self, store: SegmentedStore, nonzero: list[tuple[int, float]], chunk_ids: Sequence[str]) -> None:
        self.chunk_ids = chunk_ids
        self.rows = store.rows
        self.touched: dict[int, float] | None = None
        self._values: list[float] | None = None
        # A re-indexed store's cosines stay in the segments' row order: a chunk's value is read through
        # its row (``_row_of``), and only the top-k pass maps rows back (``_position_of``).
        self._row_values: list[float] | None = None
        if all(segment.sparse for segment in store.segments) and \
                _column_cells(store, nonzero) <= TOUCHED_SHARE * store.total_rows:
            self.touched = _touched_cosines(store, nonzero)
            return
        # Accumulated over the concatenated segments' rows (each segment's in a list of its own, joined
        # after: no offset added per cell), superseded ones included, then read out in store order.
        values: list[float] = []
        for segment in store.segments:
            local = [0.0] * segment.rows
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
                        local[row] = local[row] + x * weight
                else:
                    column = dense[j::dim].tolist()
                    for row, x in enumerate(column):
                        local[row] = local[row] + x * weight
            values += local
        if store.view is not None and not store.identity:
            self._row_values = values
            self._row_of = store.view.view("perm")
            self._position_of = store.position_of_row
        else:
            self._values = in_store_order(store, values, 0.0)

    @property
    def values(self) -> list[float]:
        """Every chunk's cosine in store order (built from ``touched`` or the row order on first use)."""
        if self._values is None:
            if self._row_values is not None:
                self._values = list(map(self._row_values.__getitem__, self._row_of))
            else:
                values = [0.0] * self.rows
                for position, value in (self.touched or {}).items():
                    values[position] = value
                self._values = values
        return self._values

    def tie(self, index: int) -> tuple[str, int]:
        # Chunk id, then position: the order of a stable sort by chunk id (the numpy kernel's ranks).
        return self.chunk_ids[index], index

    def at(self, index: int) -> float:
        if self.touched is not None:
            return self.touched.get(index, 0.0)
        if self._values is None and self._row_values is not None:
            return self._row_values[self._row_of[index]]
        return self.values[index]

    def ensure(self, indices: Iterable[int]) -> None:
        """Every value is exact already."""

    def top(self, limit: int) -> list[int]:
        n = self.rows
        if n == 0 or limit <= 0:
            return []
        touched = self.touched
        if touched is not None and limit < n:
            positive = [v for v in touched.values() if v > 0.0]
            if len(positive) >= limit:
                # At least ``limit`` cosines are above the untouched chunks' 0.0, so the limit-th best
                # of all is the limit-th best of these, and when the pool's floor stays above 0.0 no
                # untouched chunk can enter it: the same pool as a scan of every chunk.
                floor = heapq.nlargest(limit, positive)[-1] - _KEY_MARGIN
                if floor > 0.0:
                    pool = [i for i, v in touched.items() if v >= floor]
                    pool.sort(key=lambda i: (-score_key(touched[i]), self.tie(i)))
                    return pool[:limit]
        if self._values is None and self._row_values is not None and limit < n:
            return self._top_by_rows(limit)
        values = self.values
        if limit < n:
            kth = heapq.nlargest(limit, values)[-1]
            floor = kth - _KEY_MARGIN
            pool = [i for i, v in enumerate(values) if v >= floor]
        else:
            pool = list(range(n))
        pool.sort(key=lambda i: (-score_key(values[i]), self.tie(i)))
        return pool[:limit]

    def _top_by_rows(self, limit: int) -> list[int]:
        """:meth:`top` over the segments' rows, superseded ones included, without a store-order copy.

        Of the ``limit + superseded`` best rows at least ``limit`` are live, so the
        limit-th best live value is at or above the worst of them: every live row
        the full pass would pool is among the rows at or above that line, minus
        the key margin. Those few are mapped to positions and pooled as usual.
        """
        values = self._row_values
        assert values is not None
        wanted = limit + len(values) - self.rows
        if wanted < len(values):
            line = heapq.nlargest(wanted, values)[-1] - _KEY_MARGIN
            rows: Iterable[int] = [r for r, v in enumerate(values) if v >= line]
        else:
            rows = range(len(values))
        position_of = self._position_of
        live = {position_of[r]: values[r] for r in rows if position_of[r] >= 0}
        floor = heapq.nlargest(limit, live.values())[-1] - _KEY_MARGIN
        pool = [i for i, v in live.items() if v >= floor]
        pool.sort(key=lambda i: (-score_key(live[i]), self.tie(i)))
        return pool[:limit]


def lean_work(store: SegmentedStore, nonzero: list[tuple[int, float]], terms: Sequence[str], limit: int) -> int:
    """What this kernel's passes would cost for one query, in steps of about one Python multiply-add.

    Counted from the store's own tables, before any of it is read: one step per
    chunk (the passes over every chunk: the top-k scan, the chunk lengths, the
    re-indexed store's gathers), one per stored cell of the query's
    columns in a sparse segment (every cell of them in a dense one), and
    ``POSTING_STEPS`` per posting of the query's terms (a BM25 update costs
    several dictionary and float operations). Stops counting past ``limit``.
    """
    work = store.total_rows
    for segment in store.segments:
        if work > limit:
            break
        dim = segment.dim
        if segment.sparse:
            ptr = segment.view("csc_ptr")
            work += sum(ptr[j + 1] - ptr[j] for j, _weight in nonzero if j < dim)
        else:
            work += segment.rows * sum(1 for j, _weight in nonzero if j < dim)
        if terms:
            vocab = segment.vocab()
            bm25_ptr = segment.view("bm25_ptr")
            for term in terms:
                pos = vocab.find(term)
                if pos >= 0:
                    work += POSTING_STEPS * (bm25_ptr[pos + 1] - bm25_ptr[pos])
    return work


def _column_cells(store: SegmentedStore, nonzero: list[tuple[int, float]]) -> int:
    """How many stored cells the query's columns hold across the sparse segments."""
    cells = 0
    for segment in store.segments:
        ptr = segment.view("csc_ptr")
        cells += sum(ptr[j + 1] - ptr[j] for j, _weight in nonzero if j < segment.dim)
    return cells


def _touched_cosines(store: SegmentedStore, nonzero: list[tuple[int, float]]) -> dict[int, float]:
    """Store position -> cosine for every live chunk with a stored cell in one of the query's columns.

    Each chunk's value is accumulated in the order of the list form (segments in
    order, then the query's coordinates, left to right from 0.0), so it is the
    same float; superseded rows are skipped through the store's row -> position map.
    """
    positions = None if store.identity else store.position_of_row
    touched: dict[int, float] = {}
    get = touched.get
    for base, segment in zip(store.seg_base, store.segments, strict=True):
        dim = segment.dim
        ptr = segment.view("csc_ptr")
        rows = segment.view("csc_row")
        cells = segment.view("csc_val")
        for j, weight in nonzero:
            if j >= dim:
                continue
            lo, hi = ptr[j], ptr[j + 1]
            if positions is None:
                for row, x in zip(rows[lo:hi].tolist(), cells[lo:hi].tolist(), strict=True):
                    position = base + row
                    touched[position] = get(position, 0.0) + x * weight
            else:
                for row, x in zip(rows[lo:hi].tolist(), cells[lo:hi].tolist(), strict=True):
                    position = positions[base + row]
                    if position >= 0:
                        touched[position] = get(position, 0.0) + x * weight
    return touched


def in_store_order(store: SegmentedStore, per_row: list[T], fill: T) -> list[T]:
    """``per_row`` (one value per row of the concatenated segments) in store order, superseded rows left out.

    A store whose re-index wrote a live view lists each position's row: one
    C-level gather over that mapped column then replaces a Python loop over
    every row (~15 ms at 200k rows, paid by every fresh search of a re-indexed
    store; reading the column as a list first would cost another ~5 ms).
    """
    if store.identity:
        return per_row
    if store.view is not None:
        return list(map(per_row.__getitem__, store.view.view("perm")))
    positions = store.position_of_row
    live = [fill] * store.rows
    for row, value in enumerate(per_row):
        if positions[row] >= 0:
            live[positions[row]] = value
    return live


def bm25_scores_segments(store: SegmentedStore, unique_query: list[str]) -> dict[int, float]:
    """BM25 of every chunk that scores, in plain Python, over a mapped store's segments.

    The numpy form's expression in the same order (term by term, each chunk
    starting from 0.0); a term's document frequency adds up over segments.
    """
    positions = None if store.identity else store.position_of_row
    doc_len: list[int] = []
    for segment in store.segments:
        doc_len.extend(segment.view("doc_len").tolist())
    doc_len = in_store_order(store, doc_len, 0)  # the live rows' lengths
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
    def suits(store: object, nonzero: list[tuple[int, float]], terms: Sequence[str] = (),
              budget: int = MAX_LEAN_WORK) -> bool:
        """Whether the plain-Python passes for this query stay under ``budget`` (see :func:`lean_work`)."""
        # Chosen on its own only for stores whose rows are in store order, or whose re-index wrote
        # the positions out (a mapped live view: the reordering pass reads them, nothing is built).
        if not isinstance(store, SegmentedStore) or not (store.identity or store.view is not None) or \
                len(nonzero) > SPARSE_QUERY_DIMS:
            return False
        return lean_work(store, nonzero, terms, budget) <= budget

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

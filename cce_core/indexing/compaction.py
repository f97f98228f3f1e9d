"""Rewrite a store's live rows as one segment: what a long series of re-indexes needs now and then.

Every re-index adds a segment and leaves the rows it superseded in older
ones. Reading stays exact whatever their number, but superseded rows cost
disk and each segment adds a little to every query. Compaction writes the
live rows, in store order, as a single segment — byte for byte the segment a
fresh index of the same files in one batch would write — and then points the
manifest at it; the old segments are removed only after that switch, so a
killed compaction leaves the previous store as it was.

Sparse vectors are merged column by column from the segments' own arrays,
without building the dense matrix.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cce_core.foundation.errors import CceError
from cce_core.indexing.segment import SegmentParts, save_segment
from cce_core.indexing.store import SegmentedStore, SegmentRef, commit_manifest, load_store, segments_dir


def merged_sparse_vectors(store: SegmentedStore) -> tuple[str, list[tuple[str, bytes | memoryview, str]]] | None:
    """The CSC sections of the store's live rows, when every segment keeps its vectors sparse."""
    populated = [(s, seg) for s, seg in enumerate(store.segments) if seg.rows]
    if not populated or not all(seg.sparse for _s, seg in populated):
        return None
    dim = store.dim
    cols: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    for s, seg in populated:
        ptr = seg.array("csc_ptr")
        col_of = np.repeat(np.arange(dim, dtype=np.int64), np.diff(ptr))
        logical = store.logical_rows(s, seg.array("csc_row").astype(np.int64))
        keep = logical >= 0
        cols.append(col_of[keep])
        rows.append(logical[keep])
        vals.append(seg.array("csc_val")[keep])
    col = np.concatenate(cols)
    row = np.concatenate(rows)
    val = np.concatenate(vals)
    if col.size > 0.25 * store.rows * dim:
        return None  # denser than the sparse layout is for: written dense, as a fresh index would
    order = np.lexsort((row, col))
    ptr_out = np.zeros(dim + 1, dtype="<i8")
    np.cumsum(np.bincount(col, minlength=dim), out=ptr_out[1:])
    return "sparse", [("csc_ptr", ptr_out.tobytes(), "<i8"),
                      ("csc_row", row[order].astype("<i4").tobytes(), "<i4"),
                      ("csc_val", np.ascontiguousarray(val[order], dtype="<f8").tobytes(), "<f8")]


def compact_store(store: SegmentedStore, store_path: Path) -> SegmentedStore:
    """Write ``store``'s live rows as one segment, switch the manifest to it, and return the new store."""
    vectors = merged_sparse_vectors(store)
    embeddings = store.embeddings if vectors is None else np.zeros((store.rows, store.dim), dtype=np.float64)[:0]
    parts = SegmentParts(store.chunks, embeddings, store.files, store.bm25, [], list(store.edges), None, vectors)
    if vectors is None and store.rows == 0:
        parts.vectors = ("dense", [("vectors", b"", "<f8")])
    try:
        name, sha, size = save_segment(parts, segments_dir(store_path))
    except OSError as exc:
        raise CceError(f"could not write the store {store_path}: {exc.strerror or exc}") from exc
    commit_manifest(store_path, store.meta, [SegmentRef(name, sha, size, store.rows)], ordered=True)
    return load_store(store_path)

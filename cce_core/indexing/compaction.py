"""Fold a store's segments: merge the small ones re-indexes leave behind, or rewrite it all as fresh.

Every re-index adds a segment and leaves the rows it superseded in older
ones. Reading stays exact whatever their number, but superseded rows cost
disk and each segment adds a little to every query. Two folds keep both
bounded, and :func:`segments_to_fold` says which one a store needs:

* **merging the newest small segments** (:func:`merge_segments`): the
  one-edit segments at the end of the store become one segment holding their
  live files; the large segments of the fresh index before them are left as
  they are, so the cost follows what changed since, not the store's size;
* **compaction** (:func:`compact_store`): every live file is rewritten, in
  path order, in batches of about as much text as a fresh index puts in one
  segment — so its memory is bounded by a batch, not by the store, and its
  segments are byte for byte those a fresh index of the same files writes.
  Run on request and when superseded rows pile up.

Either way the manifest is switched to the new segments in one atomic step and
the old ones are removed only after that, so a killed fold leaves the
previous store as it was. Folds run under the store's writer lock
(:mod:`cce_core.indexing.store_lock`), so no other writer's segment is among
those they remove. Nothing is parsed or embedded again: chunks, vectors and
symbol records are copied from the old segments; only the BM25 postings are
rebuilt, from the chunk texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import tokenize_bytes
from cce_core.indexing.bm25 import build_bm25
from cce_core.indexing.chunk import Chunk
from cce_core.indexing.live_table import LiveTable
from cce_core.indexing.segment import BATCH_BYTES, FileEntry, MappedSegment, SegmentParts, save_segment
from cce_core.indexing.store import (
    SegmentedStore,
    SegmentRef,
    commit_manifest,
    load_store,
    save_table_view,
    segments_dir,
)
from cce_core.indexing.store_lock import holds_store_lock

# A store is compacted when superseded rows are more than this share of all its rows.
COMPACT_DEAD_SHARE = 0.3
# ... or when it has more small segments than this (scattered among large ones, so no merge folds them).
COMPACT_MAX_SEGMENTS = 64
# A segment below this size is small: what a re-index of a few files writes. A fresh index's batch of
# 16 MB of text makes a segment of about 13 MB; a merge of small segments stays small until it passes this.
SMALL_SEGMENT_BYTES = 2 << 20
# More small segments than this at the end of a store are merged into one.
MERGE_TAIL_SEGMENTS = 16


def segments_to_fold(refs: Sequence[SegmentRef], total_rows: int, dead_rows: int) -> int | None:
    """The first of the segments a store should fold now: 0 for all of them (a compaction), None for none.

    The segments from the returned one on are all small and more than
    :data:`MERGE_TAIL_SEGMENTS`: they are merged into one and the segments
    before them stay. A store that is small all through, or has too many
    superseded rows, or too many small segments outside its newest run, is
    compacted instead. A large store's own segment count never triggers a
    fold: its fresh index wrote that many, and a compaction would write them
    again.
    """
    if total_rows and dead_rows > COMPACT_DEAD_SHARE * total_rows:
        return 0
    small = [ref.bytes < SMALL_SEGMENT_BYTES for ref in refs]
    if sum(small) > COMPACT_MAX_SEGMENTS:
        return 0
    first = len(refs)
    while first > 0 and small[first - 1]:
        first -= 1
    return first if len(refs) - first > MERGE_TAIL_SEGMENTS else None


def _file_batches(files: list[FileEntry], limit: int) -> list[list[FileEntry]]:
    """Consecutive runs of ``files`` of about ``limit`` source bytes each (a fresh index's batching)."""
    out: list[list[FileEntry]] = []
    current: list[FileEntry] = []
    size = 0
    for entry in files:
        weight = entry.size or entry.tokens * 4  # a pulled store records no sizes: its token estimate stands in
        if current and size + weight > limit:
            out.append(current)
            current, size = [], 0
        current.append(entry)
        size += weight
    if current:
        out.append(current)
    return out


def _batch_parts(store: SegmentedStore, files: list[FileEntry], edges: list[tuple[str, str]] | None,
                 segment_of: dict[str, int] | None = None) -> SegmentParts:
    """One batch of live files, with their chunks, vectors and symbols copied and their postings rebuilt."""
    rows: list[int] = []
    entries: list[FileEntry] = []
    for entry in files:
        # Symbol records are copied as stored bytes, so a compacted segment equals a fresh one.
        s = segment_of.get(entry.path) if segment_of is not None else None
        symbols = store.segments[s].symbol_payload(entry.path) if s is not None else None
        entries.append(FileEntry(entry.path, entry.sha256, entry.tokens, len(rows), entry.chunk_count,
                                 list(entry.imports), entry.size, entry.mtime_ns, symbols))
        rows.extend(range(entry.first_chunk, entry.first_chunk + entry.chunk_count))
    chunks: list[Chunk] = []
    for row in rows:  # built straight from the segment, not kept in the store's chunk cache
        segment, local = store.locate(row)
        chunks.append(segment.chunk(local))
    positions = np.asarray(rows, dtype=np.int64)
    embeddings = store.vector_rows(positions) if rows else np.zeros((0, store.dim), dtype=np.float64)
    bm25 = build_bm25([tokenize_bytes(c.content.encode("utf-8")) for c in chunks])
    return SegmentParts(chunks, embeddings, entries, bm25, [], edges)


@holds_store_lock("cce index --compact")  # re-entrant: an index run already holds it when it compacts
def compact_store(store: SegmentedStore, store_path: Path, batch_bytes: int = BATCH_BYTES) -> SegmentedStore:
    """Rewrite ``store``'s live files as path-ordered batches, switch the manifest to them, return the new store."""
    directory = segments_dir(store_path)
    batches = _file_batches(list(store.files), batch_bytes) or [[]]
    edges = list(store.edges)
    segment_of = {path: s for path, (s, _entry) in store.live_files().items()} \
        if any(segment.has_symbols() for segment in store.segments) else None
    refs: list[SegmentRef] = []
    try:
        for n, files in enumerate(batches):
            parts = _batch_parts(store, files, edges if n == len(batches) - 1 else None, segment_of)
            name, sha, size = save_segment(parts, directory)
            refs.append(SegmentRef(name, sha, size, len(parts.chunks)))
    except OSError as exc:
        raise CceError(f"could not write the store {store_path}: {exc.strerror or exc}") from exc
    commit_manifest(store_path, store.meta, refs, ordered=True)
    return load_store(store_path)


def merge_segments(store_path: Path, meta: dict[str, Any], segments: Sequence[MappedSegment],
                   refs: Sequence[SegmentRef], table: LiveTable, first: int) -> SegmentedStore:
    """Name a store whose segments ``first``.. of ``segments`` are replaced by one holding their live files.

    ``refs`` name ``segments``, whose live files are ``table``: an opened
    store's, or those an index run just wrote and has not named yet (it then
    switches the manifest once, to the merged store). The caller holds the
    store's writer lock. The new segment takes the old ones' place at the end
    of the store, so it carries what they did for the segments before them:
    every path they removed, the refreshed metadata of older files
    (``restat``), and the import graph when one of them held it. Its files are
    the live ones among theirs, in path order, with the metadata the store
    reads for them now. The live view is written for the new segment list
    before the manifest names it.
    """
    directory = segments_dir(store_path)
    moved = np.flatnonzero(table.segment >= first)  # the live files of the merged segments, path order
    merged = table.take(moved)
    old = segments[first:]
    dim = max((segment.dim for segment in segments), default=int(meta.get("embed_dim") or 0))
    new_first = np.cumsum(merged.count) - merged.count  # each file's first row in the merged segment
    chunks: list[Chunk] = []
    entries: list[FileEntry] = []
    for i in range(len(merged)):
        s, local, count = int(merged.segment[i]), int(merged.local[i]), int(merged.count[i])
        segment, path = segments[s], merged.paths.item(i)
        entries.append(FileEntry(path, merged.shas.item(i), int(merged.tokens[i]), len(chunks), count,
                                 merged.imports_of(i), int(merged.size[i]), int(merged.mtime[i]),
                                 segment.symbol_payload(path)))
        chunks.extend(segment.chunk(row) for row in range(local, local + count))
    # Each merged row's segment and row there, then the vectors read segment by segment.
    row_segment = np.repeat(merged.segment, merged.count)
    row_local = np.repeat(merged.local - new_first, merged.count) + np.arange(len(chunks), dtype=np.int64)
    embeddings = np.zeros((len(chunks), dim), dtype=np.float64)
    for s in sorted(set(merged.segment.tolist())):  # (not np.unique: it imports numpy.ma, 20 ms)
        taken = row_segment == s
        embeddings[taken] = segments[s].dense_rows(row_local[taken])
    bm25 = build_bm25([tokenize_bytes(c.content.encode("utf-8")) for c in chunks])
    removes = sorted({path for segment in old for path in segment.removes})
    merged_paths = {entry.path for entry in entries}
    restat: dict[str, tuple[int, int]] = {}
    for segment in old:  # later segments refresh later: the last pair of a path is the one read now
        restat.update(segment.restat)
    older_restat = {path: pair for path, pair in sorted(restat.items()) if path not in merged_paths}
    # The store's graph is the newest one a segment carries; the merged segment takes it over.
    carrier = next((segment for segment in reversed(old) if segment.carries_edges()), None)
    edges = list(carrier.edges or []) if carrier is not None else None
    parts = SegmentParts(chunks, embeddings, entries, bm25, removes, edges, older_restat or None)
    try:
        name, sha, size = save_segment(parts, directory)
    except OSError as exc:
        raise CceError(f"could not write the store {store_path}: {exc.strerror or exc}") from exc
    new_refs = [*refs[:first], SegmentRef(name, sha, size, len(chunks))]
    # The live files now: the merged ones read from the new segment, the rest where they were.
    segment_column, local_column = table.segment.copy(), table.local.copy()
    segment_column[moved] = first
    local_column[moved] = new_first
    view = save_table_view(store_path, replace(table, segment=segment_column, local=local_column), new_refs)
    commit_manifest(store_path, meta, new_refs, view=view)
    return load_store(store_path, opened=segments[:first])

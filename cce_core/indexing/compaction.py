"""Rewrite a store's live rows as fresh segments: what a long series of re-indexes needs now and then.

Every re-index adds a segment and leaves the rows it superseded in older
ones. Reading stays exact whatever their number, but superseded rows cost
disk and each segment adds a little to every query. Compaction rewrites the
live files, in path order, in batches of about as much text as a fresh index
puts in one segment — so its memory is bounded by a batch, not by the store,
and its segments are byte for byte those a fresh index of the same files
writes. The manifest is switched to them in one atomic step and the old
segments are removed only after that, so a killed compaction leaves the
previous store as it was. It runs under the store's writer lock
(:mod:`cce_core.indexing.store_lock`), so no other writer's segment is among
those it removes.

Nothing is parsed or embedded again: chunks and vectors are copied from the
old segments; only the BM25 postings are rebuilt, from the chunk texts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import tokenize_bytes
from cce_core.indexing.bm25 import build_bm25
from cce_core.indexing.chunk import Chunk
from cce_core.indexing.segment import BATCH_BYTES, FileEntry, SegmentParts, save_segment
from cce_core.indexing.store import SegmentedStore, SegmentRef, commit_manifest, load_store, segments_dir
from cce_core.indexing.store_lock import holds_store_lock


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

"""Turn a directory into a store: walk, redact, chunk, embed, and save.

A fresh index goes to disk a batch of files at a time, each batch one
segment, so memory follows the batch and not the corpus. A re-index lists
files by metadata, reads only those whose size or modification time moved,
and writes one segment with what changed (plus the paths it supersedes);
unchanged files keep their chunks and vectors in the segments that hold them
(same embedder, packs and secret policy required). The store reads its live
files in path order whatever segment holds them, so every answer equals a
full rebuild's.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cce_core import __version__
from cce_core.foundation.errors import CceError
from cce_core.hookspecs import Embedder, EmbedderError
from cce_core.indexing.bm25 import TokenIdEncoder, TokenIds, build_bm25
from cce_core.indexing.chunk import Chunk
from cce_core.indexing.fingerprint import disowns, record_fingerprint
from cce_core.indexing.graph import build_edges
from cce_core.indexing.live_table import LiveTable
from cce_core.indexing.parallel_chunking import chunk_files
from cce_core.indexing.racy import is_racy, load_racy_list, save_racy_list
from cce_core.indexing.segment import BATCH_BYTES, Bm25Arrays, SegmentParts, save_segment
from cce_core.indexing.skip_memory import load_skip_list, save_skip_list
from cce_core.indexing.store import (
    FileEntry,
    SegmentedStore,
    SegmentRef,
    StoreData,
    commit_manifest,
    live_after,
    load_store,
    save_live_view,
    segments_dir,
)
from cce_core.indexing.store_lock import holds_store_lock
from cce_core.indexing.walk_memory import scan_remembered, walk_memory_path
from cce_core.indexing.walker import ListedFile, SkipReason, WalkedFile, WalkResult, read_listed, walk
from cce_core.plugins.host import PluginHost

SPEC_VERSION = "1.0"
EMBED_BATCH = 512


@dataclass
class IndexStats:
    files_indexed: int
    files_skipped: int
    sensitive_skipped: int
    total_chunks: int
    reused_files: int
    store_bytes: int
    seconds: float
    # Directories whose files the walk never saw, and every walker skip by reason (SkipReason value → count).
    walk_errors: int = 0
    skip_counts: dict[str, int] = field(default_factory=dict)
    # Values the redactor replaced in the files read this run (label → count); reused files are not re-read.
    redactions: dict[str, int] = field(default_factory=dict)


def store_meta(host: PluginHost, embedder: Embedder, protect_secrets: bool, dim: int,
               secrets_profile: str = "strict") -> dict[str, object]:
    packs = host.packs.packs
    return {
        "engine": "cce-python",
        "engine_version": __version__,
        "spec_version": SPEC_VERSION,
        "embedder": embedder.name,
        "embed_model": str(embedder.model or ""),
        "embed_dim": dim,
        "pack_set": host.packs.pack_set_id,
        "pack_versions": {p.name: host.distribution_version(p.distribution) if p.distribution else "?" for p in packs},
        # Any installed plugin can change chunks (an import override, say): reuse needs the same set.
        "plugins": host.plugin_versions(),
        "redaction": protect_secrets,
        "secrets_profile": secrets_profile if protect_secrets else "off",  # reuse needs the same profile
    }


def _configured_profile(root: str | os.PathLike[str]) -> str:
    """The secrets profile ``root/.cce/config`` chooses (strict unless it says ``family``)."""
    from cce_core.foundation.config import load_config

    return load_config(Path(root)).secrets_profile


def _reusable(previous: StoreData | None, meta: dict[str, object]) -> bool:
    """Whether ``previous``'s chunks and vectors may be kept (same embedder, packs, plugins and policy)."""
    if previous is None:
        return False
    keys = ("embedder", "embed_model", "pack_set", "pack_versions", "plugins", "redaction", "secrets_profile",
            "engine_version")
    return all(previous.meta.get(k) == meta[k] for k in keys)


@dataclass
class Batch:
    """The chunks, vectors and postings of some files, ready to become a segment."""

    chunks: list[Chunk]
    embeddings: np.ndarray
    files: list[FileEntry]
    bm25: Bm25Arrays
    redactions: dict[str, int]


def build_batch(host: PluginHost, embedder: Embedder, files: list[WalkedFile], redaction: str | None,
                progress: Callable[[int, int], None] | None = None, dim_hint: int = 0) -> Batch:
    """Redact, chunk, tokenize and embed ``files`` (in path order) into one batch."""
    # One tokenization serves BM25 and, when the embedder can use it, the vectors. Each
    # chunked file's tokens come back as ids into one vocabulary (a worker numbers its own).
    encoder = TokenIdEncoder()
    items = [(wf.path, wf.text) for wf in files]
    results = chunk_files(host, items, redaction, progress, encoder=encoder)
    chunks: list[Chunk] = []
    entries: list[FileEntry] = []
    redactions: dict[str, int] = {}
    for wf, result in zip(files, results, strict=True):
        file_chunks, imports, tokens, _chunk_tokens, redacted, symbols = result
        for label, count in redacted.items():
            redactions[label] = redactions.get(label, 0) + count
        entries.append(FileEntry(wf.path, hashlib.sha256(wf.raw).hexdigest(), tokens, len(chunks), len(file_chunks),
                                 imports, wf.size, wf.mtime_ns, symbols if symbols is not None else b""))
        chunks.extend(file_chunks)
    # The segment's compressed texts are made in a helper thread while the vectors and postings are.
    from cce_core.indexing.segment import CompressingChunks

    chunks = CompressingChunks(chunks)
    tids = encoder.token_ids([result[3] for result in results])
    try:
        embeddings = _embed(embedder, [c.content for c in chunks], list(range(len(chunks))), tids)
    except EmbedderError as exc:
        raise CceError(f"embedding failed, nothing was written: {exc}") from exc
    if not chunks:
        embeddings = np.zeros((0, dim_hint or int(embedder.dim or 0)), dtype=np.float64)
    return Batch(chunks, np.ascontiguousarray(embeddings), entries, build_bm25(tids), redactions)


def _stats(walked: WalkResult, files: int, chunks: int, reused: int, started: float) -> IndexStats:
    return IndexStats(files, walked.skipped, walked.sensitive_skipped, chunks, reused, 0,
                      time.perf_counter() - started, walked.walk_errors,
                      {r.value: n for r, n in walked.skip_counts.items()})


def build_index(
    root: str | os.PathLike[str],
    host: PluginHost,
    embedder: Embedder,
    *,
    protect_secrets: bool = True,
    progress: Callable[[int, int], None] | None = None,
    secrets_profile: str | None = None,
) -> tuple[StoreData, IndexStats]:
    """Build the store of ``root`` in memory (``secrets_profile`` None: the one ``root/.cce/config`` sets).

    For small trees and callers that want the data, not a file (bench, relevance,
    a Sync push); ``index_directory`` writes big trees to disk batch by batch.
    """
    started = time.perf_counter()
    walked = walk(str(root), protect_secrets=protect_secrets)
    profile = secrets_profile or _configured_profile(root)
    batch = build_batch(host, embedder, walked.files, profile if protect_secrets else None, progress)
    dim = int(batch.embeddings.shape[1]) if batch.embeddings.ndim == 2 else 0
    edges = build_edges({f.path: f.imports for f in batch.files}, [f.path for f in batch.files], _suffixes(host))
    meta = store_meta(host, embedder, protect_secrets, dim, profile)
    data = StoreData(meta, batch.chunks, batch.embeddings, batch.files, edges, batch.bm25)
    stats = _stats(walked, len(batch.files), len(batch.chunks), 0, started)
    stats.redactions = dict(sorted(batch.redactions.items()))
    return data, stats


def _suffixes(host: PluginHost) -> list[str]:
    return [s for p in host.packs.packs for s in p.module_suffixes]


def _embed(embedder: Embedder, texts: list[str], rows: list[int], tids: TokenIds) -> np.ndarray:
    if not texts:
        return np.zeros((0, 0), dtype=np.float64)
    # Token-based embedders reuse the ids BM25 needs instead of re-tokenizing; others decline with None.
    tokenized = embedder.embed_tokenized(tids.vocab, tids.flat, tids.lengths)
    if tokenized is not None:
        vectors = np.asarray(tokenized, dtype=np.float64)
        if len(rows) == vectors.shape[0]:
            return vectors  # rows are every chunk, in order (ascending and complete)
        return vectors[np.asarray(rows, dtype=np.int64)]
    parts = [np.asarray(embedder.embed_batch(texts[i : i + EMBED_BATCH]), dtype=np.float64)
             for i in range(0, len(texts), EMBED_BATCH)]
    dims = {p.shape[1] for p in parts}
    if len(dims) != 1:
        raise EmbedderError(f"the embedder returned vectors of different lengths {sorted(dims)}")
    return np.vstack(parts)


@holds_store_lock("cce index")  # one writer per store: the read-write-switch-clean cycle below is not atomic
def index_directory(
    root: str | os.PathLike[str],
    store_path: Path,
    host: PluginHost,
    embedder: Embedder,
    *,
    protect_secrets: bool = True,
    progress: Callable[[int, int], None] | None = None,
    reuse: bool = True,
    secrets_profile: str | None = None,
    compact: bool = False,
    clock: Callable[[], int] = time.time_ns,
) -> tuple[StoreData, IndexStats]:
    """Index ``root`` into ``store_path``, writing only what changed since the store there.

    Files are listed by metadata first; one whose size and modification time
    match the store's record is kept without being read (unless the pair was
    recorded inside the racy window, see :mod:`.racy`; ``clock`` tells the
    time in ns), one whose bytes still hash the same is kept too. Changed, new
    and deleted files become one new segment (a fresh index: one segment per batch of text). ``compact`` (or a
    store grown past the thresholds) rewrites the live files as fresh path-ordered batches.
    """
    started = time.perf_counter()
    previous: SegmentedStore | None = None
    if reuse and store_path.is_file() and not disowns(store_path):  # a store changed behind our back is rebuilt
        try:
            previous = load_store(store_path)
            if previous.damaged_segments():
                previous = None  # a segment changed behind our back: rebuilt, not trusted
        except CceError:
            previous = None  # a corrupt store is simply rebuilt
    # Only the directories changed since the last walk are listed again (walk_memory).
    walked = scan_remembered(str(root), protect_secrets, walk_memory_path(store_path), use=reuse)
    profile = secrets_profile or _configured_profile(root)
    redaction = profile if protect_secrets else None
    meta = store_meta(host, embedder, protect_secrets, 0, profile)
    keep = _reusable(previous, meta)
    # The previous store's live files as columns, read once: what this run compares against, and
    # the seed of the new store's live view (first chunks local to their segments).
    known = previous.live_table() if previous is not None and keep else LiveTable.from_entries([], [])
    distrusted = load_racy_list(store_path)
    racy: dict[str, tuple[int, int]] = {}  # the pairs this run reads inside the window
    # Files an earlier run found not UTF-8, by metadata: left out again without being read.
    remembered = load_skip_list(store_path) if reuse else {}
    not_utf8: dict[str, tuple[int, int]] = {}  # what this run leaves out as not UTF-8, for the next one

    # Each listed file against the store's record, as arrays: row in the store (-1: not there),
    # and whether its (size, time) pair matches one that may be trusted.
    listed_files = walked.listed
    count = len(listed_files)
    row_of = known.rows_of([listed.path for listed in listed_files], remembered) if len(known) else \
        np.full(count, -1, dtype=np.int64)
    in_store = row_of >= 0
    trusted = in_store.copy()
    if trusted.any():
        rows = row_of[in_store]
        sizes = np.fromiter((listed.size for listed in listed_files), dtype=np.int64, count=count)[in_store]
        times = np.fromiter((listed.mtime_ns for listed in listed_files), dtype=np.int64, count=count)[in_store]
        # (A zero time is how older stores marked a racy pair.)
        trusted[in_store] = (known.size[rows] == sizes) & (known.mtime[rows] == times) & (known.mtime[rows] != 0)
    if distrusted.distrust_all:
        trusted[:] = False
    elif distrusted.pairs:
        for k in np.flatnonzero(trusted).tolist():
            if listed_files[k].path in distrusted.pairs and \
                    distrusted.distrusts(listed_files[k].path, listed_files[k].size, listed_files[k].mtime_ns):
                trusted[k] = False
    unchanged_count = int(trusted.sum())
    to_read: list[ListedFile] = []
    for k in np.flatnonzero(~trusted).tolist():
        listed = listed_files[k]
        pair = (listed.size, listed.mtime_ns)
        if not in_store[k] and remembered.get(listed.path) == pair and \
                not distrusted.distrusts(listed.path, *pair):
            walked.note(listed.path, SkipReason.NOT_UTF8, listed.size)
            not_utf8[listed.path] = pair
            continue
        to_read.append(listed)
    seen = np.zeros(len(known), dtype=bool)
    seen[row_of[in_store]] = True
    # Paths that leave the store: gone from the tree now, or (found while reading) no longer indexable.
    leaving = [known.path_list[i] for i in np.flatnonzero(~seen).tolist()]  # in path order, as the table
    superseded = list(leaving)  # every kept path whose old chunks this run leaves behind
    departed = bool(leaving)  # whether a path leaves the store (then the import graph is rebuilt)
    new_paths = False  # whether a path enters it (likewise)
    restat: dict[str, tuple[int, int]] = {}
    new_files = new_chunks = 0

    refs: list[SegmentRef] = list(previous.refs) if previous is not None and keep else []
    fresh_store = not refs  # every segment written below is a path-ordered batch of a fresh index
    directory = segments_dir(store_path)
    dim = previous.embedding_rows()[1] if previous is not None and keep and previous.rows else 0
    # Imports of the files chunked this run (the others keep the store's), for the graph.
    chunked_imports: dict[str, list[str]] = {}
    redactions: dict[str, int] = {}
    total_files = len(to_read)
    done_files = 0
    pending: tuple[Batch, list[str]] | None = None  # a batch waiting to be written, with the paths it replaces

    def report(done: int, _total: int) -> None:
        if progress is not None:
            progress(done_files + done, total_files)

    def write(batch: Batch | None, replaced: list[str], edges: list[tuple[str, str]] | None) -> None:
        # A changed file's old copy is removed by the segment holding its new one; paths that
        # left the store and refreshed metadata ride along with whichever segment comes first.
        nonlocal leaving, restat
        parts = SegmentParts(batch.chunks if batch else [], batch.embeddings if batch else np.zeros((0, dim)),
                             batch.files if batch else [], batch.bm25 if batch else build_bm25([]),
                             sorted({*replaced, *leaving}), edges, restat or None)
        leaving, restat = [], {}
        try:
            name, sha, size = save_segment(parts, directory)
        except OSError as exc:
            raise CceError(f"could not write the store {store_path}: {exc.strerror or exc}") from exc
        refs.append(SegmentRef(name, sha, size, len(parts.chunks)))

    # Read what moved, a batch of text at a time; a file whose bytes hash as before keeps its
    # chunks (only its new metadata is recorded).
    for listed_batch in _batches_of_listed(to_read):
        now_ns = clock()  # taken before the reads: a file is judged against the earliest time it could be read
        files: list[WalkedFile] = []
        replaced: list[str] = []
        for listed in listed_batch:
            wf = read_listed(walked, listed)
            row = known.find(listed.path)
            prior = known.entry(row) if row >= 0 else None
            if wf is None and walked.skips and walked.skips[-1].path == listed.path and \
                    walked.skips[-1].reason is SkipReason.NOT_UTF8 and not is_racy(listed.mtime_ns, now_ns):
                not_utf8[listed.path] = (listed.size, listed.mtime_ns)
            if wf is None:
                if prior is not None:
                    leaving.append(listed.path)
                    superseded.append(listed.path)
                    departed = True
                continue
            if is_racy(wf.mtime_ns, now_ns):
                racy[wf.path] = (wf.size, wf.mtime_ns)
            if prior is not None and prior.sha256 == hashlib.sha256(wf.raw).hexdigest():
                unchanged_count += 1
                if (prior.size, prior.mtime_ns) != (wf.size, wf.mtime_ns):
                    restat[wf.path] = (wf.size, wf.mtime_ns)
                continue
            files.append(wf)
            if prior is not None:
                replaced.append(wf.path)
                superseded.append(wf.path)
            else:
                new_paths = True
        if files:
            batch = build_batch(host, embedder, files, redaction, report, dim)
            for label, count in batch.redactions.items():
                redactions[label] = redactions.get(label, 0) + count
            for entry in batch.files:
                chunked_imports[entry.path] = entry.imports
            new_files += len(batch.files)
            new_chunks += len(batch.chunks)
            if batch.chunks:
                width = int(batch.embeddings.shape[1])
                if dim and width != dim:
                    raise CceError("the previous store's vectors have another dimension; delete it and re-index")
                dim = width
            if pending is not None:
                write(*pending, None)
            pending = (batch, replaced)
        done_files += len(listed_batch)

    if previous is not None and keep and pending is None and not leaving and not restat:
        current = store_meta(host, embedder, protect_secrets, previous.embedding_rows()[1], profile)
        if current == previous.meta and len(refs) == len(previous.refs):
            # Nothing changed: a rebuild would answer exactly as the store we have.
            if compact and (len(previous.segments) > 1 or previous.total_rows != previous.rows):
                from cce_core.indexing.compaction import compact_store

                previous = compact_store(previous, store_path)
            stats = _stats(walked, len(known), previous.rows, len(known), started)
            stats.store_bytes = previous.size_bytes
            save_racy_list(store_path, racy)
            if not_utf8 != remembered or not reuse:  # the list read at the start still holds: not rewritten
                save_skip_list(store_path, not_utf8)
            record_fingerprint(store_path, previous.meta)
            return previous, stats

    # The graph depends only on the set of paths and each file's imports: when neither moved
    # (the usual edit), the graph an older segment carries still holds and is not rebuilt.
    same_graph = bool(len(known)) and not departed and not new_paths and \
        all(imports == known.imports_of(known.find(p)) for p, imports in chunked_imports.items())
    edges = None
    if not same_graph:
        # Every live file's imports: the store's for the files kept, the new ones for those chunked.
        gone_paths = set(superseded) - set(chunked_imports)
        imports = {p: i for p, i in zip(known.path_list, known.import_lists(), strict=True) if p not in gone_paths}
        imports.update(chunked_imports)
        paths = sorted(imports)
        edges = build_edges({p: imports[p] for p in paths}, paths, _suffixes(host))
    # The last segment carries the import graph of the whole store (when it changed).
    write(pending[0] if pending else None, pending[1] if pending else [], edges)

    dim = dim or int(embedder.dim or 0)
    final_meta = store_meta(host, embedder, protect_secrets, dim, profile)
    save_racy_list(store_path, racy)  # before the manifest that records those pairs
    if not_utf8 != remembered or not reuse:
        save_skip_list(store_path, not_utf8)
    # Rows and dead rows by arithmetic: the new store's file tables need not be resolved here.
    kept_before = previous if previous is not None and keep else None
    gone = sum(int(known.count[known.find(p)]) for p in superseded)
    total_rows = (kept_before.total_rows if kept_before is not None else 0) + new_chunks
    live_rows = (kept_before.rows - gone if kept_before is not None else 0) + new_chunks
    dead = total_rows - live_rows
    # Folding: the run's own segment joins the small ones before it once they are too many, and
    # the whole store is rewritten on request or when superseded rows pile up (see compaction). A
    # fresh store is already what a compaction would write.
    from cce_core.indexing.compaction import compact_store, merge_segments, segments_to_fold

    fold_from = 0 if compact else None if fresh_store else segments_to_fold(refs, total_rows, dead)
    if fold_from and kept_before is not None:
        # One manifest switch, straight to the merged store: the run's segment is merged before it is named.
        segments, table = live_after(store_path, kept_before, refs, known)
        data = merge_segments(store_path, final_meta, segments, refs, table, fold_from)
        store_bytes = data.size_bytes
    else:
        # A re-index also writes the resolved live-file table, so no later reader has to resolve it.
        view = save_live_view(store_path, kept_before, refs, known) \
            if not fresh_store and kept_before is not None else None
        store_bytes = commit_manifest(store_path, final_meta, refs, ordered=fresh_store, view=view)
        # The kept segments are mapped (and checked) already: the new store reuses them.
        data = load_store(store_path, opened=kept_before.segments if kept_before is not None else ())
        if fold_from == 0:
            data = compact_store(data, store_path)
            store_bytes = data.size_bytes
    record_fingerprint(store_path, data.meta)  # after the store: a kill in between leaves a detectable drift
    stats = _stats(walked, unchanged_count + new_files, live_rows, unchanged_count, started)
    stats.store_bytes = store_bytes
    stats.redactions = dict(sorted(redactions.items()))
    return data, stats


def _batches_of_listed(files: list[ListedFile]) -> list[list[ListedFile]]:
    """Consecutive runs of ``files`` (path order kept) of about ``BATCH_BYTES`` of text each."""
    out: list[list[ListedFile]] = []
    current: list[ListedFile] = []
    size = 0
    for listed in files:
        if current and size + listed.size > BATCH_BYTES:
            out.append(current)
            current, size = [], 0
        current.append(listed)
        size += listed.size
    if current:
        out.append(current)
    return out

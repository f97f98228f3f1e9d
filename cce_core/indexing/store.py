"""The on-disk index: a small manifest naming immutable segments, read as one store.

``index.cce`` is the manifest: an 8-byte magic, a little-endian u64 header
length and a JSON header holding the store's metadata and its segments in
order (name, SHA-256, size, rows). The segments live beside it in
``index.cce.d/`` (see :mod:`cce_core.indexing.segment`). Reading applies them
in order: a segment's ``removes`` drop older copies of paths, its files are
added, and what is left — the live files, in path order — is the store every
caller sees (:class:`SegmentedStore`). Chunk positions are therefore the same
as in a store built in one go, and so is every ranking.

Writing a segment never touches the others; the manifest is replaced
atomically (temporary file + rename) after its segments are on disk, and
files no manifest names any more are removed afterwards. A writer killed at
any point leaves the previous manifest naming intact segments.

Opening a store imports no numpy when its rows need no reordering: a one-shot
``cce search`` can rank from the mapped bytes alone (see ``pure_kernel``).
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from cce_core.foundation.atomic import atomic_write
from cce_core.foundation.errors import CceError
from cce_core.indexing.chunk import Chunk
from cce_core.indexing.live_view import LiveFiles, MappedView, ViewRef, save_view
from cce_core.indexing.segment import (
    BlobStrings,
    Bm25Arrays,
    FileEntry,
    LazyStrings,
    MappedSegment,
    SegmentParts,
    save_segment,
    serialize_segment,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from cce_core.indexing.live_table import LiveTable


MAGIC = b"CCEPYIX\x01"
FORMAT = "cce-python-store/3"
# Formats this engine wrote before; a store in one of them is rebuilt, not trusted.
OLDER_FORMATS = ("cce-python-store/1", "cce-python-store/2")
STORE_DIR = ".cce"
STORE_FILE = "index.cce"
# A reader that finds a segment gone (a writer's clean-up raced it) reads the manifest again.
_OPEN_ATTEMPTS = 3


def default_store_path(root: str | os.PathLike[str]) -> Path:
    return Path(root) / STORE_DIR / STORE_FILE


def segments_dir(store_path: Path) -> Path:
    """Where the segments of the store whose manifest is ``store_path`` live."""
    return store_path.with_name(store_path.name + ".d")


class Bm25Source:
    """What BM25 scoring reads: per-chunk lengths and one term's postings."""

    doc_len: np.ndarray

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass
class ArrayPostings(Bm25Source):
    """BM25 postings served from one segment's arrays."""

    arrays: Bm25Arrays

    def __post_init__(self) -> None:
        self.doc_len = self.arrays.doc_len

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        from bisect import bisect_left

        vocab = self.arrays.vocab
        pos = bisect_left(vocab, term)
        if pos >= len(vocab) or vocab[pos] != term:
            return None
        lo, hi = int(self.arrays.ptr[pos]), int(self.arrays.ptr[pos + 1])
        return self.arrays.docs[lo:hi], self.arrays.tfs[lo:hi]


@dataclass
class StoreData:
    """Everything an index holds; built in memory by the indexer, or loaded."""

    meta: dict[str, Any]
    chunks: Sequence[Chunk]
    embeddings: np.ndarray
    files: list[FileEntry]
    edges: list[tuple[str, str]]
    bm25: Bm25Arrays
    path: Path | None = None
    size_bytes: int = 0

    @property
    def embedder(self) -> str:
        return str(self.meta.get("embedder", ""))

    @property
    def chunk_ids(self) -> Sequence[str]:
        return [c.chunk_id for c in self.chunks]

    def embedding_rows(self) -> tuple[int, int]:
        """(rows, dimensions) of the embedding matrix."""
        shape = self.embeddings.shape
        return int(shape[0]), int(shape[1]) if len(shape) == 2 else 0

    @cached_property
    def file_tokens(self) -> Mapping[str, int]:
        return {f.path: f.tokens for f in self.files}

    @cached_property
    def _file_spans(self) -> dict[str, tuple[int, int]]:
        return {f.path: (f.first_chunk, f.first_chunk + f.chunk_count) for f in self.files}

    def file_span(self, path: str) -> tuple[int, int] | None:
        """(first, end) store positions of ``path``'s chunks, or None when it is not in the store."""
        return self._file_spans.get(path)

    def file_spans(self) -> tuple[list[str], list[int], list[int]]:
        """The live files' paths, first chunks (store positions) and chunk counts, in path order."""
        files = self.files
        return [f.path for f in files], [f.first_chunk for f in files], [f.chunk_count for f in files]

    def neighbours_of(self, files: list[str]) -> dict[str, list[str]]:
        """Each of ``files``' graph neighbours (files it imports or is imported by), sorted."""
        from cce_core.indexing.graph import neighbours_of

        return neighbours_of(self.edges, files)

    # -- what the ranking kernels read (a segmented store answers without building whole matrices) --

    def vector_rows(self, rows: np.ndarray) -> np.ndarray:
        """The vectors of ``rows`` (chunk positions), as a dense float64 matrix."""
        return self.embeddings[rows]

    def column_sums(self, dims: Sequence[int], weights: Sequence[float]) -> np.ndarray:
        """Per chunk, ``sum(vector[j] * weight)`` over ``dims`` taken in the order given, from 0.0.

        For a query vector whose other coordinates are zero this is the exact
        left-to-right cosine (a zero coordinate adds an exact zero).
        """
        import numpy as np

        values = np.zeros(self.embedding_rows()[0], dtype=np.float64)
        for j, weight in zip(dims, weights, strict=True):
            values += self.embeddings[:, j] * weight
        return values

    @cached_property
    def bm25_source(self) -> Bm25Source:
        return ArrayPostings(self.bm25)


# -- writing ---------------------------------------------------------------


def store_parts(data: StoreData) -> SegmentParts:
    """A whole store as the parts of a single segment."""
    files = data.files
    if isinstance(data, SegmentedStore) and any(segment.has_symbols() for segment in data.segments):
        # An opened store's file table does not carry the symbol records: they stay in the segments.
        from dataclasses import replace

        live = data.live_files()
        files = [replace(f, symbols=data.segments[live[f.path][0]].symbol_payload(f.path)) for f in files]
    return SegmentParts(data.chunks, data.embeddings, files, data.bm25, [], list(data.edges))


def serialize_parts(data: StoreData) -> list[bytes | memoryview]:
    """The bytes of ``data`` written as one segment (deterministic: the same store gives the same bytes)."""
    return serialize_segment(store_parts(data))


@dataclass(frozen=True)
class SegmentRef:
    """A segment as the manifest lists it: file name, SHA-256 of its bytes, size and row count."""

    name: str
    sha256: str
    bytes: int
    rows: int

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "sha256": self.sha256, "bytes": self.bytes, "rows": self.rows}


def manifest_bytes(meta: dict[str, Any], segments: Sequence[SegmentRef], directory: str | None = None,
                   ordered: bool = False, view: ViewRef | None = None) -> bytes:
    """The manifest file; ``directory`` names the segment folder when it is not the manifest's own.

    ``ordered``: the segments' rows, one after another, are the store's rows
    in path order with nothing superseded (what a fresh index and a compaction
    write), so a reader need not resolve the file tables. ``view``: otherwise,
    the resolved live-file table the writer left beside the segments
    (:mod:`.live_view`), so a reader need not resolve them either.
    """
    header: dict[str, Any] = {"format": FORMAT, "meta": meta, "ordered": ordered,
                              "segments": [s.as_json() for s in segments]}
    if directory is not None:
        header["segments_dir"] = directory
    if view is not None and not ordered:
        header["view"] = view.as_json()
    raw = json.dumps(header, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return MAGIC + struct.pack("<Q", len(raw)) + raw


def commit_manifest(store_path: Path, meta: dict[str, Any], segments: Sequence[SegmentRef],
                    home: Path | None = None, ordered: bool = False, view: ViewRef | None = None) -> int:
    """Atomically point ``store_path`` at ``segments`` (already written), then drop unnamed segment files.

    ``home`` is the store path whose segment directory the manifest names
    (default: ``store_path`` itself) — a manifest staged under another name
    and renamed into place later names its final directory.
    """
    home = home or store_path
    raw = manifest_bytes(meta, segments, None if home == store_path else segments_dir(home).name, ordered, view)
    try:
        atomic_write(store_path, raw)
    except OSError as exc:
        raise CceError(f"could not write the store {store_path}: {exc.strerror or exc}") from exc
    if home == store_path:
        collect_garbage(store_path)
    return len(raw) + sum(s.bytes for s in segments) + (view.bytes if view is not None and not ordered else 0)


def collect_garbage(store_path: Path) -> None:
    """Remove segment files and temporaries the current manifest does not name (best effort)."""
    directory = segments_dir(store_path)
    try:
        header = _read_manifest(store_path)
        names = {s["name"] for s in header["segments"]}
        if isinstance(header.get("view"), dict):
            names.add(header["view"]["name"])
    except (CceError, OSError, ValueError, KeyError, TypeError):
        return
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if entry.name not in names and entry.name.startswith(("seg-", ".seg-", "view-", ".view-")):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def save_store(data: StoreData, path: Path, home: Path | None = None) -> int:
    """Write ``data`` as a one-segment store at ``path``; returns the bytes written."""
    directory = segments_dir(home or path)
    try:
        name, sha, size = save_segment(store_parts(data), directory)
    except OSError as exc:
        raise CceError(f"could not write the store {path}: {exc.strerror or exc}") from exc
    return commit_manifest(path, data.meta, [SegmentRef(name, sha, size, len(data.chunks))], home, ordered=True)


# -- reading ---------------------------------------------------------------


def _read_manifest(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    if len(raw) < 16 or raw[:8] != MAGIC:
        raise ValueError("not a cce store (bad magic)")
    (header_len,) = struct.unpack("<Q", raw[8:16])
    if 16 + header_len > len(raw):
        raise ValueError("the store header runs past the end of the file")
    header = json.loads(raw[16 : 16 + header_len].decode("utf-8"))
    if not isinstance(header, dict):
        raise ValueError("the store header is not an object")
    fmt = header.get("format")
    if fmt in OLDER_FORMATS:
        raise CceError(f"the index at {path} was written by an older cce ({fmt}) — re-run `cce index` to rebuild it")
    if fmt != FORMAT:
        raise ValueError(f"unsupported store format {fmt!r}")
    return header


class _LogicalChunks(Sequence[Chunk]):
    """The live chunks in store order, each built (and its text decoded) on first access."""

    def __init__(self, store: SegmentedStore) -> None:
        self._store = store
        self._built: list[Chunk | None] = [None] * store.rows

    def __len__(self) -> int:
        return len(self._built)

    def _build(self, i: int) -> Chunk:
        segment, local = self._store.locate(i)
        chunk = segment.chunk(local)
        self._built[i] = chunk
        return chunk

    @overload
    def __getitem__(self, index: int) -> Chunk: ...
    @overload
    def __getitem__(self, index: slice) -> list[Chunk]: ...
    def __getitem__(self, index: int | slice) -> Chunk | list[Chunk]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._built)))]
        chunk = self._built[index]
        return chunk if chunk is not None else self._build(index if index >= 0 else index + len(self._built))

    def __iter__(self) -> Iterator[Chunk]:
        for i in range(len(self._built)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class _LogicalIds(LazyStrings):
    def __init__(self, store: SegmentedStore) -> None:
        self._store = store
        self._per_segment = [s.chunk_ids() for s in store.segments]

    def __len__(self) -> int:
        return self._store.rows

    def _item(self, index: int) -> str:
        s, local = self._store.locate_index(index)
        return self._per_segment[s][local]


class _OrderedFileTokens(Mapping[str, int]):
    """``file_tokens`` of an ordered store, read from the segments' binary file columns per lookup."""

    def __init__(self, store: SegmentedStore) -> None:
        self._store = store

    def __getitem__(self, path: str) -> int:
        for segment in self._store.segments:
            pos = segment.file_paths().find(path)
            if pos >= 0:
                return int(segment.view("file_tokens")[pos])
        raise KeyError(path)

    def __iter__(self) -> Iterator[str]:
        for segment in self._store.segments:
            yield from segment.file_paths()

    def __len__(self) -> int:
        return sum(len(segment.file_paths()) for segment in self._store.segments)


class _ViewFileTokens(Mapping[str, int]):
    """``file_tokens`` read from a live view's sorted path column per lookup."""

    def __init__(self, paths: BlobStrings, tokens: memoryview) -> None:
        self._paths, self._tokens = paths, tokens

    def __getitem__(self, path: str) -> int:
        pos = self._paths.find(path)
        if pos < 0:
            raise KeyError(path)
        return int(self._tokens[pos])

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


class _SegmentPostings(Bm25Source):
    """BM25 postings merged across segments on demand, dead chunks left out, in store positions."""

    def __init__(self, store: SegmentedStore) -> None:
        self.store = store
        self.doc_len = store.doc_len
        self._vocabs = [s.vocab() for s in store.segments]

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        import numpy as np

        docs: list[np.ndarray] = []
        tfs: list[np.ndarray] = []
        for s, (segment, vocab) in enumerate(zip(self.store.segments, self._vocabs, strict=True)):
            pos = vocab.find(term)
            if pos < 0:
                continue
            ptr = segment.view("bm25_ptr")
            lo, hi = ptr[pos], ptr[pos + 1]
            local = segment.array("bm25_docs")[lo:hi].astype(np.int64)
            logical = self.store.logical_rows(s, local)
            keep = logical >= 0
            docs.append(logical[keep])
            tfs.append(segment.array("bm25_tfs")[lo:hi][keep])
        if not docs:
            return None
        all_docs = np.concatenate(docs)
        if not all_docs.size:
            return None
        order = np.argsort(all_docs, kind="stable")
        return all_docs[order], np.concatenate(tfs)[order]


class SegmentedStore(StoreData):
    """A store opened from disk: its segments' live files, in path order, as one store.

    Rows are numbered as a store built in one go would number them. When the
    segments' rows already are in that order with nothing superseded (a fresh
    index), positions map by offset alone and no numpy is needed to open it.
    """

    def __init__(self, meta: dict[str, Any], segments: list[MappedSegment], refs: list[SegmentRef], path: Path,
                 size: int, ordered: bool = False, view: MappedView | None = None,
                 view_ref: ViewRef | None = None) -> None:
        # StoreData's generated __init__ is bypassed on purpose: the heavy fields are lazy here.
        self.meta = meta
        self.path = path
        self.size_bytes = size
        self.segments = segments
        self.refs = refs
        self.seg_base: list[int] = []
        total = 0
        for segment in segments:
            self.seg_base.append(total)
            total += segment.rows
        self.total_rows = total
        self.dim = max((seg.dim for seg in segments), default=int(meta.get("embed_dim") or 0))
        if any(seg.rows and seg.dim != self.dim for seg in segments):
            raise CceError(f"the index at {path} is corrupt (segments of different vector widths) — "
                           "re-run `cce index` to rebuild it")
        # A manifest written by a fresh index or a compaction says its segments' rows are in
        # store order with nothing superseded: then no file table needs reading to open it.
        self.ordered = ordered
        if ordered:
            self.rows = total
            self.identity = True
            self._sources: list[tuple[int, int, int]] | None = None
        # Otherwise the re-index that wrote the manifest left the resolved table beside it (a
        # view): positions and files are read from its mapped columns.
        self.view = None if ordered else view
        self.view_ref = None if ordered else view_ref
        if self.view is not None:
            self.rows = self.view.rows
            self.identity = False
            self._sources = None
        # Without either, the file tables are resolved on first use (see __getattr__): a writer
        # that only needs the segment list does not pay for them.

    def __getattr__(self, name: str) -> Any:
        # Reached only for attributes not set yet: the positions of an unordered store.
        if name in ("rows", "identity", "_sources") and not self.__dict__.get("ordered", True):
            self._resolve()
            return self.__dict__[name]
        raise AttributeError(name)

    @cached_property
    def chunks(self) -> _LogicalChunks:  # type: ignore[override]
        return _LogicalChunks(self)

    def _resolve(self) -> None:
        """Apply the segments in order: the live files, their positions, and whether rows need reordering."""
        live: LiveFiles = {}
        apply_segments(live, self.segments, 0, self.path)
        files: list[FileEntry] = []
        sources: list[tuple[int, int, int]] = []  # (segment, local first, count) per live file, path order
        identity = True
        running = 0
        for file_path in sorted(live):
            s, f = live[file_path]
            files.append(FileEntry(f.path, f.sha256, f.tokens, running, f.chunk_count, list(f.imports), f.size,
                                   f.mtime_ns))
            if self.seg_base[s] + f.first_chunk != running:
                identity = False
            sources.append((s, f.first_chunk, f.chunk_count))
            running += f.chunk_count
        if running != self.total_rows:
            identity = False
        self.__dict__["files"] = files
        self.__dict__["_live"] = live
        self.rows = running
        self.identity = identity
        self._sources = sources

    def live_files(self) -> LiveFiles:
        """A new map of the live files: path → (segment number, entry whose first row is local to it)."""
        if self.view is not None:
            segment_of, local = self.view.view("file_segment"), self.view.view("file_local")
            out: LiveFiles = {}
            for i, f in enumerate(self.files):
                s = segment_of[i]
                if not 0 <= s < len(self.segments) or local[i] < 0 or local[i] + f.chunk_count > self.segments[s].rows:
                    raise CceError(f"the index at {self.path} is corrupt (its live view points outside a segment) "
                                   "— re-run `cce index` to rebuild it")
                out[f.path] = (s, FileEntry(f.path, f.sha256, f.tokens, local[i], f.chunk_count, f.imports, f.size,
                                            f.mtime_ns))
            return out
        if self.ordered:
            return {f.path: (s, f) for s, segment in enumerate(self.segments) for f in segment.files}
        if "_live" not in self.__dict__:
            self._resolve()
        return dict(self.__dict__["_live"])

    def live_table(self) -> LiveTable:
        """The live files as columns (:mod:`.live_table`): what a re-index compares against, no entry decoded."""
        from cce_core.indexing.live_table import LiveTable

        if self.view is not None:
            table = LiveTable.from_view(self.view, [segment.rows for segment in self.segments], self.path)
            try:
                table.paths.check_utf8()  # damaged bytes are reported here, not where a path is next read
            except UnicodeDecodeError as exc:
                raise CceError(f"the live view {self.view.path} is corrupt ({exc}) — re-run `cce index`") from None
            return table
        ordered = LiveTable.from_ordered(self.segments) if self.ordered else None
        return ordered if ordered is not None else LiveTable.from_live(self.live_files())

    @cached_property
    def files(self) -> list[FileEntry]:  # type: ignore[override]
        """The live files in path order (for an ordered store: the segments' tables, one after another)."""
        if self.view is not None:
            return self.view.files()
        if not self.ordered:
            self._resolve()
            return self.__dict__["files"]
        out: list[FileEntry] = []
        for base, segment in zip(self.seg_base, self.segments, strict=True):
            out.extend(segment.files_from(base))
        return out

    @cached_property
    def edges(self) -> list[tuple[str, str]]:  # type: ignore[override]
        """The import graph, as the newest segment that carries one recorded it."""
        for segment in reversed(self.segments):
            if segment.carries_edges():
                return list(segment.edges or [])
        return []

    def neighbours_of(self, files: list[str]) -> dict[str, list[str]]:
        """Graph neighbours of a few files, by bisection in the mapped graph (nothing parsed)."""
        for segment in reversed(self.segments):
            if segment.carries_edges():
                return segment.neighbours_of(files)
        return {}

    def file_span(self, path: str) -> tuple[int, int] | None:
        """(first, end) store positions of ``path``'s chunks, or None when it is not in the store."""
        if self.view is not None:
            pos = self._view_paths.find(path)
            if pos < 0:
                return None
            first = self.view.view("file_first")[pos]
            return first, first + self.view.view("file_count")[pos]
        if not self.ordered:
            return super().file_span(path)
        for base, segment in zip(self.seg_base, self.segments, strict=True):
            pos = segment.file_paths().find(path)
            if pos >= 0:
                first = base + segment.view("file_first")[pos]
                return first, first + segment.view("file_count")[pos]
        return None

    def file_spans(self) -> tuple[list[str], list[int], list[int]]:
        """:meth:`StoreData.file_spans` from the binary file columns: no file entry is built.

        What the default ranking reads at every start; decoding whole entries
        (hashes, imports) for tens of thousands of files cost more than the query.
        """
        if "files" not in self.__dict__:
            if self.view is not None:
                return (self._view_paths.to_list(), self.view.view("file_first").tolist(),
                        self.view.view("file_count").tolist())
            if self.ordered and all("file_sha" in segment.table for segment in self.segments):
                paths: list[str] = []
                firsts: list[int] = []
                counts: list[int] = []
                for base, segment in zip(self.seg_base, self.segments, strict=True):
                    paths.extend(segment.file_paths().to_list())
                    firsts.extend(base + first for first in segment.view("file_first").tolist())
                    counts.extend(segment.view("file_count").tolist())
                return paths, firsts, counts
        return super().file_spans()

    @cached_property
    def _view_paths(self) -> BlobStrings:
        assert self.view is not None
        return self.view.paths()

    @cached_property
    def file_tokens(self) -> Mapping[str, int]:  # type: ignore[override]
        if self.view is not None:
            return _ViewFileTokens(self._view_paths, self.view.view("file_tokens"))
        if not self.ordered:
            return {f.path: f.tokens for f in self.files}
        return _OrderedFileTokens(self)

    # -- positions ------------------------------------------------------------

    @cached_property
    def perm(self) -> np.ndarray:
        """Store position → row in the concatenation of all segments."""
        import numpy as np

        if self.view is not None:
            return np.frombuffer(self.view.raw("perm"), dtype="<i4").astype(np.int64)
        if self.identity or self._sources is None:
            return np.arange(self.rows, dtype=np.int64)
        starts = np.fromiter((self.seg_base[s] + first for s, first, _n in self._sources), dtype=np.int64,
                             count=len(self._sources))
        counts = np.fromiter((n for _s, _first, n in self._sources), dtype=np.int64, count=len(self._sources))
        offsets = np.zeros(len(counts), dtype=np.int64)
        if len(counts) > 1:
            np.cumsum(counts[:-1], out=offsets[1:])
        return np.repeat(starts - offsets, counts) + np.arange(self.rows, dtype=np.int64)

    @cached_property
    def inverse(self) -> np.ndarray:
        """Row in the concatenation of all segments → store position (-1: superseded)."""
        import numpy as np

        if self.view is not None:
            return np.frombuffer(self.view.raw("position_of_row"), dtype="<i4").astype(np.int64)
        inv = np.full(self.total_rows, -1, dtype=np.int64)
        inv[self.perm] = np.arange(self.rows, dtype=np.int64)
        return inv

    @cached_property
    def position_of_row(self) -> Sequence[int]:
        """:attr:`inverse` as plain ints (for the plain-Python kernel): concatenated row → position or -1."""
        if self.view is not None:
            return self.view.view("position_of_row")
        if self._sources is None:  # ordered: every row is live and in place
            return list(range(self.total_rows))
        positions = [-1] * self.total_rows
        running = 0
        for s, first, count in self._sources:
            base = self.seg_base[s] + first
            positions[base : base + count] = range(running, running + count)
            running += count
        return positions

    def locate_index(self, index: int) -> tuple[int, int]:
        """(segment number, local row) of store position ``index``."""
        if self.identity:
            row = index
        elif self.view is not None:  # read from the mapped view: no numpy
            row = self.view.view("perm")[index]
        else:
            row = int(self.perm[index])
        s = bisect_right(self.seg_base, row) - 1
        return s, row - self.seg_base[s]

    def locate(self, index: int) -> tuple[MappedSegment, int]:
        s, local = self.locate_index(index)
        return self.segments[s], local

    def logical_rows(self, s: int, local: np.ndarray) -> np.ndarray:
        """Store positions of segment ``s``'s local rows (-1 where superseded)."""
        concat = local + self.seg_base[s]
        return concat if self.identity else self.inverse[concat]

    def _gather(self, per_segment: list[np.ndarray]) -> np.ndarray:
        import numpy as np

        joined = np.concatenate(per_segment) if len(per_segment) != 1 else per_segment[0]
        return joined if self.identity else joined[self.perm]

    # -- StoreData ------------------------------------------------------------

    def embedding_rows(self) -> tuple[int, int]:
        return self.rows, self.dim

    @property
    def chunk_ids(self) -> Sequence[str]:
        if self.identity and len(self.segments) == 1:
            return self.segments[0].chunk_ids()
        return _LogicalIds(self)

    @cached_property
    def doc_len(self) -> np.ndarray:
        import numpy as np

        if not self.segments:
            return np.zeros(0, dtype=np.int64)
        return self._gather([seg.array("doc_len") for seg in self.segments])

    @cached_property
    def embeddings(self) -> np.ndarray:  # type: ignore[override]
        import numpy as np

        if not self.segments:
            return np.zeros((0, self.dim), dtype=np.float64)
        return self._gather([seg.dense_matrix() for seg in self.segments])

    def column_sums(self, dims: Sequence[int], weights: Sequence[float]) -> np.ndarray:
        """:meth:`StoreData.column_sums`, touching only the stored (non-zero) cells of sparse segments.

        Each row's terms are added in the order of ``dims``, as in the dense
        form, and a cell a sparse segment does not store would add an exact
        zero, so the values are bit-identical.
        """
        import numpy as np

        values = np.zeros(self.total_rows, dtype=np.float64)
        for base, segment in zip(self.seg_base, self.segments, strict=True):
            if not segment.rows:
                continue
            if segment.sparse:
                ptr = segment.view("csc_ptr")
                row_ids = segment.array("csc_row")
                cells = segment.array("csc_val")
                target = values[base : base + segment.rows]
                for j, weight in zip(dims, weights, strict=True):
                    if j < segment.dim:
                        lo, hi = ptr[j], ptr[j + 1]
                        target[row_ids[lo:hi]] += cells[lo:hi] * weight
            else:
                dense = segment.dense_matrix()
                for j, weight in zip(dims, weights, strict=True):
                    if j < segment.dim:
                        values[base : base + segment.rows] += dense[:, j] * weight
        return values if self.identity else values[self.perm]

    def vector_rows(self, rows: np.ndarray) -> np.ndarray:
        import numpy as np

        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros((len(rows), self.dim), dtype=np.float64)
        concat = rows if self.identity else self.perm[rows]
        owner = np.searchsorted(np.asarray(self.seg_base, dtype=np.int64), concat, side="right") - 1
        for s in np.unique(owner).tolist():
            mask = owner == s
            out[mask] = self.segments[s].dense_rows(concat[mask] - self.seg_base[s])
        return out

    @cached_property
    def bm25_source(self) -> Bm25Source:
        return _SegmentPostings(self)

    def damaged_segments(self, thorough: bool = False) -> list[str]:
        """Names of segments whose bytes no longer hash as the manifest recorded.

        A segment is written before the manifest that names it, so one modified
        since carries a newer time than the manifest: only those are hashed,
        unless ``thorough`` (``cce doctor``) hashes them all.
        """
        from cce_core.indexing.fingerprint import file_sha256

        try:
            manifest_mtime = self.path.stat().st_mtime_ns if self.path is not None else 0
        except OSError:
            manifest_mtime = 0
        damaged: list[str] = []
        for segment, ref in zip(self.segments, self.refs, strict=True):
            try:
                if not thorough and segment.path.stat().st_mtime_ns <= manifest_mtime:
                    continue
                if file_sha256(segment.path) != ref.sha256:
                    damaged.append(ref.name)
            except OSError:
                damaged.append(ref.name)
        if self.view is not None and self.view_ref is not None:
            try:
                if (thorough or self.view.path.stat().st_mtime_ns > manifest_mtime) and \
                        file_sha256(self.view.path) != self.view_ref.sha256:
                    damaged.append(self.view_ref.name)
            except OSError:
                damaged.append(self.view_ref.name)
        return damaged

    @cached_property
    def bm25(self) -> Bm25Arrays:  # type: ignore[override]
        """The postings of the whole store as one set of arrays (built; kernels read ``bm25_source``)."""
        return merged_bm25(self)

    @cached_property
    def vocab(self) -> list[str]:
        return list(self.bm25.vocab)


def apply_segments(live: LiveFiles, segments: Sequence[MappedSegment], start: int, path: Path | None) -> None:
    """Apply ``segments[start:]`` in order to ``live``: removals, refreshed metadata, then their files."""
    for s in range(start, len(segments)):
        segment = segments[s]
        for removed in segment.removes:
            live.pop(removed, None)
        for restat_path, (size, mtime_ns) in segment.restat.items():
            if restat_path in live:
                owner, entry = live[restat_path]
                live[restat_path] = (owner, FileEntry(entry.path, entry.sha256, entry.tokens, entry.first_chunk,
                                                      entry.chunk_count, entry.imports, size, mtime_ns))
        for f in segment.files:
            if f.first_chunk < 0 or f.chunk_count < 0 or f.first_chunk + f.chunk_count > segment.rows:
                raise CceError(f"the index at {path} is corrupt (a file's chunks lie outside its segment) — "
                               "re-run `cce index` to rebuild it")
            live[f.path] = (s, f)


def live_after(store_path: Path, previous: SegmentedStore, refs: Sequence[SegmentRef],
               live_before: LiveTable | None = None) -> tuple[list[MappedSegment], LiveTable]:
    """The segments ``refs`` name (``previous``'s, a prefix of them, plus new ones) and their live files.

    Seeded with ``previous``'s live files as columns (``live_before`` when the
    caller read them already), so only the new segments' tables are read and
    the unchanged rows are kept as they are: the cost follows the live
    files' bytes, not the number of segments or of Python objects.
    """
    directory = segments_dir(store_path)
    if [r.name for r in refs[: len(previous.refs)]] != [r.name for r in previous.refs]:
        raise ValueError("the new segments do not extend the previous store")
    segments = list(previous.segments) + [MappedSegment(directory / r.name) for r in refs[len(previous.refs):]]
    table = live_before if live_before is not None else previous.live_table()
    for s in range(len(previous.segments), len(segments)):
        table = table.apply(segments[s], s, store_path)
    return segments, table


def save_table_view(store_path: Path, table: LiveTable, refs: Sequence[SegmentRef]) -> ViewRef:
    """Write the live view of the store ``refs`` will name, whose live files are ``table``."""
    seg_base: list[int] = []
    total = 0
    for ref in refs:
        seg_base.append(total)
        total += ref.rows
    try:
        return save_view(table, seg_base, total, segments_dir(store_path))
    except OSError as exc:
        raise CceError(f"could not write the store {store_path}: {exc.strerror or exc}") from exc


def save_live_view(store_path: Path, previous: SegmentedStore, refs: Sequence[SegmentRef],
                   live_before: LiveTable | None = None) -> ViewRef:
    """Write the view of the store ``refs`` will name: ``previous``'s segments (a prefix of them) plus new ones.

    The table is :func:`live_after`'s; its unchanged runs of rows are written as byte ranges.
    """
    _segments, table = live_after(store_path, previous, refs, live_before)
    return save_table_view(store_path, table, refs)


def merged_bm25(store: SegmentedStore) -> Bm25Arrays:
    """One sorted vocabulary and postings over the store's live chunks (what a fresh build would hold)."""
    import numpy as np

    terms_parts: list[np.ndarray] = []
    docs_parts: list[np.ndarray] = []
    tfs_parts: list[np.ndarray] = []
    vocab_parts: list[list[str]] = []
    for s, segment in enumerate(store.segments):
        vocab = list(segment.vocab())
        ptr = segment.array("bm25_ptr")
        local_docs = segment.array("bm25_docs").astype(np.int64)
        logical = store.logical_rows(s, local_docs)
        term_of = np.repeat(np.arange(len(vocab), dtype=np.int64), np.diff(ptr))
        keep = logical >= 0
        vocab_parts.append(vocab)
        terms_parts.append(term_of[keep])
        docs_parts.append(logical[keep])
        tfs_parts.append(segment.array("bm25_tfs")[keep])
    union = sorted(set().union(*vocab_parts)) if vocab_parts else []
    index = {t: i for i, t in enumerate(union)}
    global_terms = [np.fromiter((index[t] for t in v), dtype=np.int64, count=len(v))[t_ids] if len(v) else t_ids
                    for v, t_ids in zip(vocab_parts, terms_parts, strict=True)]
    terms = np.concatenate(global_terms) if global_terms else np.zeros(0, dtype=np.int64)
    docs = np.concatenate(docs_parts) if docs_parts else np.zeros(0, dtype=np.int64)
    tfs = np.concatenate(tfs_parts) if tfs_parts else np.zeros(0, dtype=np.int32)
    present = np.zeros(len(union), dtype=bool)
    present[terms] = True
    if not present.all():  # terms whose every chunk was superseded
        renumber = np.cumsum(present) - 1
        union = [t for t, p in zip(union, present.tolist(), strict=True) if p]
        terms = renumber[terms]
    order = np.lexsort((docs, terms))
    ptr = np.zeros(len(union) + 1, dtype=np.int64)
    np.cumsum(np.bincount(terms, minlength=len(union)), out=ptr[1:])
    return Bm25Arrays(union, ptr, docs[order].astype(np.int32), tfs[order].astype(np.int32), store.doc_len)


@dataclass
class OpenedManifest:
    """A manifest read from disk with its segments mapped (and its live view, when one is recorded)."""

    meta: dict[str, Any]
    segments: list[MappedSegment]
    refs: list[SegmentRef]
    size: int
    ordered: bool
    view: MappedView | None
    view_ref: ViewRef | None


def open_segments(path: Path, use_view: bool = True, opened: Sequence[MappedSegment] = ()) -> OpenedManifest:
    """The manifest's metadata, its mapped segments and their references, the store's size, order flag and view.

    ``opened``: segments this process mapped already (a writer reopening the store it just
    extended); one the manifest names by the same path is used as it is, not mapped and checked again.
    """
    header = _read_manifest(path)
    named = str(header.get("segments_dir") or segments_dir(path).name)
    if "/" in named or "\\" in named or named in (".", ".."):
        raise ValueError(f"segment folder {named!r} is not a plain folder name")
    directory = path.parent / named
    refs = [SegmentRef(str(s["name"]), str(s["sha256"]), int(s["bytes"]), int(s["rows"])) for s in header["segments"]]
    segments: list[MappedSegment] = []
    mapped = {segment.path: segment for segment in opened}
    for ref in refs:
        if "/" in ref.name or "\\" in ref.name or ref.name.startswith("."):
            raise ValueError(f"segment name {ref.name!r} is not a plain file name")
        # A segment's name is its content's hash: one mapped earlier holds the same bytes.
        segment = mapped.get(directory / ref.name) or MappedSegment(directory / ref.name)
        if segment.size != ref.bytes or segment.rows != ref.rows:
            raise ValueError(f"segment {ref.name} does not match the manifest")
        segments.append(segment)
    ordered = header.get("ordered") is True
    view: MappedView | None = None
    view_ref: ViewRef | None = None
    if use_view and not ordered and isinstance(header.get("view"), dict):
        v = header["view"]
        view_ref = ViewRef(str(v["name"]), str(v["sha256"]), int(v["bytes"]))
        if "/" in view_ref.name or "\\" in view_ref.name or view_ref.name.startswith("."):
            raise ValueError(f"view name {view_ref.name!r} is not a plain file name")
        try:
            view = MappedView(directory / view_ref.name, len(segments), sum(s.rows for s in segments))
            if view.size != view_ref.bytes:
                raise CceError(f"live view {view_ref.name} does not match the manifest")
        except CceError as exc:
            if "No such file" in str(exc):
                raise  # a writer's clean-up raced this read: load_store reads the manifest again
            # (and after that, does without the view)
            # The view only saves work: the segments are the store, and are resolved instead.
            view, view_ref = None, None
    size = path.stat().st_size + sum(r.bytes for r in refs) + (view_ref.bytes if view_ref is not None else 0)
    return OpenedManifest(dict(header.get("meta", {})), segments, refs, size, ordered, view, view_ref)


def load_store(path: str | os.PathLike[str], opened: Sequence[MappedSegment] = ()) -> SegmentedStore:
    """The store whose manifest is ``path`` (``opened``: segments already mapped, see :func:`open_segments`)."""
    p = Path(path)
    if not p.is_file():
        raise CceError(f"no index at {p} — run `cce index <dir>` first")
    for attempt in range(_OPEN_ATTEMPTS):
        try:
            # The last attempt does without the live view: a view gone for good (not a race)
            # only costs the resolution it would have saved.
            manifest = open_segments(p, use_view=attempt + 1 < _OPEN_ATTEMPTS, opened=opened)
            return SegmentedStore(manifest.meta, manifest.segments, manifest.refs, p, manifest.size, manifest.ordered,
                                  manifest.view, manifest.view_ref)
        except CceError as exc:
            # A segment removed between reading the manifest and opening it: a writer committed
            # a newer manifest meanwhile; read that one.
            if attempt + 1 < _OPEN_ATTEMPTS and "No such file" in str(exc):
                continue
            raise
        except (OSError, ValueError, KeyError, TypeError, IndexError, struct.error, RecursionError) as exc:
            raise CceError(f"the index at {p} is unreadable or corrupt ({exc}) — re-run `cce index` to rebuild "
                           "it") from exc
    raise CceError(f"the index at {p} kept changing while it was read — try again")  # pragma: no cover

"""One immutable piece of a store: the chunks, vectors and postings of some files.

A store (see :mod:`cce_core.indexing.store`) is a small manifest naming a list
of segments. A fresh index writes a segment per batch of files, so no run ever
holds the whole corpus in memory; a re-index writes one segment with only the
files that changed, plus the paths it supersedes in older segments. Segments
are never modified after they are written, which is what makes a killed
writer harmless: the previous manifest still names intact files.

Layout: an 8-byte magic, a little-endian u64 header length, a JSON header,
then 8-byte-aligned binary sections. Everything a search touches is binary
and mapped, never parsed as a whole: chunk ids and texts are UTF-8 blobs with
offsets, the sorted BM25 vocabulary is a blob searched by bisection, and
integer columns are arrays. Vectors are stored dense (float64 rows) or, when
at most a quarter of the cells are non-zero — the hash embedder fills about
one bucket in ten — column-wise sparse (CSC: per dimension the rows and exact
float64 values), which is both smaller and what a sparse query reads.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import join_in_slices
from cce_core.indexing.chunk import Chunk

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

SEGMENT_MAGIC = b"CCEPYSG\x01"
SEGMENT_FORMAT = "cce-python-segment/1"
_ALIGN = 8
# A fresh index (and a compaction) writes a segment per batch of about this much source
# text, so memory follows a batch, not the corpus.
BATCH_BYTES = 16 << 20
# Stored column-wise sparse when at most this share of the vector cells is non-zero.
SPARSE_MAX_DENSITY = 0.25
# Chunk texts are zlib-compressed in blocks of this many chunks. Nested chunks (a class and
# its methods) repeat text that zlib finds within a block: measured on rails, blocks of 16
# compress 4.5x (chunk by chunk: 2.8x) and decompress in about 30 us.
CONTENT_BLOCK_CHUNKS = 16
CONTENT_ZLIB_LEVEL = 1
# struct/memoryview codes of the little-endian dtypes the writer uses.
_VIEW_CODES: dict[str, Literal["d", "q", "i"]] = {"<f8": "d", "<i8": "q", "<i4": "i"}
_ITEM_SIZE = {"d": 8, "q": 8, "i": 4}
_T = TypeVar("_T")


@dataclass
class FileEntry:
    path: str
    sha256: str
    tokens: int  # cce.tokens/v1 of the whole (redacted) file: the "read the file" baseline
    first_chunk: int
    chunk_count: int
    imports: list[str]
    # The file's size and modification time when it was read: a re-index trusts an
    # unchanged pair without reading the file (0, 0 when unknown, e.g. after a pull).
    size: int = 0
    mtime_ns: int = 0
    # The file's symbols as cce_core.symbols.model encodes them (b"": none), carried from the chunker
    # to the writer; None when not known (a pulled store, a table read back: see symbol_payload).
    symbols: bytes | None = field(default=None, compare=False, repr=False)


@dataclass
class Bm25Arrays:
    vocab: Sequence[str]  # sorted
    ptr: np.ndarray  # int64, len(vocab) + 1
    docs: np.ndarray  # int32 doc ids, grouped per term, ascending
    tfs: np.ndarray  # int32 term frequencies aligned with docs
    doc_len: np.ndarray  # int64 tokens per chunk


@dataclass
class SegmentParts:
    """What one segment holds, in memory, ready to be written."""

    chunks: Sequence[Chunk]
    embeddings: np.ndarray  # rows x dim float64
    files: list[FileEntry]  # first_chunk is local to the segment
    bm25: Bm25Arrays
    removes: list[str]  # paths this segment supersedes in older segments
    edges: list[tuple[str, str]] | None  # the whole store's import edges, when this segment carries them
    # path -> (size, mtime_ns): newer metadata for older segments' files whose bytes did not change
    restat: dict[str, tuple[int, int]] | None = None
    # The vector sections, when the caller built them already (a compaction merging sparse columns).
    vectors: tuple[str, list[tuple[str, bytes | memoryview, str]]] | None = None


# -- writing ---------------------------------------------------------------


def _pad(n: int) -> int:
    return (-n) % _ALIGN


def _raw(array: Any, dtype: str) -> memoryview:
    """The little-endian bytes of ``array`` without a copy when it already has that layout."""
    import numpy as np

    contiguous = np.ascontiguousarray(array, dtype=dtype)
    return contiguous.data.cast("B") if contiguous.size else memoryview(b"")


def _blob(strings: Sequence[str]) -> tuple[bytes, bytes]:
    """UTF-8 blob and int64 offsets (len + 1) of ``strings``."""
    import numpy as np

    n = len(strings)
    ptr = np.zeros(n + 1, dtype="<i8")
    if not n:
        return b"", ptr.tobytes()
    if all(map(str.isascii, strings)):  # ids, tokens, most paths: one join, and lengths are byte lengths
        np.cumsum(np.fromiter(map(len, strings), dtype=np.int64, count=n), out=ptr[1:])
        return "".join(strings).encode("ascii"), ptr.tobytes()
    encoded = [s.encode("utf-8") for s in strings]
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=n), out=ptr[1:])
    return join_in_slices(encoded), ptr.tobytes()


def file_columns(files: Sequence[FileEntry], firsts: Any = None) -> list[tuple[str, bytes, str]]:
    """The whole file table as binary columns: what opening a store reads instead of parsing JSON.

    Paths and hashes are UTF-8 blobs with offsets; each file's imports are a
    run (``file_import_ptr``) of a third blob's strings. ``file_first`` is
    local to whatever holds the table (a segment, or the store for a view);
    ``firsts`` (an int32 array) replaces the entries' own first chunks.
    """
    import numpy as np

    n = len(files)
    paths_blob, paths_ptr = _blob([f.path for f in files])
    sha_blob, sha_ptr = _blob([f.sha256 for f in files])
    imports = [i for f in files for i in f.imports]
    import_blob, import_ptr = _blob(imports)
    per_file = np.zeros(n + 1, dtype="<i8")
    if n:
        np.cumsum([len(f.imports) for f in files], out=per_file[1:])

    def column(values: Iterable[int], dtype: str) -> bytes:
        return np.fromiter(values, dtype=dtype, count=n).tobytes()

    return [("file_path", paths_blob, "utf-8"), ("file_path_ptr", paths_ptr, "<i8"),
            ("file_first", column((f.first_chunk for f in files), "<i4") if firsts is None else
             np.asarray(firsts, dtype="<i4").tobytes(), "<i4"),
            ("file_count", column((f.chunk_count for f in files), "<i4"), "<i4"),
            ("file_tokens", column((f.tokens for f in files), "<i8"), "<i8"),
            ("file_sha", sha_blob, "utf-8"), ("file_sha_ptr", sha_ptr, "<i8"),
            ("file_size", column((f.size for f in files), "<i8"), "<i8"),
            ("file_mtime", column((f.mtime_ns for f in files), "<i8"), "<i8"),
            ("file_import_ptr", per_file.tobytes(), "<i8"),
            ("import", import_blob, "utf-8"), ("import_ptr", import_ptr, "<i8")]


FILE_COLUMNS = ("file_first", "file_count", "file_tokens", "file_size", "file_mtime")


def check_file_columns(n_files: int, view: Any, raw: Any) -> None:
    """Raise ValueError unless the binary file columns (as ``view``/``raw`` read them) hold ``n_files`` rows."""
    if any(len(view(name)) != n_files for name in FILE_COLUMNS) or len(view("file_sha_ptr")) != n_files + 1 or \
            len(view("file_import_ptr")) != n_files + 1:
        raise ValueError("the file columns disagree")
    n_imports = len(view("import_ptr")) - 1
    if n_imports < 0 or view("file_import_ptr")[n_files] != n_imports or \
            view("import_ptr")[n_imports] > len(raw("import")) or \
            view("file_sha_ptr")[n_files] > len(raw("file_sha")) or \
            view("file_path_ptr")[n_files] > len(raw("file_path")):
        raise ValueError("the file columns disagree")


def read_file_columns(view: Any, raw: Any, base: int = 0, paths: Sequence[str] | None = None) -> list[FileEntry]:
    """The file table written by :func:`file_columns`, each first chunk shifted by ``base``."""
    names = list(paths) if paths is not None else BlobStrings(raw("file_path"), view("file_path_ptr")).to_list()
    shas = BlobStrings(raw("file_sha"), view("file_sha_ptr")).to_list()
    imports = BlobStrings(raw("import"), view("import_ptr")).to_list()
    per_file = view("file_import_ptr").tolist()
    first, count, tokens = view("file_first").tolist(), view("file_count").tolist(), view("file_tokens").tolist()
    size, mtime = view("file_size").tolist(), view("file_mtime").tolist()
    return [FileEntry(names[i], shas[i], tokens[i], base + first[i], count[i], imports[per_file[i]:per_file[i + 1]],
                      size[i], mtime[i]) for i in range(len(names))]


class _ContentBlocks:
    """Chunk texts zlib-compressed ``CONTENT_BLOCK_CHUNKS`` at a time, by whichever threads call :meth:`work`.

    The texts are encoded in one call and each block is a slice of that one
    buffer, so a block costs its holder the GIL only to claim it: zlib runs
    without it. Each block is compressed on its own (as a reader decompresses
    it), so the bytes do not depend on which thread took which block.
    """

    def __init__(self, strings: Sequence[str]) -> None:
        import threading

        import numpy as np

        n = len(strings)
        # All-ASCII texts are joined as text (one copy, and lengths are byte lengths); others are encoded one
        # by one (str.join over mixed-width strings and encoding the result cost twice as much).
        if all(map(str.isascii, strings)):
            text = "".join(strings).encode("ascii")
            sizes = np.fromiter(map(len, strings), dtype=np.int64, count=n)
        else:
            encoded = [s.encode("utf-8") for s in strings]
            text = join_in_slices(encoded)
            sizes = np.fromiter(map(len, encoded), dtype=np.int64, count=n)
        self.ptr = np.zeros(n + 1, dtype="<i8")
        if n:
            np.cumsum(sizes, out=self.ptr[1:])
        self._text = memoryview(text)
        self._bounds: list[int] = self.ptr[::CONTENT_BLOCK_CHUNKS].tolist()
        if n % CONTENT_BLOCK_CHUNKS:
            self._bounds.append(int(self.ptr[n]))
        self._blocks: list[bytes] = [b""] * (len(self._bounds) - 1)
        self._next = 0
        self._claim = threading.Lock()

    def work(self) -> None:
        """Compress blocks no thread has taken yet, until none is left."""
        import zlib

        text, bounds, blocks, claim = self._text, self._bounds, self._blocks, self._claim
        while True:
            with claim:
                b = self._next
                self._next += 1
            if b >= len(blocks):
                return
            blocks[b] = zlib.compress(text[bounds[b] : bounds[b + 1]], CONTENT_ZLIB_LEVEL)

    def result(self) -> tuple[bytes, bytes, bytes]:
        """(zlib blocks, int64 block offsets, int64 text offsets); only once every :meth:`work` call returned."""
        import numpy as np

        block_ptr = np.zeros(len(self._blocks) + 1, dtype="<i8")
        if self._blocks:
            np.cumsum(np.fromiter(map(len, self._blocks), dtype=np.int64, count=len(self._blocks)), out=block_ptr[1:])
        return b"".join(self._blocks), block_ptr.tobytes(), self.ptr.tobytes()


def _compressed_blob(strings: Sequence[str]) -> tuple[bytes, bytes, bytes]:
    """(zlib blocks, int64 block offsets, int64 offsets of each string in the uncompressed text).

    One block per ``CONTENT_BLOCK_CHUNKS`` strings, all in this thread; a pool
    splitting the blocks was measured slower (hundreds of small blocks). What
    pays is running it beside the other work (:class:`CompressingChunks`).
    """
    blocks = _ContentBlocks(strings)
    blocks.work()
    return blocks.result()


class _InThread(Generic[_T]):
    """``work()`` run in a helper thread (zlib, hashlib: work that releases the GIL); :meth:`result` waits for it."""

    def __init__(self, work: Callable[[], _T], name: str = "cce-compress") -> None:
        import threading

        self._result: tuple[_T] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), name=name, daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], _T]) -> None:
        try:
            self._result = (work(),)
        except BaseException as exc:  # handed to the thread that asks for the result
            self._error = exc

    def result(self) -> _T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result[0]


class _SharedCompression:
    """:func:`_compressed_blob` of some texts, started in a helper thread; :meth:`result` helps it finish.

    The helper thread shares the GIL with the caller, which keeps it for its
    own numpy and Python work, so the compression can still be running when
    the caller needs it: the caller then compresses the blocks left, beside
    the helper, instead of waiting for it.
    """

    def __init__(self, strings: list[str]) -> None:
        import threading

        self._blocks: _ContentBlocks | None = None
        self._ready = threading.Event()  # the blocks exist (or their making failed): the caller may help
        self._helper = _InThread(lambda: self._run(strings))

    def _run(self, strings: list[str]) -> None:
        try:
            self._blocks = _ContentBlocks(strings)
        finally:
            self._ready.set()
        self._blocks.work()

    def result(self) -> tuple[bytes, bytes, bytes]:
        self._ready.wait()
        if self._blocks is not None:
            self._blocks.work()
        self._helper.result()  # joins the helper; its error, if any, is raised here
        assert self._blocks is not None
        return self._blocks.result()


class CompressingChunks(list[Chunk]):
    """A batch's chunks whose texts are already being compressed for its segment, in a helper thread.

    zlib releases the GIL, and when a batch's chunks are known the chunking
    workers are done: compressing while this process computes the vectors,
    the postings and the other sections takes the compression (half of a
    segment's serialization) off the serial tail of an index. The bytes are
    those :func:`_compressed_blob` gives. The list must not change after it is
    made; :func:`serialize_segment` falls back to compressing again if its
    length did.
    """

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        super().__init__(chunks)
        self._rows = len(self)
        self._content = _SharedCompression([c.content for c in self]) if self._rows else None

    def compressed_content(self) -> tuple[bytes, bytes, bytes] | None:
        """The (blocks, block offsets, text offsets) of :func:`_compressed_blob`; None if the list changed."""
        if self._content is None or len(self) != self._rows:
            return None
        return self._content.result()


def _edge_sections(edges: list[tuple[str, str]] | None) -> list[tuple[str, bytes | memoryview, str]]:
    """The import graph as two aligned path blobs sorted by (importer, imported), plus the order by imported.

    A search asks for the neighbours of two or three files: both lookups are
    bisections in the mapped blobs, and nothing is parsed.
    """
    import numpy as np

    pairs = sorted(edges or [])
    from_blob, from_ptr = _blob([a for a, _b in pairs])
    to_blob, to_ptr = _blob([b for _a, b in pairs])
    by_to = sorted(range(len(pairs)), key=lambda i: (pairs[i][1], pairs[i][0]))
    return [("edge_from", from_blob, "utf-8"), ("edge_from_ptr", from_ptr, "<i8"),
            ("edge_to", to_blob, "utf-8"), ("edge_to_ptr", to_ptr, "<i8"),
            ("edge_by_to", np.asarray(by_to, dtype="<i4").tobytes(), "<i4")]


def _symbol_sections(files: Sequence[FileEntry]) -> _InThread[list[tuple[str, bytes | memoryview, str]]]:
    """Every file's symbol record, zlib-compressed as one blob with per-file offsets; none when no file has one.

    Compressed in a helper thread (zlib releases the GIL) while the caller
    builds the other sections: on zod it is a tenth of a segment's serialization.
    """
    records = [f.symbols for f in files]

    def sections() -> list[tuple[str, bytes | memoryview, str]]:
        if all(r is None for r in records):
            return []
        import zlib

        import numpy as np

        present = [r or b"" for r in records]
        ptr = np.zeros(len(present) + 1, dtype="<i8")
        if present:
            np.cumsum([len(r) for r in present], out=ptr[1:])
        return [("symbols_z", zlib.compress(b"".join(present), CONTENT_ZLIB_LEVEL), "zlib"),
                ("symbols_ptr", ptr.tobytes(), "<i8")]

    return _InThread(sections)


def _codes(values: Sequence[str]) -> tuple[list[str], bytes]:
    """A small string table and each value's index into it (int32)."""
    import numpy as np

    table = sorted(set(values))
    index = {v: i for i, v in enumerate(table)}
    return table, np.fromiter(map(index.__getitem__, values), dtype="<i4", count=len(values)).tobytes()


def vector_sections(embeddings: np.ndarray) -> tuple[str, list[tuple[str, bytes | memoryview, str]]]:
    """("dense" | "sparse", sections) for a rows x dim float64 matrix."""
    import numpy as np

    matrix = np.asarray(embeddings, dtype=np.float64)
    rows = matrix.shape[0]
    dim = matrix.shape[1] if matrix.ndim == 2 else 0
    if rows and dim:
        # The non-zero cells in row-major order (a pass over the contiguous matrix; walking its
        # transpose costs twice as much), then stably by column: each dimension's rows ascending,
        # as a column pass reads them. A stable sort of 16-bit keys is a radix sort.
        cells = matrix.ravel()
        nonzero = np.flatnonzero(cells)
        if nonzero.size <= SPARSE_MAX_DENSITY * rows * dim:
            cols = nonzero % dim
            nonzero = nonzero[np.argsort(cols.astype(np.uint16) if dim <= 1 << 16 else cols, kind="stable")]
            ptr = np.zeros(dim + 1, dtype="<i8")
            np.cumsum(np.bincount(cols, minlength=dim), out=ptr[1:])
            return "sparse", [("csc_ptr", ptr.tobytes(), "<i8"), ("csc_row", _raw(nonzero // dim, "<i4"), "<i4"),
                              ("csc_val", _raw(cells[nonzero], "<f8"), "<f8")]
    return "dense", [("vectors", _raw(matrix, "<f8"), "<f8")]


def serialize_segment(parts: SegmentParts) -> list[bytes | memoryview]:
    """The segment file as a list of byte strings, in order (written one after another, never joined)."""
    chunks = parts.chunks
    symbols = _symbol_sections(parts.files)  # compressing while the sections below are built
    file_index = {f.path: i for i, f in enumerate(parts.files)}
    import numpy as np

    ids_blob, ids_ptr = _blob(list(map(attrgetter("chunk_id"), chunks)))
    type_table, type_codes = _codes(list(map(attrgetter("chunk_type"), chunks)))
    kind_table, kind_codes = _codes(list(map(attrgetter("kind"), chunks)))
    lang_table, lang_codes = _codes(list(map(attrgetter("language"), chunks)))
    vocab_blob, vocab_ptr = _blob(list(parts.bm25.vocab))

    def ints(values: Any) -> bytes:
        return np.fromiter(values, dtype="<i4", count=len(chunks)).tobytes()

    files = [{"path": f.path, "sha256": f.sha256, "tokens": f.tokens, "first": f.first_chunk, "count": f.chunk_count,
              "imports": f.imports, "size": f.size, "mtime_ns": f.mtime_ns} for f in parts.files]
    # The file table also as binary columns, so opening a store never has to parse the JSON
    # (kept for readers that predate the columns).
    rows = len(chunks)
    dim = int(parts.embeddings.shape[1]) if parts.embeddings.ndim == 2 else 0
    if parts.vectors is not None:
        layout, vectors = parts.vectors
    elif rows:
        layout, vectors = vector_sections(parts.embeddings)
    else:
        layout, vectors = "dense", [("vectors", b"", "<f8")]

    def js(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    head: list[tuple[str, bytes | memoryview, str]] = [
        ("chunk_id", ids_blob, "utf-8"), ("chunk_id_ptr", ids_ptr, "<i8"),
        ("file", ints(map(file_index.__getitem__, map(attrgetter("file_path"), chunks))), "<i4"),
        ("start_line", ints(map(attrgetter("start_line"), chunks)), "<i4"),
        ("end_line", ints(map(attrgetter("end_line"), chunks)), "<i4"),
        ("token_count", ints(map(attrgetter("token_count"), chunks)), "<i4"),
        ("chunk_type", type_codes, "<i4"), ("kind", kind_codes, "<i4"), ("language", lang_codes, "<i4"),
    ]
    tail: list[tuple[str, bytes | memoryview, str]] = [
        *vectors,
        ("vocab", vocab_blob, "utf-8"), ("vocab_ptr", vocab_ptr, "<i8"),
        ("bm25_ptr", _raw(parts.bm25.ptr, "<i8"), "<i8"),
        ("bm25_docs", _raw(parts.bm25.docs, "<i4"), "<i4"),
        ("bm25_tfs", _raw(parts.bm25.tfs, "<i4"), "<i4"),
        ("doc_len", _raw(parts.bm25.doc_len, "<i8"), "<i8"),
        *file_columns(parts.files),
        ("files", js(files), "json"),
        ("removes", js(sorted(parts.removes)), "json"),
        ("restat", js({k: list(v) for k, v in sorted((parts.restat or {}).items())}), "json"),
        *_edge_sections(parts.edges),
    ]
    # Asked for last: texts compressed in a helper thread (CompressingChunks) had every other section's time,
    # and this thread compresses what is left of them beside it; then the symbols (already done, as a rule).
    compressed = chunks.compressed_content() if isinstance(chunks, CompressingChunks) else None
    content_z, content_block_ptr, content_ptr = compressed or _compressed_blob([c.content for c in chunks])
    tail.extend(symbols.result())
    blobs = [*head, ("content_z", content_z, "zlib"), ("content_block_ptr", content_block_ptr, "<i8"),
             ("content_ptr", content_ptr, "<i8"), *tail]
    sections: dict[str, Any] = {}
    offset = 0
    for name, blob, dtype in blobs:
        sections[name] = {"dtype": dtype, "offset": offset, "length": len(blob)}
        offset += len(blob) + _pad(len(blob))
    header = json.dumps({"format": SEGMENT_FORMAT, "rows": rows, "dim": dim, "vectors": layout,
                         "edges": parts.edges is not None,
                         "strings": {"chunk_type": type_table, "kind": kind_table, "language": lang_table},
                         "sections": sections}, ensure_ascii=False, sort_keys=True).encode("utf-8")
    header += b" " * _pad(len(SEGMENT_MAGIC) + 8 + len(header))
    out: list[bytes | memoryview] = [SEGMENT_MAGIC + struct.pack("<Q", len(header)) + header]
    for _name, blob, _dtype in blobs:
        out.append(blob)
        if _pad(len(blob)):
            out.append(b"\0" * _pad(len(blob)))
    return out


# -- reading ---------------------------------------------------------------


class LazyStrings(Sequence[str]):
    """A sequence of strings made on demand by ``_item``; slices and negative indices are handled here."""

    def __len__(self) -> int:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def _item(self, index: int) -> str:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._item(index)


class BlobStrings(LazyStrings):
    """Strings kept as one UTF-8 blob and offsets, each decoded when asked for (bisectable)."""

    def __init__(self, blob: memoryview, ptr: memoryview) -> None:
        self._blob, self._ptr = blob, ptr

    def __len__(self) -> int:
        return len(self._ptr) - 1

    def _item(self, index: int) -> str:
        return str(self._blob[self._ptr[index] : self._ptr[index + 1]], "utf-8")

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_list())

    def to_list(self) -> list[str]:
        """Every string, decoded in one pass (an ASCII blob is sliced as text: byte and character offsets agree)."""
        raw = bytes(self._blob)
        ptr = self._ptr.tolist()
        text = raw.decode("utf-8")
        if len(text) == len(raw):
            return [text[a:b] for a, b in pairwise(ptr)]
        return [raw[a:b].decode("utf-8") for a, b in pairwise(ptr)]

    def find(self, value: str) -> int:
        """Position of ``value`` in this sorted sequence, or -1."""
        pos = bisect_left(self, value)
        return pos if pos < len(self) and self[pos] == value else -1


class _Reordered(Sequence[str]):
    """``items`` seen in the order ``order`` gives (for bisecting a blob by another sort key)."""

    def __init__(self, items: Sequence[str], order: memoryview) -> None:
        self._items, self._order = items, order

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, index: Any) -> Any:
        return self._items[self._order[index]]


class CompressedTexts(LazyStrings):
    """Chunk texts kept as zlib blocks; a block is decompressed when one of its texts is read (last few kept)."""

    _KEEP = 64

    def __init__(self, blocks: memoryview, block_ptr: memoryview, ptr: memoryview) -> None:
        self._blocks, self._block_ptr, self._ptr = blocks, block_ptr, ptr
        self._cache: dict[int, bytes] = {}

    def __len__(self) -> int:
        return len(self._ptr) - 1

    def _block(self, b: int) -> bytes:
        import zlib

        data = self._cache.get(b)
        if data is None:
            try:
                data = zlib.decompress(self._blocks[self._block_ptr[b] : self._block_ptr[b + 1]])
            except zlib.error as exc:
                raise CceError(f"a block of chunk texts cannot be decompressed ({exc}) — re-run `cce index` to "
                               "rebuild the store") from None
            if len(self._cache) >= self._KEEP:
                self._cache.pop(next(iter(self._cache)))
            self._cache[b] = data
        return data

    def _item(self, index: int) -> str:
        b = index // CONTENT_BLOCK_CHUNKS
        origin = self._ptr[b * CONTENT_BLOCK_CHUNKS]
        data = self._block(b)
        start, end = self._ptr[index] - origin, self._ptr[index + 1] - origin
        if end > len(data):
            raise CceError("a block of chunk texts is shorter than its offsets say — re-run `cce index` to "
                           "rebuild the store")
        return data[start:end].decode("utf-8")


class MappedSegment:
    """A segment file, memory-mapped; sections become views or arrays only when asked for."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            with open(path, "rb") as fh:
                self.size = os.fstat(fh.fileno()).st_size
                buf: Any = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if self.size else b""
            if len(buf) < 16 or bytes(buf[:8]) != SEGMENT_MAGIC:
                raise ValueError("not a cce segment (bad magic)")
            (header_len,) = struct.unpack("<Q", buf[8:16])
            header = json.loads(bytes(buf[16 : 16 + header_len]).decode("utf-8"))
            if header.get("format") != SEGMENT_FORMAT:
                raise ValueError(f"unsupported segment format {header.get('format')!r}")
            self.buf = buf
            self.base = 16 + int(header_len)
            self.table: dict[str, Any] = header["sections"]
            self.rows = int(header["rows"])
            self.dim = int(header["dim"])
            self.sparse = header["vectors"] == "sparse"
            self.has_edges = header.get("edges") is True
            self.strings: dict[str, list[str]] = header["strings"]
            self._check()
        except CceError:
            raise
        except (OSError, ValueError, KeyError, TypeError, IndexError, struct.error, RecursionError) as exc:
            raise CceError(f"the index segment {path} is unreadable or corrupt ({exc}) — re-run `cce index` "
                           "to rebuild it") from exc

    # The JSON sections, parsed on first use: a search reads the binary file columns instead.

    @cached_property
    def files(self) -> list[FileEntry]:
        if "file_sha" in self.table:  # the binary columns: no JSON to parse
            return self.files_from(0)
        try:
            return [FileEntry(f["path"], f["sha256"], int(f["tokens"]), int(f["first"]), int(f["count"]),
                              list(f["imports"]), int(f.get("size", 0)), int(f.get("mtime_ns", 0)))
                    for f in self.json("files")]
        except (ValueError, KeyError, TypeError) as exc:
            raise self._corrupt(exc) from exc

    def files_from(self, base: int) -> list[FileEntry]:
        """The file table with every first chunk shifted by ``base`` (a store position)."""
        if "file_sha" not in self.table:
            return [FileEntry(f.path, f.sha256, f.tokens, base + f.first_chunk, f.chunk_count, f.imports, f.size,
                              f.mtime_ns) for f in self.files]
        return read_file_columns(self.view, self.raw, base, self._file_paths)

    @cached_property
    def removes(self) -> list[str]:
        try:
            return [str(p) for p in self.json("removes")]
        except (ValueError, TypeError) as exc:
            raise self._corrupt(exc) from exc

    @cached_property
    def restat(self) -> dict[str, tuple[int, int]]:
        try:
            return {str(k): (int(v[0]), int(v[1])) for k, v in self.json("restat").items()}
        except (ValueError, TypeError, AttributeError, IndexError) as exc:
            raise self._corrupt(exc) from exc

    @cached_property
    def edges(self) -> list[tuple[str, str]] | None:
        """The import graph this segment records (the whole store's at the time), or None."""
        if not self.has_edges:
            return None
        return list(zip(self._edge_from(), self._edge_to(), strict=True))

    def has_symbols(self) -> bool:
        """Whether this segment records its files' symbols (segments written before symbols, or pulled, do not)."""
        return "symbols_z" in self.table

    @cached_property
    def _symbol_records(self) -> tuple[bytes, list[int], dict[str, int]]:
        import zlib

        try:
            blob = zlib.decompress(bytes(self.raw("symbols_z")))
            ptr = self.view("symbols_ptr").tolist()
            paths = {path: i for i, path in enumerate(self._file_paths)}
            if len(ptr) != len(paths) + 1 or ptr[-1] != len(blob):
                raise ValueError("the symbol records disagree with the file table")
        except (zlib.error, ValueError) as exc:
            raise self._corrupt(exc) from exc
        return blob, ptr, paths

    def symbol_payload(self, path: str) -> bytes | None:
        """The encoded symbols of file ``path`` of this segment; None when the segment records none."""
        if not self.has_symbols():
            return None
        blob, ptr, paths = self._symbol_records
        i = paths.get(path)
        return None if i is None else blob[ptr[i]:ptr[i + 1]]

    def carries_edges(self) -> bool:
        """Whether this segment holds the store's import graph."""
        return self.has_edges

    def _edge_from(self) -> BlobStrings:
        return BlobStrings(self.raw("edge_from"), self.view("edge_from_ptr"))

    def _edge_to(self) -> BlobStrings:
        return BlobStrings(self.raw("edge_to"), self.view("edge_to_ptr"))

    def neighbours_of(self, files: Iterable[str]) -> dict[str, list[str]]:
        """Each file's neighbours in this segment's graph (files it imports or that import it), sorted."""
        from bisect import bisect_right

        sources, targets = self._edge_from(), self._edge_to()
        by_to = self.view("edge_by_to")
        targets_in_order = _Reordered(targets, by_to)
        out: dict[str, list[str]] = {}
        for f in files:
            found: set[str] = set()
            lo, hi = bisect_left(sources, f), bisect_right(sources, f)
            found.update(targets[i] for i in range(lo, hi))
            lo, hi = bisect_left(targets_in_order, f), bisect_right(targets_in_order, f)
            found.update(sources[by_to[i]] for i in range(lo, hi))
            if found:
                out[f] = sorted(found)
        return out

    def _corrupt(self, exc: Exception) -> CceError:
        return CceError(f"the index segment {self.path} is unreadable or corrupt ({exc}) — re-run `cce index` to "
                        "rebuild it")

    @cached_property
    def _file_paths(self) -> BlobStrings:
        return BlobStrings(self.raw("file_path"), self.view("file_path_ptr"))

    def file_paths(self) -> BlobStrings:
        return self._file_paths

    def raw(self, name: str) -> memoryview:
        info = self.table[name]
        start = self.base + int(info["offset"])
        end = start + int(info["length"])
        if end > len(self.buf):
            raise ValueError(f"section {name} runs past the end of the file")
        return memoryview(self.buf)[start:end]

    def view(self, name: str) -> memoryview:
        """A section as a flat typed memoryview (no copy, no numpy; made once per section)."""
        views = self.__dict__.setdefault("_views", {})
        found = views.get(name)
        if found is None:
            code = _VIEW_CODES[self.table[name]["dtype"]]
            raw = self.raw(name)
            found = views[name] = raw.cast(code) if len(raw) else memoryview(b"").cast(code)
        return found

    def array(self, name: str) -> np.ndarray:
        import numpy as np

        return np.frombuffer(self.raw(name), dtype=np.dtype(self.table[name]["dtype"]))

    def json(self, name: str) -> Any:
        # orjson parses straight from the mapped bytes, several times faster than json for
        # the file tables and edges a search reads at open.
        import orjson

        try:
            return orjson.loads(self.raw(name))
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"section {name} is not valid JSON ({exc})") from None

    def _check(self) -> None:
        """Every section lies inside the file, holds whole items and agrees with the row count."""
        for name, info in self.table.items():
            self.raw(name)
            size = _ITEM_SIZE.get(_VIEW_CODES.get(info["dtype"], ""), 1)
            if int(info["length"]) % size or int(info["offset"]) < 0:
                raise ValueError(f"section {name} is malformed")
        n = self.rows
        for name in ("file", "start_line", "end_line", "token_count", "chunk_type", "kind", "language"):
            if len(self.view(name)) != n:
                raise ValueError(f"section {name} does not match the row count")
        ptr = self.view("chunk_id_ptr")
        if len(ptr) != n + 1 or ptr[n] > len(self.raw("chunk_id")):
            raise ValueError("section chunk_id_ptr does not match its blob")
        blocks = -(-n // CONTENT_BLOCK_CHUNKS)
        block_ptr = self.view("content_block_ptr")
        if len(self.view("content_ptr")) != n + 1 or len(block_ptr) != blocks + 1 or \
                block_ptr[blocks] > len(self.raw("content_z")):
            raise ValueError("the chunk text sections disagree")
        if len(self.view("doc_len")) != n or len(self.view("bm25_docs")) != len(self.view("bm25_tfs")):
            raise ValueError("the BM25 sections do not match the row count")
        n_edges = len(self.view("edge_from_ptr")) - 1
        if n_edges < 0 or len(self.view("edge_to_ptr")) != n_edges + 1 or len(self.view("edge_by_to")) != n_edges or \
                self.view("edge_from_ptr")[n_edges] > len(self.raw("edge_from")) or \
                self.view("edge_to_ptr")[n_edges] > len(self.raw("edge_to")):
            raise ValueError("the edge sections disagree")
        n_files = len(self.view("file_path_ptr")) - 1
        if n_files < 0 or any(len(self.view(name)) != n_files for name in ("file_first", "file_count", "file_tokens")):
            raise ValueError("the file columns disagree")
        if "file_sha" in self.table:
            check_file_columns(n_files, self.view, self.raw)
        if n and max(self.view("file")) >= n_files:
            raise ValueError("a chunk points outside the file table")
        vptr = self.view("vocab_ptr")
        if len(self.view("bm25_ptr")) != len(vptr) or vptr[len(vptr) - 1] > len(self.raw("vocab")):
            raise ValueError("the vocabulary and the postings disagree")
        if self.sparse:
            cptr = self.view("csc_ptr")
            if len(cptr) != self.dim + 1 or cptr[self.dim] != len(self.view("csc_row")) or \
                    len(self.view("csc_row")) != len(self.view("csc_val")):
                raise ValueError("the sparse vector sections disagree")
        elif len(self.raw("vectors")) != n * self.dim * 8:
            raise ValueError("embedding rows do not match the chunk count")
        for name, table in self.strings.items():
            if not isinstance(table, list):
                raise ValueError(f"string table {name} is malformed")

    # -- typed accessors ---------------------------------------------------

    @cached_property
    def _chunk_ids(self) -> BlobStrings:
        return BlobStrings(self.raw("chunk_id"), self.view("chunk_id_ptr"))

    def chunk_ids(self) -> BlobStrings:
        return self._chunk_ids

    @cached_property
    def _contents(self) -> CompressedTexts:
        return CompressedTexts(self.raw("content_z"), self.view("content_block_ptr"), self.view("content_ptr"))

    def contents(self) -> CompressedTexts:
        return self._contents

    @cached_property
    def _vocab(self) -> BlobStrings:
        return BlobStrings(self.raw("vocab"), self.view("vocab_ptr"))

    def vocab(self) -> BlobStrings:
        return self._vocab

    def chunk(self, row: int) -> Chunk:
        s = self.strings
        file_index = self.view("file")[row]
        return Chunk(self.chunk_ids()[row], self.file_paths()[file_index], self.view("start_line")[row],
                     self.view("end_line")[row], s["chunk_type"][self.view("chunk_type")[row]],
                     s["kind"][self.view("kind")[row]], s["language"][self.view("language")[row]],
                     self.contents()[row], self.view("token_count")[row])

    def dense_rows(self, rows: np.ndarray) -> np.ndarray:
        """The float64 vectors of local ``rows`` (in that order) as a dense matrix."""
        import numpy as np

        rows = np.asarray(rows, dtype=np.int64)
        if not self.sparse:
            return np.frombuffer(self.raw("vectors"), dtype="<f8").reshape(self.rows, self.dim)[rows] \
                if self.dim else np.zeros((len(rows), 0), dtype=np.float64)
        out = np.zeros((len(rows), self.dim), dtype=np.float64)
        if not len(rows):
            return out
        where = np.full(self.rows, -1, dtype=np.int64)
        where[rows] = np.arange(len(rows), dtype=np.int64)
        ptr = self.array("csc_ptr")
        row_ids = self.array("csc_row")
        values = self.array("csc_val")
        cols = np.repeat(np.arange(self.dim, dtype=np.int64), np.diff(ptr))
        target = where[row_ids]
        keep = target >= 0
        out[target[keep], cols[keep]] = values[keep]
        return out

    def dense_matrix(self) -> np.ndarray:
        import numpy as np

        if not self.sparse:
            return np.frombuffer(self.raw("vectors"), dtype="<f8").reshape(self.rows, self.dim)
        return self.dense_rows(np.arange(self.rows, dtype=np.int64))


def save_segment(parts: SegmentParts, directory: Path) -> tuple[str, str, int]:
    """Write ``parts`` into ``directory`` under a name derived from its bytes: (name, sha256, size)."""
    import hashlib
    import tempfile

    directory.mkdir(parents=True, exist_ok=True)
    pieces = serialize_segment(parts)

    def hexdigest() -> str:
        digest = hashlib.sha256()
        for piece in pieces:
            digest.update(piece)
        return digest.hexdigest()

    # Hashed in a helper thread while this one writes and syncs (hashlib and file writes release the GIL).
    sha_of_pieces = _InThread(hexdigest, "cce-digest")
    size = 0
    fd, tmp = tempfile.mkstemp(prefix=".seg-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            for piece in pieces:
                fh.write(piece)
                size += len(piece)
            fh.flush()
            os.fsync(fh.fileno())
        sha = sha_of_pieces.result()
        name = f"seg-{sha[:24]}.cces"
        os.replace(tmp, directory / name)
    except BaseException:
        import contextlib

        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return name, sha, size

"""The on-disk index: one file, written atomically, cheap to open.

Layout: an 8-byte magic, a little-endian u64 header length, a JSON header,
then 8-byte-aligned binary sections. Embeddings are one contiguous float64
matrix and the BM25 postings are CSR arrays, so a fresh process maps them
instead of parsing numbers; chunk metadata is a column-wise JSON section and
chunk text is one UTF-8 blob with offsets, decoded only for the chunks a
caller touches. A per-file table (content hash, chunk span, imports) lets a
re-index reuse the chunks and vectors of files that did not change.

Opening a store imports no numpy: a one-shot ``cce search`` can rank from the
mapped bytes alone (see ``lean_scoring``), and the arrays are built the first
time something asks for them.

Writes go to a temporary file in the same directory and are renamed over the
old store, so a killed run leaves the previous store intact.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from cce_core.foundation.atomic import atomic_write
from cce_core.foundation.errors import CceError
from cce_core.indexing.chunker import Chunk

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

MAGIC = b"CCEPYIX\x01"
FORMAT = "cce-python-store/2"
# Formats this engine wrote before; a store in one of them is rebuilt, not trusted.
OLDER_FORMATS = ("cce-python-store/1",)
STORE_DIR = ".cce"
STORE_FILE = "index.cce"
_ALIGN = 8


def default_store_path(root: str | os.PathLike[str]) -> Path:
    return Path(root) / STORE_DIR / STORE_FILE


@dataclass
class FileEntry:
    path: str
    sha256: str
    tokens: int  # cce.tokens/v1 of the whole (redacted) file: the "read the file" baseline
    first_chunk: int
    chunk_count: int
    imports: list[str]


@dataclass
class Bm25Arrays:
    vocab: list[str]  # sorted
    ptr: np.ndarray  # int64, len(vocab) + 1
    docs: np.ndarray  # int32 doc ids, grouped per term, ascending
    tfs: np.ndarray  # int32 term frequencies aligned with docs
    doc_len: np.ndarray  # int64 tokens per chunk


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

    @cached_property
    def chunk_id_rank(self) -> np.ndarray:
        """Each chunk's position in chunk-id order: the tie-break of every ranking."""
        import numpy as np

        ids = self.chunk_ids
        order = sorted(range(len(ids)), key=ids.__getitem__)
        ranks = np.empty(len(order), dtype=np.int64)
        ranks[np.asarray(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int64)
        return ranks

    @property
    def chunk_ids(self) -> Sequence[str]:
        return [c.chunk_id for c in self.chunks]

    def embedding_rows(self) -> tuple[int, int]:
        """(rows, dimensions) of the embedding matrix."""
        shape = self.embeddings.shape
        return int(shape[0]), int(shape[1]) if len(shape) == 2 else 0

    @cached_property
    def file_tokens(self) -> dict[str, int]:
        return {f.path: f.tokens for f in self.files}


# -- writing ---------------------------------------------------------------


def _pad(n: int) -> int:
    return (-n) % _ALIGN


def _raw(array: Any, dtype: str) -> memoryview:
    """The little-endian bytes of ``array`` without a copy when it already has that layout."""
    import numpy as np

    contiguous = np.ascontiguousarray(array, dtype=dtype)
    return memoryview(contiguous).cast("B") if contiguous.size else memoryview(b"")


def serialize_parts(data: StoreData) -> list[bytes | memoryview]:
    """The store file as a list of byte strings, in order (written one after another, never joined)."""
    import numpy as np

    chunks = data.chunks
    file_index = {f.path: i for i, f in enumerate(data.files)}
    columns = {
        "chunk_id": [c.chunk_id for c in chunks],
        "file": [file_index[c.file_path] for c in chunks],
        "start_line": [c.start_line for c in chunks],
        "end_line": [c.end_line for c in chunks],
        "chunk_type": [c.chunk_type for c in chunks],
        "kind": [c.kind for c in chunks],
        "language": [c.language for c in chunks],
        "token_count": [c.token_count for c in chunks],
    }
    files = [
        {"path": f.path, "sha256": f.sha256, "tokens": f.tokens, "first": f.first_chunk,
         "count": f.chunk_count, "imports": f.imports}
        for f in data.files
    ]
    encoded = [c.content.encode("utf-8") for c in chunks]
    content_blob = b"".join(encoded)
    content_ptr = [0] * (len(encoded) + 1)
    for i, raw in enumerate(encoded):
        content_ptr[i + 1] = content_ptr[i] + len(raw)
    blobs: list[tuple[str, bytes | memoryview, dict[str, Any]]] = [
        ("embeddings", _raw(data.embeddings, "<f8"), {"dtype": "<f8", "shape": list(data.embeddings.shape)}),
        ("bm25_ptr", _raw(data.bm25.ptr, "<i8"), {"dtype": "<i8"}),
        ("bm25_docs", _raw(data.bm25.docs, "<i4"), {"dtype": "<i4"}),
        ("bm25_tfs", _raw(data.bm25.tfs, "<i4"), {"dtype": "<i4"}),
        ("doc_len", _raw(data.bm25.doc_len, "<i8"), {"dtype": "<i8"}),
        ("columns", json.dumps(columns, ensure_ascii=False, separators=(",", ":")).encode(), {"dtype": "json"}),
        ("content", content_blob, {"dtype": "utf-8"}),
        ("content_ptr", np.asarray(content_ptr, dtype="<i8").tobytes(), {"dtype": "<i8"}),
        ("files", json.dumps(files, ensure_ascii=False, separators=(",", ":")).encode(), {"dtype": "json"}),
        ("vocab", json.dumps(data.bm25.vocab, ensure_ascii=False, separators=(",", ":")).encode(), {"dtype": "json"}),
        ("edges", json.dumps([list(e) for e in data.edges], ensure_ascii=False).encode(), {"dtype": "json"}),
    ]
    sections: dict[str, Any] = {}
    offset = 0
    for name, blob, info in blobs:
        sections[name] = {**info, "offset": offset, "length": len(blob)}
        offset += len(blob) + _pad(len(blob))
    header = json.dumps({"format": FORMAT, "meta": data.meta, "sections": sections},
                        ensure_ascii=False, sort_keys=True).encode()
    header += b" " * _pad(len(MAGIC) + 8 + len(header))
    parts: list[bytes | memoryview] = [MAGIC + struct.pack("<Q", len(header)) + header]
    for _name, blob, _info in blobs:
        parts.append(blob)
        if _pad(len(blob)):
            parts.append(b"\0" * _pad(len(blob)))
    return parts


def save_store(data: StoreData, path: Path) -> int:
    parts = serialize_parts(data)
    try:
        atomic_write(path, parts)
    except OSError as exc:
        raise CceError(f"could not write the store {path}: {exc.strerror or exc}") from exc
    return sum(len(p) for p in parts)


# -- reading ---------------------------------------------------------------

# struct/memoryview codes of the little-endian dtypes the writer uses.
_VIEW_CODES = {"<f8": "d", "<i8": "q", "<i4": "i"}


class _Sections:
    def __init__(self, buf: Any, base: int, table: dict[str, Any]) -> None:
        self.buf, self.base, self.table = buf, base, table

    def raw(self, name: str) -> memoryview:
        info = self.table[name]
        start = self.base + int(info["offset"])
        end = start + int(info["length"])
        if end > len(self.buf):
            raise ValueError(f"section {name} runs past the end of the file")
        return memoryview(self.buf)[start:end]

    def check(self) -> None:
        """Every section lies inside the file and holds whole items: later lazy reads cannot fail."""
        for name, info in self.table.items():
            self.raw(name)
            size = {"d": 8, "q": 8, "i": 4}.get(_VIEW_CODES.get(info["dtype"], ""), 1)
            if int(info["length"]) % size or int(info["offset"]) < 0:
                raise ValueError(f"section {name} is malformed")

    def view(self, name: str) -> memoryview:
        """A section as a flat typed memoryview (no copy, no numpy)."""
        code = _VIEW_CODES[self.table[name]["dtype"]]
        raw = self.raw(name)
        return raw.cast(code) if len(raw) else memoryview(b"").cast(code)

    def array(self, name: str) -> np.ndarray:
        import numpy as np

        info = self.table[name]
        arr = np.frombuffer(self.raw(name), dtype=np.dtype(info["dtype"]))
        shape = info.get("shape")
        return arr.reshape(shape) if shape else arr

    def json(self, name: str) -> Any:
        try:
            return json.loads(bytes(self.raw(name)).decode("utf-8"))
        except RecursionError:  # a crafted store: refused like any other corruption
            raise CceError(f"the index section `{name}` is nested too deeply to read — re-run `cce index` to "
                           "rebuild it") from None


class MappedChunks(Sequence[Chunk]):
    """The chunks of a mapped store, built (and their text decoded) on first access."""

    def __init__(self, columns: dict[str, list[Any]], paths: list[str], blob: memoryview, ptr: memoryview) -> None:
        self._cols = columns
        self._paths = paths
        self._blob = blob
        self._ptr = ptr
        self._built: list[Chunk | None] = [None] * len(columns["chunk_id"])

    def __len__(self) -> int:
        return len(self._built)

    def _build(self, i: int) -> Chunk:
        c = self._cols
        text = str(self._blob[self._ptr[i] : self._ptr[i + 1]], "utf-8")
        chunk = Chunk(c["chunk_id"][i], self._paths[c["file"][i]], c["start_line"][i], c["end_line"][i],
                      c["chunk_type"][i], c["kind"][i], c["language"][i], text, c["token_count"][i])
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


class MappedStore(StoreData):
    """A store opened from disk: sections are decoded or wrapped in arrays only when first used."""

    def __init__(self, meta: dict[str, Any], sections: _Sections, path: Path, size: int) -> None:
        # StoreData's generated __init__ is bypassed on purpose: every field is a lazy property here.
        self.meta = meta
        self.path = path
        self.size_bytes = size
        self.sections = sections
        sections.check()
        files_raw = sections.json("files")
        self.files = [FileEntry(f["path"], f["sha256"], int(f["tokens"]), int(f["first"]), int(f["count"]),
                                list(f["imports"])) for f in files_raw]
        self.edges = [(a, b) for a, b in sections.json("edges")]
        columns = sections.json("columns")
        ptr = sections.view("content_ptr")
        n = len(columns["chunk_id"])
        if any(len(col) != n for col in columns.values()) or len(ptr) != n + 1:
            raise ValueError("chunk columns have different lengths")
        if ptr[n] > len(sections.raw("content")) or max(columns["file"], default=-1) >= len(self.files):
            raise ValueError("chunk columns point outside the store")
        self.chunks = MappedChunks(columns, [f.path for f in self.files], sections.raw("content"), ptr)
        shape = sections.table["embeddings"].get("shape") or [0, 0]
        rows, dim = (int(shape[0]), int(shape[1])) if len(shape) == 2 else (0, 0)
        if rows != n or len(sections.raw("embeddings")) != rows * dim * 8:
            raise ValueError("embedding rows do not match the chunk count")
        self._shape = (rows, dim)
        lengths = {name: int(info["length"]) for name, info in sections.table.items()}
        if lengths["bm25_docs"] != lengths["bm25_tfs"] or lengths["doc_len"] != n * 8:
            raise ValueError("the BM25 sections do not match the chunk count")

    def embedding_rows(self) -> tuple[int, int]:
        return self._shape

    @property
    def chunk_ids(self) -> Sequence[str]:
        return self.chunks._cols["chunk_id"]

    @cached_property
    def embeddings(self) -> np.ndarray:  # type: ignore[override]
        return self.sections.array("embeddings")

    @cached_property
    def bm25(self) -> Bm25Arrays:  # type: ignore[override]
        s = self.sections
        return Bm25Arrays(self.vocab, s.array("bm25_ptr"), s.array("bm25_docs"), s.array("bm25_tfs"),
                          s.array("doc_len"))

    @cached_property
    def vocab(self) -> list[str]:
        try:
            vocab = self.sections.json("vocab")
        except ValueError as exc:
            raise CceError(f"the index at {self.path} is corrupt ({exc}) — re-run `cce index` to rebuild it") from exc
        if not isinstance(vocab, list) or len(vocab) + 1 != len(self.sections.raw("bm25_ptr")) // 8:
            raise CceError(f"the index at {self.path} is corrupt (vocabulary and postings disagree) — "
                           "re-run `cce index` to rebuild it")
        return vocab


def load_store(path: str | os.PathLike[str]) -> StoreData:
    p = Path(path)
    if not p.is_file():
        raise CceError(f"no index at {p} — run `cce index <dir>` first")
    try:
        with open(p, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            buf: Any = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        if len(buf) < 16 or bytes(buf[:8]) != MAGIC:
            raise ValueError("not a cce store (bad magic)")
        (header_len,) = struct.unpack("<Q", buf[8:16])
        header = json.loads(bytes(buf[16 : 16 + header_len]).decode("utf-8"))
        fmt = header.get("format")
        if fmt in OLDER_FORMATS:
            raise CceError(f"the index at {p} was written by an older cce ({fmt}) — re-run `cce index` to rebuild it")
        if fmt != FORMAT:
            raise ValueError(f"unsupported store format {fmt!r}")
        data = MappedStore(header.get("meta", {}), _Sections(buf, 16 + header_len, header["sections"]), p, size)
    except CceError:
        raise
    except (OSError, ValueError, KeyError, TypeError, IndexError, struct.error, RecursionError) as exc:
        raise CceError(f"the index at {p} is unreadable or corrupt ({exc}) — re-run `cce index` to rebuild it") from exc
    return data

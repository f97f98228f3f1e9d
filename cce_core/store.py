"""The on-disk index: one file, written atomically, cheap to open.

Layout: an 8-byte magic, a little-endian u64 header length, a JSON header,
then 8-byte-aligned binary sections. Embeddings are one contiguous float64
matrix and the BM25 postings are CSR arrays, so a fresh process maps them
instead of parsing numbers; chunk metadata is a column-wise JSON section.
A per-file table (content hash, chunk span, imports) lets a re-index reuse
the chunks and vectors of files that did not change.

Writes go to a temporary file in the same directory and are renamed over the
old store, so a killed run leaves the previous store intact.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import struct
import tempfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from .chunker import Chunk
from .errors import CceError

MAGIC = b"CCEPYIX\x01"
FORMAT = "cce-python-store/1"
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
    chunks: list[Chunk]
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
        order = sorted(range(len(self.chunks)), key=lambda i: self.chunks[i].chunk_id)
        ranks = np.empty(len(order), dtype=np.int64)
        ranks[np.asarray(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int64)
        return ranks

    @cached_property
    def file_tokens(self) -> dict[str, int]:
        return {f.path: f.tokens for f in self.files}


# -- writing ---------------------------------------------------------------


def _pad(n: int) -> int:
    return (-n) % _ALIGN


def serialize(data: StoreData) -> bytes:
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
    blobs: list[tuple[str, bytes, dict[str, Any]]] = [
        ("embeddings", np.ascontiguousarray(data.embeddings, dtype="<f8").tobytes(),
         {"dtype": "<f8", "shape": list(data.embeddings.shape)}),
        ("bm25_ptr", np.ascontiguousarray(data.bm25.ptr, dtype="<i8").tobytes(), {"dtype": "<i8"}),
        ("bm25_docs", np.ascontiguousarray(data.bm25.docs, dtype="<i4").tobytes(), {"dtype": "<i4"}),
        ("bm25_tfs", np.ascontiguousarray(data.bm25.tfs, dtype="<i4").tobytes(), {"dtype": "<i4"}),
        ("doc_len", np.ascontiguousarray(data.bm25.doc_len, dtype="<i8").tobytes(), {"dtype": "<i8"}),
        ("columns", json.dumps(columns, ensure_ascii=False, separators=(",", ":")).encode(), {"dtype": "json"}),
        ("content", json.dumps([c.content for c in chunks], ensure_ascii=False, separators=(",", ":")).encode(),
         {"dtype": "json"}),
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
    out = bytearray(MAGIC + struct.pack("<Q", len(header)) + header)
    for _name, blob, _info in blobs:
        out += blob + b"\0" * _pad(len(blob))
    return bytes(out)


def atomic_write(path: Path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` so readers see the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save_store(data: StoreData, path: Path) -> int:
    payload = serialize(data)
    try:
        atomic_write(path, payload)
    except OSError as exc:
        raise CceError(f"could not write the store {path}: {exc.strerror or exc}") from exc
    return len(payload)


# -- reading ---------------------------------------------------------------


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

    def array(self, name: str) -> np.ndarray:
        info = self.table[name]
        arr = np.frombuffer(self.raw(name), dtype=np.dtype(info["dtype"]))
        shape = info.get("shape")
        return arr.reshape(shape) if shape else arr

    def json(self, name: str) -> Any:
        return json.loads(bytes(self.raw(name)).decode("utf-8"))


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
        if header.get("format") != FORMAT:
            raise ValueError(f"unsupported store format {header.get('format')!r}")
        sec = _Sections(buf, 16 + header_len, header["sections"])
        cols = sec.json("columns")
        contents = sec.json("content")
        files_raw = sec.json("files")
        files = [FileEntry(f["path"], f["sha256"], int(f["tokens"]), int(f["first"]), int(f["count"]),
                           list(f["imports"])) for f in files_raw]
        paths = [f.path for f in files]
        chunks = [
            Chunk(cid, paths[fi], sl, el, ct, kd, lg, content, tc)
            for cid, fi, sl, el, ct, kd, lg, tc, content in zip(
                cols["chunk_id"], cols["file"], cols["start_line"], cols["end_line"], cols["chunk_type"],
                cols["kind"], cols["language"], cols["token_count"], contents, strict=True)
        ]
        embeddings = sec.array("embeddings")
        if embeddings.shape[0] != len(chunks):
            raise ValueError("embedding rows do not match the chunk count")
        bm25 = Bm25Arrays(sec.json("vocab"), sec.array("bm25_ptr"), sec.array("bm25_docs"),
                          sec.array("bm25_tfs"), sec.array("doc_len"))
        edges = [(a, b) for a, b in sec.json("edges")]
    except CceError:
        raise
    except (OSError, ValueError, KeyError, TypeError, IndexError, struct.error) as exc:
        raise CceError(f"the index at {p} is unreadable or corrupt ({exc}) — re-run `cce index` to rebuild it") from exc
    return StoreData(header.get("meta", {}), chunks, embeddings, files, edges, bm25, path=p, size_bytes=size)

"""The resolved live-file table of a re-indexed store, written once so no reader rebuilds it.

After an incremental re-index the store's rows are no longer the segments'
rows one after another: some are superseded and the new ones sit in the last
segment. Working out the live files and their order means parsing every
segment's file table, applying removals in order and sorting — work a fresh
``cce search`` would otherwise repeat on every start. The writer does it once
(seeded with the previous view, so it costs the live files, not the number of
segments) and writes the result here; a reader maps it and reads positions
straight from the mapped bytes, with neither numpy nor JSON at open.

The view is a file beside the segments, named by its own SHA-256 and
recorded in the manifest with its hash and size, written before the manifest
that names it. A writer killed at any point leaves the previous manifest (and
the view it names) in place; a store without a view is resolved from its
segments, as before.

Layout: the segment layout's magic/header/aligned-sections scheme with its
own magic. Sections: the live files in path order (path blob and offsets,
store position of the first chunk, chunk count, whole-file tokens, the
segment holding it and its first row there, and the rest of its entry —
hash, size, time, imports — as a segment's binary file columns),
``position_of_row`` (row in the concatenated segments → store position, -1
when superseded) and ``perm`` (store position → concatenated row).
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cce_core.foundation.errors import CceError
from cce_core.indexing.segment import (
    BlobStrings,
    FileEntry,
    _pad,
    check_file_columns,
    read_file_columns,
)

if TYPE_CHECKING:  # pragma: no cover - typing only (the table needs numpy, which opening a view does not)
    from cce_core.indexing.live_table import LiveTable

VIEW_MAGIC = b"CCEPYLV\x01"
VIEW_FORMAT = "cce-python-live-view/1"
_VIEW_CODES: dict[str, Literal["q", "i"]] = {"<i8": "q", "<i4": "i"}
_ITEM_SIZE = {"q": 8, "i": 4}


@dataclass(frozen=True)
class ViewRef:
    """The live view as the manifest names it: file name, SHA-256 of its bytes and size."""

    name: str
    sha256: str
    bytes: int

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "sha256": self.sha256, "bytes": self.bytes}


# A live file as a resolution keeps it: (segment number, entry with its first row local to that segment).
LiveFiles = dict[str, tuple[int, FileEntry]]


def serialize_view(live: LiveFiles, seg_base: list[int], total_rows: int) -> list[bytes]:
    """The view of ``live`` over segments starting at rows ``seg_base`` (``total_rows`` rows in all)."""
    from cce_core.indexing.live_table import LiveTable

    return serialize_table(LiveTable.from_live(live), seg_base, total_rows)


def serialize_table(table: LiveTable, seg_base: list[int], total_rows: int) -> list[bytes]:
    """The view of the live files ``table`` holds (see :func:`serialize_view`)."""
    import numpy as np

    from cce_core.indexing.live_table import serialize_columns

    n = len(table)
    segment_of = table.segment.astype("<i4")
    local_first = table.local.astype("<i4")
    counts = table.count
    first = np.zeros(n, dtype=np.int64)
    if n > 1:
        np.cumsum(counts[:-1], out=first[1:])
    rows = int(counts.sum()) if n else 0
    starts = np.asarray(seg_base, dtype=np.int64)[table.segment] + table.local if n else np.zeros(0, dtype=np.int64)
    perm = (np.repeat(starts - first, counts) + np.arange(rows, dtype=np.int64)).astype("<i4")
    position_of_row = np.full(total_rows, -1, dtype="<i4")
    position_of_row[perm] = np.arange(rows, dtype="<i4")
    blobs: list[tuple[str, bytes, str]] = [
        *serialize_columns(table, first),
        ("file_segment", segment_of.tobytes(), "<i4"), ("file_local", local_first.tobytes(), "<i4"),
        ("position_of_row", position_of_row.tobytes(), "<i4"), ("perm", perm.tobytes(), "<i4"),
    ]
    sections: dict[str, Any] = {}
    offset = 0
    for name, blob, dtype in blobs:
        sections[name] = {"dtype": dtype, "offset": offset, "length": len(blob)}
        offset += len(blob) + _pad(len(blob))
    header = json.dumps({"format": VIEW_FORMAT, "rows": rows, "total_rows": total_rows, "files": n,
                         "segments": len(seg_base), "sections": sections}, sort_keys=True).encode("utf-8")
    header += b" " * _pad(len(VIEW_MAGIC) + 8 + len(header))
    out = [VIEW_MAGIC + struct.pack("<Q", len(header)) + header]
    for _name, blob, _dtype in blobs:
        out.append(blob)
        if _pad(len(blob)):
            out.append(b"\0" * _pad(len(blob)))
    return out


def save_view(live: LiveFiles | LiveTable, seg_base: list[int], total_rows: int, directory: Path) -> ViewRef:
    """Write the view into ``directory`` under a name derived from its bytes (durable before it is named)."""
    parts = serialize_view(live, seg_base, total_rows) if isinstance(live, dict) else \
        serialize_table(live, seg_base, total_rows)
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    sha = digest.hexdigest()
    name = f"view-{sha[:24]}.ccev"
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".view-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.writelines(parts)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, directory / name)
    except BaseException:
        import contextlib

        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return ViewRef(name, sha, sum(len(p) for p in parts))


class MappedView:
    """A view file, memory-mapped; every column a typed memoryview, the JSON parsed only when asked."""

    def __init__(self, path: Path, segments: int, total_rows: int) -> None:
        self.path = path
        try:
            with open(path, "rb") as fh:
                self.size = os.fstat(fh.fileno()).st_size
                buf: Any = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if self.size else b""
            if len(buf) < 16 or bytes(buf[:8]) != VIEW_MAGIC:
                raise ValueError("not a cce live view (bad magic)")
            (header_len,) = struct.unpack("<Q", buf[8:16])
            header = json.loads(bytes(buf[16 : 16 + header_len]).decode("utf-8"))
            if header.get("format") != VIEW_FORMAT:
                raise ValueError(f"unsupported view format {header.get('format')!r}")
            self.buf = buf
            self.base = 16 + int(header_len)
            self.table: dict[str, Any] = header["sections"]
            self.rows = int(header["rows"])
            self.total_rows = int(header["total_rows"])
            self.n_files = int(header["files"])
            if int(header["segments"]) != segments or self.total_rows != total_rows:
                raise ValueError("the view does not describe the manifest's segments")
            self._views: dict[str, memoryview] = {}
            self._check()
        except (OSError, ValueError, KeyError, TypeError, struct.error, RecursionError) as exc:
            raise CceError(f"the live view {path} is unreadable or corrupt ({exc}) — re-run `cce index` to "
                           "rebuild the store") from exc

    def raw(self, name: str) -> memoryview:
        info = self.table[name]
        start = self.base + int(info["offset"])
        end = start + int(info["length"])
        if int(info["offset"]) < 0 or end > len(self.buf):
            raise ValueError(f"section {name} runs past the end of the file")
        return memoryview(self.buf)[start:end]

    def view(self, name: str) -> memoryview:
        found = self._views.get(name)
        if found is None:
            code = _VIEW_CODES[self.table[name]["dtype"]]
            raw = self.raw(name)
            if len(raw) % _ITEM_SIZE[code]:
                raise ValueError(f"section {name} is malformed")
            found = self._views[name] = raw.cast(code) if len(raw) else memoryview(b"").cast(code)
        return found

    def _check(self) -> None:
        n = self.n_files
        if len(self.view("file_path_ptr")) != n + 1:
            raise ValueError("the path sections disagree")
        check_file_columns(n, self.view, self.raw)
        for name in ("file_segment", "file_local"):
            if len(self.view(name)) != n:
                raise ValueError(f"section {name} does not match the file count")
        if len(self.view("perm")) != self.rows or len(self.view("position_of_row")) != self.total_rows:
            raise ValueError("the position sections do not match the row counts")

    def paths(self) -> BlobStrings:
        """The live files' paths, sorted (bisectable)."""
        return BlobStrings(self.raw("file_path"), self.view("file_path_ptr"))

    def files(self) -> list[FileEntry]:
        """The live files in path order, first chunks as store positions."""
        try:
            return read_file_columns(self.view, self.raw)
        except UnicodeDecodeError as exc:
            raise CceError(f"the live view {self.path} is corrupt ({exc}) — re-run `cce index`") from None

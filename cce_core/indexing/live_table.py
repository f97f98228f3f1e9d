"""The live files of a store as columns: what a re-index compares against and extends into the next view.

Why it exists: a one-file re-index of a large tree used to decode the whole
previous live table (75,000 rows) into ``FileEntry`` objects, compare them one
by one, and encode all of them again to write the next live view. The table
here keeps the rows as they lie on disk — UTF-8 blobs with offsets and numeric
arrays, mapped from the previous view or the segments of a fresh index — so
the comparison is a few array operations, a changed file's record is decoded
only when asked for, and the next view is the previous one with a few rows
dropped or spliced in (unchanged runs of rows are copied as byte ranges).

Rows are in path order (Python string order, which is UTF-8 byte order). Each
row records the segment holding the file and its first row local to that
segment; :func:`serialize_table` writes exactly the bytes the dict-based
writer wrote for the same live files.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import pairwise
from typing import Any, Protocol

import numpy as np

from cce_core.foundation.errors import CceError
from cce_core.indexing.segment import FileEntry, MappedSegment


class ColumnSource(Protocol):
    """What the table reads binary file columns from: a live view (``live_view.MappedView``) or a segment.

    Declared here rather than imported, so that the view module, which writes
    tables, and this one do not import each other.
    """

    def view(self, name: str) -> Any: ...

    def raw(self, name: str) -> Any: ...


@dataclass(frozen=True)
class Strings:
    """Strings as one UTF-8 blob and int64 offsets (len + 1)."""

    blob: bytes | memoryview
    ptr: np.ndarray

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def item(self, i: int) -> str:
        return str(self.blob[int(self.ptr[i]) : int(self.ptr[i + 1])], "utf-8")

    def check_utf8(self) -> None:
        """Raise UnicodeDecodeError unless every string decodes, in C-level passes (nothing kept decoded).

        The blob decoding whole and every cut between strings falling on a
        character's first byte (not on a continuation byte) is the same as
        every string decoding alone.
        """
        raw = bytes(self.blob)
        raw.decode("utf-8")
        if raw.isascii():
            return
        if len(self.ptr) and int(self.ptr.min()) < 0:  # a damaged offset: decode as readers would slice
            self.to_list()
            return
        data = np.frombuffer(raw, dtype=np.uint8)
        cuts = self.ptr[self.ptr < len(data)]
        inside = np.flatnonzero((data[cuts] & 0xC0) == 0x80)
        if len(inside):
            at = int(cuts[inside[0]])
            raise UnicodeDecodeError("utf-8", raw, at, at + 1, "a string starts inside a character")

    def bisect(self, value: str) -> int:
        """Where ``value`` goes in these strings, sorted (UTF-8 byte order, which is str order): nothing decoded."""
        target = value.encode("utf-8")
        blob, ptr = self.blob, self.ptr
        lo, hi = 0, len(self)
        while lo < hi:
            mid = (lo + hi) // 2
            if bytes(blob[int(ptr[mid]) : int(ptr[mid + 1])]) < target:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def equals(self, values: Sequence[str]) -> bool:
        """Whether these are exactly ``values``, in order: a few C-level passes, no string decoded."""
        if len(values) != len(self):
            return False
        # Each encoded alone, then joined: joining first would widen the whole text for one non-ASCII path.
        encoded = [v.encode("utf-8") for v in values]
        blob = self.blob if isinstance(self.blob, bytes) else bytes(self.blob)  # one memcmp, not an item loop
        if b"".join(encoded) != blob:
            return False
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        return bool(self.ptr[0] == 0) and bool(np.array_equal(np.diff(self.ptr), lengths))

    def to_list(self) -> list[str]:
        raw = bytes(self.blob)
        ptr = self.ptr.tolist()
        text = raw.decode("utf-8")
        if len(text) == len(raw):  # ASCII: byte and character offsets agree
            return [text[a:b] for a, b in pairwise(ptr)]
        return [raw[a:b].decode("utf-8") for a, b in pairwise(ptr)]

    @staticmethod
    def of(values: Sequence[str]) -> Strings:
        encoded = [v.encode("utf-8") for v in values]
        ptr = np.zeros(len(encoded) + 1, dtype=np.int64)
        if encoded:
            np.cumsum([len(e) for e in encoded], out=ptr[1:])
        return Strings(b"".join(encoded), ptr)

    def gather(self, take: np.ndarray) -> Strings:
        """The strings at ``take``, in that order; runs of consecutive indices are copied as one byte range."""
        n = len(take)
        out_ptr = np.zeros(n + 1, dtype=np.int64)
        if not n:
            return Strings(b"", out_ptr)
        np.cumsum(self.ptr[take + 1] - self.ptr[take], out=out_ptr[1:])
        breaks = np.flatnonzero(np.diff(take) != 1) + 1
        starts = [0, *breaks.tolist()]
        ends = [*breaks.tolist(), n]
        blob = memoryview(self.blob)  # slices of a view are not copies: the join below copies each byte once
        pieces = [blob[int(self.ptr[take[a]]) : int(self.ptr[take[e - 1] + 1])] for a, e in zip(starts, ends,
                                                                                                strict=True)]
        return Strings(b"".join(pieces), out_ptr)

    def concat(self, other: Strings) -> Strings:
        if not len(other):
            return self
        return Strings(b"".join((self.blob, other.blob)),  # one copy (bytes(a) + bytes(b) made two or three)
                       np.concatenate((self.ptr, other.ptr[1:] + self.ptr[-1])))


@dataclass(frozen=True)
class LiveTable:
    """Live files in path order, as columns (first rows local to the segment that holds each file)."""

    paths: Strings
    shas: Strings
    imports: Strings  # every file's imports, one run per file
    import_ptr: np.ndarray  # int64, len n + 1: file i's imports are imports[import_ptr[i]:import_ptr[i + 1]]
    count: np.ndarray  # int64 chunks per file
    tokens: np.ndarray  # int64
    size: np.ndarray  # int64
    mtime: np.ndarray  # int64
    segment: np.ndarray  # int64 segment number
    local: np.ndarray  # int64 first row in that segment

    def __len__(self) -> int:
        return len(self.count)

    # -- reading -------------------------------------------------------------

    @cached_property
    def path_list(self) -> list[str]:
        return self.paths.to_list()

    @cached_property
    def position(self) -> dict[str, int]:
        """path → row."""
        return {p: i for i, p in enumerate(self.path_list)}

    def find(self, path: str) -> int:
        """Row of ``path``, or -1.

        The first lookups bisect the path bytes (a one-file re-index makes a
        handful); past about one per 64 rows the path map is built once and
        answers the rest, as it costs less than that many bisections.
        """
        position = self.__dict__.get("position")
        if position is None:
            done = self.__dict__.get("_bisections", 0)
            if done <= len(self) // 64 + 16:
                self.__dict__["_bisections"] = done + 1
                i = self.paths.bisect(path)
                return i if i < len(self) and self.paths.item(i) == path else -1
            position = self.position
        return position.get(path, -1)

    def rows_of(self, paths: Sequence[str], absent: Container[str] = ()) -> np.ndarray:
        """The row of each of ``paths`` (-1: not in the table), int64.

        A re-index asks this of every path the walk listed. When they are exactly
        this table's paths once those in ``absent`` (a guess: the files known to
        be left out) are set aside — an edit in place moves no path — the rows
        are found without decoding a path or building the path map; any other
        case takes the map, so a wrong guess costs time, never a wrong row.
        """
        n = len(paths)
        present = np.fromiter((p not in absent for p in paths), dtype=bool, count=n) if absent else None
        kept = paths if present is None or present.all() else [p for p in paths if p not in absent]
        if self.paths.equals(kept):
            if present is None:
                return np.arange(n, dtype=np.int64)
            rows = np.full(n, -1, dtype=np.int64)
            rows[present] = np.arange(len(kept), dtype=np.int64)
            return rows
        position = self.position
        return np.fromiter((position.get(p, -1) for p in paths), dtype=np.int64, count=n)

    def imports_of(self, i: int) -> list[str]:
        return [self.imports.item(k) for k in range(int(self.import_ptr[i]), int(self.import_ptr[i + 1]))]

    def import_lists(self) -> list[list[str]]:
        flat = self.imports.to_list()
        ptr = self.import_ptr.tolist()
        return [flat[a:b] for a, b in pairwise(ptr)]

    def entry(self, i: int) -> FileEntry:
        """Row ``i`` as a file entry (first chunk local to its segment)."""
        return FileEntry(self.paths.item(i), self.shas.item(i), int(self.tokens[i]), int(self.local[i]),
                         int(self.count[i]), self.imports_of(i), int(self.size[i]), int(self.mtime[i]))

    # -- building ------------------------------------------------------------

    @staticmethod
    def from_entries(entries: Sequence[FileEntry], segment: Sequence[int]) -> LiveTable:
        """``entries`` (sorted by path, first chunks local) held by ``segment[i]``."""
        n = len(entries)

        def ints(values: Any) -> np.ndarray:
            return np.fromiter(values, dtype=np.int64, count=n)

        import_ptr = np.zeros(n + 1, dtype=np.int64)
        if n:
            np.cumsum([len(e.imports) for e in entries], out=import_ptr[1:])
        return LiveTable(Strings.of([e.path for e in entries]), Strings.of([e.sha256 for e in entries]),
                         Strings.of([i for e in entries for i in e.imports]), import_ptr,
                         ints(e.chunk_count for e in entries), ints(e.tokens for e in entries),
                         ints(e.size for e in entries), ints(e.mtime_ns for e in entries),
                         np.asarray(segment, dtype=np.int64).reshape(n), ints(e.first_chunk for e in entries))

    @staticmethod
    def from_live(live: Mapping[str, tuple[int, FileEntry]]) -> LiveTable:
        paths = sorted(live)
        return LiveTable.from_entries([live[p][1] for p in paths], [live[p][0] for p in paths])

    @staticmethod
    def from_columns(view: Any, raw: Any, segment: np.ndarray, local: np.ndarray) -> LiveTable:
        """A table from binary file columns (``view``/``raw`` as a segment or a live view reads them)."""

        def ints(name: str) -> np.ndarray:
            return np.asarray(view(name), dtype=np.int64)

        return LiveTable(Strings(raw("file_path"), ints("file_path_ptr")),
                         Strings(raw("file_sha"), ints("file_sha_ptr")), Strings(raw("import"), ints("import_ptr")),
                         ints("file_import_ptr"), ints("file_count"), ints("file_tokens"), ints("file_size"),
                         ints("file_mtime"), segment, local)

    @staticmethod
    def from_view(view: ColumnSource, segment_rows: Sequence[int], where: object) -> LiveTable:
        segment = np.asarray(view.view("file_segment"), dtype=np.int64)
        local = np.asarray(view.view("file_local"), dtype=np.int64)
        table = LiveTable.from_columns(view.view, view.raw, segment, local)
        table.check(segment_rows, where, "its live view points outside a segment")
        return table

    @staticmethod
    def from_ordered(segments: Sequence[MappedSegment]) -> LiveTable | None:
        """The table of segments whose files, one after another, are the live files in path order.

        None when a segment has no binary file columns (an older format).
        """
        if any("file_sha" not in segment.table for segment in segments):
            return None
        parts = [LiveTable.from_columns(segment.view, segment.raw,
                                        np.full(len(segment.view("file_count")), s, dtype=np.int64),
                                        np.asarray(segment.view("file_first"), dtype=np.int64))
                 for s, segment in enumerate(segments)]
        if not parts:
            return LiveTable.from_entries([], [])
        table = parts[0]
        for part in parts[1:]:
            table = table.concat(part)
        return table

    def concat(self, other: LiveTable) -> LiveTable:
        return LiveTable(self.paths.concat(other.paths), self.shas.concat(other.shas),
                         self.imports.concat(other.imports),
                         np.concatenate((self.import_ptr, other.import_ptr[1:] + self.import_ptr[-1])),
                         *(np.concatenate((a, b)) for a, b in (
                             (self.count, other.count), (self.tokens, other.tokens), (self.size, other.size),
                             (self.mtime, other.mtime), (self.segment, other.segment), (self.local, other.local))))

    def take(self, rows: np.ndarray) -> LiveTable:
        """The rows ``rows`` (int64), in that order."""
        counts = self.import_ptr[rows + 1] - self.import_ptr[rows]
        import_ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(counts, out=import_ptr[1:])
        total = int(import_ptr[-1])
        import_rows = np.repeat(self.import_ptr[rows] - import_ptr[:-1], counts) + np.arange(total, dtype=np.int64)
        return LiveTable(self.paths.gather(rows), self.shas.gather(rows), self.imports.gather(import_rows),
                         import_ptr, self.count[rows], self.tokens[rows], self.size[rows], self.mtime[rows],
                         self.segment[rows], self.local[rows])

    def check(self, segment_rows: Sequence[int], where: object, what: str) -> None:
        """Raise CceError unless every row's chunks lie inside its segment."""
        rows = np.asarray(segment_rows, dtype=np.int64)
        bad = (self.segment < 0) | (self.segment >= len(rows)) | (self.local < 0)
        if len(rows) and not bad.all():
            ok = ~bad
            bad[ok] = self.local[ok] + self.count[ok] > rows[self.segment[ok]]
        if bad.any():
            raise CceError(f"the index at {where} is corrupt ({what}) — re-run `cce index` to rebuild it")

    def apply(self, segment: MappedSegment, s: int, where: object) -> LiveTable:
        """This table after segment number ``s``: its removals, refreshed metadata, then its files.

        What :func:`cce_core.indexing.store.apply_segments` does to a dict of
        live files, with unchanged runs of rows kept as they are.
        """
        added = sorted(segment.files, key=lambda f: f.path)
        if any(f.first_chunk < 0 or f.chunk_count < 0 or f.first_chunk + f.chunk_count > segment.rows
               for f in added):
            raise CceError(f"the index at {where} is corrupt (a file's chunks lie outside its segment) — "
                           "re-run `cce index` to rebuild it")
        dropped = {i for p in segment.removes if (i := self.find(p)) >= 0}
        restat = {i: pair for p, pair in segment.restat.items() if (i := self.find(p)) >= 0 and i not in dropped}
        table = self
        if restat:
            size, mtime = self.size.copy(), self.mtime.copy()
            for i, (new_size, new_mtime) in restat.items():
                size[i], mtime[i] = new_size, new_mtime
            table = replace(self, size=size, mtime=mtime)
        dropped.update(i for f in added if (i := self.find(f.path)) >= 0)  # a newer copy replaces the old one
        if not dropped and not added:
            return table
        n = len(self)
        keep = np.ones(n, dtype=bool)
        if dropped:
            keep[np.fromiter(dropped, dtype=np.int64, count=len(dropped))] = False
        kept = np.flatnonzero(keep)
        # Row order of the result over (this table's rows, then the added ones): added file k
        # goes before the first kept row whose path sorts after it.
        at = [self.paths.bisect(f.path) for f in added]
        slots = np.searchsorted(kept, np.asarray(at, dtype=np.int64)) if added else np.zeros(0, dtype=np.int64)
        order = np.insert(kept, slots, np.arange(n, n + len(added), dtype=np.int64))
        combined = table.concat(LiveTable.from_entries(added, [s] * len(added))) if added else table
        return combined.take(order)


def serialize_columns(table: LiveTable, first: np.ndarray) -> list[tuple[str, bytes, str]]:
    """The file columns of ``table`` as :func:`cce_core.indexing.segment.file_columns` lays them out."""

    def blob(value: bytes | memoryview) -> bytes:
        return bytes(value)

    return [("file_path", blob(table.paths.blob), "utf-8"), ("file_path_ptr", table.paths.ptr.astype("<i8").tobytes(),
                                                             "<i8"),
            ("file_first", first.astype("<i4").tobytes(), "<i4"),
            ("file_count", table.count.astype("<i4").tobytes(), "<i4"),
            ("file_tokens", table.tokens.astype("<i8").tobytes(), "<i8"),
            ("file_sha", blob(table.shas.blob), "utf-8"), ("file_sha_ptr", table.shas.ptr.astype("<i8").tobytes(),
                                                          "<i8"),
            ("file_size", table.size.astype("<i8").tobytes(), "<i8"),
            ("file_mtime", table.mtime.astype("<i8").tobytes(), "<i8"),
            ("file_import_ptr", table.import_ptr.astype("<i8").tobytes(), "<i8"),
            ("import", blob(table.imports.blob), "utf-8"), ("import_ptr", table.imports.ptr.astype("<i8").tobytes(),
                                                           "<i8")]

"""What symbol navigation answers with, and the compact per-file record a segment stores.

The public rows (:class:`Definition`, :class:`Reference`, :class:`CallEdge`)
are what the library, the CLI and the MCP tools hand out. :class:`FileSymbols`
is the per-file record the chunker makes at index time; it is stored as
compact bytes (:func:`encode_file_symbols`: JSON for the few definitions,
columns for the many references) so it crosses the worker pipe as one
object, a compaction copies it without decoding, and a large store opens
without making an object per reference. Everything
in it comes from the redacted text the chunks are cut from: names, lines and
the first line of each definition, never the raw file.
"""

from __future__ import annotations

import json
import struct
import sys
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

# Reference kinds: what a use of a name is.
CALL = "call"
IMPORT = "import"
REFERENCE = "reference"
REFERENCE_KINDS = (CALL, IMPORT, REFERENCE)
# A call through the instance itself (``self.x()``, ``this.x()``): a tags pattern says so by capturing
# ``@reference.call.self``; it is stored as a call whose receiver is the enclosing class.
SELF_CALL = "call.self"
# How a stored record writes them: one letter, upper case for a use written after a receiver (``x.name``).
REFERENCE_CODES = dict(zip((CALL, IMPORT, REFERENCE, SELF_CALL), "cirs", strict=True))
REFERENCE_OF_CODE = dict(zip("cirs", (CALL, IMPORT, REFERENCE, CALL), strict=True))

# Call-edge confidences, strongest first: how the callee was found.
SAME_FILE = "same-file"
VIA_IMPORT = "import"
GLOBAL = "global"
# A member read through a receiver whose type is not known (``app.route`` on an untyped parameter): any
# class's member of that name may be meant. ``refs`` leaves these out unless asked for them.
GUESS = "guess"
CONFIDENCES = (SAME_FILE, VIA_IMPORT, GLOBAL, GUESS)

# A definition's signature is its first line, cut to this many characters.
SIGNATURE_MAX_CHARS = 200


@dataclass(frozen=True, slots=True)
class Definition:
    """One definition: ``kind`` is the tags capture's suffix (``function``, ``method``, ``class``, …)."""

    name: str
    qualified_name: str  # enclosing definitions joined by "." ("Flask.route"); the name at top level
    kind: str
    file_path: str
    line: int  # 1-based, the definition's first line
    end_line: int
    chunk_id: str | None  # the chunk holding the definition (expand_chunk shows its body)
    signature: str  # the definition's first line in the stored (redacted) text
    language: str


@dataclass(frozen=True, slots=True)
class Reference:
    """One use of a name: a call, an import of it, or any other reference the tags query captures."""

    name: str
    file_path: str
    line: int  # 1-based line of the use (of the import statement, for an import)
    kind: str  # "call" | "import" | "reference"
    enclosing: str | None  # qualified name of the innermost enclosing definition; None at module level
    chunk_id: str | None
    language: str
    member: bool = False  # written after a receiver (``x.name``, ``p->name``): it may name any class's member
    through_self: bool = False  # a call through the instance itself: the enclosing class's member first


@dataclass(frozen=True, slots=True)
class CallEdge:
    """A resolved call: ``caller`` (None at module level) calls ``callee`` at ``file_path:line``."""

    caller: str | None
    callee: str
    file_path: str
    line: int
    confidence: str  # "same-file" | "import" | "global"
    caller_def: Definition | None
    callee_def: Definition


class ReferenceColumns:
    """A file's references column by column: one string per name, a letter per kind, int arrays for the rest.

    A large store holds millions of references; as columns they decode with a handful of C calls and
    cost a few bytes each, where a list per reference would cost a hundred. Read as rows (``[name,
    code, line, enclosing, chunk]``, plus the module index for an import that names one) by index.
    """

    __slots__ = ("chunks", "codes", "enclosing", "lines", "modules", "names")

    def __init__(self, names: list[str] | None = None, codes: str = "", lines: Sequence[int] = (),
                 enclosing: Sequence[int] = (), chunks: Sequence[int] = (), modules: Sequence[int] = ()) -> None:
        self.names = names if names is not None else []
        self.codes = codes
        self.lines = array("i", lines)
        self.enclosing = array("i", enclosing)
        self.chunks = array("i", chunks)
        self.modules = array("i", modules) if modules else array("i", [-1] * len(self.names))

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[object]]) -> ReferenceColumns:
        return cls([str(r[0]) for r in rows], "".join(str(r[1]) for r in rows), [int(r[2]) for r in rows],  # type: ignore[call-overload]
                   [int(r[3]) for r in rows], [int(r[4]) for r in rows],  # type: ignore[call-overload]
                   [int(r[5]) if len(r) > 5 else -1 for r in rows])  # type: ignore[call-overload]

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i: int) -> list[object]:
        row: list[object] = [self.names[i], self.codes[i], self.lines[i], self.enclosing[i], self.chunks[i]]
        if self.modules[i] >= 0:
            row.append(self.modules[i])
        return row

    def __iter__(self) -> Iterator[list[object]]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReferenceColumns) and list(self) == list(other)

    def __repr__(self) -> str:
        return repr(list(self))


class FileSymbols:
    """One file's symbols as recorded at index time; indices point into this file's own lists.

    * ``definitions`` rows: ``[name, kind, line, end_line, parent, chunk, signature]`` — ``parent``
      the index of the innermost enclosing definition or -1, ``chunk`` the definition's chunk as an
      offset from the file's first chunk (-1 when none); a method declared outside its type (Go)
      has an eighth column, the receiver type's name (``@receiver``).
    * ``references`` (:class:`ReferenceColumns`), read as rows ``[name, kind, line, enclosing, chunk]``
      — ``kind`` a letter of :data:`REFERENCE_CODES`, upper case when the name follows a receiver,
      ``enclosing`` a definition index or -1; an import whose pattern also captured its module has a
      sixth column, the module's index in ``modules`` (``from .helpers import url_for``: ``.helpers``).
    * ``modules``: the module specifiers the file names (``@module`` captures), first-seen order.
    * ``receivers``: ``[reference index, receiver]`` for a use written after a plain name the file can
      type (``app`` in ``app.route``: a local, an import, a class, ``self``); absent when none.
    * ``bindings``: ``[scope, variable, type]`` — ``variable`` is given a value of ``type`` in the
      definition ``scope`` (-1: module level): ``app = Flask(...)``, a parameter ``app: Flask``.
    """

    __slots__ = ("bindings", "definitions", "modules", "receivers", "references")

    def __init__(self, definitions: list[list[object]] | None = None,
                 references: ReferenceColumns | Sequence[Sequence[object]] | None = None,
                 modules: list[str] | None = None, receivers: list[list[object]] | None = None,
                 bindings: list[list[object]] | None = None) -> None:
        self.definitions = definitions if definitions is not None else []
        self.references = references if isinstance(references, ReferenceColumns) else \
            ReferenceColumns.from_rows(references or [])
        self.modules = modules if modules is not None else []
        self.receivers = receivers if receivers is not None else []
        self.bindings = bindings if bindings is not None else []

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileSymbols) and \
            (self.definitions, self.references, self.modules, self.receivers, self.bindings) == \
            (other.definitions, other.references, other.modules, other.receivers, other.bindings)

    def __repr__(self) -> str:
        return (f"FileSymbols(definitions={self.definitions!r}, references={self.references!r}, "
                f"modules={self.modules!r})")


# A stored record: this magic, three little-endian u32 (head length, references, name bytes), the head
# (JSON: definitions and modules), the names joined by U+001F, one ASCII letter per reference, then four
# little-endian int32 columns (line, enclosing definition, chunk, module).
RECORD_MAGIC = b"CS1\n"
_NAME_SEPARATOR = "\x1f"
_LITTLE = sys.byteorder == "little"


def _column_bytes(values: array[int]) -> bytes:
    if _LITTLE:
        return values.tobytes()
    swapped = array("i", values)
    swapped.byteswap()
    return swapped.tobytes()


def _column(raw: memoryview, count: int, offset: int) -> array[int]:
    values = array("i")
    values.frombytes(raw[offset:offset + 4 * count])
    if not _LITTLE:
        values.byteswap()
    return values


def encode_file_symbols(symbols: FileSymbols) -> bytes:
    """The stored bytes of one file's symbols (deterministic: equal records give equal bytes)."""
    refs = symbols.references
    if not (symbols.definitions or len(refs) or symbols.modules):
        return b""
    fields: dict[str, object] = {"d": symbols.definitions, "m": symbols.modules}
    if symbols.receivers:  # written only when present: a record without them keeps its earlier bytes
        fields["v"] = symbols.receivers
    if symbols.bindings:
        fields["b"] = symbols.bindings
    head = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    names = _NAME_SEPARATOR.join(refs.names).encode("utf-8")
    return b"".join((RECORD_MAGIC, struct.pack("<III", len(head), len(refs), len(names)), head, names,
                     refs.codes.encode("ascii"), _column_bytes(refs.lines), _column_bytes(refs.enclosing),
                     _column_bytes(refs.chunks), _column_bytes(refs.modules)))


def decode_file_symbols(raw: bytes | memoryview) -> FileSymbols:
    """The record :func:`encode_file_symbols` wrote; empty bytes are a file without symbols."""
    if not raw:
        return FileSymbols()
    view = memoryview(raw)
    if bytes(view[:1]) == b"{":  # the first, all-JSON layout (stores written while 0.2.1 was developed)
        value = json.loads(bytes(view).decode("utf-8"))
        return FileSymbols(list(value.get("d", [])), list(value.get("r", [])), list(value.get("m", [])))
    if bytes(view[:len(RECORD_MAGIC)]) != RECORD_MAGIC:
        raise ValueError("not a symbol record")
    start = len(RECORD_MAGIC)
    head_length, count, names_length = struct.unpack_from("<III", view, start)
    start += 12
    head = json.loads(bytes(view[start:start + head_length]).decode("utf-8"))
    start += head_length
    names = bytes(view[start:start + names_length]).decode("utf-8").split(_NAME_SEPARATOR) if count else []
    start += names_length
    codes = bytes(view[start:start + count]).decode("ascii")
    start += count
    columns = [_column(view, count, start + 4 * count * k) for k in range(4)]
    if len(names) != count or len(codes) != count or any(len(c) != count for c in columns):
        raise ValueError("a symbol record's columns disagree")
    refs = ReferenceColumns.__new__(ReferenceColumns)
    refs.names, refs.codes = names, codes
    refs.lines, refs.enclosing, refs.chunks, refs.modules = columns
    return FileSymbols(list(head.get("d", [])), refs, list(head.get("m", [])), list(head.get("v", [])),
                       list(head.get("b", [])))

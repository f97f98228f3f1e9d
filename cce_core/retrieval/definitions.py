"""Which name a chunk defines, read from its header line, and the line's context on disk.

A bare-identifier query (``make_response``) should be answered by the chunk
that *defines* the name, not by the tests and call sites that repeat it. A
function or class chunk's first line is its declaration, and across the
languages we index the declared name is the last identifier before the first
opening bracket, ``=``, ``:`` or the end of the line, once the declaration
keywords are skipped::

    def make_response(*args)                      -> make_response
    export const $ZodType: core.$constructor<...> -> $ZodType
    jv jv_parse_sized(const char* s, int n) {     -> jv_parse_sized
    pub fn run_benchmark(&self, ...)              -> run_benchmark
    func (r *Router) Handle(p string)             -> Handle (a receiver group is skipped)

Some chunks start in the middle of a line: an arrow function's chunk begins
at ``(inst, def) =>``, and the name it is bound to (``export const X =``)
stands before it on the same line. For those the line is read from the
indexed tree on disk, when the store lives at ``ROOT/.cce/``; a file that is
gone or changed only costs the bonus, never an error.

Two more readings of the source serve a name lookup: a line of a whole-file
chunk declares a name only in a declaration's shape (:func:`line_declaration_weight`:
not a re-export list's ``  safeParse,``, and a prototype only in part), and a
declaration that binds a value (``export const X =``, :func:`opens_definition`)
names the chunk starting on its line or just below it, which holds no token
of the name itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from cce_core.foundation.textrules import tokenize

# Words that introduce or qualify a declaration: never the declared name itself.
_DECLARATION_WORDS_TEXT = """
def async function func fn class struct enum union trait interface typedef module impl const let var
static pub export default public private protected internal abstract final override virtual inline extern
unsafe readonly declare namespace package mut val macro_rules define
"""
DECLARATION_WORDS = frozenset(_DECLARATION_WORDS_TEXT.split())

_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_STOPS = "(=:{<;[,"
# How far into a header line a declaration may reach before the name.
_HEADER_LIMIT = 240
# Files larger than this are not read for the lines around a chunk.
MAX_SOURCE_BYTES = 4 * 1024 * 1024
# A declaration without a body (a prototype, an overload signature) is worth this share of a definition.
FORWARD_SHARE = 0.5


def declared_name(header: str) -> str | None:
    """The name ``header`` (one declaration line) declares, or None when it declares none."""
    line = header[:_HEADER_LIMIT].strip()
    if line.startswith("#define") or line.startswith("# define"):
        match = _NAME.search(line, line.index("define") + len("define"))
        return match.group(0) if match else None
    last: str | None = None
    pos = 0
    depth_skipped = False
    while pos < len(line):
        ch = line[pos]
        if ch in _STOPS:
            if ch == ":" and line[pos:pos + 2] == "::":  # a path separator, not a type annotation
                pos += 2
                continue
            if ch == "(" and last is None and not depth_skipped:
                # ``func (r *Router) Name(`` / ``fn (self)``: a receiver group before the name.
                close = line.find(")", pos)
                if close < 0:
                    return None
                pos = close + 1
                depth_skipped = True
                continue
            return last
        match = _NAME.match(line, pos)
        if match:
            word = match.group(0)
            if word not in DECLARATION_WORDS:
                last = word
            pos = match.end()
            continue
        pos += 1
    return last


def declared_written(header: str) -> str | None:
    """The declared name with a ``!`` or ``?`` written onto it (``route!``), which some languages
    make part of a name; the family's tokens drop it."""
    name = declared_name(header)
    if name is None:
        return None
    line = header[:_HEADER_LIMIT]
    at = _name_at(line, name)
    if at >= 0:
        after = line[at + len(name):at + len(name) + 2]
        if after[:1] in ("!", "?") and after[1:2] != "=":
            return name + after[0]
    return name


def _name_at(line: str, name: str) -> int:
    """Where ``name`` stands in ``line`` as a whole word (not inside a longer name), else -1."""
    at = line.find(name)
    while at >= 0:
        before = line[at - 1] if at > 0 else " "
        after = line[at + len(name)] if at + len(name) < len(line) else " "
        if not (before.isalnum() or before in "_$") and not (after.isalnum() or after in "_$"):
            return at
        at = line.find(name, at + 1)
    return -1


def line_declaration_weight(line: str, written: str) -> float:
    """How fully one line of a whole-file chunk declares ``written``: 1, ``FORWARD_SHARE``, or 0.

    Scanning a file line by line finds list items and re-exports (``  safeParse,``)
    as readily as declarations, so the name must either follow a declaration word
    or be followed by what opens a definition (``(``, ``=``, ``:``, ``<``, ``{``).
    A line that closes its statement right after the parameter list (``f(int x);``)
    declares what another file defines: it counts as a forward declaration.
    """
    if declared_written(line) != written and declared_name(line) != written:
        return 0.0
    stripped = line.strip()
    at = _name_at(stripped, written)
    if at < 0:
        return 0.0
    words_before = set(_NAME.findall(stripped[:at]))
    follow = stripped[at + len(written):].lstrip()[:1]
    if not (words_before & DECLARATION_WORDS) and follow not in ("(", "=", ":", "<", "{") \
            and not stripped.startswith("#"):
        return 0.0
    if stripped.endswith(";") and "(" in stripped[at:] and "{" not in stripped and "=" not in stripped[at:]:
        return FORWARD_SHARE
    return 1.0


def opens_definition(line: str, written: str) -> bool:
    """Whether ``line`` binds ``written`` to a value: a declaration word first, then the
    name followed by ``=`` (after an optional ``: Type``) or ``(``.

    ``export const create = (`` and ``export const X: T =`` (the value on the next
    lines) bind a name to whatever chunk starts there: an arrow function or a call
    wrapping one has no name of its own, so this line is its declaration. Whether
    the value may continue on the next lines is :func:`leaves_open`'s question.
    """
    stripped = line.strip()
    first_word = _NAME.match(stripped)
    if first_word is None or first_word.group(0) not in DECLARATION_WORDS:
        return False
    if declared_name(stripped) != written:
        return False
    at = _name_at(stripped, written)
    rest = stripped[at + len(written):]
    return bool(re.match(r"\s*(?::[^=]*)?=(?!=)", rest)) or rest.lstrip().startswith("(")


def leaves_open(line: str) -> bool:
    """Whether ``line`` ends mid-statement (``=``, an opening bracket, ``,`` or ``=>``), so the
    next lines hold the value it binds."""
    return line.rstrip().endswith(("=", "(", "[", "{", ",", "=>"))


def is_comment_line(line: str) -> bool:
    """A line holding only a comment or an annotation such as ``/*@__PURE__*/`` (never code)."""
    stripped = line.strip()
    return stripped.startswith(("//", "/*", "*", "#")) and (stripped.endswith("*/") or not stripped.startswith("/*")) \
        and not stripped.startswith("#define")


def declared_tokens(header: str) -> tuple[str, ...]:
    """The family tokens of the declared name (``$ZodType`` -> ``("zodtype",)``), empty for none."""
    name = declared_name(header)
    return tuple(tokenize(name)) if name else ()


def declaration(header: str) -> tuple[tuple[str, ...], str]:
    """(family tokens, name as written) of what ``header`` declares; ``((), "")`` for nothing."""
    name = declared_name(header)
    return (tuple(tokenize(name)), name) if name else ((), "")


class SourceLines:
    """Lines of the indexed files, read on demand from the tree the store was built from."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._files: dict[str, Sequence[str] | None] = {}

    def line(self, path: str, number: int) -> str | None:
        lines = self.lines(path)
        if lines is None or not 0 < number <= len(lines):
            return None
        return lines[number - 1]

    def lines(self, path: str) -> Sequence[str] | None:
        """Every line of ``path`` (read once), or None when it cannot be read."""
        if self.root is None:
            return None
        lines = self._files.get(path, ())
        if lines == ():
            lines = self._files[path] = self._read(path)
        return lines

    def raw(self, path: str) -> bytes | None:
        """The bytes of ``path`` (not kept: a scan over many files only splits those it needs)."""
        if self.root is None:
            return None
        target = self.root / path
        try:
            if target.stat().st_size > MAX_SOURCE_BYTES:
                return None
            return target.read_bytes()
        except (OSError, ValueError):
            return None

    def _read(self, path: str) -> Sequence[str] | None:
        raw = self.raw(path)
        return None if raw is None else raw.decode("utf-8", errors="replace").split("\n")


def header_of(content: str, path: str, start_line: int, source: SourceLines) -> str:
    """The declaration line of a chunk: its first line, with what precedes it on that line in the file."""
    first = content.split("\n", 1)[0]
    if declared_name(first) is not None:
        return first
    whole = source.line(path, start_line)
    if whole is not None and whole.rstrip("\r").endswith(first.rstrip("\r")):
        return whole
    return first

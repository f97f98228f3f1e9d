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
        if self.root is None:
            return None
        lines = self._files.get(path, ())
        if lines == ():
            lines = self._files[path] = self._read(path)
        if lines is None or not 0 < number <= len(lines):
            return None
        return lines[number - 1]

    def _read(self, path: str) -> Sequence[str] | None:
        assert self.root is not None
        target = self.root / path
        try:
            if target.stat().st_size > 4 * 1024 * 1024:
                return None
            return target.read_bytes().decode("utf-8", errors="replace").split("\n")
        except (OSError, ValueError):
            return None


def header_of(content: str, path: str, start_line: int, source: SourceLines) -> str:
    """The declaration line of a chunk: its first line, with what precedes it on that line in the file."""
    first = content.split("\n", 1)[0]
    if declared_name(first) is not None:
        return first
    whole = source.line(path, start_line)
    if whole is not None and whole.rstrip("\r").endswith(first.rstrip("\r")):
        return whole
    return first

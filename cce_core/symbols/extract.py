"""One file's symbols from its parse tree: the pack's tags query run over the tree the chunker already has.

The chunker runs the query in its own walk (:meth:`SymbolExtractor.run`, which
reads the matches into byte offsets at once) and hands over the (redacted)
bytes and the chunks it cut (:meth:`SymbolExtractor.encoded`), so a file is
parsed once for both. Lines come from newline offsets, never from
``Node.start_point`` (see the chunker for the tree-sitter bug that avoids).
Each definition learns its enclosing definition and chunk in one sweep over
the definitions, which also cuts the file into stretches with one innermost
definition each; each reference's line, definition and chunk are then found
a column at a time by bisection, in C.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from functools import partial
from itertools import compress, count, repeat
from typing import TYPE_CHECKING, Any

from cce_core.foundation.collector import collector_paused
from cce_core.hookspecs import (
    ANNOTATION_HINT,
    ATTRIBUTE_HINT,
    LOCAL_NAME_HINT,
    RESULT_TYPE_HINT,
    RESULT_VARIABLE_HINT,
    BindingHint,
)
from cce_core.symbols.model import (
    CALL,
    IMPORT,
    REFERENCE,
    REFERENCE_CODES,
    SELF_CALL,
    SIGNATURE_MAX_CHARS,
    FileSymbols,
    ReferenceColumns,
    encode_file_symbols,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from tree_sitter import Node, Query

    from cce_core.hookspecs import BindingReader, LanguagePack
    from cce_core.plugins.host import PluginHost

_NEWLINE = re.compile(rb"\n")
_UNKNOWN = ("", "", "")  # a pattern whose role is not learnt yet
# The captures of the chunker's own patterns when they share the tags query.
CHUNKER_CAPTURES = ("chunk", "import")
NAME_MAX_CHARS = 200
# When one name node is captured by several patterns, the strongest reading wins.
_REFERENCE_RANK = {SELF_CALL: -1, CALL: 0, IMPORT: 1, REFERENCE: 2}
_CALL_KINDS = frozenset({CALL, SELF_CALL})
_QUOTES = "\"'`<>"


# Among definitions of one name node with equal spans, a finer kind wins over a general one.
_SPECIFIC_KINDS = frozenset({"method", "constructor"})


def _wider_or_finer(new: tuple[int, int, int, str, str], old: tuple[int, int, int, str, str]) -> bool:
    new_width, old_width = new[1] - new[0], old[1] - old[0]
    if new_width != old_width:
        return new_width > old_width
    if (new[3] in _SPECIFIC_KINDS) != (old[3] in _SPECIFIC_KINDS):
        return new[3] in _SPECIFIC_KINDS
    return bool(new[4]) and not old[4]  # then the reading that names the receiver type


_DOT, _GREATER, _MINUS, _NEWLINE_BYTE = ord("."), ord(">"), ord("-"), ord("\n")
_SPACE = frozenset(b" \t\r\n")
# What may stand before blanks that follow a member access: more blanks, "." or the ">" of "->".
_BLANK_OR_ACCESSOR = _SPACE | {_DOT, _GREATER}


# How many blanks (line breaks included) may stand between "." or "->" and the name read through it.
_MAX_BLANKS_AFTER_ACCESSOR = 63


# _after_receiver for a name after blanks, read backwards in the reversed text: 1 to 63 blanks, then a "." that
# does not follow another (or starts the file), or the ">" of "->".
_REVERSED_BLANKS_AFTER_ACCESSOR = re.compile(rb"[ \t\r\n]{1,%d}(?:\.(?!\.)|>-)" % _MAX_BLANKS_AFTER_ACCESSOR)


def _after_receiver(source: bytes, start: int) -> bool:
    """Whether the name at ``start`` follows ``.`` or ``->`` (blanks between allowed), not ``..`` (a range)."""
    i = start - 1
    if i >= 0 and source[i] in _SPACE:  # a chain broken over lines, or (mostly) a name after indentation
        window = max(0, start - _MAX_BLANKS_AFTER_ACCESSOR)
        i = window + len(source[window:start].rstrip(b" \t\r\n")) - 1
    if i < 0:
        return False
    if source[i] == _DOT:
        return i == 0 or source[i - 1] != _DOT
    return source[i] == _GREATER and i > 0 and source[i - 1] == _MINUS


_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_OPEN_PAREN, _CLOSE_PAREN = ord("("), ord(")")
# How many plain names a typed receiver may chain (`self.app.config` is three).
MAX_CHAIN = 3
_CALL_SCAN_BYTES = 2000
# A receiver chain read right to left in the reversed text: up to MAX_CHAIN names joined by ".", each a run
# of word bytes taken whole (atomic) whose first byte in reading order is not a digit (the look-behind).
_REVERSED_NAME = rb"(?>[A-Za-z0-9_]+)(?<![0-9])"
_REVERSED_CHAIN = re.compile(_REVERSED_NAME + rb"(?:\." + _REVERSED_NAME + rb"){0,%d}" % (MAX_CHAIN - 1))
_SUPER_CALL = b"super()"
# The word (callee) just before an offset; a callee with its receivers (`flask.Flask`); read in the reversed text.
_REVERSED_WORD = re.compile(rb"[A-Za-z0-9_]*")
_REVERSED_CALLEE = re.compile(rb"([A-Za-z0-9_.]*)[ \t\n\r\x0b\x0c]*")  # then the blanks before it (regex \s)
_ASSIGNMENT_ENDS = frozenset(b"=tw")  # the last byte of "=", "await", "new"
# The names a use is read through (`a.b.` before `c`), read backwards from the use: up to MAX_CHAIN times
# blanks, ".", then a name as in _REVERSED_CHAIN (see _add_receiver_uses).
_REVERSED_PART = rb"[ \t\r\n]*\.(" + _REVERSED_NAME + rb")"


def _nested_parts(count: int) -> bytes:
    """``count`` parts, each further one optional and only after the one before it: ``A(?:B(?:C)?)?``."""
    return _REVERSED_PART + (rb"(?:" + _nested_parts(count - 1) + rb")?" if count > 1 else b"")


_REVERSED_PARTS = re.compile(_nested_parts(MAX_CHAIN))
# Receivers whose meaning needs no binding: the instance, the class, the parent class.
# An annotation in a class body types an attribute of its instances (`config: Config`).
_CLASS_BODY_KINDS = frozenset({"class", "interface", "struct"})
_SELF_RECEIVERS = frozenset({"self", "cls", "this", "super"})
_SELF_RECEIVER_BYTES = frozenset(name.encode("ascii") for name in _SELF_RECEIVERS)
# What stands before a constructor call that gives a variable its type: `app = Flask(`, `app: Flask = Flask(`,
# `const app = new Flask(`, `app = await make(`. Read from the text, like the receiver itself.
_ASSIGNED = re.compile(rb"(?m:^|[;{]|\b(?:const|let|var))\s*((?:self\.|this\.)?[A-Za-z_]\w*)"
                       rb"\s*(?::[^=\n]*)?:?=\s*(?:await\s+|new\s+)?$")


# `from m import Base as Alias`, `import { Base as Alias }`: the name a file uses for an imported one.
_ALIAS = re.compile(rb"\s+as\s+([A-Za-z_]\w*)")
# The scope a binding row names for an alias: ``[ALIAS_SCOPE, alias, imported name]``.
ALIAS_SCOPE = -2
# The variable a binding row names for a function's declared result: ``[function, RETURNS, type]``.
RETURNS = "->"
# A binding's type that is a call's result: CALL_RESULT + the call's reference index in the file.
CALL_RESULT = "#"
# A binding's type that is a variable of the same function: RETURNED_VARIABLE + its name.
RETURNED_VARIABLE = "="
# The variable a binding row names for a function's own names (its parameters and what it assigns),
# the type holding them joined by ",": a bare use of one of them is that local, never a definition.
LOCALS = "()"


def _receiver_before(source: bytes, start: int, calls: dict[int, int] | None = None,
                     reversed_text: bytes | None = None) -> str | None:
    """What is written before ``.name`` at ``start``, when a reading of the text can type it; else None.

    A plain name or a chain of them (``app``, ``requests.utils``, ``self.app``: at most
    :data:`MAX_CHAIN` parts), ``super`` for ``super().name``, or :data:`CALL_RESULT` + the index of
    the call whose value it is (``app.test_client().open``; ``calls``: name start -> reference
    index of the calls already read). None for anything else (a subscript, a literal).
    ``reversed_text`` is ``source[::-1]``, when the caller has it already.
    """
    i = start - 1
    while i >= 0 and source[i] in _SPACE:
        i -= 1
    if i < 1 or source[i] != _DOT:
        return None
    end = i
    if source[end - len(_SUPER_CALL):end] == _SUPER_CALL:
        return "super"
    if source[end - 1] == _CLOSE_PAREN:
        opening = _matching_open(source, end - 1)
        if opening is None or calls is None:
            return None
        j = opening - 1
        while j >= 0 and source[j] in _WORD:
            j -= 1
        found = calls.get(j + 1) if j + 1 < opening else None
        return f"{CALL_RESULT}{found}" if found is not None else None
    # The chain, read backwards in one regex step over the reversed text (see _REVERSED_CHAIN).
    reversed_source = reversed_text if reversed_text is not None else source[::-1]
    chain = _REVERSED_CHAIN.match(reversed_source, len(source) - end)
    if chain is None:
        return None
    after = chain.end()
    if after < len(reversed_source) and reversed_source[after] == _DOT:
        return None  # an empty part (`a..b`, `x .y`) or a longer chain: left untyped
    return source[len(source) - after:end].decode("ascii")


def _add_receiver_uses(source: bytes, refs: dict[int, tuple[int, str, str | None]],
                       reversed_source: bytes | None = None) -> None:
    """The names a use is read through are uses too: ``run_command`` and ``logger`` in
    ``run_command.make_context()`` and ``self.logger.error()`` (``self``/``this``/``cls`` aside).

    A tags query captures the last name of a chain (the call); the ones before it are found in the
    text, like the receiver itself, and recorded as plain references: up to :data:`MAX_CHAIN` names,
    each right before a "." (blanks may follow the "."), none empty or starting with a digit, read in
    one regex step over the reversed text (``reversed_source``: ``source[::-1]``, when the caller has it).
    """
    reversed_source = reversed_source if reversed_source is not None else source[::-1]
    n = len(source)
    match = _REVERSED_PARTS.match
    for key in list(refs):
        found = match(reversed_source, n - key)
        if found is None:
            continue
        for part in range(1, MAX_CHAIN + 1):
            reversed_start, reversed_end = found.span(part)
            if reversed_start < 0:
                break
            start, end = n - reversed_end, n - reversed_start
            if start not in refs and source[start:end] not in _SELF_RECEIVER_BYTES:
                refs[start] = (end, REFERENCE, None)


def _matching_open(source: bytes, close: int) -> int | None:
    """The ``(`` that the ``)`` at ``close`` ends (brackets counted, strings not), within a few lines."""
    stop = max(0, close - _CALL_SCAN_BYTES)
    # Most calls hold no parenthesis in their arguments: the last "(" is the one when no ")" follows it.
    last_open = source.rfind(b"(", stop, close)
    if last_open >= 0 and source.find(b")", last_open + 1, close) < 0:
        return last_open
    depth = 0
    i = close
    while i >= stop:
        if source[i] == _CLOSE_PAREN:
            depth += 1
        else:  # an opening one: every position visited holds a parenthesis
            depth -= 1
            if depth == 0:
                return i
        # Jump to the previous parenthesis (C-speed searches instead of a Python step per byte).
        i = max(source.rfind(b"(", stop, i), source.rfind(b")", stop, i))
        if i < 0:
            return None
    return None


def _assigned_variable(source: bytes, line_start: int, name_start: int, name_end: int,
                       reversed_source: bytes | None = None) -> str | None:
    """The variable a call at ``name_start`` is assigned to (``app`` in ``app = flask.Flask(...)``), or None.

    The caller has seen an "=" between ``line_start`` and the call (most calls have none: they skip this).
    ``reversed_source`` is ``source[::-1]``, when the caller has it already.
    """
    n = len(source)
    if name_end >= n or source[name_end] != _OPEN_PAREN:  # most calls: the "(" right after the name
        after = name_end
        while after < n and source[after] in _SPACE:
            after += 1
        if after >= n or source[after] != _OPEN_PAREN:
            return None
    # The callee expression starts before its receivers: `flask.Flask(`; read backwards within the line,
    # with the blanks before it.
    reversed_source = reversed_source if reversed_source is not None else source[::-1]
    callee = _REVERSED_CALLEE.match(reversed_source, n - name_start, n - line_start)
    before_callee = callee.end()  # type: ignore[union-attr]  # a starred pattern always matches
    # _ASSIGNED must end right before the callee: after "=", "await" or "new" (and blanks), so the last
    # byte before them is one of "=tw". Most calls on a line with an "=" are links of a chain
    # (`z.object(...).strict()`, a ")" there), which this rules out without the regex.
    if before_callee >= n - line_start or reversed_source[before_callee] not in _ASSIGNMENT_ENDS:
        return None
    start = name_start - len(callee.group(1))  # type: ignore[union-attr]
    found = _ASSIGNED.search(source, line_start, start)
    return found.group(1).decode("ascii") if found is not None and found.end() == start else None


# In a query's source: a string, a comment, or a capture (only the last is kept, as group 1).
_QUERY_CAPTURE = re.compile(rb'"(?:[^"\\\n]|\\.)*"|;[^\n]*|@([\w.\-]+)')


def _role(capture: str) -> tuple[str, str] | None:
    """``("d", kind)`` for ``definition.<kind>``, ``("r", kind)`` for ``reference.<kind>``, else None."""
    if capture.startswith("definition.") and len(capture) > len("definition."):
        return "d", capture[len("definition."):]
    if capture.startswith("reference."):
        suffix = capture[len("reference."):]
        if suffix == "call.self":
            return "r", SELF_CALL
        return "r", CALL if suffix == "call" else IMPORT if suffix == "import" else REFERENCE
    return None


def _text(source: bytes, start: int, end: int) -> str | None:
    return _raw_name(source[start:end]) if end - start <= NAME_MAX_CHARS * 4 else None


def _raw_name(raw: bytes) -> str | None:
    """The name ``raw`` (a name node's bytes) stands for, or None when it is too long or not a name."""
    if len(raw) > NAME_MAX_CHARS * 4:
        return None
    text = raw.decode("utf-8", errors="replace").strip()
    if not text or len(text) > NAME_MAX_CHARS or "\n" in text or "\x1f" in text:  # U+001F separates stored names
        return None
    return text


class FileCaptures:
    """What a file's tags matches capture, as byte offsets (no tree nodes): :meth:`SymbolExtractor.run`'s reading.

    Plain references are resolved as they come (a name captured by several patterns keeps the strongest
    reading: the first of equal ones). What needs the text to decide is kept in match order, which
    decides ties: the definitions (the receiver's text breaks ties), the imports (each names its match's
    first module) and the module captures of each match.
    """

    __slots__ = ("defs", "imports", "module_groups", "refs")

    def __init__(self) -> None:
        # (name start, node start, node end, name end, kind, the receiver's (start, end) or None)
        self.defs: list[tuple[int, int, int, int, str, tuple[int, int] | None]] = []
        self.refs: dict[int, tuple[int, str, str | None]] = {}  # name start -> (name end, kind, None)
        self.imports: list[tuple[int, int, int]] = []  # (name start, name end, index in module_groups or -1)
        self.module_groups: list[list[tuple[int, int]]] = []  # the (start, end) of each match's module captures


class SymbolExtractor:
    """A compiled tags query and the reading of its captures.

    The query may also carry the chunker's own patterns after the tags (``tags_length``: where they
    start in the query text): one walk of the tree then finds the chunk and import nodes and the
    symbols together (:meth:`run`), which costs about as much as the tags alone.
    """

    def __init__(self, query: Query, tags_length: int | None = None, text: str | None = None) -> None:
        self.query = query
        names = [query.capture_name(i) for i in range(query.capture_count)]
        self.roles = {name: _role(name) for name in names}
        # Captures the engine does not read (@doc, @ignore) are switched off: fewer nodes to hand over.
        for name in names:
            if name not in ("name", "module", "receiver", *CHUNKER_CAPTURES) and self.roles[name] is None \
                    and not name.startswith("_"):
                query.disable_capture(name)
        self._pattern_role: dict[int, tuple[str, str, str] | None] = {}
        # The reference kind of each pattern whose matches need no reading but their @name nodes: one role,
        # learnt from its text, no @module, not an import (an import's module comes from its own match).
        self._plain_reference_kind: dict[int, str] = {}
        self.chunker_patterns = frozenset(
            i for i in range(query.pattern_count)
            if tags_length is not None and query.start_byte_for_pattern(i) >= tags_length)
        if text is not None:
            self._learn_roles_from_text(text.encode("utf-8"))
        # What the pack reads from a file's text about its names (cce_symbol_binding_reader), if anything.
        self.binding_reader: BindingReader | None = None

    def _learn_roles_from_text(self, text: bytes) -> None:
        """Each pattern's role read from its source, so a reference's own node need not be captured.

        A reference pattern's outer capture (``@reference.call``) only says what the pattern is; read
        from the text once, it can be switched off, and every match then hands over one node (the
        name) instead of two. A pattern naming several roles keeps learning from its first match.
        """
        query = self.query
        keep: set[str] = set()
        readable: set[str] = set()
        for pattern in range(query.pattern_count):
            if pattern in self.chunker_patterns:
                continue
            source = text[query.start_byte_for_pattern(pattern):query.end_byte_for_pattern(pattern)]
            named = dict.fromkeys(found.decode("utf-8", "replace")
                                  for found in _QUERY_CAPTURE.findall(source) if found)
            roles = [(name, *role) for name in named if (role := self.roles.get(name)) is not None]
            if len(roles) > 1:
                keep.update(name for name, _side, _kind in roles)
                continue
            self._pattern_role[pattern] = roles[0] if roles else None
            readable.update(name for name, side, _kind in roles if side == "r")
            if roles and roles[0][1] == "r" and roles[0][2] != IMPORT and "module" not in named:
                self._plain_reference_kind[pattern] = roles[0][2]
        for name in sorted(readable - keep):
            self.query.disable_capture(name)

    def run(self, root: Node) -> tuple[FileCaptures, dict[str, list[Node]]]:
        """One walk: (what the tags matched, for :meth:`encoded`; the chunker's ``chunk`` and ``import`` nodes).

        The matches are a few objects per use (a tuple, a dict, a list, a node: ~170k on zod) that hold no
        reference cycle and die here: they are read into offsets at once and dropped, with the cyclic
        collector paused meanwhile (as the walker pauses it), which would otherwise traverse them again and
        again as they pile up. Only the thread that paused it resumes it.
        """
        from tree_sitter import QueryCursor

        with collector_paused():
            matches = QueryCursor(self.query).matches(root)
            captured: dict[str, list[Node]] = {}
            if self.chunker_patterns:
                mine = self.chunker_patterns
                for _pattern, captures in [match for match in matches if match[0] in mine]:
                    for capture_name, nodes in captures.items():
                        captured.setdefault(capture_name, []).extend(nodes)
            # The chunker's matches stay in the list: they capture neither a name nor a module
            # (CHUNKER_CAPTURES), so read_matches passes over them, which costs less than copying the rest out.
            read = self.read_matches(matches)
            del matches  # freed before the collector resumes
        return read, captured

    def _role_of(self, pattern: int, captures: dict[str, list[Node]]) -> tuple[str, str, str] | None:
        """The role capture of ``pattern`` (learnt from its first match: a pattern's captures are fixed)."""
        if pattern not in self._pattern_role:
            found = None
            for capture_name in captures:
                role = self.roles.get(capture_name)
                if role is not None:
                    found = (capture_name, role[0], role[1])
                    break
            self._pattern_role[pattern] = found
        return self._pattern_role[pattern]

    def extract(self, root: Node, source: bytes, chunks: Sequence[Any]) -> bytes:
        """The encoded :class:`FileSymbols` of one file (``chunks``: the file's chunks, pre-order)."""
        return encode_file_symbols(self.symbols(root, source, chunks))

    def symbols(self, root: Node, source: bytes, chunks: Sequence[Any]) -> FileSymbols:
        return self.from_captures(self.run(root)[0], source, chunks)

    def encoded(self, captures: FileCaptures, source: bytes, chunks: Sequence[Any],
                newlines: list[int] | None = None) -> bytes:
        """The encoded symbols of one file from what :meth:`run` read.

        ``newlines``: the offsets of the file's newline bytes, when the caller has them already.
        """
        return encode_file_symbols(self.from_captures(captures, source, chunks, newlines))

    def from_matches(self, matches: list[tuple[int, dict[str, list[Node]]]], source: bytes,
                     chunks: Sequence[Any], newlines: list[int] | None = None) -> FileSymbols:
        """The symbols of one file from the tags query's matches over its tree."""
        return self.from_captures(self.read_matches(matches), source, chunks, newlines)

    def read_matches(self, matches: list[tuple[int, dict[str, list[Node]]]]) -> FileCaptures:
        """The offsets of what the matches capture, in match order where the order decides (see FileCaptures)."""
        # The hot path of indexing with symbols: plain loops, no per-item function calls.
        read = FileCaptures()
        defs, refs, imports, module_groups = read.defs, read.refs, read.imports, read.module_groups
        rank = _REFERENCE_RANK
        role_of = self._pattern_role.get
        plain_kind = self._plain_reference_kind.get
        for pattern, captures in matches:
            kind = plain_kind(pattern)
            if kind is not None:  # most matches: a call or a use, whose one reading is its name nodes
                for name_node in captures.get("name") or ():
                    key = name_node.start_byte
                    if key not in refs or rank[kind] < rank[refs[key][1]]:
                        refs[key] = (name_node.end_byte, kind, None)
                continue
            group = -1
            if "module" in captures:
                module_groups.append([(node.start_byte, node.end_byte) for node in captures["module"]])
                group = len(module_groups) - 1
            names = captures.get("name")
            if not names:
                continue
            role = role_of(pattern, _UNKNOWN)
            if role is _UNKNOWN:
                role = self._role_of(pattern, captures)
            if role is None:
                continue
            capture_name, side, kind = role
            if side == "d":
                outer = captures[capture_name][0]
                # A method declared outside its type (Go) names the type as @receiver.
                receiver = (captures["receiver"][0].start_byte, captures["receiver"][0].end_byte) \
                    if "receiver" in captures else None
                defs.extend((name_node.start_byte, outer.start_byte, outer.end_byte, name_node.end_byte, kind,
                             receiver) for name_node in names)
            elif kind == IMPORT:  # its module is read from the text: decided with the text (from_captures)
                imports.extend((name_node.start_byte, name_node.end_byte, group) for name_node in names)
            else:
                for name_node in names:
                    key = name_node.start_byte
                    prior = refs.get(key)
                    if prior is None or rank[kind] < rank[prior[1]]:
                        refs[key] = (name_node.end_byte, kind, None)
        return read

    def from_captures(self, read: FileCaptures, source: bytes, chunks: Sequence[Any],
                      newlines: list[int] | None = None) -> FileSymbols:
        """The symbols of one file from what :meth:`read_matches` read (``read`` is left as it was)."""
        # Each module capture's text, in match order: the file's modules, and each match's first one.
        modules: dict[str, None] = {}
        specs: list[str | None] = []
        for group in read.module_groups:
            spec = None
            for start, end in group:
                text = _text(source, start, end)
                if text is not None and text.strip(_QUOTES):
                    modules.setdefault(text.strip(_QUOTES), None)
                    spec = spec or text.strip(_QUOTES)
            specs.append(spec)
        # name start -> (node start, node end, name end, kind, receiver type or "")
        defs: dict[int, tuple[int, int, int, str, str]] = {}
        for key, start, end, name_end, kind, receiver_span in read.defs:
            receiver = (_text(source, *receiver_span) or "") if receiver_span is not None else ""
            # Several patterns may name one definition (a method is a function too): the widest
            # node wins (a C function's body, not just its declarator), then the finer kind.
            found = (start, end, name_end, kind, receiver)
            prior_def = defs.get(key)
            if prior_def is None or _wider_or_finer(found, prior_def):
                defs[key] = found
        refs = dict(read.refs)  # name start -> (name end, kind, import's module)
        # An import outranks a plain use and yields to a call; among imports of one name the first match wins.
        import_rank, rank = _REFERENCE_RANK[IMPORT], _REFERENCE_RANK
        for key, name_end, module_group in read.imports:
            prior = refs.get(key)
            if prior is None or import_rank < rank[prior[1]]:
                refs[key] = (name_end, IMPORT, specs[module_group] if module_group >= 0 else None)
        reversed_source = source[::-1]  # receivers are read backwards
        _add_receiver_uses(source, refs, reversed_source)
        for key in defs:
            refs.pop(key, None)  # a definition's own name is not also a use of it
        return self._record(source, chunks, defs, refs, list(modules), newlines, self.binding_reader,
                            reversed_source)

    @staticmethod
    def _record(source: bytes, chunks: Sequence[Any], defs: dict[int, tuple[int, int, int, str, str]],
                refs: dict[int, tuple[int, str, str | None]], modules: list[str],
                newline_offsets: list[int] | None = None, binding_reader: BindingReader | None = None,
                reversed_source: bytes | None = None) -> FileSymbols:
        # The hot path of symbol extraction. What every reference needs (its name, line, enclosing
        # definition and chunk) is built a column at a time by C-level maps; the Python loops below
        # only visit the references that need a reading of the text (a receiver, an assignment).
        found_newlines = [m.start() for m in _NEWLINE.finditer(source)] if newline_offsets is None else \
            newline_offsets
        n_lines = len(found_newlines) + 1
        # line_starts[k] + 1 is where line k + 1 starts (-1 in front, a sentinel past the end), so the line
        # of an offset is bisect_left(line_starts, offset): the chunker's rule for a definition's end too.
        line_starts = [-1, *found_newlines, len(source) + 1]
        # The innermost chunk of each line: chunks come in pre-order, so an inner one is written last.
        line_chunk = [-1] * (n_lines + 1)
        # A definition's chunk is the one cut from the same lines when there is one (several chunks
        # may share a line: a one-line class and its method), else the innermost chunk at its line.
        exact: dict[tuple[int, int], int] = {}
        for i, chunk in enumerate(chunks):
            first, last = max(chunk.start_line, 1), min(chunk.end_line, n_lines)
            line_chunk[first:last + 1] = [i] * (last - first + 1)
            exact.setdefault((chunk.start_line, chunk.end_line), i)

        # Definitions by start, outer first (at one start the longer), with a stack of the open ones.
        # The sweep also cuts the file into stretches with one innermost definition each: from
        # bounds[k] on (up to the next bound) it is owners[k + 1]; a reference's enclosing definition
        # is then one bisection. Spans are syntax nodes, so they nest: the top of the stack ends first.
        definitions: list[list[object]] = []
        spans: list[tuple[int, int]] = []  # (start, end byte) of each definition, for the annotations
        stack: list[tuple[int, int]] = []  # (end byte, definition index) of the open definitions
        bounds: list[int] = []
        owners: list[int] = [-1]  # owners[k + 1] holds from bounds[k] on; before the first bound, none
        for start, negative_end, def_key in sorted((start, -end, key)
                                                   for key, (start, end, _ne, _k, _r) in defs.items()):
            while stack and stack[-1][0] <= start:
                bounds.append(stack.pop()[0])
                owners.append(stack[-1][1] if stack else -1)
            _start, end, name_end, kind, receiver = defs[def_key]
            name = _raw_name(source[def_key:name_end])
            if name is None:
                continue
            end = -negative_end
            line = bisect_left(line_starts, start)
            stop = source.find(b"\n", start, end)
            first_line = source[start:stop if stop >= 0 else end].decode("utf-8", errors="replace").strip()
            end_line = bisect_left(line_starts, end)  # the chunker's rule: a definition and its chunk agree
            definitions.append([name, kind, line, end_line, stack[-1][1] if stack else -1,
                                exact.get((line, end_line), line_chunk[line]), first_line[:SIGNATURE_MAX_CHARS]])
            if receiver:
                definitions[-1].append(receiver)
            stack.append((end, len(definitions) - 1))
            spans.append((start, end))
            bounds.append(start)
            owners.append(len(definitions) - 1)
        while stack:
            bounds.append(stack.pop()[0])
            owners.append(stack[-1][1] if stack else -1)

        # The references as columns (model.ReferenceColumns), in file order.
        keys = sorted(refs)
        ends: Sequence[int] = ()
        kinds: Sequence[str] = ()
        specs: Sequence[str | None] = ()
        if keys:
            ends, kinds, specs = zip(*map(refs.__getitem__, keys), strict=True)
        raw_names = list(map(source.__getitem__, map(slice, keys, ends)))
        names = {raw: _raw_name(raw) for raw in set(raw_names)}  # each distinct name decoded once
        ref_names: list[str | None] = list(map(names.__getitem__, raw_names))
        if None in names.values():  # a name that is no name (too long, several lines): not recorded
            kept = [i for i, name in enumerate(ref_names) if name is not None]
            keys = [keys[i] for i in kept]
            ends, kinds, specs = [ends[i] for i in kept], [kinds[i] for i in kept], [specs[i] for i in kept]
            ref_names = [ref_names[i] for i in kept]
        ref_lines = list(map(partial(bisect_left, line_starts), keys))
        ref_enclosing = list(map(owners.__getitem__, map(partial(bisect_right, bounds), keys)))
        ref_chunks = list(map(line_chunk.__getitem__, ref_lines))
        ref_codes = list(map(REFERENCE_CODES.__getitem__, kinds))
        # The start of each call's name -> its reference index.
        calls = dict(compress(zip(keys, count()), map(_CALL_KINDS.__contains__, kinds)))

        # A name right after "." or "->" (spaces and line breaks between allowed) is read through a
        # receiver: upper-case code. Language-neutral: no node kinds involved. The byte before the name
        # decides the common cases; blanks and "->" take the full reading. What stands before the "."
        # is kept when a reading can type it (see _receiver_before, whose common case is inlined).
        receiver_refs: list[int] = []  # the references read through a receiver a reading can type
        receiver_texts: list[str] = []  # what stands before their "." (see _receiver_before)
        n = len(source)
        if reversed_source is None:
            reversed_source = source[::-1]  # receivers are read backwards
        blanks_after_accessor = _REVERSED_BLANKS_AFTER_ACCESSOR.match
        for i, key in enumerate(keys):
            before = source[key - 1] if key else 0
            if before == _DOT:
                if key >= 2 and source[key - 2] == _DOT:
                    continue  # a range (`a..b`), not a member
                ref_codes[i] = ref_codes[i].upper()
                end = key - 1  # the "."
                if end < 1:
                    continue
                prior = source[end - 1]
                if prior == _CLOSE_PAREN:
                    if source[end - len(_SUPER_CALL):end] == _SUPER_CALL:
                        receiver_refs.append(i)
                        receiver_texts.append("super")
                        continue
                    # The "(" of this ")": most calls hold no parenthesis in their arguments, so it is the
                    # last "(" when no ")" stands between them (else _matching_open, which starts the same way).
                    last_open = source.rfind(b"(", max(0, end - 1 - _CALL_SCAN_BYTES), end - 1)
                    opening = last_open if last_open >= 0 and source.find(b")", last_open + 1, end - 1) < 0 \
                        else _matching_open(source, end - 1)
                    if opening is None:
                        continue
                    callee = len(_REVERSED_WORD.match(reversed_source, n - opening)
                                 .group())  # type: ignore[union-attr]  # a starred pattern always matches
                    found = calls.get(opening - callee) if callee else None
                    if found is not None:
                        receiver_refs.append(i)
                        receiver_texts.append(f"{CALL_RESULT}{found}")
                elif prior in _WORD and (chain := _REVERSED_CHAIN.match(reversed_source, n - end)) is not None:
                    after = chain.end()
                    if after >= n or reversed_source[after] != _DOT:  # else an empty part or a longer chain
                        receiver_refs.append(i)
                        receiver_texts.append(source[n - after:end].decode("ascii"))
            elif before == _GREATER:
                if key > 1 and source[key - 2] == _MINUS:
                    ref_codes[i] = ref_codes[i].upper()
            elif before in _SPACE and (source[key - 2] if key > 1 else 0) in _BLANK_OR_ACCESSOR \
                    and blanks_after_accessor(reversed_source, n - key) is not None:  # _after_receiver's rule
                ref_codes[i] = ref_codes[i].upper()
                if (receiver_text := _receiver_before(source, key, calls, reversed_source)) is not None:
                    receiver_refs.append(i)
                    receiver_texts.append(receiver_text)

        bindings: list[list[object]] = []  # [scope, variable, type]; _typed_receivers sorts them
        for i in compress(count(), map(IMPORT.__eq__, kinds)):
            if (alias := _ALIAS.match(source, ends[i])) is not None:
                bindings.append([ALIAS_SCOPE, alias.group(1).decode("ascii"), ref_names[i]])
        # `app = Flask(...)`, `r = requests.get(...)` type `app`, `r`: a call assigned to a variable.
        for key, i in calls.items():
            line = ref_lines[i]
            line_start = line_starts[line - 1] + 1
            if source.rfind(b"=", line_start, key) < 0:
                continue  # most calls: no "=" before them on their line
            if source[key - 1] == _DOT and source[key - 2] == _CLOSE_PAREN:
                continue  # a chain's link (`z.object(...).strict()`): a ")" before it, never "=" (_assigned_variable)
            variable = _assigned_variable(source, line_start, key, ends[i], reversed_source)
            if variable is not None:
                # The scope is around the variable's own definition (a module-level `bp = Blueprint(...)`
                # is a definition named `bp` in some tags queries). Its type is what the call makes or
                # returns, found when the call is resolved.
                scope = ref_enclosing[i]
                while scope >= 0 and definitions[scope][0] == variable and definitions[scope][2] == line:
                    scope = definitions[scope][4]  # type: ignore[assignment]
                bindings.append([scope, variable, f"{CALL_RESULT}{i}"])
        # An import names the module it comes from (its index in ``modules``); -1 for the rest (spec None).
        module_of: dict[str | None, int] = {spec: i for i, spec in enumerate(modules)}
        ref_modules: Sequence[int] = list(map(module_of.get, specs, repeat(-1))) \
            if module_of else ()  # type: ignore[arg-type]  # never None: the default is -1
        references = ReferenceColumns(ref_names, "".join(ref_codes), ref_lines, ref_enclosing, ref_chunks,  # type: ignore[arg-type]
                                      ref_modules)
        hints = _read_hints(binding_reader, source, spans)
        receivers, bindings = _typed_receivers(source, spans, definitions, references, modules, receiver_refs,
                                               receiver_texts, bindings, hints)
        return FileSymbols(definitions, references, modules, receivers, bindings)


_IMPORT_CODE = re.compile("[iI]")  # an import's letter in a record's codes, either case
_MODULE_PATH_SEPARATORS = re.compile(r"[./]")  # `flask.json`, `./utils/x`: a module's parts may be receivers


def _read_hints(reader: BindingReader | None, source: bytes, spans: list[tuple[int, int]]) -> list[BindingHint]:
    """The pack reader's hints for one file; none when there is no reader or it fails on this file."""
    if reader is None:
        return []
    try:
        hints = reader(source, spans)
    except Exception:  # a pack's reader must never fail an index: the file just gets no hints
        return []
    return [hint for hint in hints if isinstance(hint, BindingHint)] if isinstance(hints, list) else []


def _typed_receivers(source: bytes, spans: list[tuple[int, int]], definitions: list[list[object]],
                     references: ReferenceColumns, modules: list[str], receiver_refs: list[int],
                     receiver_texts: list[str], bindings: list[list[object]],
                     hints: Sequence[BindingHint] = ()) -> tuple[list[list[object]], list[list[object]]]:
    """The receivers worth keeping (those the file can type) and the bindings worth keeping.

    ``hints`` (the pack's, see ``cce_symbol_binding_reader``) become bindings of the innermost
    definition around them. A receiver is kept when it is the instance (``self``), a variable bound
    in the file (an assignment from a call, an annotation), a name the file imports or defines, a
    module it imports, or a capitalised name (a class); the rest (``app`` as an untyped parameter)
    would only grow the record, since resolution treats a missing receiver and an unknown one alike.
    A binding is kept when a kept receiver reads it, or another file may (a module-level variable,
    an alias, a function's declared result).
    """
    wanted = set(receiver_texts)
    starts = [start for start, _end in spans]
    function_kinds = {i for i, d in enumerate(definitions) if d[1] not in _CLASS_BODY_KINDS}
    local_names: dict[int, set[str]] = {}  # one row of local names per function

    def parent(scope: int) -> int:
        return int(definitions[scope][4]) if isinstance(definitions[scope][4], int) else -1  # type: ignore[call-overload]

    for hint in hints:
        offset, name = hint.offset, hint.name
        scope = bisect_left(starts, offset + 1) - 1
        if hint.kind == ANNOTATION_HINT:
            # For a variable some receiver reads, or one declared at the start of a line (a module's,
            # which others import), in the innermost definition around it that is not the variable itself.
            if name not in wanted and offset > 0 and source[offset - 1] != _NEWLINE_BYTE:
                continue
            while scope >= 0 and (spans[scope][1] <= offset
                                  or (spans[scope][0] == offset and definitions[scope][0] == name)):
                scope = parent(scope)
            if name in wanted or scope == -1:  # a module's `g: AppGlobals = ...` may be imported
                bindings.append([scope, name, hint.value])
            continue
        while scope >= 0 and spans[scope][1] <= offset:
            scope = parent(scope)
        if hint.kind == LOCAL_NAME_HINT:
            if scope in function_kinds:
                local_names.setdefault(scope, set()).add(name)
        elif scope < 0:
            continue
        elif hint.kind == ATTRIBUTE_HINT:
            bindings.append([scope, name, RETURNED_VARIABLE + hint.value])
        elif hint.kind == RESULT_VARIABLE_HINT:
            bindings.append([scope, RETURNS, RETURNED_VARIABLE + name])
        elif hint.kind == RESULT_TYPE_HINT:
            bindings.append([scope, RETURNS, hint.value])
    bindings.extend([scope, LOCALS, ",".join(sorted(names))] for scope, names in local_names.items())
    kept: list[list[object]] = []  # [reference index, receiver text]
    used: set[str] = set()  # the texts of the kept receivers
    if receiver_refs:
        known = {str(b[1]) for b in bindings} | _SELF_RECEIVERS | {str(d[0]) for d in definitions}
        if "i" in references.codes or "I" in references.codes:
            known.update(references.names[found.start()] for found in _IMPORT_CODE.finditer(references.codes))
        known.update(part for spec in modules for part in _MODULE_PATH_SEPARATORS.split(spec) if part)
        # Decided once per distinct receiver text (a file reads `z.` or `this.` thousands of times).
        used = {text for text in wanted
                if text.startswith(CALL_RESULT) or text.partition(".")[0] in known or text[:1].isupper()}
        kept = [[i, text] for i, text in zip(receiver_refs, receiver_texts, strict=True) if text in used]
    # A variable another binding reads: a function returns it, an attribute is given its value.
    returned = {(b[0], str(b[2])[1:]) for b in bindings
                if (b[1] == RETURNS or str(b[1]).startswith(("self.", "this.")))
                and str(b[2]).startswith(RETURNED_VARIABLE)}
    # Every binding's scope is a definition index, -1 (the module) or ALIAS_SCOPE.
    typed = [(int(b[0]), str(b[1]), str(b[2])) for b in bindings]  # type: ignore[call-overload]
    unique = sorted({(scope, name, value) for scope, name, value in typed
                     if (scope == ALIAS_SCOPE and name != value) or scope == -1 or name in used
                     or name in (RETURNS, LOCALS) or (scope, name) in returned
                     or name.startswith(("self.", "this."))
                     or (scope >= 0 and definitions[scope][1] in _CLASS_BODY_KINDS)})
    return kept, [list(b) for b in unique]


def symbol_extractor(host: PluginHost, pack: LanguagePack, chunker_patterns: str = "") -> SymbolExtractor | None:
    """The extractor of ``pack``'s files, or None when the language has no (compilable) tags query.

    ``chunker_patterns`` (capturing ``@chunk`` and ``@import``) are compiled into the same query when
    they compile with it; otherwise the extractor holds the tags alone and the chunker walks on its own.
    The extractor also holds the pack's binding reader, when a plugin supplies one.
    """
    from cce_core.symbols.tags import binding_reader, compile_tags_query, tags_query_text

    text = tags_query_text(host, pack)
    if not text or not text.strip():
        return None  # the language has no symbols
    extractor: SymbolExtractor | None = None
    if chunker_patterns:
        try:
            from tree_sitter import Query

            combined = text + "\n" + chunker_patterns
            extractor = SymbolExtractor(Query(pack.grammar(), combined), len(text.encode("utf-8")), combined)
        except Exception:  # the tags alone decide below whether the language has symbols
            extractor = None
    if extractor is None:
        query, _problem = compile_tags_query(host, pack, text)
        extractor = SymbolExtractor(query, text=text) if query is not None else None
    if extractor is not None:
        extractor.binding_reader = binding_reader(host, pack)
    return extractor

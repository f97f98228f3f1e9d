"""One file's symbols from its parse tree: the pack's tags query run over the tree the chunker already has.

The chunker calls :meth:`SymbolExtractor.extract` with the root node, the
(redacted) bytes and the chunks it cut, so a file is parsed once for both.
Lines come from newline offsets, never from ``Node.start_point`` (see the
chunker for the tree-sitter bug that avoids). Each definition learns its
enclosing definition and chunk, each reference the definition and chunk it
sits in, in one sweep over byte offsets.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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
_UNREAD = ""  # a name not decoded yet (a decoded name is never empty)
# The captures of the chunker's own patterns when they share the tags query.
CHUNKER_CAPTURES = ("chunk", "import")
NAME_MAX_CHARS = 200
# When one name node is captured by several patterns, the strongest reading wins.
_REFERENCE_RANK = {SELF_CALL: -1, CALL: 0, IMPORT: 1, REFERENCE: 2}
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


def _add_receiver_uses(source: bytes, refs: dict[int, tuple[int, str, str | None]]) -> None:
    """The names a use is read through are uses too: ``run_command`` and ``logger`` in
    ``run_command.make_context()`` and ``self.logger.error()`` (``self``/``this``/``cls`` aside).

    A tags query captures the last name of a chain (the call); the ones before it are found in the
    text, like the receiver itself, and recorded as plain references.
    """
    for key in list(refs):
        i = key - 1
        for _part in range(MAX_CHAIN):
            while i >= 0 and source[i] in _SPACE:
                i -= 1
            if i < 1 or source[i] != _DOT or source[i - 1] == _DOT:
                break
            end = i
            i -= 1
            while i >= 0 and source[i] in _WORD:
                i -= 1
            start = i + 1
            if start == end or source[start] in b"0123456789":
                break
            if start not in refs and source[start:end] not in _SELF_RECEIVER_BYTES:
                refs[start] = (end, REFERENCE, None)


def _matching_open(source: bytes, close: int) -> int | None:
    """The ``(`` that the ``)`` at ``close`` ends (brackets counted, strings not), within a few lines."""
    depth = 0
    i = close
    stop = max(0, close - _CALL_SCAN_BYTES)
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


def _assigned_variable(source: bytes, line_start: int, name_start: int, name_end: int) -> str | None:
    """The variable a call at ``name_start`` is assigned to (``app`` in ``app = flask.Flask(...)``), or None."""
    equals = source.rfind(b"=", line_start, name_start)
    if equals < 0:  # most calls: nothing is assigned on their line
        return None
    after = name_end
    while after < len(source) and source[after] in _SPACE:
        after += 1
    if after >= len(source) or source[after] != _OPEN_PAREN:
        return None
    start = name_start  # the callee expression starts before its receivers: `flask.Flask(`
    while start > line_start and (source[start - 1] in _WORD or source[start - 1] == _DOT):
        start -= 1
    # _ASSIGNED must end right before the callee: after "=", "await" or "new" (and blanks). Most calls
    # on a line with an "=" are links of a chain (`z.object(...).strict()`), which this rules out at once.
    # (A tail shorter than "await" may be cut by the window: the regex decides then.)
    tail = source[max(line_start, start - 16):start].rstrip()
    if len(tail) >= len(b"await") and not tail.endswith((b"=", b"await", b"new")):
        return None
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


def _name(source: bytes, node: Node) -> str | None:
    return _text(source, node.start_byte, node.end_byte)


def _text(source: bytes, start: int, end: int) -> str | None:
    if end - start > NAME_MAX_CHARS * 4:
        return None
    text = source[start:end].decode("utf-8", errors="replace").strip()
    if not text or len(text) > NAME_MAX_CHARS or "\n" in text or "\x1f" in text:  # U+001F separates stored names
        return None
    return text


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
        for name in sorted(readable - keep):
            self.query.disable_capture(name)

    def run(self, root: Node) -> tuple[list[tuple[int, dict[str, list[Node]]]], dict[str, list[Node]]]:
        """One walk: (the tags matches, the chunker's captures by name — ``chunk`` and ``import`` nodes)."""
        from tree_sitter import QueryCursor

        matches = QueryCursor(self.query).matches(root)
        if not self.chunker_patterns:
            return matches, {}
        mine = self.chunker_patterns
        captured: dict[str, list[Node]] = {}
        tags = []
        for match in matches:
            if match[0] in mine:
                for capture_name, nodes in match[1].items():
                    captured.setdefault(capture_name, []).extend(nodes)
            else:
                tags.append(match)
        return tags, captured

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
        return self.from_matches(self.run(root)[0], source, chunks)

    def encoded(self, matches: list[tuple[int, dict[str, list[Node]]]], source: bytes,
                chunks: Sequence[Any], newlines: list[int] | None = None) -> bytes:
        """The encoded symbols of one file from the tags matches :meth:`run` returned.

        ``newlines``: the offsets of the file's newline bytes, when the caller has them already.
        """
        return encode_file_symbols(self.from_matches(matches, source, chunks, newlines))

    def from_matches(self, matches: list[tuple[int, dict[str, list[Node]]]], source: bytes,
                     chunks: Sequence[Any], newlines: list[int] | None = None) -> FileSymbols:
        # The hot path of indexing with symbols: plain loops, no per-item function calls.
        # name start -> (node start, node end, name end, kind, receiver type or "")
        defs: dict[int, tuple[int, int, int, str, str]] = {}
        refs: dict[int, tuple[int, str, str | None]] = {}  # name start -> (name end, kind, import's module)
        modules: dict[str, None] = {}
        rank = _REFERENCE_RANK
        role_of = self._pattern_role.get
        for pattern, captures in matches:
            spec = None
            if "module" in captures:
                for node in captures["module"]:
                    text = _name(source, node)
                    if text is not None and text.strip(_QUOTES):
                        modules.setdefault(text.strip(_QUOTES), None)
                        spec = spec or text.strip(_QUOTES)
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
                receiver = (_name(source, captures["receiver"][0]) or "") if "receiver" in captures else ""
                for name_node in names:
                    key = name_node.start_byte
                    # Several patterns may name one definition (a method is a function too): the widest
                    # node wins (a C function's body, not just its declarator), then the finer kind.
                    found = (outer.start_byte, outer.end_byte, name_node.end_byte, kind, receiver)
                    prior_def = defs.get(key)
                    if prior_def is None or _wider_or_finer(found, prior_def):
                        defs[key] = found
            else:
                module = spec if kind == IMPORT else None
                for name_node in names:
                    key = name_node.start_byte
                    prior = refs.get(key)
                    if prior is None or rank[kind] < rank[prior[1]]:
                        refs[key] = (name_node.end_byte, kind, module)
        _add_receiver_uses(source, refs)
        for key in defs:
            refs.pop(key, None)  # a definition's own name is not also a use of it
        return self._record(source, chunks, defs, refs, list(modules), newlines, self.binding_reader)

    @staticmethod
    def _record(source: bytes, chunks: Sequence[Any], defs: dict[int, tuple[int, int, int, str, str]],
                refs: dict[int, tuple[int, str, str | None]], modules: list[str],
                newline_offsets: list[int] | None = None, binding_reader: BindingReader | None = None) -> FileSymbols:
        # The hot loop of symbol extraction (one pass per reference): locals, no per-item calls on the common path.
        newlines = [m.start() for m in _NEWLINE.finditer(source)] if newline_offsets is None else \
            list(newline_offsets)
        n_lines = len(newlines) + 1
        newlines.append(len(source) + 1)  # a sentinel: the line pointer below never runs off the end
        # The innermost chunk of each line: chunks come in pre-order, so an inner one is written last.
        line_chunk = [-1] * (n_lines + 1)
        # A definition's chunk is the one cut from the same lines when there is one (several chunks
        # may share a line: a one-line class and its method), else the innermost chunk at its line.
        exact: dict[tuple[int, int], int] = {}
        for i, chunk in enumerate(chunks):
            first, last = max(chunk.start_line, 1), min(chunk.end_line, n_lines)
            line_chunk[first:last + 1] = [i] * (last - first + 1)
            exact.setdefault((chunk.start_line, chunk.end_line), i)
        names: dict[bytes, str | None] = {}  # each distinct name decoded once
        codes = REFERENCE_CODES
        member_codes = {kind: code.upper() for kind, code in codes.items()}
        reversed_source = source[::-1]  # receivers are read backwards (_receiver_before)

        # Definitions (by start, outer first) and references (by offset) in one sweep over the file,
        # with a stack of the definitions open at that point and a line counter that only moves on.
        # At one offset a definition comes before a reference; the references end with a sentinel
        # past the file, so every definition is opened before the loop ends.
        opening = sorted((start, -end, key) for key, (start, end, _ne, _k, _r) in defs.items())
        opening.append((len(source) + 2, 0, -1))
        end_of_file = len(source) + 1
        next_open = 0
        next_start = opening[0][0]
        definitions: list[list[object]] = []
        # The references as columns (model.ReferenceColumns), filled in file order.
        ref_names: list[str] = []
        ref_codes: list[str] = []
        ref_lines: list[int] = []
        ref_enclosing: list[int] = []
        ref_chunks: list[int] = []
        ref_modules: list[str | None] = []
        receivers: list[list[object]] = []  # [reference index, the plain name before its "."]
        calls: dict[int, int] = {}  # the start of a call's name -> its reference index
        bindings: list[list[object]] = []  # [scope, variable, type]
        spans: list[tuple[int, int]] = []  # (start, end byte) of each definition, for the annotations
        stack: list[tuple[int, int]] = []  # (end byte, definition index) of the open definitions
        line = 1
        for key in (*sorted(refs), end_of_file):
            while next_start <= key:
                start, negative_end, def_key = opening[next_open]
                next_open += 1
                next_start = opening[next_open][0]
                while newlines[line - 1] < start:
                    line += 1
                while stack and stack[-1][0] <= start:
                    stack.pop()
                _start, end, name_end, kind, receiver = defs[def_key]
                name = _text(source, def_key, name_end)
                if name is None:
                    continue
                end = -negative_end
                stop = source.find(b"\n", start, end)
                first_line = source[start:stop if stop >= 0 else end].decode("utf-8", errors="replace").strip()
                end_line = bisect_left(newlines, end) + 1  # the chunker's rule: a definition and its chunk agree
                definitions.append([name, kind, line, end_line, stack[-1][1] if stack else -1,
                                    exact.get((line, end_line), line_chunk[line]), first_line[:SIGNATURE_MAX_CHARS]])
                if receiver:
                    definitions[-1].append(receiver)
                stack.append((end, len(definitions) - 1))
                spans.append((start, end))
            if key == end_of_file:
                break
            while newlines[line - 1] < key:
                line += 1
            while stack and stack[-1][0] <= key:
                stack.pop()
            name_end, kind, spec = refs[key]
            raw = source[key:name_end]
            name = names.get(raw, _UNREAD)
            if name is _UNREAD:
                name = names[raw] = _text(source, key, name_end)
            if name is None:
                continue
            # A name right after "." or "->" (spaces and line breaks between allowed) is read through a
            # receiver: upper-case code. Language-neutral: no node kinds involved. The byte before the
            # name decides the common cases; blanks and "->" take the full reading.
            before = source[key - 1] if key else 0
            if before == _DOT:
                after_receiver = key < 2 or source[key - 2] != _DOT
            elif before == _GREATER:
                after_receiver = key > 1 and source[key - 2] == _MINUS
            elif before in _SPACE:
                prior = source[key - 2] if key > 1 else 0
                after_receiver = prior in _BLANK_OR_ACCESSOR and _after_receiver(source, key)
            else:
                after_receiver = False
            is_call = kind in (CALL, SELF_CALL)
            if is_call:
                calls[key] = len(ref_names)
            if after_receiver and (receiver_text := _receiver_before(source, key, calls, reversed_source)) is not None:
                receivers.append([len(ref_names), receiver_text])
            if kind == IMPORT and (alias := _ALIAS.match(source, name_end)) is not None:
                bindings.append([ALIAS_SCOPE, alias.group(1).decode("ascii"), name])
            elif is_call:  # `app = Flask(...)`, `r = requests.get(...)` type `app`, `r`
                line_start = newlines[line - 2] + 1 if line > 1 else 0
                # Most calls have no "=" before them on their line: skip the call then.
                variable = _assigned_variable(source, line_start, key, name_end) \
                    if source.rfind(b"=", line_start, key) >= 0 else None
                if variable is not None:
                    # Its type is what the call makes or returns, found when the call is resolved.
                    value = f"{CALL_RESULT}{len(ref_names)}"
                    # The scope is around the variable's own definition (a module-level
                    # `bp = Blueprint(...)` is a definition named `bp` in some tags queries).
                    depth = len(stack)
                    while depth and definitions[stack[depth - 1][1]][0] == variable \
                            and definitions[stack[depth - 1][1]][2] == line:
                        depth -= 1
                    bindings.append([stack[depth - 1][1] if depth else -1, variable, value])
            ref_names.append(name)
            ref_codes.append(member_codes[kind] if after_receiver else codes[kind])
            ref_lines.append(line)
            ref_enclosing.append(stack[-1][1] if stack else -1)
            ref_chunks.append(line_chunk[line])
            ref_modules.append(spec)
        # An import names the module it comes from (its index in ``modules``; -1 for the rest).
        module_index = {spec: i for i, spec in enumerate(modules)}
        references = ReferenceColumns(ref_names, "".join(ref_codes), ref_lines, ref_enclosing, ref_chunks,
                                      [module_index[spec] if spec is not None else -1 for spec in ref_modules])
        hints = _read_hints(binding_reader, source, spans)
        receivers, bindings = _typed_receivers(source, spans, definitions, references, modules, receivers, bindings,
                                               hints)
        return FileSymbols(definitions, references, modules, receivers, bindings)


_IMPORT_CODE = re.compile("[iI]")  # an import's letter in a record's codes, either case


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
                     references: ReferenceColumns, modules: list[str], receivers: list[list[object]],
                     bindings: list[list[object]],
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
    wanted = set(map(str, {r[1] for r in receivers}))
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
    kept: list[list[object]] = []
    if receivers:
        known = {str(b[1]) for b in bindings} | _SELF_RECEIVERS | {str(d[0]) for d in definitions}
        if "i" in references.codes or "I" in references.codes:
            known.update(references.names[found.start()] for found in _IMPORT_CODE.finditer(references.codes))
        known.update(part for spec in modules for part in re.split(r"[./]", spec) if part)
        # Decided once per distinct receiver text (a file reads `z.` or `this.` thousands of times).
        typed_texts = {text for text in map(str, {r[1] for r in receivers})
                 if text.startswith(CALL_RESULT) or text.partition(".")[0] in known or text[:1].isupper()}
        kept = [r for r in receivers if r[1] in typed_texts]
    used = {str(r[1]) for r in kept}
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

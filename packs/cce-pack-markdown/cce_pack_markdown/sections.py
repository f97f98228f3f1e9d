"""The markdown heading-section rule: one document → its sections, byte for byte as the engine family cuts them.

A section is a heading and everything after it up to the next heading of the
same or a higher level. A section that fits the token budget keeps its deeper
headings inside it; one that does not is split into a head part (the heading
and its own text, up to its first deeper heading) and, recursively, its child
sections. Text before the first heading is the ``(preamble)`` section.

Headings come from the tree-sitter-markdown *block* grammar, so a ``#`` line
inside a fenced code block is code, not a heading, and setext headings
(``Title`` over ``=====`` or ``-----``) count like ATX ones. Before anything
reaches the parser, a per-line estimate of how many blocks a line could open
is checked against :data:`MAX_BLOCK_NESTING`: the grammar's C scanner writes
its stack of open blocks into a fixed buffer without a bounds check, so a few
hundred nested block quotes or list levels would corrupt memory and kill the
process. Such a document (and any document the parser fails on) becomes one
whole-document ``(preamble)`` section instead.

Strings follow the family's (Rust) semantics: trims use Unicode White_Space
(``UNICODE_WHITESPACE``), lengths, ids and token counts are in UTF-8 bytes.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from tree_sitter import Language, Node, Parser

from cce_core.api import UNICODE_WHITESPACE, DocumentSection, chunk_id, estimate_tokens

# Between the crumbs of a section's name: space, U+203A, space.
BREADCRUMB_SEP = " \u203a "
# The kind and name of the text before the first heading, and of the whole-document fallback.
PREAMBLE = "(preamble)"
# The default section budget (markdown.max_section_tokens).
DEFAULT_BUDGET = 400
# The deepest estimated block nesting handed to the parser; its scanner fails at about 255.
MAX_BLOCK_NESTING = 192

_LEVELS = {
    "atx_h1_marker": 1,
    "atx_h2_marker": 2,
    "atx_h3_marker": 3,
    "atx_h4_marker": 4,
    "atx_h5_marker": 5,
    "atx_h6_marker": 6,
    "setext_h1_underline": 1,
    "setext_h2_underline": 2,
}
_HEADING_KINDS = frozenset(("atx_heading", "setext_heading"))

# A line's leading run of container-prefix characters. Past 400 characters the
# estimate is above the limit whatever they are (each counts at least half a
# level), so the match is bounded: a huge line costs no more than a short one.
_PREFIX = re.compile(r"[>\t \-+*.)0-9]{0,400}")
_PREFIX_CAP = 400

_LANGUAGE: Language | None = None
_LOCAL = threading.local()


def grammar() -> Language:
    """The tree-sitter-markdown block grammar, loaded on first use."""
    global _LANGUAGE
    if _LANGUAGE is None:
        import tree_sitter_markdown

        _LANGUAGE = Language(tree_sitter_markdown.language())
    return _LANGUAGE


def _parser() -> Parser:
    # A parser must not be shared between threads: one per thread.
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = Parser(grammar())
    return parser


@dataclass(frozen=True, slots=True)
class _Heading:
    """An ATX heading: its level, where it starts and its text."""

    level: int
    start_byte: int
    start_line: int
    text: str


def block_nesting_estimate(content: str) -> int:
    """An upper bound on the blocks any one line could hold open, capped just past :data:`MAX_BLOCK_NESTING`.

    Per line: the number of ``>`` in its leading run of ``>``, space, tab,
    ``-``, ``+``, ``*``, ``.``, ``)`` and ASCII digits, plus half the columns
    of the rest of that run (a tab is four columns), plus one; the maximum over
    the lines split at ``\\n``. A document of no lines gives 0. Over-counting is
    harmless (a document takes the whole-document path); under-counting never
    happens below the cap, and above it the answer only has to exceed the limit.
    """
    if not content:
        return 0
    best = 0
    for line in content.split("\n"):
        prefix = _PREFIX.match(line).group()  # type: ignore[union-attr]  # {0,N} always matches
        quotes = prefix.count(">")
        tabs = prefix.count("\t")
        columns = len(prefix) - quotes - tabs + 4 * tabs
        estimate = quotes + columns // 2 + 1
        if estimate > best:
            best = estimate
            if len(prefix) == _PREFIX_CAP:
                break  # already far over the limit
    return best


def too_deep(content: str) -> bool:
    """Whether ``content`` must not reach the parser (see :func:`block_nesting_estimate`)."""
    return block_nesting_estimate(content) > MAX_BLOCK_NESTING


def chunk_markdown(path: str, content: str, budget: int = DEFAULT_BUDGET) -> list[DocumentSection]:
    """The heading sections of ``content``, the document whose id is ``path``, split at ``budget`` tokens."""
    # A str can hold lone surrogates, which UTF-8 cannot: each becomes "?" instead of raising.
    source = content.encode("utf-8", errors="replace")
    if too_deep(content):
        return _whole_document(path, source)
    try:
        tree = _parser().parse(source)
        headings = _collect_headings(tree.root_node, source)
    except Exception:  # a grammar or parse failure degrades to one section; it never breaks ingest
        return _whole_document(path, source)
    out: list[DocumentSection] = []
    first = headings[0].start_byte if headings else len(source)
    preamble = _make_section(path, source, 0, first, 1, PREAMBLE, PREAMBLE)
    if preamble is not None:
        out.append(preamble)
    i = 0
    while i < len(headings):
        i = _emit(path, source, headings, i, (), budget, out)
    return out


def _emit(path: str, source: bytes, headings: list[_Heading], i: int, ancestors: tuple[str, ...], budget: int,
          out: list[DocumentSection]) -> int:
    """Emit heading ``i``'s section (split when over budget); return the index of the next heading not inside it."""
    n = len(headings)
    heading = headings[i]
    end_index = i + 1
    while end_index < n and headings[end_index].level > heading.level:
        end_index += 1
    end_byte = headings[end_index].start_byte if end_index < n else len(source)
    crumb = (*ancestors, "#" * heading.level + " " + heading.text)
    name = BREADCRUMB_SEP.join(crumb)
    has_child = end_index > i + 1
    text = _slice(source, heading.start_byte, end_byte)
    fits = estimate_tokens((text or "").rstrip(UNICODE_WHITESPACE)) <= budget
    if fits or not has_child:
        section = _make_section(path, source, heading.start_byte, end_byte, heading.start_line, heading.text, name)
        if section is not None:
            out.append(section)
        return end_index
    head = _make_section(path, source, heading.start_byte, headings[i + 1].start_byte, heading.start_line,
                         heading.text, name)
    if head is not None:
        out.append(head)
    j = i + 1
    while j < end_index:
        j = _emit(path, source, headings, j, crumb, budget, out)
    return end_index


def _slice(source: bytes, start: int, end: int) -> str | None:
    """``source[start:end]`` as text, or ``None`` when the range is not on character boundaries."""
    if not 0 <= start <= end <= len(source):
        return None
    try:
        return source[start:end].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _make_section(path: str, source: bytes, start: int, end: int, start_line: int, kind: str,
                  name: str) -> DocumentSection | None:
    raw = _slice(source, start, end)
    if raw is None:
        return None
    trimmed = raw.rstrip(UNICODE_WHITESPACE)
    if not trimmed:
        return None
    end_line = start_line + trimmed.count("\n")
    return DocumentSection(
        chunk_id=chunk_id(path, start_line, end_line, trimmed.encode("utf-8")),
        kind=kind,
        name=name,
        start_line=start_line,
        end_line=end_line,
        token_count=estimate_tokens(trimmed),
        content=trimmed,
    )


def _whole_document(path: str, source: bytes) -> list[DocumentSection]:
    section = _make_section(path, source, 0, len(source), 1, PREAMBLE, PREAMBLE)
    return [section] if section is not None else []


def _collect_headings(root: Node, source: bytes) -> list[_Heading]:
    """Every ATX and setext heading, in source order, by an iterative walk that never enters a heading."""
    found: list[_Heading] = []
    cursor = root.walk()
    while True:
        node = cursor.node
        descend = True
        if node is not None and node.type in _HEADING_KINDS:
            level = next((_LEVELS[c.type] for c in node.children if c.type in _LEVELS), None)
            if level is not None:
                found.append(_Heading(level, node.start_byte, node.start_point[0] + 1, _heading_text(node, source)))
            descend = False
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                found.sort(key=lambda h: h.start_byte)
                return found


def _heading_text(node: Node, source: bytes) -> str:
    """The source of the heading's first ``inline`` descendant, trimmed; ``""`` for an empty heading."""
    cursor = node.walk()
    while True:
        current = cursor.node
        if current is not None and current.type == "inline":
            try:
                text = source[current.start_byte:current.end_byte].decode("utf-8")
            except UnicodeDecodeError:
                text = ""
            return text.strip(UNICODE_WHITESPACE)
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return ""

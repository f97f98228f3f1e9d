"""Shrink a chunk's text for serving: ``signature``, ``compact`` or ``full``.

Search results can cost more tokens than the agent needs, so a result may be
served as a reduced view and expanded later from the store, which always keeps
the full text. This module owns that view and nothing else: it never touches
the store, chunk ids or token counts, and ``full`` returns the text unchanged.

How a view is made: the chunk's own text is re-parsed with the grammar of the
pack that claims its path, and the first chunk-kind node in pre-order (the
*definition*) is handed to the ``cce_render_compact`` hook. A pack or plugin
may answer with its own rendering; when none does, the structural rule below
applies, driven only by the node kinds the pack declares:

* a *container* (a kind in ``class_types``) shows its header, a leading doc
  line, and every direct member on one line each (members longer than a line
  get an elision marker);
* a *leaf* shows its header, a leading doc line and its first body line, then
  one marker for everything left out.

Text no pack claims, or that does not re-parse to a definition, gets the
first-line rule: the first non-blank line and a marker for the rest. The
elision marker is byte-pinned across the engine family: ``… (+N lines)``,
always plural.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tree_sitter import Parser

from cce_core.foundation.textrules import UNICODE_WHITESPACE, split_lines
from cce_core.hookspecs import CompactChunk, CompactRenderer, LanguagePack, hookimpl

# CompactChunk moved to the contract (hookspecs); importing it from here still works.

if TYPE_CHECKING:  # pragma: no cover - typing only
    from tree_sitter import Node

    from cce_core.plugins.host import PluginHost

SIGNATURE = "signature"
COMPACT = "compact"
FULL = "full"
DETAIL_LEVELS = (SIGNATURE, COMPACT, FULL)

ELISION_PREFIX = "\u2026 (+"

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def parse_detail(value: str | None, default: str = COMPACT) -> str:
    """A detail level from user text (trimmed, ASCII case-insensitive); unknown text gives ``default``."""
    if value is None:
        return default
    level = value.strip(UNICODE_WHITESPACE).translate(_ASCII_LOWER)
    return level if level in DETAIL_LEVELS else default


def elision_marker(count: int) -> str:
    """The marker standing for ``count`` omitted lines."""
    return f"{ELISION_PREFIX}{count} lines)"


# -- entry point ---------------------------------------------------------------


def compress(host: PluginHost, file_path: str, content: str, detail: str) -> str:
    """``content`` (a stored chunk of ``file_path``) reduced to ``detail``.

    ``detail`` is one of :data:`DETAIL_LEVELS` (use :func:`parse_detail` on
    user input). Deterministic; ``full`` returns ``content`` itself.
    """
    level = detail.strip(UNICODE_WHITESPACE).translate(_ASCII_LOWER)
    if level not in DETAIL_LEVELS:
        raise ValueError(f"unknown detail level {detail!r} (expected one of {', '.join(DETAIL_LEVELS)})")
    if level == FULL:
        return content
    pack = host.packs.pack_for(file_path)
    if pack is None:
        return first_line_view(content, level)
    try:
        source = content.encode("utf-8")
        tree = _parser_for(pack).parse(source)
    except Exception:  # unencodable text or an unusable grammar: a view must never break serving
        return first_line_view(content, level)
    node = find_definition(tree.root_node, pack)
    chunk = CompactChunk(file_path=file_path, content=content, source=source, pack=pack)
    try:
        rendered = host.pm.hook.cce_render_compact(language=pack.name, chunk=chunk, node=node, level=level)
    except Exception:  # a failing third-party renderer falls back to the neutral rule
        rendered = None
    if isinstance(rendered, str):
        return rendered
    if node is None:
        return first_line_view(content, level)
    return render_definition(chunk, node, level)


# One parser per pack and thread: a tree-sitter parser must not be shared by
# threads, and a server may render results on several at once.
_LOCAL = threading.local()


def _parser_for(pack: LanguagePack) -> Parser:
    parsers: dict[int, tuple[LanguagePack, Parser]] | None = getattr(_LOCAL, "parsers", None)
    if parsers is None:
        parsers = _LOCAL.parsers = {}
    cached = parsers.get(id(pack))
    if cached is not None and cached[0] is pack:
        return cached[1]
    parser = Parser(pack.grammar())
    parsers[id(pack)] = (pack, parser)
    return parser


# -- the language-neutral rules ------------------------------------------------------


def first_line_view(content: str, level: str) -> str:
    """The first non-blank line (right-trimmed); for ``compact`` a marker for the lines after it."""
    lines = split_lines(content)
    index = next((i for i, line in enumerate(lines) if line.strip(UNICODE_WHITESPACE)), None)
    if index is None:
        return ""
    first = lines[index].rstrip(UNICODE_WHITESPACE)
    remaining = len(lines) - index - 1
    if level == SIGNATURE or remaining <= 0:
        return first
    return f"{first}\n{elision_marker(remaining)}"


def bounded_view(content: str, max_chars: int) -> str:
    """``content`` itself when it has at most ``max_chars`` characters, else its opening within that many.

    For text that is served whole by design (a knowledge section has no
    compact form): the leading lines that fit, then, when the next line does
    not fit but enough room is left, that line cut at its last space with
    ``…``, and one elision marker for the lines not shown at all. Whatever is
    left out stays one ``expand_chunk`` away.
    """
    if len(content) <= max_chars:
        return content
    lines = split_lines(content)
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > max_chars:
            break
        kept.append(line)
        size += len(line) + 1
    shown = len(kept)
    room = max_chars - size - 1  # the cut line's "…"
    if shown < len(lines) and (room >= _MIN_PARTIAL_LINE or shown == 0):
        part = lines[shown][:room]
        space = part.rfind(" ")
        if space > room // 2:
            part = part[:space]
        kept.append(part.rstrip(UNICODE_WHITESPACE) + "\u2026")
        shown += 1
    if shown < len(lines):
        kept.append(elision_marker(len(lines) - shown))
    return "\n".join(kept)


# Below this much room a cut line would be a stub: the marker alone says more.
_MIN_PARTIAL_LINE = 80


def find_definition(root: Node, pack: LanguagePack) -> Node | None:
    """The first named node, in pre-order, whose kind is one of the pack's chunk kinds."""
    kinds = frozenset((*pack.function_types, *pack.class_types))
    cursor = root.walk()
    while True:
        node = cursor.node
        if node is not None and node.is_named and node.type in kinds:
            return node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return None


def render_definition(chunk: CompactChunk, node: Node, level: str, *, doc_wrappers: Sequence[str] = ()) -> str:
    """The structural view of the definition ``node``, driven by ``chunk.pack``'s declared kinds.

    Reads ``function_types``, ``class_types``, ``body_node_types``,
    ``doc_node_types``, ``member_node_types`` and ``member_line_prefixes``.
    ``doc_wrappers`` are statement kinds a leading doc may sit inside (the
    first named child of such a node is tested as the doc instead).
    """
    pack = chunk.pack
    source = chunk.source
    body = next((c for c in node.children if c.type in pack.body_node_types), None)
    header_end = body.start_byte if body is not None else node.end_byte
    signature = _decode(source[node.start_byte:header_end]).rstrip(UNICODE_WHITESPACE)
    if level == SIGNATURE or body is None:
        return signature
    members = body.named_children
    lines = [signature]
    skip = 0
    if members:
        doc = _unwrap(members[0], doc_wrappers)
        if doc.type in pack.doc_node_types:
            text = node_first_line(doc, source)
            if text is not None:
                lines.append(text)
                skip = 1
    if node.type in pack.class_types:
        for member in members[skip:]:
            lines.extend(_member_lines(pack, member, source))
        return "\n".join(lines)
    if skip < len(members):
        text = node_first_line(members[skip], source)
        if text is not None:
            lines.append(text)
    shown = signature.count("\n") + len(lines)
    elided = len(split_lines(chunk.content)) - shown
    if elided > 0:
        lines.append(elision_marker(elided))
    return "\n".join(lines)


def node_first_line(node: Node, source: bytes) -> str | None:
    """The first line of a node's text, trimmed on both sides; ``None`` when that is empty."""
    lines = split_lines(_decode(source[node.start_byte:node.end_byte]))
    line = lines[0].strip(UNICODE_WHITESPACE) if lines else ""
    return line or None


def node_line_span(node: Node, source: bytes) -> int:
    """How many source lines a node covers (rows from newline offsets, not ``end_point``)."""
    return source.count(b"\n", node.start_byte, node.end_byte) + 1


def _member_lines(pack: LanguagePack, node: Node, source: bytes) -> list[str]:
    if not _is_member(pack, node, source):
        return []
    first = node_first_line(node, source)
    if first is None:
        return []
    span = node_line_span(node, source)
    return [first, elision_marker(span - 1)] if span > 1 else [first]


def _is_member(pack: LanguagePack, node: Node, source: bytes) -> bool:
    if node.type in pack.function_types or node.type in pack.member_node_types:
        return True
    if not pack.member_line_prefixes:
        return False
    line = node_first_line(node, source)
    if line is None:
        return False
    end = 0
    while end < len(line) and (line[end].isalnum() or line[end] == "_"):
        end += 1
    return line[:end] in pack.member_line_prefixes


def _unwrap(node: Node, wrappers: Sequence[str]) -> Node:
    if node.type in wrappers:
        inner = node.named_children
        if inner:
            return inner[0]
    return node


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def structural_renderer(pack_language: str, doc_wrappers: tuple[str, ...] = ()) -> CompactRenderer:
    """A ready ``cce_render_compact`` hook implementation for a pack: the structural rule for its own language.

    A pack assigns it to a module attribute named ``cce_render_compact``. It is
    marked ``trylast`` so a plugin that overrides the pack's renderer is always
    asked first, whatever the registration order.
    """

    @hookimpl(trylast=True)
    def cce_render_compact(language: str, chunk: CompactChunk, node: Node | None, level: str) -> str | None:
        if language != pack_language or node is None:
            return None
        return render_definition(chunk, node, level, doc_wrappers=doc_wrappers)

    cce_render_compact.__doc__ = f"The structural signature/compact view of a {pack_language} definition."
    return cce_render_compact

"""Set one member of a JSON document in place, leaving every other byte as the user wrote it.

Why it exists: ``cce init`` adds its server to a project's ``.mcp.json``, a
file people write by hand and commit. Loading and re-dumping it would re-sort
the keys, re-wrap the arrays and change the indentation of every other server
(it did, to zod's). Here the document is scanned for the byte spans of its
members, and only the value being set is replaced or inserted, rendered in the
style the file already uses: its indentation, line ending, separators, and
whether its arrays and neighbouring objects are written on one line.

The text must already be valid JSON (the caller parses it first and refuses
anything else); the scanner relies on that and does not re-validate.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_WHITESPACE = " \t\r\n"


@dataclass(frozen=True)
class Member:
    """One ``"key": value`` pair of an object: where its key starts and where its value starts and ends."""

    key: str
    key_start: int
    value_start: int
    value_end: int


@dataclass(frozen=True)
class Span:
    """An object's members and the offsets of its braces."""

    start: int
    end: int  # one past the closing brace
    members: tuple[Member, ...]

    def last(self, key: str) -> Member | None:
        """The member named ``key`` that a JSON reader keeps (the last one, when repeated)."""
        found = [m for m in self.members if m.key == key]
        return found[-1] if found else None


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WHITESPACE:
        i += 1
    return i


def _skip_string(text: str, i: int) -> int:
    i += 1
    while text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _skip_value(text: str, i: int) -> int:
    c = text[i]
    if c == "{":
        return object_span(text, i).end
    if c == "[":
        i = _skip_ws(text, i + 1)
        if text[i] == "]":
            return i + 1
        while True:
            i = _skip_ws(text, _skip_value(text, i))
            if text[i] == "]":
                return i + 1
            i = _skip_ws(text, i + 1)  # past the comma
    if c == '"':
        return _skip_string(text, i)
    while i < len(text) and text[i] not in ",]}" + _WHITESPACE:
        i += 1
    return i


def object_span(text: str, start: int) -> Span:
    """The members of the object whose ``{`` is at ``start``."""
    members: list[Member] = []
    i = _skip_ws(text, start + 1)
    if text[i] == "}":
        return Span(start, i + 1, ())
    while True:
        key_end = _skip_string(text, i)
        key = json.loads(text[i:key_end])
        value_start = _skip_ws(text, _skip_ws(text, key_end) + 1)  # past the colon
        value_end = _skip_value(text, value_start)
        members.append(Member(key, i, value_start, value_end))
        i = _skip_ws(text, value_end)
        if text[i] == "}":
            return Span(start, i + 1, tuple(members))
        i = _skip_ws(text, i + 1)


def root_span(text: str) -> Span:
    """The top-level object of ``text`` (which must hold one)."""
    return object_span(text, _skip_ws(text, 0))


@dataclass(frozen=True)
class Style:
    """How the document writes what we add to it."""

    newline: str
    unit: str  # one level of indentation
    colon: str  # between a key and its value
    comma: str  # between items written on one line
    wrap_arrays: bool

    @classmethod
    def of(cls, text: str) -> Style:
        newline = "\r\n" if "\r\n" in text else "\n"
        root = root_span(text)
        unit, colon, comma = "  ", ": ", ", "
        if root.members:
            first = root.members[0]
            indent = _line_indent(text, first.key_start)
            if indent:
                unit = indent
            between = text[_skip_string(text, first.key_start):first.value_start]
            if "\n" not in between:
                colon = between
            comma = _inline_comma(text, root) or comma
        wrapped = re.search(r"\[[ \t]*\r?\n", text) is not None
        inline = re.search(r"\[[ \t]*[^\s\]]", text) is not None
        return cls(newline, unit, colon, comma, wrapped and not inline)


def _inline_comma(text: str, obj: Span) -> str | None:
    """How the first comma between two members on one line is written (``,`` or ``, ``), or None."""
    for member, following in zip(obj.members, obj.members[1:], strict=False):
        between = text[member.value_end:following.key_start]
        if "\n" not in between:
            return between.strip(" \t") + (" " if between.endswith(" ") else "")
    for member in obj.members:
        if text[member.value_start] == "{":
            found = _inline_comma(text, object_span(text, member.value_start))
            if found is not None:
                return found
    return None


def _line_indent(text: str, at: int) -> str | None:
    """The whitespace before ``at`` on its line, or None when something else precedes it there."""
    line_start = text.rfind("\n", 0, at) + 1
    lead = text[line_start:at]
    return lead if line_start > 0 and lead.strip(_WHITESPACE) == "" else None


def _line_lead(text: str, at: int) -> str:
    """The indentation of the line ``at`` is on."""
    line_start = text.rfind("\n", 0, at) + 1
    end = line_start
    while end < at and text[end] in " \t":
        end += 1
    return text[line_start:end]


def _is_multiline(text: str, start: int, end: int) -> bool:
    return "\n" in text[start:end]


def render(value: Any, style: Style, indent: str, multiline: bool) -> str:
    """``value`` as JSON in ``style``; ``indent`` is the indentation of the line its closing bracket goes on."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{json.dumps(k, ensure_ascii=False)}{style.colon}{render(v, style, indent + style.unit, multiline)}"
                 for k, v in value.items()]
        if not multiline:
            return "{" + style.comma.join(items) + "}"
        inner = indent + style.unit
        return "{" + style.newline + ("," + style.newline).join(inner + item for item in items) + style.newline \
            + indent + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        items = [render(v, style, indent + style.unit, multiline) for v in value]
        if not (multiline and style.wrap_arrays):
            return "[" + style.comma.join(items) + "]"
        inner = indent + style.unit
        return "[" + style.newline + ("," + style.newline).join(inner + item for item in items) + style.newline \
            + indent + "]"
    return json.dumps(value, ensure_ascii=False)


def set_member(text: str, obj: Span, key: str, value: Any, style: Style, *, multiline: bool | None = None) -> str:
    """``text`` with member ``key`` of the object ``obj`` set to ``value`` (replaced in place, or appended last).

    ``multiline`` chooses how ``value`` is laid out (default: like the value it
    replaces, else like the object it goes into).
    """
    existing = obj.last(key)
    if existing is not None:
        indent = _line_indent(text, existing.key_start)
        indent = indent if indent is not None else ""
        if multiline is not None:
            wide = multiline
        elif text[existing.value_start] in "{[":
            wide = _is_multiline(text, existing.value_start, existing.value_end)
        else:  # a scalar (null, say) has no layout of its own: take the object's
            wide = _is_multiline(text, obj.start, obj.end)
        return text[: existing.value_start] + render(value, style, indent, wide) + text[existing.value_end :]
    open_indent = _line_lead(text, obj.start)
    container_wide = _is_multiline(text, obj.start, obj.end)
    wide = container_wide if multiline is None else multiline
    if not obj.members:
        if not wide:
            member = f"{json.dumps(key, ensure_ascii=False)}{style.colon}{render(value, style, open_indent, wide)}"
            return text[: obj.start] + "{" + member + "}" + text[obj.end :]
        inner = open_indent + style.unit
        member = f"{json.dumps(key, ensure_ascii=False)}{style.colon}{render(value, style, inner, wide)}"
        closing = text.rfind("}", obj.start, obj.end)
        return text[: obj.start + 1] + style.newline + inner + member + style.newline + open_indent \
            + text[closing:]
    last = obj.members[-1]
    member_indent = _line_indent(text, last.key_start)
    if container_wide and member_indent is not None:
        member = f"{json.dumps(key, ensure_ascii=False)}{style.colon}{render(value, style, member_indent, wide)}"
        insertion = "," + style.newline + member_indent + member
    else:
        member = f"{json.dumps(key, ensure_ascii=False)}{style.colon}{render(value, style, open_indent, wide)}"
        insertion = style.comma + member
    return text[: last.value_end] + insertion + text[last.value_end :]

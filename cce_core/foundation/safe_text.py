"""Stored strings made safe to print as one line of output.

Titles, paths, record ids, headings, memory notes and kinds come from files
and feeds other people write. Each one is printed inside a line whose shape
the reader trusts (`` 1. [0.912345] path:1-2 (function/fn) #id``), so a
character that ends the line early would let the stored string forge the
rows after it. :func:`one_line` turns every such character into a space,
one for one, so a clean string comes back unchanged (the same object) and a
line that held one stays one line.

What counts as line-breaking or line-hijacking:

* every control character (Unicode category ``Cc``: C0 ``U+0000``–``U+001F``,
  DEL, C1 ``U+0080``–``U+009F``): newline, carriage return, vertical tab, form
  feed, the file/group/record separators, NEL, and the terminal escape ESC;
* the line and paragraph separators ``U+2028`` and ``U+2029``, line
  terminators for many readers although they are not ``Cc``;
* the bidirectional embeddings, overrides and isolates (``U+202A``–``U+202E``,
  ``U+2066``–``U+2069``): they break no line, but an unclosed one reorders how
  everything after it on the line is displayed, so a title could make the
  score or id that follows it read differently. The directional marks
  (``U+200E``, ``U+200F``, ``U+061C``) hold no state and are kept.

The first two groups are what the reference engine neutralises in its
provenance line (a space for each); the third is our addition.
"""

from __future__ import annotations

import re

# One class: Cc, the two Unicode line separators, the stateful bidi controls.
_LINE_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# The same without TAB: inside a shown line of code or prose a tab is content, not a break.
_SNIPPET_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

ECHO_MAX_CHARS = 200


def one_line(text: str) -> str:
    """``text`` with each line-breaking or line-hijacking character replaced by one space."""
    if _LINE_UNSAFE.search(text) is None:
        return text
    return _LINE_UNSAFE.sub(" ", text)


def snippet_line(text: str) -> str:
    """:func:`one_line` for a line of stored content shown as a snippet: tabs are kept."""
    if _SNIPPET_UNSAFE.search(text) is None:
        return text
    return _SNIPPET_UNSAFE.sub(" ", text)


def shorten(value: str, limit: int = ECHO_MAX_CHARS) -> str:
    """``value``, or its first ``limit`` characters and ``…``: an echoed argument never grows an answer much."""
    return value if len(value) <= limit else value[:limit] + "…"


def echo(value: str, limit: int = ECHO_MAX_CHARS) -> str:
    """A caller's argument as an answer may repeat it: one line, at most ``limit`` characters plus ``…``."""
    return shorten(one_line(value), limit)

"""Underlined headings of plain text, rewritten as the ``#`` headings a knowledge feed's body is cut at.

Plain-text documentation marks a heading by underlining it — a line of one
punctuation character repeated (three times or more; usually as long as the
title) — sometimes with the same line above it too, then as long as the
title at least:

    Deploying            =========
    =========            Deploying
                         =========

A knowledge record's body is markdown, whose chunker knows only two of those
underlines (``=`` and ``-``) and reads a line of ``~`` as the start of a code
block, so a plain-text document would lose most of its sections. This module
finds such headings and writes each as ``#`` × level + title, where the level
is the order in which its style (character, with or without the line above)
first appears in the document — the convention these documents follow — up
to six. Nothing else changes: text, indented blocks and lone rules stay as
they are. It is applied only to files no document chunker claims (see
:mod:`cce_core.knowledge.docs_folder`), so it names no format.
"""

from __future__ import annotations

import re

from cce_core.foundation.textrules import UNICODE_WHITESPACE

# An adornment: one punctuation character repeated, from the first column, at least three times.
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1{2,}[ \t\r]*")
_LINE_END = " \t\r"
# Markdown's heading levels end at six.
MAX_LEVEL = 6


def _adornment(line: str) -> str | None:
    """The repeated character if ``line`` is an adornment, else None."""
    match = _ADORNMENT.fullmatch(line)
    return match.group(1) if match else None


def _is_text(line: str) -> bool:
    return bool(line.strip(UNICODE_WHITESPACE)) and _adornment(line) is None


def _width(line: str) -> int:
    return len(line.rstrip(_LINE_END))


def underlined_to_hashes(text: str) -> str:
    """``text`` with every underlined (or over- and underlined) heading written as a ``#`` heading."""
    lines = text.split("\n")
    styles: dict[tuple[str, bool], int] = {}
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        previous_blank = not out or not out[-1].strip(UNICODE_WHITESPACE)
        char = _adornment(line)
        if (char is not None and previous_blank and i + 2 < len(lines) and _is_text(lines[i + 1])
                and lines[i + 2].rstrip(_LINE_END) == line.rstrip(_LINE_END)
                and _width(line) >= _width(lines[i + 1].strip(UNICODE_WHITESPACE))):
            title, style, used = lines[i + 1].strip(UNICODE_WHITESPACE), (char, True), 3  # over- and underlined
        elif (_is_text(line) and line[0] not in UNICODE_WHITESPACE and previous_blank and i + 1 < len(lines)
              and (char := _adornment(lines[i + 1])) is not None):
            title, style, used = line.rstrip(_LINE_END), (char, False), 2  # underlined
        else:
            out.append(line)
            i += 1
            continue
        level = styles.setdefault(style, len(styles) + 1)
        out.append("#" * min(level, MAX_LEVEL) + " " + title)
        i += used
    return "\n".join(out)

"""Stored strings printed as one line: which characters are neutralised, and that clean text keeps its bytes."""

from __future__ import annotations

import pytest

from cce_core.foundation.safe_text import echo, one_line, shorten, snippet_line


@pytest.mark.parametrize("clean", [
    "auth.py", "src/app/models/user.rb", "Password hashing policy", "kn:acme/app#12", "你好 世界", "naïve café",
    "emoji 🙂 path.py", "a\u200fb\u200ec\u061cd",  # the directional marks hold no state and stay
    "", "[REDACTED:SECRET]",
])
def test_clean_strings_come_back_unchanged(clean: str) -> None:
    assert one_line(clean) is clean
    assert snippet_line(clean) is clean


@pytest.mark.parametrize("breaker", [
    "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029",  # what splitlines() splits on
    "\x00", "\x1b", "\x7f", "\x9b", "\t",  # other controls: NUL, ESC, DEL, CSI, TAB
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",  # bidi state
])
def test_each_breaker_becomes_one_space(breaker: str) -> None:
    text = f"title{breaker} 1. [0.999999] fake.py"
    assert one_line(text) == "title  1. [0.999999] fake.py"
    assert len(one_line(text)) == len(text)
    assert one_line(text).splitlines() == [one_line(text)]


def test_snippets_keep_their_tabs_only() -> None:
    assert snippet_line("int\tx;\x1b[2J\u2028y") == "int\tx; [2J y"
    assert one_line("int\tx;") == "int x;"


def test_echoes_are_one_line_and_short() -> None:
    assert echo("abc") == "abc"
    assert echo("a\nb") == "a b"
    assert echo("x" * 500) == "x" * 200 + "…"
    assert shorten("y" * 201, 200) == "y" * 200 + "…" and shorten("y" * 200, 200) == "y" * 200

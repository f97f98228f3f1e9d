"""A loose reader of tree-sitter query files: which node kinds a grammar's ``tags.scm`` calls definitions.

``cce packs new`` trusts the grammar authors' own list of definitions before
its name heuristics. That list lives in ``queries/tags.scm`` as S-expression
patterns with ``@definition.*`` captures; this module parses just enough of
the query language (nesting, alternations, captures) to see which node each
capture follows, and ignores the rest (fields, predicates, quantifiers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

_SCM_TOKEN = re.compile(
    r"""
      (?P<comment>;[^\n]*)
    | (?P<string>"(?:[^"\\]|\\.)*")
    | (?P<open>[(\[])
    | (?P<close>[)\]])
    | (?P<capture>@[\w.\-]+)
    | (?P<field>!?[\w\-]+:)
    | (?P<word>[^\s()\[\]";@]+)
    """,
    re.VERBOSE,
)


@dataclass
class _ScmElement:
    kind: str | None = None  # "(kind ...)"; None for groupings, alternations and strings
    alternatives: list[_ScmElement] = field(default_factory=list)  # "[...]"
    children: list[_ScmElement] = field(default_factory=list)
    captures: list[str] = field(default_factory=list)


def _scm_parse(tokens: list[tuple[str, str]], start: int, nested: bool = True) -> tuple[list[_ScmElement], int]:
    """Elements up to the matching closer; captures attach to the element they follow."""
    elements: list[_ScmElement] = []
    i = start
    while i < len(tokens):
        kind, text = tokens[i]
        i += 1
        if kind == "close":
            if nested:
                return elements, i
            continue  # a stray closer at the top level: skip it, keep reading
        if kind == "open":
            element = _ScmElement()
            if text == "[":
                element.alternatives, i = _scm_parse(tokens, i)
            else:
                if i < len(tokens) and tokens[i][0] == "word":
                    element.kind = tokens[i][1]
                    i += 1
                element.children, i = _scm_parse(tokens, i)
            elements.append(element)
        elif kind == "string":
            elements.append(_ScmElement())
        elif kind == "capture" and elements:
            elements[-1].captures.append(text[1:])
        # fields, quantifiers, anchors and negated fields say nothing about which node is captured
    return elements, i


def _scm_walk(elements: Iterable[_ScmElement]) -> Iterator[_ScmElement]:
    for element in elements:
        yield element
        yield from _scm_walk(element.alternatives)
        yield from _scm_walk(element.children)


def _scm_kinds(element: _ScmElement) -> list[str]:
    if element.kind is not None:
        # "_" is a wildcard, "#..." a predicate, capitals are ERROR / MISSING.
        return [] if element.kind.startswith(("_", "#")) or not element.kind.islower() else [element.kind]
    return [kind for alternative in element.alternatives for kind in _scm_kinds(alternative)]


def tags_definitions(query: str) -> dict[str, list[str]]:
    """Capture name (``definition.function``) → node kinds it is attached to, in first-seen order.

    A loose reading of the query language: enough to see which node each
    ``@definition.*`` capture follows, whatever predicates or nesting surround it.
    """
    tokens = [(m.lastgroup or "", m.group()) for m in _SCM_TOKEN.finditer(query) if m.lastgroup != "comment"]
    elements, _ = _scm_parse(tokens, 0, nested=False)
    found: dict[str, list[str]] = {}
    for element in _scm_walk(elements):
        for capture in element.captures:
            if capture.startswith("definition."):
                bucket = found.setdefault(capture, [])
                bucket.extend(k for k in _scm_kinds(element) if k not in bucket)
    return found

"""What Python's syntax says about names that a tags query cannot: the types and locals symbol navigation reads.

A tags query finds definitions and uses; resolving ``app.route`` to
``Flask.route`` also needs to know that ``app`` is a ``Flask``. The engine
asks each pack for such facts as :class:`~cce_core.api.BindingHint` rows
(the ``cce_symbol_binding_reader`` hook) and places each one in the
innermost definition around its offset. This module reads them from Python
text with regular expressions: annotations (``app: Flask``), a function's
parameters and declared result (``def make(config: Config) -> Flask:``),
the names a function assigns (``a, b = ...``, ``for x in``, ``with ... as
f``), a variable it returns, and ``self.x = y``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cce_core.api import (
    ANNOTATION_HINT,
    ATTRIBUTE_HINT,
    LOCAL_NAME_HINT,
    RESULT_TYPE_HINT,
    RESULT_VARIABLE_HINT,
    BindingHint,
)

# A declared type: a parameter or variable `name: Type`, optionally quoted or dotted.
_ANNOTATED = re.compile(rb"\b([A-Za-z_]\w*)\s*:\s*[\"']?(?:[A-Za-z_]\w*\.)*(_*[A-Z]\w*)[\"']?\s*(?=[,)=\n])")
# The same at the start of a line only: a module's variable (the one scan a file without a function gets).
_ANNOTATED_AT_LINE_START = re.compile(rb"^" + _ANNOTATED.pattern[2:], re.MULTILINE)
# The end of a function's header and its declared result: `) -> Response:` (over several lines).
_HEADER_END = re.compile(rb"\)\s*(?:->\s*([^:\n]+?))?\s*:[ \t]*(?:#[^\n]*)?\r?\n")
_HEADER_SCAN_BYTES = 4096
_PLAIN_TYPE = re.compile(r"""^["']?(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)["']?$""")
_PARAMETER = re.compile(r"^[\s*]*([A-Za-z_]\w*)")
# `self.app = app`: an attribute given a variable's value (typed where the variable is: a parameter).
_ATTRIBUTE_FROM_VARIABLE = re.compile(
    rb"^[ \t]*((?:self|this)\.[A-Za-z_]\w*)[ \t]*=[ \t]*([A-Za-z_]\w*)[ \t]*;?[ \t]*(?:#[^\n]*)?$", re.MULTILINE)
_NAMES = rb"[A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*"
_LOCAL_NAMES = (
    re.compile(rb"^[ \t]*(" + _NAMES + rb")[ \t]*(?::[^=\n]*)?=(?!=)", re.MULTILINE),  # a, b = ...
    re.compile(rb"^[ \t]*(?:async[ \t]+)?for[ \t]+\(?(" + _NAMES + rb")\)?[ \t]+in\b", re.MULTILINE),
    re.compile(rb"\bas[ \t]+([A-Za-z_]\w*)"),  # with ... as f, except ... as e
)
# `return app` / `yield app` alone on a line: the function's result is that variable's value.
_RETURNED = re.compile(rb"^[ \t]*(?:return|yield)[ \t]+([A-Za-z_]\w*)[ \t]*(?:#[^\n]*)?$", re.MULTILINE)
# How much of a definition's first line the engine keeps as its signature (what "a header ends in :" reads).
_SIGNATURE_CHARS = 200


def _parameter_names(header: str) -> list[str]:
    """The parameter names in the text between a function's parentheses (commas inside brackets skipped)."""
    names: list[str] = []
    depth = 0
    part_start = 0
    for i, char in enumerate(header + ","):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            found = _PARAMETER.match(header[part_start:i])
            if found is not None:
                names.append(found.group(1))
            part_start = i + 1
    return names


def _read_header(source: bytes, start: int, end: int, hints: list[BindingHint]) -> None:
    """The parameters (as locals) and the declared result of the function whose ``def`` is at ``start``."""
    header = _HEADER_END.search(source, start, min(end, start + _HEADER_SCAN_BYTES))
    if header is None:
        return
    opening = source.find(b"(", start, header.start() + 1)
    if opening >= 0:
        parameters = _parameter_names(source[opening + 1:header.start()].decode("utf-8", "replace"))
        hints.extend(BindingHint(LOCAL_NAME_HINT, start, name) for name in parameters)
    result = header.group(1)
    plain = _PLAIN_TYPE.match(result.decode("utf-8", errors="replace").strip()) if result else None
    if plain is not None and plain.group(1) != "None":
        hints.append(BindingHint(RESULT_TYPE_HINT, start, value=plain.group(1)))


def read_bindings(source: bytes, spans: Sequence[tuple[int, int]]) -> list[BindingHint]:
    """The binding hints of one Python file (``spans``: its definitions' byte spans, by start)."""
    hints: list[BindingHint] = []
    has_function = False
    for start, end in spans:
        stop = source.find(b"\n", start, end)
        first_line = source[start:stop if stop >= 0 else end].decode("utf-8", errors="replace").strip()
        if first_line.startswith(("def ", "async def ")):
            _read_header(source, start, end, hints)
            has_function = has_function or \
                first_line[:_SIGNATURE_CHARS].split("#", 1)[0].rstrip().endswith(":")
    # A file without a function (constants, a protocol of stubs) has no locals, results or attributes
    # to read; only its module-level annotations are.
    annotated = _ANNOTATED if has_function else _ANNOTATED_AT_LINE_START
    hints.extend(BindingHint(ANNOTATION_HINT, found.start(), found.group(1).decode("ascii"),
                             found.group(2).decode("ascii")) for found in annotated.finditer(source))
    if not has_function:
        return hints
    hints.extend(BindingHint(ATTRIBUTE_HINT, found.start(1), found.group(1).decode("ascii"),
                             found.group(2).decode("ascii")) for found in _ATTRIBUTE_FROM_VARIABLE.finditer(source))
    for pattern in _LOCAL_NAMES:
        for found in pattern.finditer(source):
            hints.extend(BindingHint(LOCAL_NAME_HINT, found.start(1), name.strip())
                         for name in found.group(1).decode("ascii").split(","))
    hints.extend(BindingHint(RESULT_VARIABLE_HINT, found.start(1), found.group(1).decode("ascii"))
                 for found in _RETURNED.finditer(source))
    return hints

"""Reading a JSON Lines file of objects, with one error message per bad line.

The labeled sets ``cce relevance`` reads (``cce.relevance/v1`` fixtures and
``cce.localization/v1`` cases) share the same line discipline: blank lines
are skipped, ``NaN``/``Infinity`` are refused as the other engines' strict
parsers refuse them, and a line that is not a JSON object stops the read with
its line number.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import UNICODE_WHITESPACE, split_lines


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def json_objects(text: str, label: str) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """``(line number, where, object)`` for each non-blank line; ``where`` is ``"<label> line N"``."""
    for lineno, line in enumerate(split_lines(text), start=1):
        if not line.strip(UNICODE_WHITESPACE):
            continue
        where = f"{label} line {lineno}"
        try:
            value = json.loads(line, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            raise CceError(f"{where}: invalid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise CceError(f"{where}: expected a JSON object")
        yield lineno, where, value

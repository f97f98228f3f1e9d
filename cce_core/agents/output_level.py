"""Layer 4, output compression: how terse the agent is asked to be.

A level is a fixed instruction block — ``cce init`` writes it into CLAUDE.md
and the ``set_output_compression`` tool switches it for one MCP session. The
texts are pinned byte for byte across engines (lengths 0/75/187/234), so the
transform is a pure lookup.
"""

from __future__ import annotations

from typing import Any

from cce_core.foundation.config import DEFAULT_OUTPUT_LEVEL, OUTPUT_LEVEL_NAMES, parse_enum
from cce_core.foundation.safe_text import shorten
from cce_core.foundation.textrules import UNICODE_WHITESPACE
from cce_core.observability.usage import debug_quote

OUTPUT_LEVELS: tuple[str, ...] = OUTPUT_LEVEL_NAMES
DEFAULT_LEVEL = DEFAULT_OUTPUT_LEVEL

_HEADING = "\n### Output compression\n\n"
_STANDARD_RULE = ("Answer in the fewest words that are correct; when editing code show ONLY the changed lines "
                  "(a minimal diff), never reprint whole files; no preamble or postamble.")
_BLOCKS = {
    "off": "",
    "lite": _HEADING + "Be concise; drop filler, preamble, and postamble.\n",
    "standard": _HEADING + _STANDARD_RULE + "\n",
    "max": _HEADING + _STANDARD_RULE + " Telegraphic prose; code as minimal diffs only.\n",
}

_MISSING_LEVEL = "set_output_compression requires a `level` (one of: off, lite, standard, max)."


def parse_level(value: str) -> str | None:
    """The canonical level ``value`` names (trimmed, any ASCII case), or ``None``."""
    return parse_enum(value, OUTPUT_LEVELS)


def output_block(level: str) -> str:
    """The CLAUDE.md instruction block of ``level`` (an unknown level gets the default's block)."""
    return _BLOCKS.get(parse_level(level) or DEFAULT_LEVEL, _BLOCKS[DEFAULT_LEVEL])


def apply_set_output_compression(args: dict[str, Any]) -> tuple[str | None, str, bool]:
    """The ``set_output_compression`` tool: ``(new level or None, tool text, is_error)``.

    A missing, blank or unknown level is a tool error and changes nothing.
    """
    raw = args.get("level") if isinstance(args, dict) else None
    text = raw.strip(UNICODE_WHITESPACE) if isinstance(raw, str) else ""
    if not text:
        return None, _MISSING_LEVEL, True
    level = parse_level(text)
    if level is None:
        # The echo is cut to 200 characters: an answer never grows with its argument.
        return None, (f"set_output_compression: unknown level {debug_quote(shorten(text))}; "
                      'use "off", "lite", "standard", or "max".'), True
    return level, f"Output compression is now `{level}` for this session (in-memory; CLAUDE.md unchanged).", False

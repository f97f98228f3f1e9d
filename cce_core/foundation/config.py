"""Per-project settings read from ``<root>/.cce/config`` (YAML).

The other engines read this file section by section, each section on its own
and each one forgiving: a file that is not YAML, or a section whose declared
field has the wrong type, leaves *that section* at its defaults while the
other sections still apply; unknown keys are ignored. Their YAML reader
follows YAML 1.2, where ``on``/``off``/``yes``/``no`` are plain strings and
only ``true``/``false`` (any of three spellings) are booleans, so this module
does its own scalar typing over PyYAML's node graph instead of letting
PyYAML's YAML 1.1 resolver decide.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_core.foundation.textrules import UNICODE_WHITESPACE

CONFIG_DIR = ".cce"
CONFIG_FILE = "config"

DETAIL_LEVELS = ("signature", "compact", "full")
OUTPUT_LEVEL_NAMES = ("off", "lite", "standard", "max")
FOOTER_MODES = ("off", "on", "session")
KNOWLEDGE_SOURCES = ("code", "knowledge", "both")
SECRETS_PROFILES = ("strict", "family")  # `family`: the other engines' exact redaction

DEFAULT_RETRIEVAL_DETAIL = "compact"
DEFAULT_OUTPUT_LEVEL = "standard"
DEFAULT_MEMORY_ENABLED = True
DEFAULT_MCP_RESULT_FOOTER = "off"
DEFAULT_KNOWLEDGE_ENABLED = True
DEFAULT_KNOWLEDGE_MIN_SCORE = 0.30
DEFAULT_KNOWLEDGE_SOURCE = "both"
DEFAULT_MARKDOWN_MAX_SECTION_TOKENS = 400
DEFAULT_SECRETS_PROFILE = "strict"

_U64_MAX = (1 << 64) - 1
# ASCII-lowercase only, as the reference's enum parsers do.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_FLOAT_RE = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NULLS = ("null", "Null", "NULL", "~")


@dataclass(frozen=True)
class CceConfig:
    """The settings of ``.cce/config``, each at its default unless the file sets it."""

    retrieval_detail: str = DEFAULT_RETRIEVAL_DETAIL
    output_level: str = DEFAULT_OUTPUT_LEVEL
    memory_enabled: bool = DEFAULT_MEMORY_ENABLED
    summarization_auto_tokens: int | None = None
    mcp_result_footer: str = DEFAULT_MCP_RESULT_FOOTER
    knowledge_enabled: bool = DEFAULT_KNOWLEDGE_ENABLED
    knowledge_min_score: float = DEFAULT_KNOWLEDGE_MIN_SCORE
    knowledge_default_source: str = DEFAULT_KNOWLEDGE_SOURCE
    markdown_max_section_tokens: int = DEFAULT_MARKDOWN_MAX_SECTION_TOKENS
    secrets_profile: str = DEFAULT_SECRETS_PROFILE
    # ``ranking.profile`` as written (validated where it is used: retrieval.profiles), None when unset.
    ranking_profile: str | None = None
    # ``ranking.disable``: default-profile stages switched off, as written (validated in retrieval.profiles).
    ranking_disable: tuple[str, ...] = ()


def config_path(root: Path) -> Path:
    return Path(root) / CONFIG_DIR / CONFIG_FILE


def parse_enum(value: str, allowed: tuple[str, ...]) -> str | None:
    """``value`` trimmed and ASCII-lowercased if it names one of ``allowed``, else ``None``."""
    wanted = value.strip(UNICODE_WHITESPACE).translate(_ASCII_LOWER)
    return wanted if wanted in allowed else None


# --------------------------------------------------------------------------- YAML typing


class _Mismatch(Exception):
    """A declared field holds a value of the wrong type: the section falls back to defaults."""


def _is_plain(node: Any) -> bool:
    return node.style is None


def _is_scalar(node: Any) -> bool:
    import yaml

    return isinstance(node, yaml.ScalarNode)


def _is_null(node: Any) -> bool:
    """Whether an optional field is absent: a plain empty or null-spelled scalar."""
    return _is_scalar(node) and _is_plain(node) and (node.value == "" or node.value in _NULLS)


def _as_str(node: Any) -> str:
    if not _is_scalar(node):
        raise _Mismatch
    return str(node.value)


def _as_bool(node: Any) -> bool:
    if _is_scalar(node) and _is_plain(node):
        if node.value in ("true", "True", "TRUE"):
            return True
        if node.value in ("false", "False", "FALSE"):
            return False
    raise _Mismatch


def _leading_zero_digits(text: str) -> bool:
    body = text[1:] if text[:1] in ("-", "+") else text
    return len(body) > 1 and body[0] == "0" and body[1:].isascii() and body[1:].isdigit()


def _as_u64(node: Any) -> int:
    if not (_is_scalar(node) and _is_plain(node)):
        raise _Mismatch
    text = node.value
    body = text[1:] if text.startswith("+") else text
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if body.startswith(prefix):
            rest = body[2:]
            if rest and rest.isascii() and all(c.isalnum() for c in rest):
                try:
                    value = int(rest, base)
                except ValueError:
                    break
                if value <= _U64_MAX:
                    return value
            break
    if body[:1] in ("+", "-") or _leading_zero_digits(text) or not (body.isascii() and body.isdigit()):
        raise _Mismatch
    value = int(body)
    if value > _U64_MAX:
        raise _Mismatch
    return value


def _as_f64(node: Any) -> float:
    if not (_is_scalar(node) and _is_plain(node)):
        raise _Mismatch
    text = node.value
    body = text
    if text.startswith("+"):
        body = text[1:]
        if body[:1] in ("+", "-"):
            raise _Mismatch
    if body in (".inf", ".Inf", ".INF"):
        return math.inf
    if text in ("-.inf", "-.Inf", "-.INF"):
        return -math.inf
    if text in (".nan", ".NaN", ".NAN"):
        return math.nan
    if not _FLOAT_RE.fullmatch(body):
        raise _Mismatch
    value = float(body)
    if not math.isfinite(value):
        raise _Mismatch
    return value


def _as_footer(node: Any) -> str | None:
    """``mcp.result_footer`` accepts any YAML value; only a scalar can name a mode.

    YAML booleans map to on/off, which is also what their spellings parse to,
    and numbers never name a mode, so the scalar's text decides alone.
    """
    return _footer_mode(node.value) if _is_scalar(node) else None


def _footer_mode(text: str) -> str | None:
    wanted = text.strip(UNICODE_WHITESPACE).translate(_ASCII_LOWER)
    return {"off": "off", "false": "off", "on": "on", "true": "on", "session": "session"}.get(wanted)


def _section_fields(root: Any, name: str) -> dict[str, Any] | None:
    """The ``{field: node}`` map of one top-level section, ``None`` when it is absent.

    Raises :class:`_Mismatch` when the section exists but is not a mapping, or
    names the same key twice.
    """
    import yaml

    found: Any = None
    seen = False
    for key, value in root.value:
        if _is_scalar(key) and key.value == name:
            if seen:
                raise _Mismatch
            seen, found = True, value
    if not seen or _is_null(found):
        return None
    if not isinstance(found, yaml.MappingNode):
        raise _Mismatch
    fields: dict[str, Any] = {}
    for key, value in found.value:
        if _is_scalar(key):
            if key.value in fields:
                raise _Mismatch
            fields[key.value] = value
    return fields


def _field(fields: dict[str, Any], name: str) -> Any:
    """The node of an optional field, ``None`` when it is absent or null."""
    node = fields.get(name)
    return None if node is None or _is_null(node) else node


def _compose(text: str) -> Any:
    """The root mapping node, an empty mapping for an empty file, ``None`` when nothing applies."""
    import yaml

    try:
        docs = list(yaml.compose_all(text, Loader=yaml.BaseLoader))
    except (yaml.YAMLError, RecursionError):  # load_config refuses deep nesting before it gets here
        return None
    if len(docs) > 1:
        return None
    if not docs or docs[0] is None:
        return yaml.MappingNode("tag:yaml.org,2002:map", [])
    root = docs[0]
    if isinstance(root, yaml.MappingNode):
        return root
    if _is_scalar(root) and _is_plain(root) and root.value == "":
        return yaml.MappingNode("tag:yaml.org,2002:map", [])
    return None


def parse_config(text: str) -> CceConfig:
    """The settings a ``.cce/config`` text yields, with the per-section fallback."""
    root = _compose(text)
    if root is None:
        return CceConfig()
    values: dict[str, Any] = {}

    def section(name: str, apply: Any) -> None:
        try:
            fields = _section_fields(root, name)
            if fields is not None:
                apply(fields)
        except _Mismatch:
            pass

    def retrieval(f: dict[str, Any]) -> None:
        node = _field(f, "detail")
        if node is not None:
            detail = parse_enum(_as_str(node), DETAIL_LEVELS)
            if detail is not None:
                values["retrieval_detail"] = detail

    def output(f: dict[str, Any]) -> None:
        node = _field(f, "level")
        if node is not None:
            level = parse_enum(_as_str(node), OUTPUT_LEVEL_NAMES)
            if level is not None:
                values["output_level"] = level

    def memory(f: dict[str, Any]) -> None:
        node = _field(f, "enabled")
        if node is not None:
            values["memory_enabled"] = _as_bool(node)

    def summarization(f: dict[str, Any]) -> None:
        node = _field(f, "auto_tokens")
        if node is not None:
            values["summarization_auto_tokens"] = _as_u64(node)

    def mcp(f: dict[str, Any]) -> None:
        node = _field(f, "result_footer")
        if node is not None:
            mode = _as_footer(node)
            if mode is not None:
                values["mcp_result_footer"] = mode

    def markdown(f: dict[str, Any]) -> None:
        node = _field(f, "max_section_tokens")
        if node is not None:
            budget = _as_u64(node)
            if budget > 0:
                values["markdown_max_section_tokens"] = budget

    def knowledge(f: dict[str, Any]) -> None:
        # Type every field first: one mismatch discards the whole section.
        enabled = _field(f, "enabled")
        min_score = _field(f, "min_score")
        source = _field(f, "default_source")
        typed_enabled = _as_bool(enabled) if enabled is not None else None
        typed_score = _as_f64(min_score) if min_score is not None else None
        typed_source = _as_str(source) if source is not None else None
        if typed_enabled is not None:
            values["knowledge_enabled"] = typed_enabled
        if typed_score is not None and math.isfinite(typed_score):
            values["knowledge_min_score"] = typed_score
        if typed_source in KNOWLEDGE_SOURCES:  # matched exactly, as the reference does
            values["knowledge_default_source"] = typed_source

    section("retrieval", retrieval)
    section("output", output)
    section("memory", memory)
    section("summarization", summarization)
    section("mcp", mcp)
    section("markdown", markdown)
    section("knowledge", knowledge)
    section("secrets", lambda f: _secrets_section(f, values))
    section("ranking", lambda f: _ranking_section(f, values))
    return CceConfig(**values)


def _ranking_section(fields: dict[str, Any], values: dict[str, Any]) -> None:
    """``ranking.profile``: kept as written, so a misspelt profile is reported instead of ignored."""
    node = _field(fields, "profile")
    if node is not None and not _is_null(node):
        values["ranking_profile"] = _as_str(node)
    disable = _field(fields, "disable")
    if disable is not None and not _is_null(disable):
        import yaml

        items = disable.value if isinstance(disable, yaml.SequenceNode) else [disable]
        values["ranking_disable"] = tuple(_as_str(item) for item in items)


def _secrets_section(fields: dict[str, Any], values: dict[str, Any]) -> None:
    """``secrets.profile``: ``strict`` (default) or ``family``; anything else keeps the default."""
    node = _field(fields, "profile")
    if node is not None:
        profile = parse_enum(_as_str(node), SECRETS_PROFILES)
        if profile is not None:
            values["secrets_profile"] = profile


def load_config(root: Path) -> CceConfig:
    """The settings of the project at ``root``; a missing or unreadable file means all defaults.

    A file nested deeper than any config needs is refused with a :class:`CceError` naming it.
    """
    from cce_core.foundation.errors import CceError
    from cce_core.foundation.nesting import too_deep_message, yaml_too_deep

    try:
        text = config_path(root).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return CceConfig()
    if yaml_too_deep(text):
        raise CceError(too_deep_message(str(config_path(root))))
    return parse_config(text)

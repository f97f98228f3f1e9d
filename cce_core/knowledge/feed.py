"""The ``cce.knowledge/v1`` feed: one JSON record per line, the boundary every document adapter targets.

The engine knows no ticket system or wiki. An adapter (a script over an issue
tracker export, a folder of notes, ...) writes this neutral NDJSON, and this
module is where it is checked: each record is validated field by field, and
the first bad line fails the whole feed with ``line N: invalid
cce.knowledge/v1 record: ...`` so nothing half-ingested ever reaches a store.
A valid record renders to the document ``# {title}\\n\\n{body}`` that the
document chunker cuts into sections.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from cce_core.foundation.textrules import UNICODE_WHITESPACE, fields_once_hook, split_lines

SCHEMA_ID = "cce.knowledge/v1"
# The format of a rendered record: the document chunker asked to cut it.
DOCUMENT_FORMAT = "markdown"

_REQUIRED = ("id", "title", "body", "source")
_OPTIONAL_STR = ("url", "state", "state_reason", "updated_at", "group")
_OPTIONAL_LIST = ("labels", "links")
_DECLARED = frozenset((*_REQUIRED, *_OPTIONAL_STR, *_OPTIONAL_LIST, "extra"))


class FeedError(ValueError):
    """A feed line that is not a valid record; the message is the whole user-facing text."""


@dataclass(frozen=True)
class KnowledgeRecord:
    """One validated record. ``extra`` is the adapter's passthrough, kept but never read."""

    id: str
    title: str
    body: str
    source: str
    url: str | None = None
    state: str | None = None
    state_reason: str | None = None
    updated_at: str | None = None
    labels: tuple[str, ...] = field(default=())
    group: str | None = None
    links: tuple[str, ...] = field(default=())
    extra: Any = None


def _kind(value: Any) -> str:
    """How a JSON value is named in a type error (``integer `5```, ``sequence``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value!r}`"
    if isinstance(value, str):
        return f"string {json.dumps(value, ensure_ascii=False)}"
    if isinstance(value, list):
        return "sequence"
    return "map"


_NO_DUPLICATES = fields_once_hook(_DECLARED)
_DUPLICATE = "duplicate field "


def _reject_constant(name: str) -> Any:
    raise FeedError(f"expected value (`{name}` is not JSON)")


def parse_record(line: str) -> KnowledgeRecord:
    """One line → a record, or :class:`FeedError` saying what is wrong (without the line prefix)."""
    try:
        obj = json.loads(line, object_pairs_hook=_NO_DUPLICATES, parse_constant=_reject_constant)
    except FeedError:
        raise
    except json.JSONDecodeError as exc:
        raise FeedError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:  # the duplicate-field hook
        raise FeedError(f"{_DUPLICATE}`{str(exc).removeprefix(_DUPLICATE)}`") from None
    except RecursionError:
        raise FeedError("recursion limit exceeded") from None
    if not isinstance(obj, dict):
        raise FeedError(f"invalid type: {_kind(obj)}, expected a {SCHEMA_ID} record object")
    values: dict[str, Any] = {}
    for name in _REQUIRED:
        if name not in obj:
            raise FeedError(f"missing field `{name}`")
        if not isinstance(obj[name], str):
            raise FeedError(f"field `{name}`: invalid type: {_kind(obj[name])}, expected a string")
        values[name] = obj[name]
    for name in _OPTIONAL_STR:
        value = obj.get(name)
        if value is not None and not isinstance(value, str):
            raise FeedError(f"field `{name}`: invalid type: {_kind(value)}, expected a string or null")
        values[name] = value
    for name in _OPTIONAL_LIST:
        value = obj.get(name, [])
        if not isinstance(value, list):
            raise FeedError(f"field `{name}`: invalid type: {_kind(value)}, expected a sequence of strings")
        for item in value:
            if not isinstance(item, str):
                raise FeedError(f"field `{name}`: invalid type: {_kind(item)}, expected a string")
        values[name] = tuple(value)
    values["extra"] = obj.get("extra")
    return KnowledgeRecord(**values)


def parse_feed(text: str) -> list[KnowledgeRecord]:
    """Every record of a feed, in order; the first bad line raises :class:`FeedError` naming it.

    Lines split on ``\\n`` (one trailing ``\\r`` dropped); blank lines are skipped
    and count toward the 1-based line numbers; unknown keys are ignored.
    """
    records: list[KnowledgeRecord] = []
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip(UNICODE_WHITESPACE):
            continue
        try:
            records.append(parse_record(line))
        except FeedError as exc:
            raise FeedError(f"line {number}: invalid {SCHEMA_ID} record: {exc}") from None
    return records


def render_document(record: KnowledgeRecord) -> str:
    """The document a record stands for: its trimmed title as the top heading, then the body verbatim."""
    return f"# {record.title.strip(UNICODE_WHITESPACE)}\n\n{record.body}"

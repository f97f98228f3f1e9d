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
import re
from collections.abc import Iterable, Iterator
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


def json_kind(value: Any) -> str:
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


# A ``\\uD800``-style escape with no partner decodes to a lone surrogate: a str that no UTF-8 can hold.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate anywhere in a parsed JSON value (keys included), or None.

    A loop, not recursion: ``extra`` may nest as deep as the JSON parser allowed.
    """
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if not item.isascii() and (found := _SURROGATE.search(item)) is not None:
                return found.group()
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
    return None


def _refuse_lone_surrogates(obj: dict[str, Any]) -> None:
    """Refuse a record holding an unpaired UTF-16 surrogate escape: it is not text, and no store could be written."""
    for name, value in obj.items():
        in_name = _lone_surrogate(name)
        bad = in_name or _lone_surrogate(value)
        if bad is not None:
            where = "a field name" if in_name else f"field `{name}`"
            raise FeedError(f"{where}: lone surrogate `\\u{ord(bad):04x}` is not a Unicode character "
                            "(an unpaired \\uD800-\\uDFFF escape)")


def strict_json(text: str, pairs_hook: Any = _NO_DUPLICATES) -> Any:
    """One JSON document read as the family's typed readers read it, or :class:`FeedError` with the reason.

    A declared field given twice (``pairs_hook``, from ``fields_once_hook``),
    ``NaN``/``Infinity``, and nesting past the recursion limit are errors, not values.
    """
    try:
        return json.loads(text, object_pairs_hook=pairs_hook, parse_constant=_reject_constant)
    except FeedError:
        raise
    except json.JSONDecodeError as exc:
        raise FeedError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:  # the duplicate-field hook
        raise FeedError(f"{_DUPLICATE}`{str(exc).removeprefix(_DUPLICATE)}`") from None
    except RecursionError:
        raise FeedError("recursion limit exceeded") from None


def parse_record(line: str) -> KnowledgeRecord:
    """One line → a record, or :class:`FeedError` saying what is wrong (without the line prefix)."""
    obj = strict_json(line)
    if not isinstance(obj, dict):
        raise FeedError(f"invalid type: {json_kind(obj)}, expected a {SCHEMA_ID} record object")
    _refuse_lone_surrogates(obj)
    values: dict[str, Any] = {}
    for name in _REQUIRED:
        if name not in obj:
            raise FeedError(f"missing field `{name}`")
        if not isinstance(obj[name], str):
            raise FeedError(f"field `{name}`: invalid type: {json_kind(obj[name])}, expected a string")
        values[name] = obj[name]
    for name in _OPTIONAL_STR:
        value = obj.get(name)
        if value is not None and not isinstance(value, str):
            raise FeedError(f"field `{name}`: invalid type: {json_kind(value)}, expected a string or null")
        values[name] = value
    for name in _OPTIONAL_LIST:
        value = obj.get(name, [])
        if not isinstance(value, list):
            raise FeedError(f"field `{name}`: invalid type: {json_kind(value)}, expected a sequence of strings")
        for item in value:
            if not isinstance(item, str):
                raise FeedError(f"field `{name}`: invalid type: {json_kind(item)}, expected a string")
        values[name] = tuple(value)
    values["extra"] = obj.get("extra")
    return KnowledgeRecord(**values)


def iter_records(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, KnowledgeRecord]]:
    """``(line number, record)`` for each non-blank numbered line; the first bad one raises :class:`FeedError`.

    A record id may appear once: ids address sections, so a second record with
    the same id is refused with the line of the first (ids are kept, not the
    records, so a streamed feed costs memory per id only).
    """
    first_line: dict[str, int] = {}
    for number, line in lines:
        if not line.strip(UNICODE_WHITESPACE):
            continue
        try:
            record = parse_record(line)
            seen = first_line.setdefault(record.id, number)
            if seen != number:
                raise FeedError(f"duplicate record id {json.dumps(record.id, ensure_ascii=False)} "
                                f"(first on line {seen})")
        except FeedError as exc:
            raise FeedError(f"line {number}: invalid {SCHEMA_ID} record: {exc}") from None
        yield number, record


def parse_feed(text: str) -> list[KnowledgeRecord]:
    """Every record of a feed, in order; the first bad line raises :class:`FeedError` naming it.

    Lines split on ``\\n`` (one trailing ``\\r`` dropped); blank lines are skipped
    and count toward the 1-based line numbers; unknown keys are ignored.
    """
    return [record for _number, record in iter_records(enumerate(split_lines(text), start=1))]


def render_document(record: KnowledgeRecord) -> str:
    """The document a record stands for: its trimmed title as the top heading, then the body verbatim.

    The title is put on one line first (``safe_text.one_line``): a newline in it would
    otherwise start lines of the section that an answer serves, and could forge rows there.
    A title without control characters renders exactly as before.
    """
    from cce_core.foundation.safe_text import one_line

    return f"# {one_line(record.title.strip(UNICODE_WHITESPACE))}\n\n{record.body}"

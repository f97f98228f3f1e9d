"""Layer 6, turn summarization: what one MCP session has touched, as a small digest.

An MCP server process lives for one agent session. It notes each
context-touching tool call here (searches, expansions, related-context
widenings, recorded decisions) and ``summarize_context`` renders the notes
as a bounded, structured digest the agent can keep instead of its raw
history. The digest depends only on the sequence of calls — no clock, no
hash order, no model — so the same session always yields the same bytes.
Nothing here is ever written to disk. The items are file paths, record ids,
queries and decision labels nobody vetted, so each is printed on one line
(:func:`~cce_core.foundation.safe_text.one_line`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cce_core.foundation.safe_text import one_line, shorten
from cce_core.foundation.textrules import UNICODE_WHITESPACE, collapse_ascii_whitespace, estimate_tokens
from cce_core.observability.usage import debug_quote

MAX_ITEMS = 20
LABEL_MAX_CHARS = 60
DIGEST_HEADER = "CCE session digest"
EMPTY_BODY = "(nothing recorded this session yet)"
SCOPES = ("all", "files", "queries", "decisions")

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def elision(n: int) -> str:
    """The marker standing for ``n`` items left out; always plural."""
    return f"… (+{n} more)"


def short_label(text: str) -> str:
    """One-line label of an (already redacted) decision: whitespace collapsed, cut to 60 characters plus ``…``."""
    label = collapse_ascii_whitespace(text)
    if len(label) <= LABEL_MAX_CHARS:
        return label
    return label[:LABEL_MAX_CHARS] + "…"


def parse_scope(value: str) -> str | None:
    wanted = value.strip(UNICODE_WHITESPACE).translate(_ASCII_LOWER)
    return wanted if wanted in SCOPES else None


@dataclass(frozen=True)
class _Search:
    query: str
    chunk_ids: tuple[str, ...]
    paths: tuple[str, ...]


@dataclass(frozen=True)
class _Expand:
    chunk_id: str
    scope: str


@dataclass(frozen=True)
class _Related:
    chunk_id: str


@dataclass(frozen=True)
class _Decision:
    id: str
    label: str


class SessionLedger:
    """The in-memory, ordered notes of one session, and the digest made from them.

    The server calls ``note_search`` after each ``context_search`` (with the
    chunk ids and file paths it returned, workspace paths member-prefixed),
    ``note_expand`` for every ``expand_chunk`` call before looking the id up,
    ``note_related`` for a well-formed ``related_context`` call, and
    ``note_decision`` (done by :func:`cce_core.agents.memory.record_decision`) for
    every recorded or re-recorded decision. ``note_served`` keeps the running
    token count of the tool texts sent back, for the auto-summarize hint.
    """

    def __init__(self) -> None:
        self._events: list[Any] = []
        self.served_tokens = 0

    def __len__(self) -> int:
        return len(self._events)

    # -- recording --------------------------------------------------------

    def note_search(self, query: str, chunk_ids: Sequence[str], paths: Sequence[str]) -> None:
        self._events.append(_Search(query, tuple(chunk_ids), tuple(paths)))

    def note_expand(self, chunk_id: str, scope: str) -> None:
        self._events.append(_Expand(chunk_id, scope))

    def note_related(self, chunk_id: str) -> None:
        self._events.append(_Related(chunk_id))

    def note_decision(self, decision_id: str, label: str) -> None:
        self._events.append(_Decision(decision_id, label))

    def note_served(self, text: str) -> None:
        self.served_tokens += estimate_tokens(text)

    def summarize_due(self, auto_tokens: int | None) -> bool:
        """Whether the served tokens reached ``summarization.auto_tokens`` (never, when unset)."""
        return auto_tokens is not None and self.served_tokens >= auto_tokens

    # -- the digest -------------------------------------------------------

    def files(self) -> list[str]:
        return sorted({p for e in self._events if isinstance(e, _Search) for p in e.paths})

    def chunks(self) -> list[str]:
        ids: set[str] = set()
        for e in self._events:
            if isinstance(e, _Search):
                ids.update(e.chunk_ids)
            elif isinstance(e, _Expand | _Related):
                ids.add(e.chunk_id)
        return sorted(ids)

    def queries(self) -> list[str]:
        return list(dict.fromkeys(e.query for e in self._events if isinstance(e, _Search)))

    def decisions(self) -> list[str]:
        first: dict[str, str] = {}
        for e in self._events:
            if isinstance(e, _Decision) and e.id not in first:
                first[e.id] = f"#{e.id} {e.label}"
        return list(first.values())

    def digest(self, scope: str = "all") -> str:
        """The digest of one slice: ``all``, ``files`` (files and chunks), ``queries`` or ``decisions``."""
        if not self._events:
            return f"{DIGEST_HEADER}\n{EMPTY_BODY}"
        names = {"all": ("files", "chunks", "queries", "decisions"), "files": ("files", "chunks"),
                 "queries": ("queries",), "decisions": ("decisions",)}[scope]
        parts = [DIGEST_HEADER]
        for name in names:
            items: list[str] = getattr(self, name)()
            parts.append(f"\n{name} ({len(items)}):")
            parts.extend(f"\n- {one_line(item)}" for item in items[:MAX_ITEMS])
            if len(items) > MAX_ITEMS:
                parts.append("\n" + elision(len(items) - MAX_ITEMS))
        return "".join(parts)

    def summarize(self, args: dict[str, Any]) -> tuple[str, bool]:
        """The ``summarize_context`` tool: ``(tool text, is_error)``; a missing or blank scope means all."""
        raw = args.get("scope") if isinstance(args, dict) else None
        text = raw.strip(UNICODE_WHITESPACE) if isinstance(raw, str) else "all"
        text = text or "all"
        scope = parse_scope(text)
        if scope is None:
            return (f"summarize_context: unknown scope {debug_quote(shorten(text))}; "
                    'use "all", "files", "queries", or "decisions".'), True
        return self.digest(scope), False

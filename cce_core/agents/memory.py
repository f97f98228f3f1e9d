"""Layer 5, decision memory: validated decisions kept in ``.cce/memory.jsonl``.

An agent records a decision it has checked so a later session can recall it
instead of re-deriving it. The store is local only (never synced, never part
of the code index), append-only, and content-addressed: the id is a hash of
the decision's whitespace-normalised, secret-redacted text, so recording the
same decision twice is a no-op. Every stored text (the decision, its tags
and area) is redacted with the project's secrets profile, strict unless
``.cce/config`` chooses ``family``, the one the code index and knowledge
ingest use. Recall ranks every entry with the ordinary hybrid search, then
keeps only confident matches (a score floor and at least one word shared with
the query), then cuts to ``top_k``, so a weak memory never pollutes the
agent's context and never takes the place of a confident one.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_core.foundation.config import CceConfig
from cce_core.foundation.safe_text import one_line
from cce_core.foundation.textrules import (
    UNICODE_WHITESPACE,
    collapse_ascii_whitespace,
    estimate_tokens,
    fields_once_hook,
    format6,
    tokenize,
    tokenize_bytes,
)
from cce_core.secrets.redactor import DEFAULT_PROFILE, redact_with

MEMORY_DIR = ".cce"
MEMORY_FILE = "memory.jsonl"
DEFAULT_TOP_K = 5
RECALL_MIN_SCORE = 0.30  # fixed: knowledge.min_score does not apply here

_CHUNK_TYPE = "memory"
_KIND = "decision"
_LANGUAGE = "memory"


DISABLED_MESSAGE = ("Memory is disabled for this project (memory.enabled=false in .cce/config). "
                    "Set it to true to record and recall decisions.")
_EMPTY_TEXT = "record_decision requires a non-empty `text` (a validated decision to remember)."
_EMPTY_QUERY = "session_recall requires a non-empty `query`."
_NOT_WRITABLE = "could not record the decision (the memory store is not writable)."
_REUSE_NOTE = "\nThese are validated decisions you MAY reuse — apply only what fits; they are not auto-injected.\n"


@dataclass(frozen=True)
class MemoryEntry:
    id: str
    text: str
    tags: tuple[str, ...] = ()
    area: str | None = None
    ts: str = ""

    def to_json_line(self) -> str:
        """One compact JSON line, fields in declaration order, ``area`` left out when absent."""
        obj: dict[str, Any] = {"id": self.id, "text": self.text, "tags": list(self.tags)}
        if self.area is not None:
            obj["area"] = self.area
        obj["ts"] = self.ts
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))

    def searchable(self) -> str:
        """What recall ranks: the text, then each tag, then the area, space-separated."""
        return " ".join([self.text, *self.tags, *([self.area] if self.area is not None else [])])


@dataclass(frozen=True)
class RecallHit:
    """One recalled entry: its 1-based rank and its score against the query."""

    rank: int  # 1-based
    entry: MemoryEntry
    score: float


@dataclass(frozen=True)
class RecordOutcome:
    """What ``record`` did: the entry stored (or the one already stored under its id) and whether it is new."""

    entry: MemoryEntry
    is_new: bool


def memory_path(root: Path) -> Path:
    return Path(root) / MEMORY_DIR / MEMORY_FILE


def normalize(text: str) -> str:
    """Trim ASCII whitespace and collapse every inner run of it to one space; other characters stay."""
    return collapse_ascii_whitespace(text)


def memory_id(text: str) -> str:
    """16 lowercase hex of SHA-256 over the normalised text."""
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()[:16]


# --------------------------------------------------------------------------- the store


_ENTRY_FIELDS = frozenset({"id", "text", "tags", "area", "ts"})


# A stored object; an entry field given twice makes the line malformed.
_no_duplicate_keys = fields_once_hook(_ENTRY_FIELDS)


def _entry_from(obj: Any) -> MemoryEntry | None:
    """A stored line as an entry, or ``None`` when it does not have the entry's shape."""
    if not isinstance(obj, dict):
        return None
    ident, text, ts = obj.get("id"), obj.get("text"), obj.get("ts")
    if not (isinstance(ident, str) and isinstance(text, str) and isinstance(ts, str)):
        return None
    tags = obj.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        return None
    area = obj.get("area")
    if area is not None and not isinstance(area, str):
        return None
    return MemoryEntry(ident, text, tuple(tags), area, ts)


def load_entries(paths: Iterable[Path]) -> list[MemoryEntry]:
    """Entries of every store in ``paths``, first occurrence of an id wins; bad lines and files are skipped."""
    out: list[MemoryEntry] = []
    seen: set[str] = set()
    for path in paths:
        try:
            text = Path(path).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for line in text.split("\n"):
            line = line.strip(UNICODE_WHITESPACE)
            if not line:
                continue
            try:
                entry = _entry_from(json.loads(line, object_pairs_hook=_no_duplicate_keys))
            except (ValueError, RecursionError):  # a torn or hostile line never hides the others
                continue
            if entry is not None and entry.id not in seen:
                seen.add(entry.id)
                out.append(entry)
    return out


def _now_iso() -> str:
    from cce_core.observability.metrics import format_iso, now_secs

    return format_iso(now_secs())


def record(path: Path, text: str, tags: Sequence[str] = (), area: str | None = None,
           clock: Callable[[], str] = _now_iso, profile: str = DEFAULT_PROFILE) -> RecordOutcome:
    """Store a decision unless its id is already there; secrets are redacted before anything else.

    ``profile`` is the secrets profile (``strict`` or ``family``) every stored
    text goes through: the decision, each tag and the area.
    Raises :class:`OSError` when the store cannot be written.
    """
    safe_text = redact_with(text, profile)
    safe_area = redact_with(area, profile) if area is not None else None
    safe_tags = tuple(redact_with(tag, profile) for tag in tags)
    ident = memory_id(safe_text)
    for existing in load_entries([path]):
        if existing.id == ident:
            return RecordOutcome(existing, False)
    entry = MemoryEntry(ident, safe_text, safe_tags, safe_area, clock())
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    append_line(path, entry.to_json_line().encode("utf-8"))
    return RecordOutcome(entry, True)


def append_line(path: Path, line: bytes) -> None:
    """Append ``line`` and its newline to ``path`` in one ``write`` of an ``O_APPEND`` descriptor.

    One system call means two processes appending at once cannot interleave
    their bytes, and a file whose last line lost its newline (a crash, an
    editor) gets one first, so the new entry never merges into the torn one.
    Raises :class:`OSError` when the file cannot be written.
    """
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        data = (b"\n" if torn else b"") + line + b"\n"
        written = os.write(fd, data)
        while written < len(data):  # only a full disk or a signal splits a regular-file write
            written += os.write(fd, data[written:])
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- recall


def _hash_embedder() -> Any:
    from cce_core.plugins.host import default_host

    return default_host().embedder("hash")


def _build_store(entries: Sequence[MemoryEntry], embedder: Any) -> Any:
    import numpy as np

    from cce_core.indexing.bm25 import build_bm25, token_ids
    from cce_core.indexing.chunk import Chunk
    from cce_core.indexing.store import StoreData

    contents = [e.searchable() for e in entries]
    chunks = [Chunk(e.id, e.id, 0, 0, _CHUNK_TYPE, _KIND, _LANGUAGE, c, estimate_tokens(c))
              for e, c in zip(entries, contents, strict=True)]
    tids = token_ids([tokenize_bytes(c.encode("utf-8")) for c in contents])
    embeddings = np.asarray(embedder.embed_batch(contents), dtype=np.float64)
    return StoreData({"embedder": embedder.name}, chunks, embeddings, [], [], build_bm25(tids))


def recall(entries: Sequence[MemoryEntry], query: str, top_k: int = DEFAULT_TOP_K,
           min_score: float = RECALL_MIN_SCORE, embedder: Any = None) -> list[RecallHit]:
    """The confident matches for ``query``: every entry ranked, filtered by score and shared words, then cut.

    Ranking the whole store first matters (the reference's #103): a ranking cut
    to ``top_k`` before the filter lets entries that match by hash collision
    alone, and are then filtered out, take the places of confident ones.
    """
    if not entries or top_k <= 0:
        return []
    from cce_core.retrieval.searcher import Searcher

    embedder = embedder if embedder is not None else _hash_embedder()
    by_id = {e.id: e for e in entries}
    everything = max(len(entries), top_k)
    results = Searcher(_build_store(entries, embedder), embedder).search(query, everything, graph=False)
    query_tokens = set(tokenize(query))
    hits: list[RecallHit] = []
    for r in results:
        if r.score < min_score:
            continue
        entry = by_id.get(r.chunk.chunk_id)
        if entry is None or not query_tokens or not any(t in query_tokens for t in tokenize(entry.searchable())):
            continue
        hits.append(RecallHit(len(hits) + 1, entry, r.score))
        if len(hits) >= top_k:
            break
    return hits


def format_recall(hits: Sequence[RecallHit], total: int, profile: str = DEFAULT_PROFILE) -> str:
    """The ``session_recall`` tool text.

    The store is a file anyone can edit, and entries an older version wrote
    may hold what its redactor missed: each field is redacted again with
    ``profile`` (a no-op on what :func:`record` stored) and printed on one line
    (:func:`one_line`), so no note can forge the rows after it.
    """
    if not hits:
        return (f"No confident memory match ({total} remembered decision(s) searched). "
                "Nothing recalled — proceed without memory.")

    def shown(value: str) -> str:
        return one_line(redact_with(value, profile))

    parts = [f"Recalled {len(hits)} of {total} remembered decision(s):\n"]
    for h in hits:
        e = h.entry
        area = f" area={shown(e.area)}" if e.area is not None else ""
        tags = f" tags={shown(','.join(e.tags))}" if e.tags else ""
        parts.append(f"\n{h.rank:>2}. [{format6(h.score)}] #{one_line(e.id)}{area}{tags}\n")
        parts.append(shown(e.text.removesuffix("\n")) + "\n")
    parts.append(_REUSE_NOTE)
    return "".join(parts)


# --------------------------------------------------------------------------- the two tools


def _trimmed_str(args: Any, key: str) -> str | None:
    value = args.get(key) if isinstance(args, dict) else None
    return value.strip(UNICODE_WHITESPACE) if isinstance(value, str) else None


def _string_list(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [s for s in (v.strip(UNICODE_WHITESPACE) for v in value if isinstance(v, str)) if s]


def _positive_int(value: Any, default: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return default


def record_decision(root: Path, args: dict[str, Any], config: CceConfig, ledger: Any = None,
                    clock: Callable[[], str] = _now_iso) -> tuple[str, bool]:
    """The ``record_decision`` tool: ``(tool text, is_error)``.

    ``ledger`` (a :class:`~cce_core.agents.ledger.SessionLedger`) is told about the
    decision whether it is new or already stored — it is part of this
    session's history either way.
    """
    if not config.memory_enabled:
        return DISABLED_MESSAGE, False
    text = _trimmed_str(args, "text") or ""
    if not text:
        return _EMPTY_TEXT, True
    tags = _string_list(args.get("tags"))
    area = _trimmed_str(args, "area") or None
    profile = config.secrets_profile
    try:
        outcome = record(memory_path(root), text, tags, area, clock, profile)
    except OSError:
        return _NOT_WRITABLE, True
    if ledger is not None:
        from cce_core.agents.ledger import short_label

        # An entry an older version stored may still hold a secret: the label is redacted again.
        ledger.note_decision(outcome.entry.id, short_label(redact_with(outcome.entry.text, profile)))
    verb = "Recorded" if outcome.is_new else "Already recorded"
    return f"{verb} decision #{outcome.entry.id}. Retrieve it later with session_recall.", False


def session_recall(root: Path, args: dict[str, Any], config: CceConfig,
                   member_roots: Sequence[Path] = (), embedder: Any = None) -> tuple[str, bool]:
    """The ``session_recall`` tool: ``(tool text, is_error)``.

    Reads the root's store plus, in a workspace, each member's store
    (``member_roots``); an id seen twice counts once.
    """
    if not config.memory_enabled:
        return DISABLED_MESSAGE, False
    query = _trimmed_str(args, "query") or ""
    if not query:
        return _EMPTY_QUERY, True
    top_k = _positive_int(args.get("top_k"), DEFAULT_TOP_K)
    entries = load_entries([memory_path(root), *(memory_path(m) for m in member_roots)])
    hits = recall(entries, query, top_k, RECALL_MIN_SCORE, embedder)
    return format_recall(hits, len(entries), config.secrets_profile), False

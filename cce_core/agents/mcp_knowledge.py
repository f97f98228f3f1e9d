"""The knowledge side of the MCP tools: ``source`` knowledge|both, knowledge ids in expand/related, status lines.

Kept beside :mod:`cce_core.agents.mcp_tools` so the code tools stay as they
were: ``context_search`` hands any non-code ``source`` here, and
``expand_chunk``, ``related_context`` and ``index_status`` ask here before
giving up on an id or after their code lines. The ranking itself is
:mod:`cce_core.knowledge.blend`; this module picks the default pool, gets the
knowledge hits (with a notice when the store is broken) and renders the
knowledge texts; ``mcp_tools`` merges them with the code rows. Everything a
feed or a marker stored (titles, facets, record ids, kinds, the corpus, the
snapshot) is printed on one line, and record ids are shown redacted with the
project's secrets profile.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cce_core.foundation.config import KNOWLEDGE_SOURCES
from cce_core.foundation.safe_text import one_line
from cce_core.foundation.textrules import UNICODE_WHITESPACE

if TYPE_CHECKING:
    from cce_core.agents.mcp_session import SessionState
    from cce_core.knowledge.blend import KnowledgeHit
    from cce_core.knowledge.store import KnowledgeChunk

ToolResult = tuple[str, bool]

# Served when a knowledge store is on disk but cannot be loaded: the answer below lacks knowledge.
KNOWLEDGE_LOAD_ERROR_NOTICE = (
    "NOTICE: the knowledge store exists but could not be loaded (corrupt or unreadable store) — knowledge "
    "results are MISSING from this answer; anything shown below is code-only. Re-run "
    "`cce knowledge index <feed>` to rebuild it."
)
# Served in a blended answer when the code index is on disk but cannot be loaded.
CODE_INDEX_LOAD_ERROR_NOTICE = (
    "NOTICE: the code index exists but could not be loaded (corrupt or unreadable store) — code results are "
    "MISSING from this answer; anything shown below is knowledge-only. Re-run `cce index` (or "
    "`cce index --workspace`) to rebuild it."
)
BEHIND_KNOWLEDGE = "yes — run `cce knowledge pull`"


def resolve_source(session: SessionState, requested: str | None) -> str:
    """The pools to search: a valid ``source`` argument, else ``knowledge.default_source`` when a store is there.

    The default needs ``knowledge.enabled`` and a knowledge store on disk
    (loaded or broken — a broken one must reach the path that reports it);
    otherwise it is ``code``, exactly as before knowledge existed.
    """
    if requested is not None:
        explicit = requested.strip(UNICODE_WHITESPACE)
        if explicit in KNOWLEDGE_SOURCES:
            return explicit
    config = session.config()
    if config.knowledge_enabled and session.load_knowledge().present:
        return config.knowledge_default_source
    return "code"


def knowledge_hits(session: SessionState, query: str, top_k: int) -> tuple[list[KnowledgeHit], str | None, int]:
    """(hits, notice, knowledge chunk count); nothing when knowledge is disabled or was never ingested.

    A store on disk that cannot be loaded gives no hits and
    :data:`KNOWLEDGE_LOAD_ERROR_NOTICE`, so the answer says what it lacks.
    """
    config = session.config()
    if not config.knowledge_enabled:
        return [], None, 0
    load = session.load_knowledge()
    if load.loaded is None:
        return [], (KNOWLEDGE_LOAD_ERROR_NOTICE if load.status == "failed" else None), 0
    hits = load.loaded.search(query, top_k, config.knowledge_min_score)
    return hits, None, len(load.loaded.store.chunks)


def knowledge_header(rank: int, hit: KnowledgeHit) -> str:
    """`` 1. [0.912345] [knowledge] <title> — <state> · <updated_at> · <url> #<chunk_id>``."""
    from cce_core.foundation.textrules import format6

    return f"{rank:>2}. [{format6(hit.score)}] {hit.provenance()} #{one_line(hit.chunk_id)}"


def with_notice(notice: str | None, text: str) -> str:
    """``text`` with a degradation notice (if any) put first, a blank line between."""
    return text if notice is None else f"{notice}\n\n{text}"


# --------------------------------------------------------------------------- expand / related


def shown_record_id(session: SessionState, record_id: str) -> str:
    """A record id as a line of output shows it: redacted with the project's profile, on one line."""
    from cce_core.knowledge.blend import display_record_id

    return one_line(display_record_id(record_id, session.config().secrets_profile))


def _section_header(chunk: KnowledgeChunk, shown_id: str) -> str:
    return (f"{shown_id}:{chunk.start_line}-{chunk.end_line} ({one_line(chunk.kind)}) "
            f"#{one_line(chunk.chunk_id)}")


def _render_sections(title: str, blocks: Sequence[tuple[KnowledgeChunk, str]], shown_id: str) -> str:
    """The sections of one document under ``title`` (every block shares the record ``shown_id`` names)."""
    out = [title, "\n"]
    for chunk, body in blocks:
        out += ["\n", _section_header(chunk, shown_id), "\n", body if body.endswith("\n") else body + "\n"]
    return "".join(out)


def _knowledge_chunk(session: SessionState, chunk_id: str) -> tuple[Any, KnowledgeChunk | None]:
    if not session.config().knowledge_enabled:
        return None, None
    loaded = session.load_knowledge().loaded
    if loaded is None:
        return None, None
    return loaded, loaded.chunk(chunk_id)


def expand_knowledge(session: SessionState, chunk_id: str, scope: str) -> str | None:
    """``expand_chunk`` on a knowledge section id; None when the id is not one."""
    loaded, target = _knowledge_chunk(session, chunk_id)
    if target is None:
        return None
    if scope == "body":
        return target.content
    shown = shown_record_id(session, target.record_id)
    if scope == "file":
        sections = loaded.same_document(target.record_id)
        return _render_sections(f"document {shown} — {len(sections)} section(s):",
                                [(c, c.content) for c in sections], shown)
    sections = loaded.same_document(target.record_id, exclude=chunk_id)
    if not sections:
        return f"no same-document neighbours for {shown} in the knowledge store."
    return _render_sections(f"neighbours of {shown} — {len(sections)} section(s):",
                            [(c, c.content) for c in sections], shown)


def related_knowledge(session: SessionState, chunk_id: str, top_k: int) -> str | None:
    """``related_context`` on a knowledge section id (the same document's other sections, compact)."""
    from cce_core.retrieval.detail_views import COMPACT

    loaded, target = _knowledge_chunk(session, chunk_id)
    if target is None:
        return None
    shown = shown_record_id(session, target.record_id)
    sections = loaded.same_document(target.record_id, exclude=chunk_id)[:top_k]
    if not sections:
        return f"no same-document neighbours for {shown} in the knowledge store."
    blocks = [(c, session.compress(c.record_id, c.content, COMPACT)) for c in sections]
    return _render_sections(f"related to {shown} in the same document — {len(blocks)} section(s):", blocks, shown)


# --------------------------------------------------------------------------- index_status


def _sync_freshness(root: Path) -> Any:
    """The Sync layer's view of the store (corpus, remote current); None when it is not installed or fails."""
    import importlib.util

    if importlib.util.find_spec("cce_core.sync.knowledge_service") is None:
        return None
    try:
        from cce_core.sync.knowledge_service import freshness
        from cce_core.sync.service import STATUS_LOCK_TIMEOUT_SECONDS

        return freshness(root, lock_timeout=STATUS_LOCK_TIMEOUT_SECONDS)
    except Exception:  # offline, a busy clone, a bad marker: the status answer must still come
        return None


def knowledge_status_lines(session: SessionState) -> list[str]:
    """The ``knowledge :`` block of ``index_status``: nothing without a store, one line for a broken one.

    The corpus comes from the pull marker when it names the current
    snapshot, ``remote current`` from the sync remote when one is configured
    (both through the Sync layer; ``(local ingest)`` and ``-`` otherwise).
    """
    load = session.load_knowledge()
    if load.status == "absent":
        return []
    if load.loaded is None:
        return ["  knowledge :", "    store          : corrupt or unreadable — re-run `cce knowledge index <feed>`"]
    store = load.loaded.store
    sync = _sync_freshness(session.root)
    if sync is not None and sync.snapshot != store.snapshot:
        sync = None  # the store changed between the two reads: report what is loaded
    corpus = sync.corpus if sync is not None else None
    remote = sync.remote_current if sync is not None else None
    dates = [c.updated_at for c in store.chunks if c.updated_at is not None]
    behind = remote is not None and remote != store.snapshot
    return [
        "  knowledge :",
        f"    corpus         : {one_line(corpus) if corpus is not None else '(local ingest)'}",
        f"    snapshot       : {one_line(store.snapshot)}",
        f"    records/chunks : {store.records} / {len(store.chunks)}",
        f"    data as-of     : {one_line(max(dates)) if dates else '-'}",
        f"    remote current : {one_line(remote) if remote is not None else '-'}",
        f"    behind remote  : {BEHIND_KNOWLEDGE if behind else 'no'}",
    ]


def append_status(session: SessionState, text: str) -> str:
    """``text`` (an index_status answer) followed by the knowledge block, if there is one."""
    lines = knowledge_status_lines(session)
    if not lines:
        return text
    if not text.endswith("\n"):
        text += "\n"
    return text + "\n".join(lines) + "\n"

"""Ingest: a ``cce.knowledge/v1`` feed → a redacted, sectioned, embedded knowledge store.

Per record, in feed order: render the document, redact it whole (the same
redactor and profile as the code index, so no secret reaches the store and chunk ids come
from redacted text), cut it into sections with the installed document
chunker, embed each section with the deterministic hash embedder, and attach
the record's facets — each free-text facet redacted too. The record id is
not redacted: it is the address chunk ids and lookups derive from, and the
feed contract asks adapters to keep ids secret-free. The snapshot id is a
hash of the feed's raw bytes, so the same feed gives the same store anywhere.

Every record is validated before anything is written; a bad line, a disabled
``knowledge.enabled`` or a missing document chunker leave the old store alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import UNICODE_WHITESPACE
from cce_core.indexing.redactor import DEFAULT_PROFILE, redact_with
from cce_core.knowledge.feed import DOCUMENT_FORMAT, SCHEMA_ID, FeedError, KnowledgeRecord, parse_feed, render_document
from cce_core.knowledge.store import KnowledgeChunk, KnowledgeStore, save_store

DISABLED_MESSAGE = "knowledge is disabled (knowledge.enabled: false in .cce/config)"


class SectionChunker(Protocol):
    """What ingest needs of a document chunker (the plugin hook's ``DocumentChunker``)."""

    def chunk_document(self, path: str, content: str, budget: int) -> Sequence[Any]: ...


@dataclass(frozen=True)
class IngestSummary:
    records: int
    chunks: int
    snapshot: str
    store_path: Path


def snapshot_id(feed_bytes: bytes) -> str:
    """The first 16 hex digits of the SHA-256 of the feed's raw bytes."""
    return hashlib.sha256(feed_bytes).hexdigest()[:16]


def _hash_embedder() -> Any:
    from cce_core.default_plugins.hash_embedder import HashEmbedder

    return HashEmbedder()


def build_store(records: Sequence[KnowledgeRecord], feed_bytes: bytes, budget: int, chunker: SectionChunker,
                embedder: Any = None, secrets_profile: str = DEFAULT_PROFILE) -> KnowledgeStore:
    """The store for ``records`` (parsed from ``feed_bytes``); pure, deterministic, writes nothing.

    Redaction follows the project's ``secrets.profile`` as the code index does
    (strict by default): runbooks and tickets are where pasted credentials live.
    """
    embedder = embedder if embedder is not None else _hash_embedder()

    def redact(text: str) -> str:
        return redact_with(text, secrets_profile)

    def _redact_optional(value: str | None) -> str | None:
        return None if value is None else redact(value)

    chunks: list[KnowledgeChunk] = []
    for rec in records:
        sections = list(chunker.chunk_document(rec.id, redact(render_document(rec)), budget))
        title = redact(rec.title.strip(UNICODE_WHITESPACE))
        url = _redact_optional(rec.url)
        state = _redact_optional(rec.state)
        state_reason = _redact_optional(rec.state_reason)
        updated_at = _redact_optional(rec.updated_at)
        source = redact(rec.source)
        group = _redact_optional(rec.group)
        labels = [redact(label) for label in rec.labels]
        links = [redact(link) for link in rec.links]
        vectors = embedder.embed_batch([s.content for s in sections]) if sections else []
        for section, vector in zip(sections, vectors, strict=True):
            chunks.append(KnowledgeChunk(
                chunk_id=section.chunk_id, record_id=rec.id, kind=section.kind, name=section.name,
                start_line=section.start_line, end_line=section.end_line, token_count=section.token_count,
                content=section.content, source=source, url=url, state=state, state_reason=state_reason,
                updated_at=updated_at, group=group, labels=list(labels), title=title, links=list(links),
                embedding=[float(x) for x in vector],
            ))
    return KnowledgeStore(SCHEMA_ID, snapshot_id(feed_bytes), len(records), chunks)


def resolve_chunker() -> SectionChunker:
    """The installed document chunker for rendered records, or :class:`CceError` saying what to install."""
    from cce_core.plugins.host import document_chunker_for, missing_document_chunker_message

    chunker = document_chunker_for(DOCUMENT_FORMAT)
    if chunker is None:
        raise CceError(missing_document_chunker_message(DOCUMENT_FORMAT))
    return chunker  # type: ignore[no-any-return]


def ingest_file(feed: Path, root: Path, chunker: SectionChunker | None = None) -> IngestSummary:
    """``cce knowledge index FEED --dir ROOT``: validate, build and install; nothing is written on failure.

    ``chunker`` replaces the installed document chunker (tests inject one).
    """
    from cce_core.foundation.config import load_config

    if not feed.is_file():
        raise CceError(f"not a file: {feed}")
    config = load_config(root)
    if not config.knowledge_enabled:
        raise CceError(DISABLED_MESSAGE)
    try:
        raw = feed.read_bytes()
        text = raw.decode("utf-8")
    except OSError as exc:
        raise CceError(f"could not read {feed}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CceError(f"could not read {feed}: stream did not contain valid UTF-8") from None
    try:
        records = parse_feed(text)
    except FeedError as exc:
        raise CceError(str(exc)) from None
    if chunker is None:
        chunker = resolve_chunker()
    store = build_store(records, raw, config.markdown_max_section_tokens, chunker,
                        secrets_profile=config.secrets_profile)
    try:
        path = save_store(root, store)
    except OSError as exc:
        raise CceError(f"could not write knowledge store: {exc}") from None
    return IngestSummary(store.records, len(store.chunks), store.snapshot, path)


def summary_text(feed: Path, summary: IngestSummary) -> str:
    """What ``cce knowledge index`` prints."""
    return (f"Indexed knowledge from {feed}\n"
            f"  schema    : {SCHEMA_ID}\n"
            f"  records   : {summary.records}\n"
            f"  chunks    : {summary.chunks}\n"
            f"  snapshot  : {summary.snapshot}\n"
            f"  store     : {summary.store_path}\n")

"""Ingest: a ``cce.knowledge/v1`` feed → a redacted, sectioned, embedded knowledge store.

Per record, in feed order: render the document, redact it whole (the same
redactor and profile as the code index, so no secret reaches the store and chunk ids come
from redacted text), cut it into sections with the installed document
chunker, embed each section with the deterministic hash embedder, and attach
the record's facets — each free-text facet redacted too. The record id is
not redacted: it is the address chunk ids and lookups derive from, and the
feed contract asks adapters to keep ids secret-free. The snapshot id is a
hash of the feed's raw bytes, so the same feed gives the same store anywhere.

A file is read twice, line by line, and never held whole: the first pass
validates every record (types, unique ids, the record and byte limits of
:mod:`~cce_core.knowledge.limits`), counts them and hashes the bytes — the
optional ``cce.feed-manifest/v1`` check runs on that — and the second pass
builds one record at a time, streaming the store to a temporary file that
becomes the snapshot only when it is complete. So a bad line, a limit, an
empty feed, a manifest mismatch, a disabled ``knowledge.enabled`` or a
missing document chunker leave the old store alone, and memory stays flat
however long the feed is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import UNICODE_WHITESPACE
from cce_core.indexing.store_lock import store_lock
from cce_core.knowledge.feed import (
    DOCUMENT_FORMAT,
    SCHEMA_ID,
    FeedError,
    KnowledgeRecord,
    iter_records,
    render_document,
)
from cce_core.knowledge.limits import DEFAULT_LIMITS, IngestLimits
from cce_core.knowledge.store import KnowledgeChunk, KnowledgeStore, install_stream, knowledge_dir, store_chunks
from cce_core.secrets.redactor import DEFAULT_PROFILE, redact_with

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


@dataclass(frozen=True)
class FeedScan:
    """What the validating pass learned of a feed file: its record count and the SHA-256 of its bytes."""

    records: int
    sha256: str

    @property
    def snapshot(self) -> str:
        return self.sha256[:16]


def snapshot_id(feed_bytes: bytes) -> str:
    """The first 16 hex digits of the SHA-256 of the feed's raw bytes."""
    return hashlib.sha256(feed_bytes).hexdigest()[:16]


def _hash_embedder() -> Any:
    from cce_core.plugins.host import host_for_embedder

    return host_for_embedder("hash").embedder("hash")


# --------------------------------------------------------------------------- building sections


class _SectionBuilder:
    """Turns records into store chunks one record at a time, holding the section limits."""

    def __init__(self, budget: int, chunker: SectionChunker, embedder: Any, secrets_profile: str,
                 limits: IngestLimits) -> None:
        self.budget = budget
        self.chunker = chunker
        self.embedder = embedder if embedder is not None else _hash_embedder()
        self.secrets_profile = secrets_profile
        self.limits = limits
        self.sections = 0

    def _redact(self, text: str) -> str:
        return redact_with(text, self.secrets_profile)

    def _redact_optional(self, value: str | None) -> str | None:
        return None if value is None else self._redact(value)

    def chunks(self, rec: KnowledgeRecord, line: int) -> list[KnowledgeChunk]:
        """The chunks of one record (``line`` is where it stands in the feed, for the limit errors)."""
        sections = list(self.chunker.chunk_document(rec.id, self._redact(render_document(rec)), self.budget))
        # Refused before anything is embedded: the count is known once the record is cut.
        if len(sections) > self.limits.max_sections_per_record:
            raise CceError(f"line {line}: record {_shown_id(rec.id)} makes {len(sections)} sections, more than the "
                           f"{self.limits.max_sections_per_record} one record may have — split it into several "
                           "records or use fewer headings")
        self.sections += len(sections)
        if self.sections > self.limits.max_sections:
            raise CceError(f"line {line}: the feed makes more than {self.limits.max_sections} sections, the most "
                           "one knowledge store holds — trim the feed")
        title = self._redact(rec.title.strip(UNICODE_WHITESPACE))
        url, state = self._redact_optional(rec.url), self._redact_optional(rec.state)
        state_reason, updated_at = self._redact_optional(rec.state_reason), self._redact_optional(rec.updated_at)
        source, group = self._redact(rec.source), self._redact_optional(rec.group)
        labels = [self._redact(label) for label in rec.labels]
        links = [self._redact(link) for link in rec.links]
        vectors = self.embedder.embed_batch([s.content for s in sections]) if sections else []
        return [KnowledgeChunk(
            chunk_id=section.chunk_id, record_id=rec.id, kind=section.kind, name=section.name,
            start_line=section.start_line, end_line=section.end_line, token_count=section.token_count,
            content=section.content, source=source, url=url, state=state, state_reason=state_reason,
            updated_at=updated_at, group=group, labels=list(labels), title=title, links=list(links),
            embedding=[float(x) for x in vector],
        ) for section, vector in zip(sections, vectors, strict=True)]


def _shown_id(record_id: str) -> str:
    """A record id as an error message quotes it: JSON-escaped, so no control character reaches the terminal."""
    return json.dumps(record_id, ensure_ascii=False)


def build_store(records: Sequence[KnowledgeRecord], feed_bytes: bytes, budget: int, chunker: SectionChunker,
                embedder: Any = None, secrets_profile: str = DEFAULT_PROFILE,
                limits: IngestLimits = DEFAULT_LIMITS) -> KnowledgeStore:
    """The store for ``records`` (parsed from ``feed_bytes``); pure, deterministic, writes nothing.

    Redaction follows the project's ``secrets.profile`` as the code index does
    (strict by default): runbooks and tickets are where pasted credentials live.
    The section limits apply here too (line numbers count records from 1).
    """
    builder = _SectionBuilder(budget, chunker, embedder, secrets_profile, limits)
    chunks = [chunk for line, rec in enumerate(records, start=1) for chunk in builder.chunks(rec, line)]
    return KnowledgeStore(SCHEMA_ID, snapshot_id(feed_bytes), len(records), chunks)


def resolve_chunker() -> SectionChunker:
    """The installed document chunker for rendered records, or :class:`CceError` saying what to install."""
    from cce_core.plugins.host import document_chunker_for, missing_document_chunker_message

    chunker = document_chunker_for(DOCUMENT_FORMAT)
    if chunker is None:
        raise CceError(missing_document_chunker_message(DOCUMENT_FORMAT))
    return chunker  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- reading a feed file


class _HashedLines:
    """The numbered text lines of a feed file, hashing and counting the bytes as they go by."""

    def __init__(self, feed: Path, fh: BinaryIO, limits: IngestLimits) -> None:
        self.feed = feed
        self.fh = fh
        self.limits = limits
        self.digest = hashlib.sha256()
        self.size = 0

    def __iter__(self) -> Iterator[tuple[int, str]]:
        for number, raw in enumerate(self.fh, start=1):
            self.digest.update(raw)
            self.size += len(raw)
            if self.size > self.limits.max_feed_bytes:  # the file grew after it was measured
                raise CceError(_too_big(self.feed, self.size, self.limits))
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise CceError(f"could not read {self.feed}: stream did not contain valid UTF-8") from None
            line = line.removesuffix("\n")
            yield number, line.removesuffix("\r")


def _too_big(feed: Path, size: int, limits: IngestLimits) -> str:
    return f"{feed} is {size:,} bytes; a knowledge feed may be at most {limits.max_feed_bytes:,} bytes — trim the feed"


def _open(feed: Path) -> BinaryIO:
    try:
        return open(feed, "rb")  # the callers close it
    except OSError as exc:
        raise CceError(f"could not read {feed}: {exc.strerror or exc}") from None


def _records(feed: Path, lines: _HashedLines) -> Iterator[tuple[int, KnowledgeRecord]]:
    try:
        yield from iter_records(lines)
    except FeedError as exc:
        raise CceError(str(exc)) from None
    except OSError as exc:
        raise CceError(f"could not read {feed}: {exc.strerror or exc}") from None


def scan_feed(feed: Path, limits: IngestLimits = DEFAULT_LIMITS) -> FeedScan:
    """The validating pass: every record checked, counted and the bytes hashed; nothing kept."""
    try:
        size = feed.stat().st_size
    except OSError as exc:
        raise CceError(f"could not read {feed}: {exc.strerror or exc}") from None
    if size > limits.max_feed_bytes:
        raise CceError(_too_big(feed, size, limits))
    count = 0
    with _open(feed) as fh:
        lines = _HashedLines(feed, fh, limits)
        for number, _record in _records(feed, lines):
            count += 1
            if count > limits.max_records:
                raise CceError(f"line {number}: the feed has more than {limits.max_records} records, the most one "
                               "knowledge store holds — trim the feed")
    if count == 0:
        raise CceError(f"{feed} holds no records — nothing to index")
    return FeedScan(count, lines.digest.hexdigest())


def _streamed_chunks(feed: Path, scan: FeedScan, builder: _SectionBuilder,
                     limits: IngestLimits) -> Iterator[KnowledgeChunk]:
    """The building pass: each record's chunks in feed order; the bytes must be the ones the scan saw."""
    with _open(feed) as fh:
        lines = _HashedLines(feed, fh, limits)
        for number, record in _records(feed, lines):
            yield from builder.chunks(record, number)
    if lines.digest.hexdigest() != scan.sha256:
        raise CceError(f"{feed} changed while it was being indexed — run the command again")


def verify_manifest_if_given(manifest: Path | None, scan: FeedScan) -> None:
    """With ``--manifest``, refuse a feed that is not the one the manifest describes."""
    if manifest is None:
        return
    from cce_core.knowledge import feed_manifest

    feed_manifest.verify(feed_manifest.read_manifest(manifest), scan.sha256, scan.records)


def ingest_file(feed: Path, root: Path, chunker: SectionChunker | None = None, *, manifest: Path | None = None,
                limits: IngestLimits = DEFAULT_LIMITS) -> IngestSummary:
    """``cce knowledge index FEED [--manifest M]``: validate, build and install; nothing is written on failure.

    ``chunker`` replaces the installed document chunker (tests inject one).
    """
    from cce_core.foundation.config import load_config

    if not feed.is_file():
        raise CceError(f"not a file: {feed}")
    config = load_config(root)
    if not config.knowledge_enabled:
        raise CceError(DISABLED_MESSAGE)
    scan = scan_feed(feed, limits)
    verify_manifest_if_given(manifest, scan)
    if chunker is None:
        chunker = resolve_chunker()
    builder = _SectionBuilder(config.markdown_max_section_tokens, chunker, None, config.secrets_profile, limits)
    pieces = store_chunks(SCHEMA_ID, scan.snapshot, scan.records, _streamed_chunks(feed, scan, builder, limits))
    try:
        with store_lock(knowledge_dir(root), purpose="cce knowledge index"):  # one writer per store
            path = install_stream(root, scan.snapshot, pieces)
    except OSError as exc:
        raise CceError(f"could not write knowledge store: {exc}") from None
    return IngestSummary(scan.records, builder.sections, scan.snapshot, path)


def summary_text(feed: Path | str, summary: IngestSummary, manifest: Path | None = None) -> str:
    """What ``cce knowledge index`` prints."""
    verified = (f"  manifest  : verified ({manifest}) — {summary.records} records\n"
                if manifest is not None else "")
    return (f"Indexed knowledge from {feed}\n"
            f"  schema    : {SCHEMA_ID}\n"
            f"{verified}"
            f"  records   : {summary.records}\n"
            f"  chunks    : {summary.chunks}\n"
            f"  snapshot  : {summary.snapshot}\n"
            f"  store     : {summary.store_path}\n")

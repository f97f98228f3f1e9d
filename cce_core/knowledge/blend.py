"""The retrieval blend: knowledge sections ranked by the code ranking, filtered, and merged with code hits.

There is no second scorer. The live sections of a store become ordinary
chunks (the record id as their file, so the per-file cap and "same document"
work per record) and go through :class:`~cce_core.retrieval.searcher.Searcher`
with the import graph off. On top of that base score come the family's rules
for documents: records closed as ``not_planned``/``wontfix`` never surface; a
hit must score at least ``knowledge.min_score`` and share a word with the
query; a record linking a pull/merge request ("decided and implemented") is
boosted ×1.10; ties go to the newer record. ``merge`` then interleaves code
and knowledge hits by the one score for ``source: both``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cce_core.foundation.safe_text import one_line
from cce_core.foundation.textrules import (
    UNICODE_WHITESPACE,
    collapse_ascii_whitespace,
    score_key,
    split_lines,
    tokenize,
)
from cce_core.knowledge.store import KnowledgeChunk, KnowledgeStore
from cce_core.secrets.redactor import DEFAULT_PROFILE, redact_with

DROPPED_REASONS = ("not_planned", "wontfix")
MERGED_PR_BOOST = 1.10
PR_LINK_MARKERS = ("/pull/", "/pulls/", "/pr/", "/merge_requests/")
CHUNK_TYPE = "knowledge"
# The language label the sections carry as ranking chunks (rendered records are markdown documents).
LANGUAGE = "markdown"


@dataclass(frozen=True)
class KnowledgeHit:
    rank: int
    chunk: KnowledgeChunk
    score: float  # after the pull-request boost: comparable with a code hit's score

    @property
    def chunk_id(self) -> str:
        return self.chunk.chunk_id

    def provenance(self) -> str:
        c = self.chunk
        return provenance_line(c.title, c.state, c.updated_at, c.url)


def provenance_line(title: str, state: str | None, updated_at: str | None, url: str | None) -> str:
    """``[knowledge] <title> — <state> · <updated_at> · <url>``; empty facets are left out, and the dash with them.

    The fields come from a feed: each is made one line (:func:`one_line`), so a
    title cannot end the row and forge the ones after it (the reference's #112).
    """
    facets = [one_line(v) for v in (state, updated_at, url) if v]
    line = f"[knowledge] {one_line(title)}"
    return f"{line} — {' · '.join(facets)}" if facets else line


def display_record_id(record_id: str, profile: str = DEFAULT_PROFILE) -> str:
    """A record id as it may be shown: redacted with the project's secrets profile (strict unless configured).

    The raw id stays the address; a clean id is unchanged. Where the id becomes
    part of a line of output, the caller also passes it through :func:`one_line`.
    """
    return redact_with(record_id, profile)


SNIPPET_MAX_CHARS = 160
# A heading line of the rendered document: ATX (``## Steps``) or a setext underline (``-----``).
_HEADING_LINE = re.compile(r"#{1,6}(?:[ \t]|$)|[=-]+$")


def section_snippet(content: str, limit: int = SNIPPET_MAX_CHARS) -> str:
    """The first words of a section's text, on one line: heading lines and blank lines left out.

    Whitespace runs become one space; past ``limit`` characters the text is cut
    at the last space before the limit and ends with ``…``. Empty when the
    section holds nothing but headings.
    """
    words: list[str] = []
    size = 0
    for line in split_lines(content):
        text = collapse_ascii_whitespace(line)
        if not text or _HEADING_LINE.match(text):
            continue
        words.append(text)
        size += len(text) + 1
        if size > limit:
            break
    joined = one_line(" ".join(words))
    if len(joined) <= limit:
        return joined
    cut = joined.rfind(" ", 0, limit)
    return joined[:cut if cut > limit // 2 else limit].rstrip(UNICODE_WHITESPACE) + "…"


def is_dropped(state_reason: str | None) -> bool:
    return state_reason in DROPPED_REASONS


def is_pr_link(link: str) -> bool:
    lower = link.encode("utf-8").lower().decode("utf-8")
    return any(marker in lower for marker in PR_LINK_MARKERS)


def shares_query_token(query_tokens: set[str], chunk: KnowledgeChunk) -> bool:
    """Whether a query word occurs in the section's title, text or labels."""
    if not query_tokens:
        return False
    hay = " ".join([chunk.title, chunk.content, *chunk.labels])
    return any(t in query_tokens for t in tokenize(hay))


def _ranking_store(live: Sequence[KnowledgeChunk], embedder: Any) -> Any:
    """The live sections as an in-memory code store (persisted vectors reused, missing ones recomputed)."""
    import numpy as np

    from cce_core.foundation.textrules import tokenize_bytes
    from cce_core.indexing.bm25 import build_bm25
    from cce_core.indexing.chunk import Chunk
    from cce_core.indexing.store import StoreData

    chunks = [Chunk(c.chunk_id, c.record_id, c.start_line, c.end_line, CHUNK_TYPE, c.kind, LANGUAGE, c.content,
                    c.token_count) for c in live]
    missing = [i for i, c in enumerate(live) if not c.embedding]
    fresh = embedder.embed_batch([live[i].content for i in missing]) if missing else []
    rows = [list(c.embedding) for c in live]
    for i, vector in zip(missing, fresh, strict=True):
        rows[i] = [float(x) for x in vector]
    embeddings = np.asarray(rows, dtype=np.float64).reshape(len(rows), embedder.dim)
    bm25 = build_bm25([tokenize_bytes(c.content.encode("utf-8")) for c in chunks])
    return StoreData({"embedder": embedder.name}, chunks, embeddings, [], [], bm25)


def order_hits(scored: Sequence[tuple[KnowledgeChunk, float]]) -> list[tuple[KnowledgeChunk, float]]:
    """Score (six decimals) descending, then ``updated_at`` newest first (missing = oldest), then chunk id."""
    out = sorted(scored, key=lambda item: item[0].chunk_id)
    out.sort(key=lambda item: item[0].updated_at or "", reverse=True)  # stable: equal dates keep id order
    out.sort(key=lambda item: -score_key(item[1]))
    return out


class LoadedKnowledge:
    """One store plus its ranking structures, built on first search and reused (a resident server's cache)."""

    def __init__(self, store: KnowledgeStore) -> None:
        self.store = store
        self.live = [c for c in store.chunks if not is_dropped(c.state_reason)]
        self._searcher: Any = None
        self._by_id: dict[str, KnowledgeChunk] | None = None

    def _ranker(self) -> Any:
        if self._searcher is None:
            from cce_core.plugins.host import host_for_embedder
            from cce_core.retrieval.searcher import Searcher

            embedder = host_for_embedder("hash").embedder("hash")
            # The sections live in memory, not in a mapped store: the vectorised kernel ranks them.
            self._searcher = Searcher(_ranking_store(self.live, embedder), embedder, kernel="numpy")
        return self._searcher

    def search(self, query: str, top_k: int, min_score: float) -> list[KnowledgeHit]:
        """The knowledge hits for ``query``, best first, at most ``top_k``."""
        if not self.live or not query.strip(UNICODE_WHITESPACE) or top_k <= 0:
            return []
        query_tokens = set(tokenize(query))
        scored: list[tuple[KnowledgeChunk, float]] = []
        # Rank the whole live corpus, so the filters and the recency order see every candidate.
        live_by_id = {c.chunk_id: c for c in self.live}
        for r in self._ranker().search(query, max(len(self.live), top_k), graph=False):
            if r.score < min_score:
                continue
            chunk = live_by_id.get(r.chunk.chunk_id)
            if chunk is None or not shares_query_token(query_tokens, chunk):
                continue
            boosted = r.score * MERGED_PR_BOOST if any(is_pr_link(link) for link in chunk.links) else r.score
            scored.append((chunk, boosted))
        ordered = order_hits(scored)
        return [KnowledgeHit(i, chunk, score) for i, (chunk, score) in enumerate(ordered[:top_k], start=1)]

    def chunk(self, chunk_id: str) -> KnowledgeChunk | None:
        """Any section of the store by id (dropped records included: an id may be expanded)."""
        if self._by_id is None:
            by_id: dict[str, KnowledgeChunk] = {}
            for c in self.store.chunks:
                by_id.setdefault(c.chunk_id, c)
            self._by_id = by_id
        return self._by_id.get(chunk_id)

    def same_document(self, record_id: str, exclude: str | None = None) -> list[KnowledgeChunk]:
        """The sections of one record, by start line then id, without ``exclude``."""
        found = [c for c in self.store.chunks if c.record_id == record_id and c.chunk_id != exclude]
        found.sort(key=lambda c: (c.start_line, c.chunk_id))
        return found


def search_knowledge(store: KnowledgeStore, query: str, top_k: int, min_score: float) -> list[KnowledgeHit]:
    """One-shot :meth:`LoadedKnowledge.search` (the cached and the one-shot results are identical)."""
    return LoadedKnowledge(store).search(query, top_k, min_score)


@dataclass(frozen=True)
class Blended:
    """One row of a ``both`` answer: a code result (``hit``) or a :class:`KnowledgeHit`."""

    score: float
    chunk_id: str
    is_knowledge: bool
    hit: Any


def merge(code: Sequence[Any], knowledge: Sequence[KnowledgeHit], top_k: int) -> list[Blended]:
    """Code results (with ``.score`` and ``.chunk.chunk_id``) and knowledge hits as one list.

    By score (six decimals) descending, then code before knowledge, then chunk
    id; cut to ``top_k``.
    """
    rows = [Blended(r.score, r.chunk.chunk_id, False, r) for r in code]
    rows += [Blended(h.score, h.chunk_id, True, h) for h in knowledge]
    rows.sort(key=lambda b: (-score_key(b.score), b.is_knowledge, b.chunk_id))
    return rows[:top_k]

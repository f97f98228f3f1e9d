"""The hybrid ranking: vector + BM25 candidates, RRF, confidence, penalty, diversity, graph.

Every step follows the family's specification so that two engines return the
same chunks with the same six-decimal scores: candidates are compared by
``score_key`` and tied by chunk id, and only the top ``top_k * 3`` of each
retriever enter the fusion.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import UNICODE_WHITESPACE_CLASS, score_key, tokenize
from cce_core.hookspecs import Embedder
from cce_core.indexing.bm25 import unique_in_order
from cce_core.indexing.chunk import Chunk
from cce_core.indexing.graph import neighbours
from cce_core.indexing.store import StoreData
from cce_core.retrieval.kernel_types import Cosines, Kernel
from cce_core.retrieval.profiles import FAMILY, PROFILE_NAMES

if TYPE_CHECKING:  # pragma: no cover - typing only
    from cce_core.retrieval.default_ranking import DefaultRanker

RRF_K = 60.0
CONFIDENCE_WEIGHT = 0.5
FTS_BOOST_CODE_LOOKUP = 1.5
MAX_CHUNKS_PER_FILE = 3
CANDIDATE_MULTIPLIER = 3
W_VECTOR = 0.5
W_KEYWORD = 0.4
W_RECENCY = 0.1
PATH_PENALTY = 0.8
PATH_PENALTY_MARKERS = ("tests/", "test_", "docs/", "spec", "plan")
GRAPH_MAX_BONUS_FILES = 2
GRAPH_BONUS_CHUNKS_PER_FILE = 2
GRAPH_BONUS_CHUNK_SCALE = 0.85
DEFAULT_TOP_K = 10

_CODE_WORDS = ("function", "class", "method", "def")
_CODE_EXTENSIONS = ("py", "js", "jsx", "ts", "go", "rb", "rs", "java")
# Unicode White_Space as the reference splits on (Python's str.split() adds \x1c-\x1f).
_WHITESPACE = re.compile(f"[{UNICODE_WHITESPACE_CLASS}]+")


@dataclass(slots=True)
class SearchResult:
    rank: int
    chunk: Chunk
    score: float

    def as_json(self) -> dict[str, object]:
        from cce_core.foundation.textrules import format6

        c = self.chunk
        return {
            "chunk_id": c.chunk_id, "chunk_type": c.chunk_type, "end_line": c.end_line, "file_path": c.file_path,
            "kind": c.kind, "rank": self.rank, "score": format6(self.score), "start_line": c.start_line,
        }


def ascii_lower(text: str) -> str:
    return text.encode("utf-8").lower().decode("utf-8")


def is_code_lookup(query: str) -> bool:
    lower = ascii_lower(query)
    words = set(tokenize(lower))
    if any(w in words for w in _CODE_WORDS):
        return True
    for ext in _CODE_EXTENSIONS:
        pattern = "." + ext
        pos = lower.find(pattern)
        while pos >= 0:  # every occurrence: "app.tsx" must not hide a later "util.ts" (reference #107)
            after = lower[pos + len(pattern) : pos + len(pattern) + 1]
            if not after or not (after.isascii() and (after.isalnum() or after == "_")):
                return True
            pos = lower.find(pattern, pos + 1)
    # The spec's phrases are ".* defined" and "find .* function": each word after a space,
    # so "undefined" and "malfunction" do not count (reference #107).
    if "where is " in lower or " defined" in lower:
        return True
    find_at = lower.find("find ")
    return find_at >= 0 and " function" in lower[find_at:]


def file_hints(query: str) -> list[str]:
    return [ascii_lower(t) for t in _WHITESPACE.split(query) if t and "." in t]


def check_query_dimensions(store: StoreData, query_vector: Sequence[float]) -> None:
    """Refuse a query vector whose length is not the store's embedding width."""
    dim = store.embedding_rows()[1]
    if dim and len(query_vector) != dim:
        raise CceError(f"the query vector has {len(query_vector)} dimensions but the index has "
                       f"{dim} — re-index with the embedder you search with")


class Searcher:
    """Answers queries against one loaded store with one embedder.

    ``kernel`` picks how the numbers are crunched: ``"numpy"`` (vectorised),
    ``"lean"`` (plain Python over a mapped store, for sparse queries) or
    ``"auto"``: plain Python while numpy is not loaded yet and the query is
    small enough, since then importing numpy would cost more than the query.
    Both give bit-identical results.
    """

    def __init__(self, store: StoreData, embedder: Embedder, kernel: str = "auto", profile: str = FAMILY,
                 source_root: str | None = None, disabled_stages: frozenset[str] = frozenset()) -> None:
        if kernel not in ("auto", "numpy", "lean"):
            raise ValueError(f"unknown kernel {kernel!r}")
        if profile not in PROFILE_NAMES:
            raise ValueError(f"unknown ranking profile {profile!r}")
        # The library keeps the family's ranking unless told otherwise; every front end passes
        # the profile that retrieval.profiles.resolve_profile chose.
        self.profile = profile
        # Where the indexed files are, for an in-memory store (a loaded store at ROOT/.cce/ knows its root).
        self.source_root = source_root
        self.disabled_stages = disabled_stages
        self.store = store
        self.embedder = embedder
        self.kernel_choice = kernel
        self._kernels: dict[str, Kernel] = {}
        self.last_kernel = ""
        self._graph_asks = 0

    def _kernel(self, name: str) -> Kernel:
        kernel = self._kernels.get(name)
        if kernel is None:
            if name == "lean":
                from cce_core.retrieval.pure_kernel import LeanKernel

                kernel = LeanKernel(self.store)  # type: ignore[arg-type]
            else:
                from cce_core.retrieval.numpy_kernel import NumpyKernel

                kernel = NumpyKernel(self.store)
            self._kernels[name] = kernel
        return kernel

    def _kernel_for(self, query_vector: Sequence[float], query_tokens: list[str]) -> Kernel:
        choice = self.kernel_choice
        if choice == "auto":
            choice = "numpy"
            if "numpy" not in sys.modules:
                from cce_core.retrieval.pure_kernel import (
                    MAX_LEAN_WORK,
                    MAX_LEAN_WORK_DEFAULT_RANKING,
                    LeanKernel,
                    sparse_coordinates,
                )

                # Under the default ranking the vectorised path would also build its BM25 tables in
                # numpy, so staying in plain Python pays for more work than under the family's.
                budget = MAX_LEAN_WORK if self.profile == FAMILY else MAX_LEAN_WORK_DEFAULT_RANKING
                if LeanKernel.suits(self.store, sparse_coordinates(query_vector), unique_in_order(query_tokens),
                                    budget):
                    choice = "lean"
        return self._kernel(choice)

    @cached_property
    def _lower_contents(self) -> list[bytes | None]:
        return [None] * len(self.store.chunks)

    def _content_lower(self, idx: int) -> bytes:
        cache = self._lower_contents
        value = cache[idx]
        if value is None:
            value = cache[idx] = self.store.chunks[idx].content.encode("utf-8").lower()
        return value

    @cached_property
    def _neighbours(self) -> dict[str, list[str]]:
        return neighbours(self.store.edges)

    def _neighbours_of(self, files: list[str]) -> dict[str, list[str]]:
        """Each file's graph neighbours: from the whole map once built, else one pass over the edges
        (a one-shot search asks about three files and should not index the whole graph)."""
        self._graph_asks += 1
        if "_neighbours" in self.__dict__ or self._graph_asks > 1:  # a resident searcher: build the map once
            return {f: self._neighbours.get(f, []) for f in files}
        return self.store.neighbours_of(files)

    def search(self, query: str, top_k: int = DEFAULT_TOP_K, graph: bool = True) -> list[SearchResult]:
        store = self.store
        query_tokens = tokenize(query)
        if not query_tokens or not store.chunks or top_k <= 0:
            return []
        qvec = self.embedder.embed_query(query)
        check_query_dimensions(store, qvec)
        if self.profile != FAMILY:
            kernel = self._kernel_for(qvec, query_tokens)  # cosines only: the default ranking itself is plain Python
            self.last_kernel = kernel.name
            ranked = self._rank_default(query, kernel.cosines(qvec), top_k, graph)
            return [SearchResult(i + 1, store.chunks[idx], sc) for i, (idx, sc) in enumerate(ranked)]
        kernel = self._kernel_for(qvec, query_tokens)
        self.last_kernel = kernel.name
        cosines = kernel.cosines(qvec)
        ranked = self._rank(query, query_tokens, kernel, cosines, top_k)
        if graph:
            ranked = self.expand(ranked, cosines)
        return [SearchResult(i + 1, store.chunks[idx], sc) for i, (idx, sc) in enumerate(ranked)]

    @cached_property
    def default_ranker(self) -> DefaultRanker:
        from cce_core.retrieval.default_ranking import DefaultRanker, stages_without

        return DefaultRanker(self.store, stages_without(self.disabled_stages), source_root=self.source_root)

    def _rank_default(self, query: str, cosines: Cosines, top_k: int, graph: bool) -> list[tuple[int, float]]:
        """The default profile (retrieval.default_ranking); it appends no graph rows (see its docstring)."""
        del graph
        return self.default_ranker.rank(query, cosines, top_k)

    def _rank(self, query: str, query_tokens: list[str], kernel: Kernel, cosines: Cosines,
              top_k: int) -> list[tuple[int, float]]:
        store = self.store
        fts_weight = FTS_BOOST_CODE_LOOKUP if is_code_lookup(query) else 1.0
        n_cand = max(top_k * CANDIDATE_MULTIPLIER, 1)

        vector_order = cosines.top(n_cand)
        vrank = {int(idx): r for r, idx in enumerate(vector_order)}

        unique_q = unique_in_order(query_tokens)
        bm25_order = kernel.bm25_top(unique_q, top_k * CANDIDATE_MULTIPLIER)
        frank = {int(idx): r for r, idx in enumerate(bm25_order)}

        candidates = list(dict.fromkeys([*vrank, *frank]))

        def rrf(idx: int) -> float:
            v = 1.0 / (RRF_K + vrank[idx]) if idx in vrank else 0.0
            f = fts_weight * (1.0 / (RRF_K + frank[idx])) if idx in frank else 0.0
            return v + f

        rrf_values = {idx: rrf(idx) for idx in candidates}
        max_rrf = max(rrf_values.values(), default=0.0)
        max_rrf = max(max_rrf, 0.0)
        hints = file_hints(query)
        unique_bytes = [t.encode("ascii") for t in unique_q]

        scored: list[tuple[int, float]] = []
        for idx in candidates:
            chunk = store.chunks[idx]
            cos = cosines.at(idx)
            normalized_distance = min(max((1.0 - cos) / 2.0, 0.0), 1.0)
            vector_score = 1.0 - normalized_distance
            keyword_distance = self._keyword_distance(idx, chunk, unique_bytes, hints)
            keyword_score = max(1.0 - keyword_distance / 5.0, 0.0)
            recency_score = 0.0
            confidence = W_VECTOR * vector_score + W_KEYWORD * keyword_score + W_RECENCY * recency_score
            norm_rrf = rrf_values[idx] / max_rrf if score_key(max_rrf) != 0 else 0.0
            final = CONFIDENCE_WEIGHT * confidence + (1.0 - CONFIDENCE_WEIGHT) * norm_rrf
            if any(m in ascii_lower(chunk.file_path) for m in PATH_PENALTY_MARKERS):
                final *= PATH_PENALTY
            scored.append((idx, final))

        scored.sort(key=lambda item: (-score_key(item[1]), cosines.tie(item[0])))
        per_file: dict[str, int] = {}
        kept: list[tuple[int, float]] = []
        for idx, sc in scored:
            path = store.chunks[idx].file_path
            count = per_file.get(path, 0)
            if count < MAX_CHUNKS_PER_FILE:
                per_file[path] = count + 1
                kept.append((idx, sc))
                if len(kept) >= top_k:
                    break
        return kept

    def _keyword_distance(self, idx: int, chunk: Chunk, unique_bytes: list[bytes], hints: list[str]) -> float:
        content = self._content_lower(idx)
        if any(q in content for q in unique_bytes):
            return 0.0
        path = ascii_lower(chunk.file_path)
        if any(h in path for h in hints):
            return 0.0
        return 2.0

    def expand(self, ranked: list[tuple[int, float]], cosines: Cosines) -> list[tuple[int, float]]:
        """Append import-graph neighbours of the top files (a subclass may add other edges)."""
        if not ranked:
            return ranked
        store = self.store
        chunks = store.chunks
        top_files = list(dict.fromkeys(chunks[idx].file_path for idx, _ in ranked[:3]))
        result_files = {chunks[idx].file_path for idx, _ in ranked}
        bonus_files: list[str] = []
        adjacent = self._neighbours_of(top_files)
        for f in top_files:
            for nb in adjacent.get(f, []):
                if nb not in result_files and nb not in bonus_files:
                    bonus_files.append(nb)
        existing = {(chunks[idx].file_path, chunks[idx].start_line, chunks[idx].end_line) for idx, _ in ranked}
        out = list(ranked)
        for nb in bonus_files[:GRAPH_MAX_BONUS_FILES]:
            lo, hi = self.store.file_span(nb) or (0, 0)
            self.append_bonus(out, existing, range(lo, hi), GRAPH_BONUS_CHUNKS_PER_FILE, cosines)
        return out

    def append_bonus(self, out: list[tuple[int, float]], existing: set[tuple[str, int, int]], pool: Iterable[int],
                     limit: int, cosines: Cosines) -> None:
        """Append the ``limit`` chunks of ``pool`` closest to the query, scored ``max(cos, 0) × 0.85``.

        Ties go by chunk id; a chunk whose span is already in ``existing`` is
        skipped (and still uses up its place), and each one appended is added.
        """
        chunks = self.store.chunks
        members = list(pool)
        cosines.ensure(members)
        members.sort(key=lambda i: (-score_key(cosines.at(i)), cosines.tie(i)))
        for i in members[:limit]:
            key = (chunks[i].file_path, chunks[i].start_line, chunks[i].end_line)
            if key in existing:
                continue
            existing.add(key)
            out.append((i, max(cosines.at(i), 0.0) * GRAPH_BONUS_CHUNK_SCALE))

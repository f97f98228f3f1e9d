"""The default ranking profile: find the code a question is about, not the words it shares.

The family's pipeline (``searcher.Searcher._rank``) fuses a chunk-level BM25
with the hash vector and penalises a few path markers. Measured on real agent
questions and issue texts it loses to plain BM25 over whole files, for
reasons this module answers one by one (each stage is measured on and off in
docs/BENCHMARKS.md and explained in docs/relevance.md):

1. **Query analysis** (:mod:`query_analysis`): filler words drop out, names
   count double, repeated words count a little more.
2. **Two lexical views.** Chunk BM25 says *where* in a file; file BM25 (the
   same terms summed over each file's chunks) says *which* file, and keeps the
   signal a whole file has that its small chunks lose. A long query leans on
   the file view, a short one on the chunk view.
3. **Tiny chunks** (an arrow function of one line) are scored as if they were
   at least half an average chunk long, so one shared word does not make them
   win, and they inherit their file's score through the file view.
4. **Definitions** (:mod:`definitions`): a chunk that declares a queried name
   gets a bonus large enough to lead a name lookup; ``Class.method`` adds a
   bonus when an enclosing chunk declares ``Class``.
5. **File roles** (:mod:`file_roles`): tests, examples, docs, licences and
   the like are multiplied down unless the query asks for them; a file the
   query names by path is lifted.
6. **Diversity**: at most three chunks per file, as in the family.
7. **Graph**: the import neighbours of the leading files join the candidates
   and are ranked by the same score; nothing is appended after the ranking,
   so an answer never exceeds ``top_k`` and never carries zero-score rows.

The hash vector stays one of the three signals; a semantic embedder plugs in
through the same place.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cce_core.foundation.textrules import score_key
from cce_core.indexing.bm25 import BM25_B, BM25_K1
from cce_core.retrieval.definitions import SourceLines, declaration, declared_name, header_of
from cce_core.retrieval.file_roles import role_weight
from cce_core.retrieval.query_analysis import QueryAnalysis, analyse

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from cce_core.indexing.store import StoreData
    from cce_core.retrieval.searcher import Cosines

MAX_CHUNKS_PER_FILE = 3
CHUNK_POOL = 150
VECTOR_POOL = 60
FILE_POOL = 40
CHUNKS_PER_POOLED_FILE = 2
DEFINITION_SCAN_LIMIT = 4000
# Whole-file chunks larger than this are not searched line by line for a declaration.
MODULE_SCAN_CHARS = 256 * 1024
# Tiny chunks are scored as if at least this share of an average chunk long.
MIN_LENGTH_SHARE = 0.5

# Signal weights (chunk BM25, file BM25, vector) for short and long queries.
SHORT_WEIGHTS = (0.45, 0.25, 0.30)
LONG_WEIGHTS = (0.25, 0.50, 0.25)
DEFINITION_BONUS_LOOKUP = 1.0
DEFINITION_BONUS_QUESTION = 0.35
DEFINITION_BONUS_LONG = 0.2
QUALIFIER_BONUS = 0.3
# The name as written (``$constructor``, not every ``constructor``) is a closer match than its tokens.
EXACT_NAME_BONUS = 0.3
# A one-line "definition" is mostly a forward declaration or a type named in a parameter list.
ONE_LINE_DEFINITION_SHARE = 0.5
PATH_BONUS = 0.5
GRAPH_NEIGHBOUR_FILES = 3


@dataclass
class Stages:
    """Which stages run; all on by default. The benchmarks switch them off one at a time."""

    file_view: bool = True
    definitions: bool = True
    roles: bool = True
    tiny_chunks: bool = True
    query_analysis: bool = True
    graph: bool = True


class DefaultRanker:
    """The default profile's ranking over one loaded store (built once per searcher)."""

    def __init__(self, store: StoreData, stages: Stages | None = None, source_root: str | None = None) -> None:
        import numpy as np

        self.store = store
        self.stages = stages or Stages()
        files = store.files
        self.paths = [f.path for f in files]
        starts = np.fromiter((f.first_chunk for f in files), dtype=np.int64, count=len(files))
        counts = np.fromiter((f.chunk_count for f in files), dtype=np.int64, count=len(files))
        self.starts = starts
        self.ends = starts + counts
        n_chunks = len(store.chunks)
        self.file_of = np.repeat(np.arange(len(files), dtype=np.int64), counts) if n_chunks else \
            np.zeros(0, dtype=np.int64)
        source = store.bm25_source
        self.doc_len = np.asarray(source.doc_len, dtype=np.float64)
        self.file_len = np.bincount(self.file_of, weights=self.doc_len, minlength=len(files)) if n_chunks else \
            np.zeros(len(files))
        self.source_lines = SourceLines(Path(source_root) if source_root is not None else _tree_root(store))
        self._headers: dict[int, tuple[tuple[str, ...], str]] = {}

    # -- signals ---------------------------------------------------------------------------------

    def _bm25(self, analysis: QueryAnalysis) -> tuple[np.ndarray, np.ndarray]:
        """Weighted chunk BM25 and file BM25 for the query's terms."""
        import numpy as np

        n = len(self.doc_len)
        n_files = len(self.paths)
        chunk_scores = np.zeros(n, dtype=np.float64)
        file_scores = np.zeros(n_files, dtype=np.float64)
        if n == 0:
            return chunk_scores, file_scores
        avgdl = float(self.doc_len.sum()) / n or 1.0
        dl = self.doc_len
        if self.stages.tiny_chunks:
            dl = np.maximum(dl, MIN_LENGTH_SHARE * avgdl)
        avgfl = float(self.file_len.sum()) / max(n_files, 1) or 1.0
        weights = analysis.term_weights if self.stages.query_analysis else {t: 1.0 for t in analysis.tokens}
        source = self.store.bm25_source
        for term, weight in weights.items():
            hit = source.postings(term)
            if hit is None:
                continue
            docs, tfs = hit
            tf = tfs.astype(np.float64)
            df = len(docs)
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            norm = BM25_K1 * ((1.0 - BM25_B) + BM25_B * dl[docs] / avgdl)
            chunk_scores[docs] += weight * idf * tf * (BM25_K1 + 1.0) / (tf + norm)
            if self.stages.file_view:
                per_file = np.bincount(self.file_of[docs], weights=tf, minlength=n_files)
                present = np.flatnonzero(per_file)
                fdf = len(present)
                fidf = math.log(1.0 + (n_files - fdf + 0.5) / (fdf + 0.5))
                ftf = per_file[present]
                fnorm = BM25_K1 * ((1.0 - BM25_B) + BM25_B * self.file_len[present] / avgfl)
                file_scores[present] += weight * fidf * ftf * (BM25_K1 + 1.0) / (ftf + fnorm)
        return chunk_scores, file_scores

    def _declaration(self, idx: int) -> tuple[tuple[str, ...], str]:
        """(tokens, name as written) of what chunk ``idx`` declares (module chunks declare nothing)."""
        cached = self._headers.get(idx)
        if cached is None:
            chunk = self.store.chunks[idx]
            if chunk.chunk_type == "module":
                cached = ((), "")
            else:
                header = header_of(chunk.content, chunk.file_path, chunk.start_line, self.source_lines)
                cached = declaration(header)
            self._headers[idx] = cached
        return cached

    def _declared(self, idx: int) -> tuple[str, ...]:
        return self._declaration(idx)[0]

    def _definitions(self, analysis: QueryAnalysis) -> dict[int, float]:
        """Chunks that declare a queried name, with their bonus."""
        if not self.stages.definitions or not analysis.identifiers:
            return {}
        if analysis.is_lookup:
            bonus = DEFINITION_BONUS_LOOKUP
        elif analysis.is_long:
            bonus = DEFINITION_BONUS_LONG
        else:
            bonus = DEFINITION_BONUS_QUESTION
        found: dict[int, float] = {}
        source = self.store.bm25_source
        for ident in analysis.identifiers:
            hit = source.postings(ident.name)
            if hit is None:
                continue
            docs = hit[0][:DEFINITION_SCAN_LIMIT]
            written = ident.written_name
            for idx in docs.tolist():
                tokens, raw = self._declaration(idx)
                if tokens != (ident.name,):
                    if not self._module_declares(idx, written):
                        continue
                    tokens, raw = (ident.name,), written
                value = bonus
                if raw == written:
                    value += EXACT_NAME_BONUS * bonus
                chunk = self.store.chunks[idx]
                if chunk.start_line == chunk.end_line:
                    value *= ONE_LINE_DEFINITION_SHARE
                if ident.qualifier is not None and self._enclosed_by(idx, ident.qualifier):
                    value += QUALIFIER_BONUS
                elif ident.qualifier is not None and analysis.is_lookup:
                    value *= 0.6  # ``Class.method`` asked, another class's ``method`` found
                if value > found.get(idx, 0.0):
                    found[idx] = value
        return found

    def _module_declares(self, idx: int, written: str) -> bool:
        """Whether a whole-file chunk (a file no pack cut into functions) has a line declaring ``written``."""
        chunk = self.store.chunks[idx]
        if chunk.chunk_type != "module" or len(chunk.content) > MODULE_SCAN_CHARS or not written:
            return False
        content = chunk.content
        at = content.find(written)
        while at >= 0:
            line_start = content.rfind("\n", 0, at) + 1
            line_end = content.find("\n", at)
            line = content[line_start:line_end if line_end >= 0 else len(content)]
            if declared_name(line) == written:
                return True
            at = content.find(written, at + len(written))
        return False

    def _enclosed_by(self, idx: int, qualifier: str) -> bool:
        """Whether a chunk of the same file that spans ``idx`` declares ``qualifier``."""
        chunks = self.store.chunks
        inner = chunks[idx]
        file_index = int(self.file_of[idx])
        for other in range(int(self.starts[file_index]), int(self.ends[file_index])):
            if other == idx:
                continue
            outer = chunks[other]
            if outer.start_line <= inner.start_line and outer.end_line >= inner.end_line and \
                    self._declared(other) == (qualifier,):
                return True
        return False

    # -- the ranking -----------------------------------------------------------------------------

    def rank(self, query: str, cosines: Cosines, top_k: int, graph: bool,
             neighbours: Sequence[str] | None = None) -> list[tuple[int, float]]:
        import numpy as np

        if top_k <= 0 or not len(self.doc_len):
            return []
        analysis = analyse(query)
        chunk_scores, file_scores = self._bm25(analysis)
        definitions = self._definitions(analysis)

        candidates: dict[int, None] = {}
        positive = np.flatnonzero(chunk_scores > 0.0)
        if positive.size:
            best = positive[np.argsort(-chunk_scores[positive], kind="stable")[:CHUNK_POOL]]
            candidates.update(dict.fromkeys(best.tolist()))
        candidates.update(dict.fromkeys(int(i) for i in cosines.top(VECTOR_POOL)))
        candidates.update(dict.fromkeys(definitions))
        top_files = np.flatnonzero(file_scores > 0.0)
        if top_files.size:
            top_files = top_files[np.argsort(-file_scores[top_files], kind="stable")[:FILE_POOL]]
            for f in top_files.tolist():
                self._add_file_chunks(candidates, f, chunk_scores)

        scored = self._score(list(candidates), analysis, chunk_scores, file_scores, definitions, cosines)
        ranked = self._diversify(scored, top_k)
        if graph and self.stages.graph and neighbours is not None and ranked:
            for path in neighbours:
                span = self.store.file_span(path)
                if span is not None:
                    self._add_file_chunks(candidates, int(self.file_of[span[0]]) if span[1] > span[0] else -1,
                                          chunk_scores)
            scored = self._score(list(candidates), analysis, chunk_scores, file_scores, definitions, cosines)
            ranked = self._diversify(scored, top_k)
        return ranked

    def top_files(self, ranked: list[tuple[int, float]]) -> list[str]:
        """The distinct files of the leading results, for the graph step."""
        seen: dict[str, None] = {}
        for idx, _ in ranked:
            seen[self.paths[int(self.file_of[idx])]] = None
            if len(seen) >= GRAPH_NEIGHBOUR_FILES:
                break
        return list(seen)

    def _add_file_chunks(self, candidates: dict[int, None], file_index: int, chunk_scores: np.ndarray) -> None:
        import numpy as np

        if file_index < 0:
            return
        lo, hi = int(self.starts[file_index]), int(self.ends[file_index])
        if hi <= lo:
            return
        local = chunk_scores[lo:hi]
        order = np.argsort(-local, kind="stable")[:CHUNKS_PER_POOLED_FILE]
        candidates.update(dict.fromkeys((lo + order).tolist()))

    def _score(self, candidates: list[int], analysis: QueryAnalysis, chunk_scores: np.ndarray,
               file_scores: np.ndarray, definitions: dict[int, float], cosines: Cosines) -> list[tuple[int, float]]:
        if not candidates:
            return []
        cosines.ensure(candidates)
        max_chunk = float(chunk_scores.max()) if len(chunk_scores) else 0.0
        max_file = float(file_scores.max()) if len(file_scores) else 0.0
        cos = {i: max(cosines.at(i), 0.0) for i in candidates}
        max_cos = max(cos.values(), default=0.0)
        w_chunk, w_file, w_vec = LONG_WEIGHTS if analysis.is_long else SHORT_WEIGHTS
        if not self.stages.file_view:
            w_chunk, w_file = w_chunk + w_file, 0.0
        intents = analysis.intents
        chunks = self.store.chunks
        out: list[tuple[int, float]] = []
        for idx in candidates:
            file_index = int(self.file_of[idx])
            path = self.paths[file_index]
            c = float(chunk_scores[idx]) / max_chunk if max_chunk > 0 else 0.0
            f = float(file_scores[file_index]) / max_file if max_file > 0 else 0.0
            v = cos[idx] / max_cos if max_cos > 0 else 0.0
            score = w_chunk * c + w_file * f + w_vec * v + definitions.get(idx, 0.0)
            if analysis.paths and _names_file(path, analysis.paths):
                score += PATH_BONUS
            if self.stages.roles:
                score *= role_weight(path, intents)
            out.append((idx, score))
        out.sort(key=lambda item: (-score_key(item[1]), chunks[item[0]].chunk_id))
        return out

    def _diversify(self, scored: list[tuple[int, float]], top_k: int) -> list[tuple[int, float]]:
        per_file: dict[int, int] = {}
        kept: list[tuple[int, float]] = []
        for idx, score in scored:
            if score_key(score) <= 0:
                break
            f = int(self.file_of[idx])
            if per_file.get(f, 0) >= MAX_CHUNKS_PER_FILE:
                continue
            per_file[f] = per_file.get(f, 0) + 1
            kept.append((idx, score))
            if len(kept) >= top_k:
                break
        return kept


def _names_file(path: str, query_paths: list[str]) -> bool:
    lower = path.lower()
    name = lower.rsplit("/", 1)[-1]
    return any(lower.endswith(q) if "/" in q else name == q for q in query_paths)


def _tree_root(store: StoreData) -> Path | None:
    """The indexed directory of a store kept at ``ROOT/.cce/index.cce``, else None."""
    path = getattr(store, "path", None)
    if path is None:
        return None
    path = Path(path)
    if path.parent.name != ".cce":
        return None
    return path.parent.parent

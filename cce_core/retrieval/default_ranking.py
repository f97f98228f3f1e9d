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
7. **No graph padding.** The family appends import neighbours after the
   ranking (zero-score rows past ``top_k``). Here nothing is appended: an
   answer never exceeds ``top_k``. Letting neighbours compete as candidates
   changed no answer on the labeled sets, so the default does not read the
   graph at all (``--no-graph`` makes no difference under it).

The hash vector stays one of the three signals; a semantic embedder plugs in
through the same place.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
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
FILE_POOL = 30
CHUNKS_PER_POOLED_FILE = 2
DEFINITION_SCAN_LIMIT = 4000
# Files at or above this role weight have their declarations read first.
PREFERRED_ROLE_WEIGHT = 0.5
DECLARER_CACHE_NAMES = 4096
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


@dataclass
class Stages:
    """Which stages run; all on by default. The benchmarks switch them off one at a time."""

    file_view: bool = True
    definitions: bool = True
    roles: bool = True
    tiny_chunks: bool = True
    query_analysis: bool = True


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
        # Ids and (type, lines) are read from the store's columns: building a whole chunk decodes its text.
        self.chunk_ids = store.chunk_ids
        read_meta = _column_reader(store)
        meta_cache: dict[int, tuple[str, int, int]] = {}

        def meta_of(idx: int) -> tuple[str, int, int]:
            found = meta_cache.get(idx)
            if found is None:
                found = meta_cache[idx] = read_meta(idx)
            return found

        self._meta_of = meta_of
        self._headers: dict[int, tuple[tuple[str, ...], str]] = {}
        self._plain_role_weights: dict[int, float] = {}
        self._declarer_cache: dict[tuple[str, str], list[tuple[int, str]]] = {}

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
            chunk_type, _start, _end = self._meta_of(idx)
            if chunk_type == "module":
                cached = ((), "")
            else:
                chunk = self.store.chunks[idx]
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
        for ident in analysis.identifiers:
            written = ident.written_name
            for idx, raw in self._declarers(ident.name, written):
                value = bonus
                if raw == written:
                    value += EXACT_NAME_BONUS * bonus
                _type, start, end = self._meta_of(idx)
                if start == end:
                    value *= ONE_LINE_DEFINITION_SHARE
                if ident.qualifier is not None and self._enclosed_by(idx, ident.qualifier):
                    value += QUALIFIER_BONUS
                elif ident.qualifier is not None and analysis.is_lookup:
                    value *= 0.6  # ``Class.method`` asked, another class's ``method`` found
                if value > found.get(idx, 0.0):
                    found[idx] = value
        return found

    def _declarers(self, name: str, written: str) -> list[tuple[int, str]]:
        """The chunks declaring the token ``name`` (with the name as written), remembered per name.

        A resident server answers the same names again and again; the scan reads
        chunk headers, so its result is kept for the searcher's lifetime.
        """
        key = (name, written)
        cached = self._declarer_cache.get(key)
        if cached is not None:
            return cached
        out: list[tuple[int, str]] = []
        hit = self.store.bm25_source.postings(name)
        if hit is not None:
            for idx in self._definition_scan_order(hit[0]):
                tokens, raw = self._declaration(idx)
                if tokens == (name,):
                    out.append((idx, raw))
                elif self._module_declares(idx, written):
                    out.append((idx, written))
        if len(self._declarer_cache) >= DECLARER_CACHE_NAMES:
            self._declarer_cache.pop(next(iter(self._declarer_cache)))
        self._declarer_cache[key] = out
        return out

    def _definition_scan_order(self, docs: np.ndarray) -> list[int]:
        """The chunks worth reading a header of: outside files the roles hold back first, at most a limit.

        Reading a header decodes the chunk's text, so the thousands of test chunks
        that call a popular name are looked at only after the source's.
        """
        if not self.stages.roles:
            return docs[:DEFINITION_SCAN_LIMIT].tolist()
        preferred: list[int] = []
        rest: list[int] = []
        weights = self._plain_role_weights
        for idx, f in zip(docs.tolist(), self.file_of[docs].tolist(), strict=True):
            weight = weights.get(f)
            if weight is None:
                weight = weights[f] = role_weight(self.paths[f], frozenset())
            (preferred if weight >= PREFERRED_ROLE_WEIGHT else rest).append(idx)
        return (preferred + rest)[:DEFINITION_SCAN_LIMIT]

    def _module_declares(self, idx: int, written: str) -> bool:
        """Whether a whole-file chunk (a file no pack cut into functions) has a line declaring ``written``."""
        if self._meta_of(idx)[0] != "module" or not written:
            return False
        content = self.store.chunks[idx].content
        if len(content) > MODULE_SCAN_CHARS:
            return False
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
        _type, inner_start, inner_end = self._meta_of(idx)
        file_index = int(self.file_of[idx])
        for other in range(int(self.starts[file_index]), int(self.ends[file_index])):
            if other == idx:
                continue
            _other_type, start, end = self._meta_of(other)
            if start <= inner_start and end >= inner_end and self._declared(other) == (qualifier,):
                return True
        return False

    # -- the ranking -----------------------------------------------------------------------------

    def rank(self, query: str, cosines: Cosines, top_k: int) -> list[tuple[int, float]]:
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
        return self._diversify(scored, top_k)

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
        """Every candidate's final score, best first; equal six-decimal scores go by chunk id."""
        import numpy as np

        if not candidates:
            return []
        cosines.ensure(candidates)
        rows = np.asarray(candidates, dtype=np.int64)
        files = self.file_of[rows]
        max_chunk = float(chunk_scores.max())
        max_file = float(file_scores.max())
        cos = np.maximum(np.fromiter((cosines.at(i) for i in candidates), dtype=np.float64, count=len(rows)), 0.0)
        max_cos = float(cos.max())
        w_chunk, w_file, w_vec = LONG_WEIGHTS if analysis.is_long else SHORT_WEIGHTS
        if not self.stages.file_view:
            w_chunk, w_file = w_chunk + w_file, 0.0
        score = np.zeros(len(rows), dtype=np.float64)
        if max_chunk > 0:
            score += w_chunk * (chunk_scores[rows] / max_chunk)
        if max_file > 0:
            score += w_file * (file_scores[files] / max_file)
        if max_cos > 0:
            score += w_vec * (cos / max_cos)
        if definitions:
            score += np.fromiter((definitions.get(i, 0.0) for i in candidates), dtype=np.float64, count=len(rows))
        per_file: dict[int, float] = {}
        intents = analysis.intents
        for f in np.unique(files).tolist():
            path = self.paths[f]
            factor = role_weight(path, intents) if self.stages.roles else 1.0
            bonus = PATH_BONUS if analysis.paths and _names_file(path, analysis.paths) else 0.0
            per_file[f] = factor if not bonus else -factor  # sign marks the path bonus, undone below
        factors = np.fromiter((abs(per_file[f]) for f in files.tolist()), dtype=np.float64, count=len(rows))
        bonuses = np.fromiter((PATH_BONUS if per_file[f] < 0 else 0.0 for f in files.tolist()), dtype=np.float64,
                              count=len(rows))
        score = (score + bonuses) * factors
        return _ordered(candidates, score, self.chunk_ids)

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


def _ordered(candidates: list[int], scores: np.ndarray, ids: Sequence[str]) -> list[tuple[int, float]]:
    """``(candidate, score)`` with a positive six-decimal key, best first; only equal keys read chunk ids."""
    import numpy as np

    keys = np.floor(scores * 1e6 + 0.5).astype(np.int64)  # scores are >= 0: half rounds away from zero
    live = np.flatnonzero(keys > 0)
    order = live[np.argsort(-keys[live], kind="stable")].tolist()
    key_list = keys.tolist()
    out: list[tuple[int, float]] = []
    i = 0
    while i < len(order):
        j = i + 1
        while j < len(order) and key_list[order[j]] == key_list[order[i]]:
            j += 1
        group = order[i:j]
        if len(group) > 1:
            group.sort(key=lambda g: ids[candidates[g]])
        out.extend((candidates[g], float(scores[g])) for g in group)
        i = j
    return out


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


def _column_reader(store: StoreData) -> Callable[[int], tuple[str, int, int]]:
    """``idx -> (chunk_type, start_line, end_line)`` without decoding the chunk's text."""
    from cce_core.indexing.store import SegmentedStore

    if not isinstance(store, SegmentedStore):
        chunks = store.chunks

        def from_chunks(idx: int) -> tuple[str, int, int]:
            chunk = chunks[idx]
            return chunk.chunk_type, chunk.start_line, chunk.end_line

        return from_chunks

    def from_columns(idx: int) -> tuple[str, int, int]:
        segment, local = store.locate(idx)
        kind = segment.strings["chunk_type"][segment.view("chunk_type")[local]]
        return kind, int(segment.view("start_line")[local]), int(segment.view("end_line")[local])

    return from_columns

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
3. **Tiny chunks** (an arrow function of one line) get their file's evidence
   through the file view, their binding declaration through the definitions
   (4.), and no duplicate places in an answer (6.). Scoring them as if they
   were longer, by their enclosing chunk, or with their declaration line
   folded into their BM25 was measured (docs/BENCHMARKS.md) and not kept.
4. **Definitions** (:mod:`definitions`): a chunk that declares a queried name
   gets a bonus large enough to lead a name lookup; ``Class.method`` adds a
   bonus when an enclosing chunk declares ``Class``. A lookup also finds the
   chunks a declaration before them binds (``export const create = (...) =>``),
   and prefers, within one file, the implementation over an interface or
   prototype of the same name.
5. **File roles** (:mod:`file_roles`): tests, examples, docs, licences and
   the like are multiplied down unless the query asks for them; a file the
   query names by path is lifted.
6. **Diversity**: at most three chunks per file, as in the family, and a short
   chunk whose text repeats one already in the answer is skipped.
7. **No graph padding.** The family appends import neighbours after the
   ranking (zero-score rows past ``top_k``). Here nothing is appended: an
   answer never exceeds ``top_k``. Letting neighbours compete as candidates
   changed no answer on the labeled sets, so the default does not read the
   graph at all (``--no-graph`` makes no difference under it).

The hash vector stays one of the three signals; a semantic embedder plugs in
through the same place.
"""

from __future__ import annotations

import heapq
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate, chain, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cce_core.foundation.textrules import score_key
from cce_core.indexing.bm25 import BM25_B, BM25_K1
from cce_core.retrieval.definitions import (
    FORWARD_SHARE,
    SourceLines,
    declaration,
    declared_written,
    header_of,
    is_comment_line,
    leaves_open,
    line_declaration_weight,
    opens_definition,
)
from cce_core.retrieval.file_roles import role_weight
from cce_core.retrieval.plain_postings import PlainPostings
from cce_core.retrieval.profiles import STAGE_NAMES
from cce_core.retrieval.query_analysis import QueryAnalysis, analyse

if TYPE_CHECKING:  # pragma: no cover - typing only
    from cce_core.indexing.store import StoreData
    from cce_core.retrieval.kernel_types import Cosines

MAX_CHUNKS_PER_FILE = 3
# Chunks shorter than this (in tokens) are compared by text when the answer is assembled.
DUPLICATE_CHECK_TOKENS = 16
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
# A lookup reads at most this much source looking for a declaration standing before a chunk.
CONTEXT_SCAN_BYTES = 32 * 1024 * 1024
# Lines between a declaration left open (``export const X =``) and the chunk it binds.
CONTEXT_REACH = 2

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
ONE_LINE_DEFINITION_SHARE = FORWARD_SHARE
PATH_BONUS = 0.5
# The file view's length normalisation for short queries. Plain BM25 (b = 0.75, no cap) pushes a
# 2,000-line module below every small file that repeats a topic word, yet the module is often where
# the topic lives (sinatra's base.rb for "session and cookies"); the chunk view already says where
# inside it. So a file's length counts half as much, and never as more than FILE_LENGTH_CAP times
# the average. Long queries keep plain BM25 (see DefaultRanker._file_length_norm).
FILE_B = 0.5
FILE_LENGTH_CAP = 4.0
# In a lookup, when one file declares a name more than once (an interface or overload signatures,
# then the implementation), the longest of those declarations gets this much more bonus.
BODY_BONUS = 0.2


@dataclass
class Stages:
    """Which stages run; all on by default. ``ranking.disable`` in .cce/config and the benchmarks
    switch them off."""

    file_view: bool = True
    definitions: bool = True
    roles: bool = True
    query_analysis: bool = True


def stages_without(disabled: frozenset[str]) -> Stages:
    assert disabled <= set(STAGE_NAMES), disabled  # profiles.resolve_ranking checked the names
    return Stages(**{name: False for name in disabled})


class DefaultRanker:
    """The default profile's ranking over one loaded store (built once per searcher).

    Plain Python over the query's postings and its candidates (no numpy):
    see :mod:`cce_core.retrieval.plain_postings` for why.
    """

    def __init__(self, store: StoreData, stages: Stages | None = None, source_root: str | None = None) -> None:
        self.store = store
        self.stages = stages or Stages()
        # Paths and spans straight from the store's file columns: no file entry is built.
        self.paths, self.starts, counts = store.file_spans()
        self.ends = [start + count for start, count in zip(self.starts, counts, strict=True)]
        # Built with C-level iteration: a 200k-chunk store pays these on every fresh search.
        self.file_of = list(chain.from_iterable(map(repeat, range(len(counts)), counts)))
        self.postings = PlainPostings(store)
        self.doc_len = self.postings.doc_len
        # Each file's length in tokens, summed on first use: a query's terms touch a few thousand files.
        self._file_lengths: dict[int, int] = {}
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
        self._headers: dict[int, tuple[tuple[str, ...], str, str]] = {}
        self._plain_role_weights: dict[int, float] = {}
        self._declarer_cache: dict[tuple[str, str, bool], list[tuple[int, str, float]]] = {}
        self._short_texts: dict[int, str] = {}  # short chunks' normalised texts, for the duplicate check


    # -- signals ---------------------------------------------------------------------------------

    def _bm25(self, analysis: QueryAnalysis) -> tuple[dict[int, float], dict[int, float]]:
        """Weighted chunk BM25 and file BM25 of the query's terms (only what scores is present).

        With numpy already loaded (a resident server, an in-memory index) the
        same expression runs vectorised, in the same operation order, so both
        forms give bit-identical scores (a test compares them); a fresh process
        stays in plain Python rather than pay numpy's import.
        """
        if "numpy" in sys.modules and self.doc_len:
            return self._bm25_vectorised(analysis)
        n = len(self.doc_len)
        n_files = len(self.paths)
        chunk_scores: dict[int, float] = {}
        file_scores: dict[int, float] = {}
        if n == 0:
            return chunk_scores, file_scores
        avgdl, avgfl = self._average_lengths
        weights = analysis.term_weights if self.stages.query_analysis else {t: 1.0 for t in analysis.tokens}
        doc_len, file_of, file_length = self.doc_len, self.file_of, self._file_length
        k1, b = BM25_K1, BM25_B
        # Hoisted out of the per-posting loop, each the same first operation the full expression
        # makes, so the floats are unchanged: weight * idf * tf * (k1 + 1) / (tf + k1 * ((1 - b) + b * dl / avgdl)).
        k1_plus_1, one_minus_b = k1 + 1.0, 1.0 - b
        score_of = chunk_scores.get
        fb, cap = self._file_length_norm(analysis)
        for term, weight in weights.items():
            hits = self.postings.postings(term)
            if not hits:
                continue
            idf = math.log(1.0 + (n - len(hits) + 0.5) / (len(hits) + 0.5))
            weight_idf = weight * idf
            per_file: dict[int, int] = {}
            tf_of = per_file.get
            for doc, tf in hits:
                chunk_scores[doc] = score_of(doc, 0.0) + \
                    weight_idf * tf * k1_plus_1 / (tf + k1 * (one_minus_b + b * doc_len[doc] / avgdl))
                f = file_of[doc]
                per_file[f] = tf_of(f, 0) + tf
            if self.stages.file_view:
                fidf = math.log(1.0 + (n_files - len(per_file) + 0.5) / (len(per_file) + 0.5))
                for f, ftf in per_file.items():
                    norm = k1 * ((1.0 - fb) + fb * min(file_length(f) / avgfl, cap))
                    file_scores[f] = file_scores.get(f, 0.0) + weight * fidf * ftf * (k1 + 1.0) / (ftf + norm)
        return chunk_scores, file_scores

    @staticmethod
    def _file_length_norm(analysis: QueryAnalysis) -> tuple[float, float]:
        """(b, cap on length / average) of the file view for this query.

        A long text shares a few of its hundred words with any big file by chance,
        so it keeps plain BM25's normalisation (measured: softening it cost issue
        texts 2.6 points of Acc@1); a short query's words found in a big file are
        what the file is about, so there a file's length counts less.
        """
        return (BM25_B, math.inf) if analysis.is_long else (FILE_B, FILE_LENGTH_CAP)

    @cached_property
    def file_len(self) -> list[int]:
        """Every file's length in tokens (the sum of its chunks'), for the vectorised BM25."""
        prefix = [0, *accumulate(self.doc_len)]
        return [prefix[end] - prefix[start] for start, end in zip(self.starts, self.ends, strict=True)]

    def _file_length(self, f: int) -> int:
        length = self._file_lengths.get(f)
        if length is None:
            length = self._file_lengths[f] = sum(self.doc_len[self.starts[f]:self.ends[f]])
        return length

    @cached_property
    def _average_lengths(self) -> tuple[float, float]:
        """Average chunk and file length in tokens (summed once, not per query)."""
        total = sum(self.doc_len)
        avgdl = (total / max(len(self.doc_len), 1)) or 1.0
        # The files' spans tile the store (each chunk in exactly one file) in every store this reads,
        # so the files' lengths add up to the same integer as the chunks'; anything else sums them.
        tiled = bool(self.paths) and self.starts[0] == 0 and self.ends[-1] == len(self.doc_len) and \
            self.starts[1:] == self.ends[:-1]
        avgfl = ((total if tiled else sum(self.file_len)) / max(len(self.paths), 1)) or 1.0
        return avgdl, avgfl

    @cached_property
    def _arrays(self) -> tuple[Any, Any, Any]:
        """Chunk lengths, each chunk's file and each file's length, as arrays.

        The files' columns come from their spans, not from the per-chunk lists:
        converting a million-element list costs tens of milliseconds a fresh
        search on a large store would pay. A file's length is a difference of
        the integer prefix sums, the same integers :attr:`file_len` adds up.
        """
        import numpy as np

        lengths = np.asarray(self.doc_len, dtype=np.int64)
        starts, ends = np.asarray(self.starts, dtype=np.int64), np.asarray(self.ends, dtype=np.int64)
        prefix = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=prefix[1:])
        file_len = (prefix[ends] - prefix[starts]).astype(np.float64)
        file_of = np.repeat(np.arange(len(starts), dtype=np.int64), ends - starts)  # as :attr:`file_of` lists it
        return lengths.astype(np.float64), file_of, file_len

    def _bm25_vectorised(self, analysis: QueryAnalysis) -> tuple[dict[int, float], dict[int, float]]:
        import numpy as np

        doc_len, file_of, file_len = self._arrays
        n = len(self.doc_len)
        n_files = len(self.paths)
        avgdl, avgfl = self._average_lengths
        weights = analysis.term_weights if self.stages.query_analysis else {t: 1.0 for t in analysis.tokens}
        k1, b = BM25_K1, BM25_B
        fb, cap = self._file_length_norm(analysis)
        chunk_scores = np.zeros(n, dtype=np.float64)
        file_scores = np.zeros(n_files, dtype=np.float64)
        source = self.store.bm25_source
        for term, weight in weights.items():
            hit = source.postings(term)
            if hit is None or not len(hit[0]):
                continue
            docs = hit[0].astype(np.int64)
            tf = hit[1].astype(np.float64)
            idf = math.log(1.0 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            dl = doc_len[docs]
            chunk_scores[docs] += weight * idf * tf * (k1 + 1.0) / (tf + k1 * ((1.0 - b) + b * dl / avgdl))
            if self.stages.file_view:
                per_file = np.bincount(file_of[docs], weights=tf, minlength=n_files)
                present = np.flatnonzero(per_file)
                fidf = math.log(1.0 + (n_files - len(present) + 0.5) / (len(present) + 0.5))
                ftf = per_file[present]
                norm = k1 * ((1.0 - fb) + fb * np.minimum(file_len[present] / avgfl, cap))
                file_scores[present] += weight * fidf * ftf * (k1 + 1.0) / (ftf + norm)
        hit_docs = np.flatnonzero(chunk_scores)
        hit_files = np.flatnonzero(file_scores)
        return (dict(zip(hit_docs.tolist(), chunk_scores[hit_docs].tolist(), strict=True)),
                dict(zip(hit_files.tolist(), file_scores[hit_files].tolist(), strict=True)))

    def _declaration(self, idx: int) -> tuple[tuple[str, ...], str, str]:
        """(tokens, name as written, name with its ``!``/``?``) of what chunk ``idx`` declares
        (module chunks declare nothing)."""
        cached = self._headers.get(idx)
        if cached is None:
            chunk_type, _start, _end = self._meta_of(idx)
            if chunk_type == "module":
                cached = ((), "", "")
            else:
                chunk = self.store.chunks[idx]
                header = header_of(chunk.content, chunk.file_path, chunk.start_line, self.source_lines)
                tokens, raw = declaration(header)
                cached = (tokens, raw, declared_written(header) or raw)
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
            # In a question or a pasted issue, names are one clue among many: only a lookup reads
            # whole-file chunks line by line or rewards the exact spelling (measured: both cost
            # issue texts their file, since docs and configs "declare" common words).
            declarers = self._declarers(ident.name, written, modules=analysis.is_lookup)
            bodies = self._implementations(declarers) if analysis.is_lookup else set()
            for idx, raw, share in declarers:
                value = bonus
                if raw == written and analysis.is_lookup:
                    value += EXACT_NAME_BONUS * bonus
                value *= share
                _type, start, end = self._meta_of(idx)
                if start == end:
                    value *= ONE_LINE_DEFINITION_SHARE
                if idx in bodies:
                    value += BODY_BONUS * bonus
                if ident.qualifier is not None and self._enclosed_by(idx, ident.qualifier):
                    value += QUALIFIER_BONUS
                elif ident.qualifier is not None and analysis.is_lookup:
                    value *= 0.6  # ``Class.method`` asked, another class's ``method`` found
                if value > found.get(idx, 0.0):
                    found[idx] = value
        return found

    def _implementations(self, declarers: list[tuple[int, str, float]]) -> set[int]:
        """Of the files declaring a name more than once, each one's longest declaration.

        TypeScript interfaces beside the value of the same name, overload
        signatures above their implementation, a C prototype above its function:
        when one file says a name twice, the longer declaration is the one with
        the body, which is what a lookup wants first. Across files no such
        reading holds (two classes may both define ``extend``), so none is made.
        """
        by_file: dict[int, list[int]] = {}
        for idx, _raw, _share in declarers:
            if self._meta_of(idx)[0] != "module":
                by_file.setdefault(self.file_of[idx], []).append(idx)
        out: set[int] = set()
        for chunks in by_file.values():
            if len(chunks) > 1:
                spans = [(self._meta_of(i)[2] - self._meta_of(i)[1], -i) for i in chunks]
                out.add(-max(spans)[1])
        return out

    def _declarers(self, name: str, written: str, modules: bool) -> list[tuple[int, str, float]]:
        """The chunks declaring the token ``name``: (chunk, name as written, share of the bonus),
        remembered per name.

        A resident server answers the same names again and again; the scan reads
        chunk headers, so its result is kept for the searcher's lifetime. A lookup
        (``modules``) also reads whole-file chunks line by line and the source
        lines just before the chunks of the files that mention the name.
        """
        key = (name, written, modules)
        cached = self._declarer_cache.get(key)
        if cached is not None:
            return cached
        out: list[tuple[int, str, float]] = []
        hits = self.postings.postings(name)
        suffixed = written[-1:] in ("!", "?")
        scan = self._definition_scan_order([doc for doc, _tf in hits]) if hits else []
        for idx in scan:
            tokens, raw, raw_suffixed = self._declaration(idx)
            if tokens == (name,):
                out.append((idx, raw_suffixed if suffixed else raw, 1.0))
            elif modules:
                share = self._module_declares(idx, written)
                if share > 0.0:
                    out.append((idx, written, share))
        if modules:  # also when no chunk holds the name: the declaration may stand outside every chunk
            found = {idx for idx, _raw, _share in out}
            out.extend((idx, written, 1.0) for idx in self._context_declarers(scan, written) if idx not in found)
        if len(self._declarer_cache) >= DECLARER_CACHE_NAMES:
            self._declarer_cache.pop(next(iter(self._declarer_cache)))
        self._declarer_cache[key] = out
        return out

    def _definition_scan_order(self, docs: list[int]) -> list[int]:
        """The chunks worth reading a header of: outside files the roles hold back first, at most a limit.

        Reading a header decodes the chunk's text, so the thousands of test chunks
        that call a popular name are looked at only after the source's.
        """
        if not self.stages.roles:
            return docs[:DEFINITION_SCAN_LIMIT]
        preferred: list[int] = []
        rest: list[int] = []
        for idx in docs:
            (preferred if self._plain_role_weight(self.file_of[idx]) >= PREFERRED_ROLE_WEIGHT else rest).append(idx)
        return (preferred + rest)[:DEFINITION_SCAN_LIMIT]

    def _module_declares(self, idx: int, written: str) -> float:
        """How fully a whole-file chunk (a file no pack cut into functions) declares ``written``:
        the best of its lines (:func:`definitions.line_declaration_weight`), 0 for none."""
        if self._meta_of(idx)[0] != "module" or not written:
            return 0.0
        content = self.store.chunks[idx].content
        if len(content) > MODULE_SCAN_CHARS:
            return 0.0
        best = 0.0
        at = content.find(written)
        while at >= 0 and best < 1.0:
            line_start = content.rfind("\n", 0, at) + 1
            line_end = content.find("\n", at)
            line = content[line_start:line_end if line_end >= 0 else len(content)]
            best = max(best, line_declaration_weight(line, written))
            at = content.find(written, line_end if line_end >= 0 else len(content))
        return best

    def _context_declarers(self, scanned: list[int], written: str) -> list[int]:
        """Chunks bound to ``written`` by a declaration standing before them in the source.

        An arrow function, or a call that wraps one, is chunked without the name it
        is assigned to (``export const create = (<T>(...) =>`` starts its chunk at the
        parenthesis; ``export const X: T =`` may sit two lines above it). Those
        chunks hold no token of the name, and often no other chunk of their file
        does either, so the postings cannot lead to them: the source of the files
        the roles prefer is searched for the name instead, and a chunk counts as
        declaring it when it starts on a declaration's line, or a line or two
        below with only comments between while the declaration is left open (it
        ends in ``=`` or an opening bracket). Needs the indexed tree; bounded by
        ``CONTEXT_SCAN_BYTES`` per name.
        """
        if self.source_lines.root is None or not written:
            return []
        # Files cut into more than one chunk (a file kept whole has no chunk to bind but itself) that
        # the roles do not hold back, those the postings name first.
        files = [f for f in dict.fromkeys(chain((self.file_of[idx] for idx in scanned), range(len(self.paths))))
                 if self.ends[f] - self.starts[f] > 1 and self._plain_role_weight(f) >= PREFERRED_ROLE_WEIGHT]
        needle = written.encode("utf-8")
        budget = CONTEXT_SCAN_BYTES
        out: list[int] = []
        for f in files:
            path = self.paths[f]
            raw = self.source_lines.raw(path)
            if raw is None:
                continue
            budget -= len(raw)
            if budget < 0:
                break
            if needle not in raw:
                continue
            lines = self.source_lines.lines(path)
            if not lines:
                continue
            starts: dict[int, int] = {}
            for idx in range(self.starts[f], self.ends[f]):
                _type, start, end = self._meta_of(idx)
                best = starts.get(start)
                if best is None or end > self._meta_of(best)[2]:
                    starts[start] = idx
            for number, line in enumerate(lines, start=1):
                if written not in line or not opens_definition(line, written):
                    continue
                last = number + CONTEXT_REACH if leaves_open(line) else number
                for target in range(number, min(last, len(lines)) + 1):
                    chunk = starts.get(target)
                    if chunk is not None:
                        out.append(chunk)
                        break
                    if target > number and not is_comment_line(lines[target - 1]):
                        break
        return out

    def _plain_role_weight(self, f: int) -> float:
        weight = self._plain_role_weights.get(f)
        if weight is None:
            weight = self._plain_role_weights[f] = role_weight(self.paths[f], frozenset())
        return weight

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
        if top_k <= 0 or not self.doc_len:
            return []
        analysis = analyse(query)
        chunk_scores, file_scores = self._bm25(analysis)
        definitions = self._definitions(analysis)

        candidates: dict[int, None] = {}
        candidates.update(dict.fromkeys(_top(chunk_scores, CHUNK_POOL)))
        candidates.update(dict.fromkeys(int(i) for i in cosines.top(VECTOR_POOL)))
        candidates.update(dict.fromkeys(definitions))
        pooled = _top(file_scores, FILE_POOL)
        if pooled:
            for chunks in _best_per_file(chunk_scores, self.file_of, set(pooled)).values():
                candidates.update(dict.fromkeys(chunks))

        scored = self._score(list(candidates), analysis, chunk_scores, file_scores, definitions, cosines)
        return self._diversify(scored, top_k)

    def _score(self, candidates: list[int], analysis: QueryAnalysis, chunk_scores: dict[int, float],
               file_scores: dict[int, float], definitions: dict[int, float], cosines: Cosines
               ) -> list[tuple[int, float]]:
        """Every candidate's final score, best first; equal six-decimal scores go by chunk id."""
        if not candidates:
            return []
        cosines.ensure(candidates)
        max_chunk = max(chunk_scores.values(), default=0.0)
        max_file = max(file_scores.values(), default=0.0)
        cos = {i: max(cosines.at(i), 0.0) for i in candidates}
        max_cos = max(cos.values(), default=0.0)
        if max_chunk == 0.0 and max_file == 0.0 and not definitions and max_cos > 0.0:
            # No word of the query is in the index: the vector alone answers, and its best match is not
            # stretched to full weight, so the answer's top score stays below the low-confidence line
            # (0.30) that the metrics log and dashboard flag. The order is the same either way.
            max_cos = 1.0
        w_chunk, w_file, w_vec = LONG_WEIGHTS if analysis.is_long else SHORT_WEIGHTS
        if not self.stages.file_view:
            w_chunk, w_file = w_chunk + w_file, 0.0
        intents = analysis.intents
        file_factor: dict[int, tuple[float, float]] = {}
        scores: list[float] = []
        for idx in candidates:
            f = self.file_of[idx]
            factor = file_factor.get(f)
            if factor is None:
                path = self.paths[f]
                weight = role_weight(path, intents) if self.stages.roles else 1.0
                bonus = PATH_BONUS if analysis.paths and _names_file(path, analysis.paths) else 0.0
                factor = file_factor[f] = (weight, bonus)
            score = definitions.get(idx, 0.0) + factor[1]
            if max_chunk > 0:
                score += w_chunk * chunk_scores.get(idx, 0.0) / max_chunk
            if max_file > 0:
                score += w_file * file_scores.get(f, 0.0) / max_file
            if max_cos > 0:
                score += w_vec * cos[idx] / max_cos
            scores.append(score * factor[0])
        return _ordered(candidates, scores, self.chunk_ids)

    def _diversify(self, scored: list[tuple[int, float]], top_k: int) -> list[tuple[int, float]]:
        per_file: dict[int, int] = {}
        kept: list[tuple[int, float]] = []
        seen_texts: set[str] = set()  # short chunks' texts, whitespace-normalised
        for idx, score in scored:
            if score_key(score) <= 0:
                break
            f = int(self.file_of[idx])
            if per_file.get(f, 0) >= MAX_CHUNKS_PER_FILE:
                continue
            if self.doc_len[idx] < DUPLICATE_CHECK_TOKENS:
                # Ten files' one-line ``struct bytecode`` (a parameter type the C pack chunks) are one
                # answer: a short chunk repeating a kept one's text takes no place of its own.
                text = self._short_texts.get(idx)
                if text is None:
                    text = self._short_texts[idx] = " ".join(self.store.chunks[idx].content.split())
                if text in seen_texts:
                    continue
                seen_texts.add(text)
            per_file[f] = per_file.get(f, 0) + 1
            kept.append((idx, score))
            if len(kept) >= top_k:
                break
        return kept


def _best_per_file(chunk_scores: dict[int, float], file_of: list[int], files: set[int]) -> dict[int, list[int]]:
    """The ``CHUNKS_PER_POOLED_FILE`` best-scoring chunks of each of ``files`` (ties by position)."""
    rows = [(file_of[idx], -score, idx) for idx, score in chunk_scores.items() if file_of[idx] in files]
    rows.sort()
    best: dict[int, list[int]] = {}
    for f, _score, idx in rows:
        chunks = best.setdefault(f, [])
        if len(chunks) < CHUNKS_PER_POOLED_FILE:
            chunks.append(idx)
    return best


def _top(scores: dict[int, float], limit: int) -> list[int]:
    """The ``limit`` best-scoring keys (positive scores only), ties by key.

    The ``limit``-th best value is found over the bare floats first (a C-level
    heap, no key function), so only the keys at or above it are sorted.
    """
    if limit <= 0 or not scores:
        return []
    if len(scores) > limit:
        floor = heapq.nlargest(limit, scores.values())[-1]
        rows = [(-v, k) for k, v in scores.items() if v >= floor]
    else:
        rows = [(-v, k) for k, v in scores.items()]
    rows.sort()
    return [k for neg, k in rows[:limit] if neg < 0.0]


def _ordered(candidates: list[int], scores: list[float], ids: Sequence[str]) -> list[tuple[int, float]]:
    """``(candidate, score)`` with a positive six-decimal key, best first; only equal keys read chunk ids."""
    keys = [score_key(x) for x in scores]
    order = sorted((i for i in range(len(candidates)) if keys[i] > 0), key=lambda i: -keys[i])
    out: list[tuple[int, float]] = []
    i = 0
    while i < len(order):
        j = i + 1
        while j < len(order) and keys[order[j]] == keys[order[i]]:
            j += 1
        group = order[i:j]
        if len(group) > 1:
            group.sort(key=lambda g: ids[candidates[g]])
        out.extend((candidates[g], scores[g]) for g in group)
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

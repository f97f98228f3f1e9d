"""Ranking quality against labeled queries: the ``cce.relevance/v1`` harness behind ``cce relevance``.

``cce conformance`` proves the output is stable and ``cce bench`` that it is
fast; this says whether the ranking is any good. A fixture set names, per
query, the results a good answer must surface (anchors: a file, a chunk kind,
a line span). Each query runs through a real retrieval entry point (BM25 only,
cosine only, or the full hybrid ranking ``cce search`` serves) and is scored
with standard IR metrics: precision@k, recall, MRR, F1, and for line-span
anchors token-weighted precision, recall and IoU. Two backends — or two
embedders, each indexing the corpus in memory — can be compared query by query
with a paired t-test. Everything here is pure: no clock, no writes, the same
bytes for the same index.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from cce_core.evaluation.paired_stats import PairedStats, paired_t
from cce_core.foundation.errors import CceError
from cce_core.foundation.json_lines import json_objects
from cce_core.foundation.textrules import UNICODE_WHITESPACE, estimate_tokens, format6, plain_sum, split_lines

if TYPE_CHECKING:
    from cce_core.indexing.chunk import Chunk
    from cce_core.plugins.host import PluginHost
    from cce_core.retrieval.searcher import Searcher, SearchResult

FIXTURE_SCHEMA = "cce.relevance/v1"
REPORT_SCHEMA = "cce.relevance.report/v2"
EMBEDDER_REPORT_SCHEMA = "cce.relevance.embedders/v1"
BACKENDS = ("bm25", "vector", "hybrid")
DEFAULT_K = 10
_MAX_U64 = (1 << 64) - 1


def _trim(text: str) -> str:
    return text.strip(UNICODE_WHITESPACE)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}


def quoted(text: str) -> str:
    """``text`` in double quotes with the escapes the family's error messages use (Rust's ``{:?}``)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif code < 0x20 or 0x7F <= code < 0xA0:
            out.append(f"\\u{{{code:x}}}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


# --------------------------------------------------------------------------- anchors


@dataclass(frozen=True, slots=True)
class Anchor:
    """One expected result: a file, a chunk kind, a line span, or a combination."""

    file_path: str | None
    kind: str | None
    span: tuple[int, int] | None

    def matches(self, chunk: Chunk) -> bool:
        if self.file_path is not None and chunk.file_path != self.file_path:
            return False
        if self.kind is not None and chunk.kind != self.kind:
            return False
        if self.span is not None:
            lo, hi = self.span
            if chunk.end_line < lo or chunk.start_line > hi:
                return False
        return True


def parse_anchor(text: str) -> Anchor:
    """``path``, ``path#kind``, ``#kind``, ``path@a-b`` or ``path#kind@a-b``; CceError when malformed.

    Only text after the last ``@`` made of digits and ``-`` alone is a line
    range; any other ``@`` belongs to the path (``user@host.py``).
    """
    body, span = _split_span(text)
    path, sep, kind_text = body.partition("#")
    path = _trim(path)
    kind: str | None = None
    if sep:
        kind = _trim(kind_text)
        if not kind:
            raise CceError(f"anchor {quoted(text)} has an empty kind after '#'")
    file_path = path or None
    if file_path is None and kind is None:
        raise CceError("anchor is empty — expected `path`, `path#kind`, `#kind`, or `path@a-b`")
    if span is not None and file_path is None:
        raise CceError(f"anchor {quoted(text)} has a line range but no file path — a range needs `path@a-b` "
                       "or `path#kind@a-b`")
    return Anchor(file_path, kind, span)


def _split_span(text: str) -> tuple[str, tuple[int, int] | None]:
    body, at, tail = text.rpartition("@")
    if not at:
        return text, None
    tail = _trim(tail)
    if not tail or any(ch not in "0123456789-" for ch in tail):
        return text, None
    bad = CceError(f"anchor {quoted(text)} has an invalid line range after '@' — expected `a-b` with 1 ≤ a ≤ b")
    first, dash, last = tail.partition("-")
    if not dash or not first or not last or "-" in last:
        raise bad
    lo, hi = int(first), int(last)
    if lo == 0 or hi < lo or hi > _MAX_U64:
        raise bad
    return body, (lo, hi)


# --------------------------------------------------------------------------- fixtures


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    query: str
    expected: tuple[Anchor, ...]
    k: int

    @property
    def ranged(self) -> bool:
        return any(a.span is not None for a in self.expected)


@dataclass(frozen=True, slots=True)
class FixtureSet:
    corpus: str | None  # the header's corpus directory, relative to the fixture file
    cases: tuple[Case, ...]


def parse_fixtures(text: str) -> FixtureSet:
    """A ``cce.relevance/v1`` NDJSON fixture set; a CceError names the first bad line."""
    corpus: str | None = None
    header_seen = False
    cases: list[Case] = []
    for lineno, where, value in json_objects(text, "fixture"):
        if "schema" in value and "query" not in value:
            if header_seen or cases:
                raise CceError(f"{where}: header must be the first non-blank line")
            schema = value["schema"] if isinstance(value["schema"], str) else ""
            if schema != FIXTURE_SCHEMA:
                raise CceError(f"{where}: unsupported schema {quoted(schema)} (expected {quoted(FIXTURE_SCHEMA)})")
            header_seen = True
            corpus = value.get("corpus") if isinstance(value.get("corpus"), str) else None
            continue
        cases.append(_parse_case(value, lineno, where))
    if not cases:
        raise CceError("fixture set contains no query cases")
    return FixtureSet(corpus or None, tuple(cases))


def _parse_case(value: dict[str, Any], lineno: int, where: str) -> Case:
    query = value.get("query")
    query = _trim(query) if isinstance(query, str) else ""
    if not query:
        raise CceError(f'{where}: missing or empty "query"')
    raw = value.get("expected")
    if not isinstance(raw, list) or not raw:
        raise CceError(f'{where}: "expected" must be a non-empty array of anchors')
    anchors: list[Anchor] = []
    for item in raw:
        if not isinstance(item, str):
            raise CceError(f"{where}: anchors must be strings")
        try:
            anchors.append(parse_anchor(item))
        except CceError as exc:
            raise CceError(f"{where}: {exc}") from None
    case_id = value.get("id")
    if not isinstance(case_id, str):
        case_id = f"q{lineno}"
    k = DEFAULT_K
    if "k" in value:
        raw_k = value["k"]
        if isinstance(raw_k, bool) or not isinstance(raw_k, int) or not 0 < raw_k <= _MAX_U64:
            raise CceError(f'{where}: "k" must be a positive integer')
        k = raw_k
    return Case(case_id, query, tuple(anchors), k)


def corpus_dir(fixtures_path: str, fixture_set: FixtureSet, dir_: str | None) -> str:
    """The corpus to index: ``--dir`` as given, else the header's, joined to the fixture file's folder.

    The join is not normalised, so reports show it as written
    (``eval/relevance/../../samples``).
    """
    if dir_ is not None:
        return dir_
    if fixture_set.corpus is None:
        raise CceError('no corpus: pass --dir <corpus>, or declare "corpus" in the fixture header line')
    return os.path.join(os.path.dirname(fixtures_path), fixture_set.corpus)


def corpus_searcher(corpus: str, host: PluginHost, embedder_name: str = "hash", profile: str = "family") -> Searcher:
    """An in-memory index of ``corpus`` built with ``embedder_name`` (default: hash); nothing is written.

    The build is ``cce index``'s own (:func:`build_index`, secrets protected),
    minus the store file. An embedder other than hash must be ready: one that
    cannot start is refused with the message ``cce index --embedder`` gives.
    """
    from cce_core.indexing.indexer import build_index
    from cce_core.retrieval.searcher import Searcher

    if not os.path.isdir(corpus):
        raise CceError(f"corpus is not a directory: {corpus}")
    embedder = host.embedder("hash") if embedder_name == "hash" else host.ready_embedder(embedder_name, "index")
    data, _stats = build_index(corpus, host, embedder, protect_secrets=True)
    return Searcher(data, embedder, profile=profile, source_root=corpus)


# --------------------------------------------------------------------------- backends


def parse_backends(text: str) -> list[str]:
    """A comma-separated backend list, duplicates dropped, in the order given."""
    out: list[str] = []
    for part in text.split(","):
        name = _trim(part)
        if not name:
            continue
        if name not in BACKENDS:
            raise CceError(f"unknown backend {quoted(name)} (expected bm25, vector, or hybrid)")
        if name not in out:
            out.append(name)
    if not out:
        raise CceError("--backend requires at least one of bm25, vector, hybrid")
    return out


def select_backends(backend: str | None, compare: str | None) -> list[str]:
    """The backends to score: the ``--compare`` pair, the ``--backend`` list, or all three."""
    if compare is not None:
        pair = parse_backends(compare)
        if len(pair) != 2:
            raise CceError("--compare requires exactly two distinct backends, e.g. bm25,hybrid")
        return pair
    if backend is not None:
        return parse_backends(backend)
    return list(BACKENDS)


@dataclass(frozen=True, slots=True)
class CompareSpec:
    """What ``--compare A,B`` names: two backends over one index, or two embedders over one corpus."""

    kind: str  # "backends" or "embedders"
    names: tuple[str, str]


def _compare_names(text: str) -> list[str]:
    names: list[str] = []
    for part in text.split(","):
        name = _trim(part)
        if name and name not in names:
            names.append(name)
    return names


def only_backends(text: str) -> bool:
    """Whether a ``--compare`` list names backends only (then it is the family's backend comparison)."""
    return all(name in BACKENDS for name in _compare_names(text))


def parse_compare(text: str, embedder_names: Callable[[], Iterable[str]]) -> CompareSpec:
    """Classify a ``--compare`` list; ``embedder_names`` (the installed embedders) is asked only when needed.

    A list of backends behaves exactly as before (same checks, same errors).
    Otherwise every name must be an installed embedder, and there must be two
    distinct ones; a name that is neither is one error naming both choices.
    """
    names = _compare_names(text)
    if only_backends(text):
        pair = select_backends(None, text)
        return CompareSpec("backends", (pair[0], pair[1]))
    installed = sorted(embedder_names())
    for name in names:
        if name not in BACKENDS and name not in installed:
            raise CceError(f"unknown backend or embedder {quoted(name)} (backends: {', '.join(BACKENDS)}; "
                           f"installed embedders: {', '.join(installed) or 'none'})")
    if any(name in BACKENDS for name in names):
        raise CceError("--compare takes two backends (e.g. bm25,hybrid) or two embedders (e.g. hash,minilm), "
                       "not a mix")
    if len(names) != 2:
        raise CceError("--compare requires exactly two distinct embedders, e.g. hash,minilm")
    return CompareSpec("embedders", (names[0], names[1]))


def embedder_backend(backend: str | None) -> str:
    """The one backend an embedder comparison scores: ``--backend`` if given, else hybrid."""
    if backend is None:
        return "hybrid"
    chosen = parse_backends(backend)
    if len(chosen) != 1:
        raise CceError("an embedder comparison scores one backend: pass one of bm25, vector, hybrid to --backend")
    return chosen[0]


def run_backend(searcher: Searcher, backend: str, query: str, k: int) -> list[SearchResult]:
    """The top ``k`` of one backend for ``query``, through the engine's own entry points."""
    from cce_core.retrieval.single_signal import bm25_only_search, vector_only_search

    store = searcher.store
    if not _trim(query) or not store.chunks:
        return []
    if backend == "bm25":
        return bm25_only_search(store, query, k)
    if backend == "vector":
        return vector_only_search(store, searcher.embedder, query, k)
    return searcher.search(query, top_k=k, graph=True)[:k]  # graph bonus chunks past k do not count


# --------------------------------------------------------------------------- scoring


class LineWeights:
    """The ``cce.tokens/v1`` weight of every indexed line; the first chunk covering a line gives its text."""

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        files: dict[str, dict[int, int]] = {}
        for chunk in chunks:
            lines = files.setdefault(chunk.file_path, {})
            for offset, text in enumerate(split_lines(chunk.content)):
                lines.setdefault(chunk.start_line + offset, estimate_tokens(text))
        self._files = files

    def mass(self, line_sets: dict[str, set[int]]) -> int:
        """The summed weight of the lines; a line no chunk covers weighs 1."""
        total = 0
        for path, lines in line_sets.items():
            weights = self._files.get(path, {})
            total += sum(weights.get(line, 1) for line in lines)
        return total


@dataclass(frozen=True, slots=True)
class TokenScore:
    precision: float
    recall: float
    iou: float


@dataclass(frozen=True, slots=True)
class QueryScore:
    id: str
    k: int
    precision: float
    recall: float
    mrr: float
    f1: float
    first_relevant_rank: int | None
    tokens: TokenScore | None


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


def score_tokens(results: Sequence[SearchResult], expected: Sequence[Anchor], k: int,
                 weights: LineWeights) -> TokenScore | None:
    """Token overlap between the ranged anchors' lines and the top-k spans; None for an unranged case."""
    wanted: dict[str, set[int]] = {}
    for anchor in expected:
        if anchor.span is not None and anchor.file_path is not None:
            wanted.setdefault(anchor.file_path, set()).update(range(anchor.span[0], anchor.span[1] + 1))
    if not wanted:
        return None
    got: dict[str, set[int]] = {}
    for r in results[:k]:
        got.setdefault(r.chunk.file_path, set()).update(range(r.chunk.start_line, r.chunk.end_line + 1))
    overlap = {path: lines & got[path] for path, lines in wanted.items() if path in got}
    wanted_mass, got_mass, overlap_mass = weights.mass(wanted), weights.mass(got), weights.mass(overlap)
    union = wanted_mass + got_mass - overlap_mass
    return TokenScore(_ratio(overlap_mass, got_mass), _ratio(overlap_mass, wanted_mass), _ratio(overlap_mass, union))


def score_query(case: Case, results: Sequence[SearchResult], weights: LineWeights) -> QueryScore:
    """P@k (divided by k even when fewer came back), recall over anchors, MRR, F1, token scores."""
    considered = [r.chunk for r in results[: case.k]]
    relevant = 0
    first: int | None = None
    for rank, chunk in enumerate(considered, start=1):
        if any(a.matches(chunk) for a in case.expected):
            relevant += 1
            if first is None:
                first = rank
    matched = sum(1 for a in case.expected if any(a.matches(c) for c in considered))
    precision = relevant / case.k
    recall = matched / len(case.expected) if case.expected else 0.0
    mrr = 1.0 / first if first is not None else 0.0
    f1 = 2.0 * precision * recall / (precision + recall) if precision + recall > 0.0 else 0.0
    return QueryScore(case.id, case.k, precision, recall, mrr, f1, first,
                      score_tokens(results, case.expected, case.k, weights))


@dataclass(frozen=True, slots=True)
class TokenAggregate:
    queries: int
    precision: float
    recall: float
    iou: float


@dataclass(frozen=True, slots=True)
class BackendReport:
    backend: str
    precision: float
    recall: float
    mrr: float
    f1: float
    tokens: TokenAggregate | None
    queries: tuple[QueryScore, ...]


def _mean(values: list[float]) -> float:
    return plain_sum(values) / max(len(values), 1)


def evaluate_backend(searcher: Searcher, backend: str, cases: Sequence[Case],
                     weights: LineWeights | None = None) -> BackendReport:
    """Every case through one backend; the aggregates are macro means (each query weighs the same)."""
    if weights is None:
        weights = LineWeights(searcher.store.chunks)
    scores = [score_query(c, run_backend(searcher, backend, c.query, c.k), weights) for c in cases]
    ranged = [s.tokens for s in scores if s.tokens is not None]
    tokens = None
    if ranged:
        tokens = TokenAggregate(len(ranged), _mean([t.precision for t in ranged]),
                                _mean([t.recall for t in ranged]), _mean([t.iou for t in ranged]))
    return BackendReport(backend, _mean([s.precision for s in scores]), _mean([s.recall for s in scores]),
                         _mean([s.mrr for s in scores]), _mean([s.f1 for s in scores]), tokens, tuple(scores))


def evaluate(searcher: Searcher, cases: Sequence[Case], backends: Sequence[str]) -> list[BackendReport]:
    weights = LineWeights(searcher.store.chunks)
    return [evaluate_backend(searcher, b, cases, weights) for b in backends]


def evaluate_embedders(corpus: str, host: PluginHost, embedders: Sequence[str], backend: str,
                       cases: Sequence[Case], profile: str = "family") -> list[BackendReport]:
    """``cases`` through ``backend`` over an in-memory index of ``corpus`` per embedder, in the order given.

    Each report's ``backend`` field carries the embedder's name, the label its
    row and the comparison print. One index is held at a time. Every
    embedder is ranked under the same ranking ``profile``.
    """
    reports: list[BackendReport] = []
    for name in embedders:
        searcher = corpus_searcher(corpus, host, name, profile=profile)
        reports.append(replace(evaluate_backend(searcher, backend, cases), backend=name))
        del searcher
    return reports


# --------------------------------------------------------------------------- comparison

# (label in the human table, key in the JSON, the per-query value)
METRICS: tuple[tuple[str, str, Callable[[QueryScore], float]], ...] = (
    ("P@k", "precision_at_k", lambda q: q.precision),
    ("recall", "recall", lambda q: q.recall),
    ("MRR", "mrr", lambda q: q.mrr),
    ("F1", "f1", lambda q: q.f1),
)


@dataclass(frozen=True, slots=True)
class Comparison:
    a: BackendReport
    b: BackendReport
    stats: tuple[PairedStats, ...]  # one per METRICS entry


def compare(a: BackendReport, b: BackendReport) -> Comparison:
    """The paired t-test per metric over the per-query deltas ``b - a``."""
    stats = tuple(paired_t([value(qb) - value(qa) for qa, qb in zip(a.queries, b.queries, strict=True)])
                  for _label, _key, value in METRICS)
    return Comparison(a, b, stats)


# --------------------------------------------------------------------------- reports


def format6_signed(x: float) -> str:
    """Six decimals with an explicit sign; a value that rounds to zero is ``+0.000000``."""
    text = format6(x)
    return text if text.startswith("-") else f"+{text}"


def _row(cells: Sequence[str], first: int = 10, width: int = 12) -> str:
    return f"  {cells[0]:<{first}}" + "".join(f"{c:>{width}}" for c in cells[1:]) + "\n"


def render_human(corpus: str, embedder: str, reports: Sequence[BackendReport], *,
                 backend: str | None = None) -> str:
    """The tables; with ``backend`` set, the rows are embedders scored through that one backend."""
    n = len(reports[0].queries) if reports else 0
    column = "backend" if backend is None else "embedder"
    out = [
        f"CCE relevance — ranking quality vs labeled fixtures ({FIXTURE_SCHEMA})\n",
        f"  corpus  : {corpus}\n",
        f"  embedder: {embedder}\n",
        *([] if backend is None else [f"  backend : {backend}\n"]),
        f"  queries : {n}\n\n",
        _row((column, "P@k", "recall", "MRR", "F1")),
    ]
    for r in reports:
        out.append(_row((r.backend, format6(r.precision), format6(r.recall), format6(r.mrr), format6(r.f1))))
    first_tokens = next((r.tokens for r in reports if r.tokens is not None), None)
    if first_tokens is not None:
        out.append(f"\n  token-level span metrics ({first_tokens.queries} of {n} queries carry ranged anchors)\n")
        out.append(_row((column, "tok-P", "tok-recall", "tok-IoU")))
        for r in reports:
            if r.tokens is not None:
                t = r.tokens
                out.append(_row((r.backend, format6(t.precision), format6(t.recall), format6(t.iou))))
    return "".join(out)


def render_compare_human(comparison: Comparison) -> str:
    a, b = comparison.a, comparison.b
    out = [
        f"\n  per-query deltas ({a.backend} → {b.backend}; positive = {b.backend} wins)\n",
        _row(("query", "dP@k", "drecall", "dMRR", "dF1"), first=24),
    ]
    for qa, qb in zip(a.queries, b.queries, strict=True):
        out.append(_row((qa.id, *(format6_signed(v(qb) - v(qa)) for _l, _k, v in METRICS)), first=24))
    means = (b.precision - a.precision, b.recall - a.recall, b.mrr - a.mrr, b.f1 - a.f1)
    out.append(_row(("mean", *(format6_signed(m) for m in means)), first=24))
    n = comparison.stats[0].n if comparison.stats else 0
    out.append(f"\n  paired t-test on the per-query deltas (two-sided, n={n}, df={max(n - 1, 0)})\n")
    out.append(f"  {'metric':<10}{'mean-delta':>14}{'t':>12}{'p':>12}{'95% CI':>26}\n")
    for (label, _key, _value), s in zip(METRICS, comparison.stats, strict=True):
        t = format6_signed(s.t) if s.t is not None else "n/a"
        p = format6(s.p) if s.p is not None else "n/a"
        ci = f"[{format6_signed(s.ci95[0])}, {format6_signed(s.ci95[1])}]" if s.ci95 is not None else "n/a"
        out.append(f"  {label:<10}{format6_signed(s.mean_delta):>14}{t:>12}{p:>12}{ci:>26}\n")
    return "".join(out)


def _token_json(t: TokenScore | TokenAggregate) -> dict[str, Any]:
    body: dict[str, Any] = {"iou": format6(t.iou), "precision": format6(t.precision), "recall": format6(t.recall)}
    if isinstance(t, TokenAggregate):
        body["queries"] = t.queries
    return body


def _query_json(q: QueryScore) -> dict[str, Any]:
    body: dict[str, Any] = {
        "f1": format6(q.f1), "first_relevant_rank": q.first_relevant_rank, "id": q.id, "k": q.k,
        "mrr": format6(q.mrr), "precision_at_k": format6(q.precision), "recall": format6(q.recall),
    }
    if q.tokens is not None:
        body["tokens"] = _token_json(q.tokens)
    return body


def _stats_json(s: PairedStats) -> dict[str, Any]:
    lo, hi = s.ci95 if s.ci95 is not None else (None, None)
    return {
        "ci95_high": format6_signed(hi) if hi is not None else None,
        "ci95_low": format6_signed(lo) if lo is not None else None,
        "mean_delta": format6_signed(s.mean_delta),
        "n": s.n,
        "p": format6(s.p) if s.p is not None else None,
        "t": format6_signed(s.t) if s.t is not None else None,
    }


def _report_json(r: BackendReport, label: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        label: r.backend, "f1": format6(r.f1), "mrr": format6(r.mrr),
        "per_query": [_query_json(q) for q in r.queries],
        "precision_at_k": format6(r.precision), "recall": format6(r.recall),
    }
    if r.tokens is not None:
        body["tokens"] = _token_json(r.tokens)
    return body


def _compare_json(comparison: Comparison) -> dict[str, Any]:
    return {
        "a": comparison.a.backend, "b": comparison.b.backend,
        "metrics": {key: _stats_json(s) for (_l, key, _v), s in zip(METRICS, comparison.stats, strict=True)},
    }


def render_json(corpus: str, embedder: str, reports: Sequence[BackendReport],
                comparison: Comparison | None = None) -> str:
    """The ``cce.relevance.report/v2`` document: keys sorted, scores as six-decimal strings, one newline."""
    document: dict[str, Any] = {
        "backends": [_report_json(r, "backend") for r in reports], "corpus": corpus, "embedder": embedder,
        "queries": len(reports[0].queries) if reports else 0, "schema": REPORT_SCHEMA,
    }
    if comparison is not None:
        document["compare"] = _compare_json(comparison)
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def render_embedders_json(corpus: str, backend: str, reports: Sequence[BackendReport],
                          comparison: Comparison) -> str:
    """The ``cce.relevance.embedders/v1`` document of an embedder comparison (same conventions as v2).

    ``embedders`` holds one entry per embedder, shaped like a v2 ``backends``
    entry with ``embedder`` in place of ``backend``; ``backend`` names the
    ranking that was scored; ``compare`` is b − a as in v2.
    """
    document: dict[str, Any] = {
        "backend": backend, "compare": _compare_json(comparison), "corpus": corpus,
        "embedders": [_report_json(r, "embedder") for r in reports],
        "queries": len(reports[0].queries) if reports else 0, "schema": EMBEDDER_REPORT_SCHEMA,
    }
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=True) + "\n"

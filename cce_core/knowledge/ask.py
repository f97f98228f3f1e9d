"""``cce knowledge ask``: does the knowledge corpus still answer the questions people ask of it?

A ``cce.knowledge.ask/v1`` suite is NDJSON: an optional header
``{"schema":"cce.knowledge.ask/v1","corpus":"feed.jsonl"}`` (the feed is
resolved beside the suite file) and one case a line,
``{"id":…,"query":…,"expect":[record ids],"k":N}``. Every query goes through
the knowledge search agents get for ``source: knowledge``
(:class:`~cce_core.knowledge.blend.LoadedKnowledge`), never a copy of it, and
is scored against record ids, not sections, so re-cutting a document does
not move the answer. A case is *proven* when every expected record is in its
top ``k``; the command fails unless all are, so a corpus rebuild can be gated
on it.

The ``--json`` report, ``cce.knowledge.ask.report/v1``, is the family's:
pretty JSON with sorted keys, scores as six-decimal strings, one trailing
newline, so the same suite over the same corpus prints the same bytes in
every engine.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_core.foundation.bounded_read import read_small_text
from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import UNICODE_WHITESPACE, format6, plain_sum, split_lines
from cce_core.knowledge.store import KnowledgeStore

ASK_SCHEMA = "cce.knowledge.ask/v1"
ASK_REPORT_SCHEMA = "cce.knowledge.ask.report/v1"
DEFAULT_K = 10
# The widths of the human table's columns (the case id is cut to fit the first).
_ID_WIDTH = 28
# A suite is a list of questions; anything larger is not one.
_MAX_SUITE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class AskCase:
    id: str
    query: str
    expect: tuple[str, ...]
    k: int


@dataclass(frozen=True)
class AskSuite:
    corpus: str | None  # a feed path relative to the suite file; ``--dir`` replaces it
    cases: list[AskCase]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"`{name}` is not JSON")


def _k(value: Any, line: int) -> int:
    if value is None:
        raise CceError(f"line {line}: `k` must be a positive integer")
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value >= 2**64:
        raise CceError(f"line {line}: `k` must be a positive integer")
    if value == 0:
        raise CceError(f"line {line}: `k` must be >= 1")
    return value


def parse_suite(text: str) -> AskSuite:
    """The suite in ``text``; the first bad line raises :class:`CceError` naming it (1-based, blanks counted)."""
    corpus: str | None = None
    cases: list[AskCase] = []
    seen_header = False
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip(UNICODE_WHITESPACE):
            continue
        try:
            obj = json.loads(line, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            raise CceError(f"line {number}: invalid JSON: {exc.msg} at line 1 column {exc.colno}") from None
        except (ValueError, RecursionError) as exc:
            raise CceError(f"line {number}: invalid JSON: {exc}") from None
        fields = obj if isinstance(obj, dict) else {}
        if "schema" in fields and "query" not in fields:
            if seen_header or cases:
                raise CceError(f"line {number}: header must be the first line")
            schema = fields["schema"] if isinstance(fields["schema"], str) else ""
            if schema != ASK_SCHEMA:
                raise CceError(f"line {number}: unknown schema {json.dumps(schema, ensure_ascii=False)} "
                               f"(expected {json.dumps(ASK_SCHEMA)})")
            seen_header = True
            named = fields.get("corpus")
            corpus = named if isinstance(named, str) and named else None
            continue
        query = fields.get("query")
        if not isinstance(query, str):
            raise CceError(f"line {number}: case missing string `query`")
        expect = fields.get("expect")
        anchors = tuple(a for a in expect if isinstance(a, str)) if isinstance(expect, list) else ()
        if not anchors:
            raise CceError(f"line {number}: case needs a non-empty `expect` array")
        k = _k(fields["k"], number) if "k" in fields else DEFAULT_K
        case_id = fields.get("id")
        cases.append(AskCase(case_id if isinstance(case_id, str) else f"q{number}", query, anchors, k))
    if not cases:
        raise CceError("suite has no cases")
    return AskSuite(corpus, cases)


# --------------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class CaseScore:
    id: str
    k: int
    expected: int
    precision: float
    recall: float
    mrr: float
    f1: float
    first_hit_rank: int | None
    proven: bool


def score_case(case: AskCase, ranked_record_ids: Sequence[str]) -> CaseScore:
    """One case against the record id of each hit, best first; only the top ``k`` count."""
    considered = list(ranked_record_ids[:case.k])
    expected = set(case.expect)
    relevant = 0
    first: int | None = None
    for rank, record_id in enumerate(considered, start=1):
        if record_id in expected:
            relevant += 1
            first = first if first is not None else rank
    matched = sum(1 for anchor in case.expect if anchor in considered)
    precision = relevant / case.k
    recall = matched / len(case.expect)
    mrr = 1.0 / first if first is not None else 0.0
    f1 = 2.0 * precision * recall / (precision + recall) if precision + recall > 0.0 else 0.0
    return CaseScore(case.id, case.k, len(case.expect), precision, recall, mrr, f1, first, recall == 1.0)


@dataclass(frozen=True)
class SuiteReport:
    corpus: str
    min_score: float
    cases: list[CaseScore]

    @property
    def queries(self) -> int:
        return len(self.cases)

    @property
    def proven(self) -> int:
        return sum(1 for c in self.cases if c.proven)

    def mean(self, metric: str) -> float:
        """The macro average of one metric over the cases, summed left to right."""
        if not self.cases:
            return 0.0
        return plain_sum(getattr(c, metric) for c in self.cases) / len(self.cases)

    def all_proven(self) -> bool:
        return self.queries > 0 and self.proven == self.queries


def evaluate(store: KnowledgeStore, suite: AskSuite, min_score: float, corpus: str) -> SuiteReport:
    """Every case of ``suite`` through the knowledge search over ``store`` at ``min_score``."""
    from cce_core.knowledge.blend import LoadedKnowledge

    loaded = LoadedKnowledge(store)
    # No case can get more hits than there are sections: a huge ``k`` asks for no more work than that.
    most = max(1, len(store.chunks))
    scores = []
    for case in suite.cases:
        found = loaded.search(case.query, min(case.k, most), min_score)
        scores.append(score_case(case, [hit.chunk.record_id for hit in found]))
    return SuiteReport(corpus, min_score, scores)


# --------------------------------------------------------------------------- rendering


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "\u2026"


def render_human(report: SuiteReport) -> str:
    """The summary (corpus, floor, proven count), one row a case, and the mean row."""
    out = [f"cce knowledge ask — the questions the corpus answers ({ASK_SCHEMA})",
           f"  corpus   : {report.corpus}",
           f"  min_score: {format6(report.min_score)}",
           f"  proven   : {report.proven}/{report.queries}",
           "",
           f"  {'query':<{_ID_WIDTH}}{'P@k':>7}{'recall':>10}{'MRR':>10}{'rank':>8}  proven"]
    for c in report.cases:
        rank = str(c.first_hit_rank) if c.first_hit_rank is not None else "-"
        out.append(f"  {_cut(c.id, _ID_WIDTH):<{_ID_WIDTH}}{format6(c.precision):>7}{format6(c.recall):>10}"
                   f"{format6(c.mrr):>10}{rank:>8}  {'yes' if c.proven else 'NO'}")
    out.append(f"  {'mean':<{_ID_WIDTH}}{format6(report.mean('precision')):>7}{format6(report.mean('recall')):>10}"
               f"{format6(report.mean('mrr')):>10}")
    return "\n".join(out) + "\n"


def render_json(report: SuiteReport) -> str:
    """The ``cce.knowledge.ask.report/v1`` document: 2-space pretty JSON, sorted keys, one trailing newline."""
    cases = [{"id": c.id, "k": c.k, "expected": c.expected, "precision_at_k": format6(c.precision),
              "recall": format6(c.recall), "mrr": format6(c.mrr), "f1": format6(c.f1),
              "first_hit_rank": c.first_hit_rank, "proven": c.proven} for c in report.cases]
    body = {"schema": ASK_REPORT_SCHEMA, "corpus": report.corpus, "min_score": format6(report.min_score),
            "queries": report.queries, "proven": report.proven, "precision_at_k": format6(report.mean("precision")),
            "recall": format6(report.mean("recall")), "mrr": format6(report.mean("mrr")),
            "f1": format6(report.mean("f1")), "cases": cases}
    return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- running a suite file


def _corpus_store(suite_path: Path, corpus: str) -> KnowledgeStore:
    """The header's feed, ingested in memory as a fresh project would (default budget and redaction)."""
    from cce_core.foundation.config import DEFAULT_MARKDOWN_MAX_SECTION_TOKENS
    from cce_core.knowledge.feed import FeedError, parse_feed
    from cce_core.knowledge.ingest import build_store, resolve_chunker
    from cce_core.knowledge.limits import MAX_FEED_BYTES

    raw, text = read_small_text(suite_path.parent / corpus, "corpus feed", MAX_FEED_BYTES, "64 MiB")
    try:
        records = parse_feed(text)
    except FeedError as exc:
        raise CceError(str(exc)) from None
    return build_store(records, raw, DEFAULT_MARKDOWN_MAX_SECTION_TOKENS, resolve_chunker())


def run_suite_file(suite_path: Path, root: Path | None = None, min_score: float | None = None) -> SuiteReport:
    """``cce knowledge ask SUITE [--dir ROOT] [--min-score F]``: the report (the caller decides what fails).

    With ``root`` the suite runs against that project's installed store, at its
    ``knowledge.min_score``; without, against the feed the header names, at the
    default floor. ``min_score`` overrides either floor.
    """
    from cce_core.foundation.config import DEFAULT_KNOWLEDGE_MIN_SCORE, load_config
    from cce_core.knowledge.store import load_store

    _raw, text = read_small_text(suite_path, "suite", _MAX_SUITE_BYTES, "16 MiB")
    suite = parse_suite(text)
    if root is not None:
        store = load_store(root)
        label = str(root / ".cce" / "knowledge")
        floor = load_config(root).knowledge_min_score
    else:
        if suite.corpus is None:
            raise CceError("the suite has no `corpus` header; pass --dir ROOT to run it against an installed "
                           "knowledge store")
        store, label, floor = _corpus_store(suite_path, suite.corpus), suite.corpus, DEFAULT_KNOWLEDGE_MIN_SCORE
    return evaluate(store, suite, floor if min_score is None else min_score, label)


def regression_message(report: SuiteReport) -> str:
    """The error a suite with an unproven case ends with."""
    return f"knowledge-ask regression: {report.proven}/{report.queries} queries proven from the corpus"

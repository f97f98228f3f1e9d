"""``cce relevance --compare family,default``: two ranking profiles on one or more fixture sets.

A ranking change is judged here: every fixture file's corpus is indexed once
in memory, each case is searched under each profile, and the per-query scores
are pooled over all files so one paired t-test speaks for the whole set.
Besides the family's metrics (P@k, recall, MRR, F1 through the hybrid
search), two figures the question sets need:

- **def@1**: for cases that carry ``"definition": "path@L-L"`` (the line of
  the defining statement), the share whose first result is the defining
  chunk (:func:`defining_chunk`); a definition no chunk holds is not judged;
- **by style**: MRR per ``"style"`` (identifier, question, task, trace), so a
  gain on names cannot hide a loss on questions.

Nothing here changes the family's own report formats: this mode has its own
schema, ``cce.relevance.profiles/v1``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cce_core.evaluation.paired_stats import PairedStats, paired_t
from cce_core.evaluation.relevance import (
    METRICS,
    Case,
    LineWeights,
    QueryScore,
    corpus_dir,
    parse_anchor,
    parse_fixtures,
    score_query,
)
from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import format6, plain_sum, split_lines

if TYPE_CHECKING:  # pragma: no cover - typing only
    from cce_core.hookspecs import Embedder
    from cce_core.indexing.store import StoreData
    from cce_core.plugins.host import PluginHost

SCHEMA = "cce.relevance.profiles/v1"


@dataclass(frozen=True, slots=True)
class CaseExtras:
    style: str | None
    definition: tuple[str, int] | None  # (path, line of the defining statement)


@dataclass
class ProfileRun:
    """One profile's per-query results over every fixture file, in file then line order."""

    profile: str
    scores: list[QueryScore] = field(default_factory=list)
    styles: list[str | None] = field(default_factory=list)
    definition_hits: list[bool | None] = field(default_factory=list)  # None: the case names no definition

    def mean(self, metric: int) -> float:
        value = METRICS[metric][2]
        return plain_sum(value(q) for q in self.scores) / max(len(self.scores), 1)

    @property
    def def_at_1(self) -> tuple[int, int]:
        judged = [h for h in self.definition_hits if h is not None]
        return sum(1 for h in judged if h), len(judged)


def case_extras(text: str) -> list[CaseExtras]:
    """The ``style`` and ``definition`` of each case line, in order (the relevance parser ignores them)."""
    out: list[CaseExtras] = []
    for lineno, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        value = json.loads(line)
        if "schema" in value and "query" not in value:
            continue
        style = value.get("style") if isinstance(value.get("style"), str) else None
        definition = None
        raw = value.get("definition")
        if isinstance(raw, str):
            try:
                anchor = parse_anchor(raw)
            except CceError as exc:
                raise CceError(f"fixture line {lineno}: definition: {exc}") from None
            if anchor.file_path is None or anchor.span is None:
                raise CceError(f'fixture line {lineno}: "definition" must be "path@L-L"')
            definition = (anchor.file_path, anchor.span[0])
        out.append(CaseExtras(style, definition))
    return out


def defining_chunk(store: StoreData, path: str, line: int) -> int | None:
    """The chunk of ``path`` that a definition at ``line`` became.

    The largest chunk starting on that line or the next two (a declaration
    can open a line before its chunk: ``export const X =`` above the arrow
    function), since a parameter list's ``struct s`` is chunked too; failing
    that, the innermost chunk containing the line.
    """
    span = store.file_span(path)
    if span is None:
        return None
    starting = [idx for idx in range(*span) if line <= store.chunks[idx].start_line <= line + 2]
    if starting:
        first = min(store.chunks[i].start_line for i in starting)
        return max((i for i in starting if store.chunks[i].start_line == first),
                   key=lambda i: (store.chunks[i].end_line, -i))
    best: int | None = None
    best_size = 0
    for idx in range(*span):
        chunk = store.chunks[idx]
        if chunk.start_line <= line <= chunk.end_line:
            size = chunk.end_line - chunk.start_line
            if best is None or size < best_size:
                best, best_size = idx, size
    return best


def run_profiles(fixture_paths: Sequence[str], dir_: str | None, host: PluginHost, profiles: Sequence[str],
                 read: Any, embedder_name: str = "hash") -> list[ProfileRun]:
    """Every case of every file under each profile; one in-memory index per fixture file."""
    from cce_core.indexing.indexer import build_index
    from cce_core.retrieval.searcher import Searcher

    runs = [ProfileRun(p) for p in profiles]
    embedder: Embedder = host.embedder("hash") if embedder_name == "hash" else \
        host.ready_embedder(embedder_name, "index")
    for path in fixture_paths:
        text = read("fixtures", path)
        fixture_set = parse_fixtures(text)
        extras = case_extras(text)
        corpus = corpus_dir(path, fixture_set, dir_ if len(fixture_paths) == 1 else None)
        import os

        if not os.path.isdir(corpus):
            raise CceError(f"corpus is not a directory: {corpus} (from {path})")
        data, _stats = build_index(corpus, host, embedder, protect_secrets=True)
        weights = LineWeights(data.chunks)
        targets = [defining_chunk(data, e.definition[0], e.definition[1]) if e.definition else None
                   for e in extras]
        target_ids = {t: data.chunk_ids[t] for t in targets if t is not None}
        for run in runs:
            searcher = Searcher(data, embedder, profile=run.profile, source_root=corpus)
            for case, extra, target in zip(fixture_set.cases, extras, targets, strict=True):
                results = searcher.search(case.query, top_k=case.k, graph=True)[: case.k]
                run.scores.append(_scored(case, results, weights))
                run.styles.append(extra.style)
                if extra.definition is None or target is None:
                    # No chunk holds the definition (a type alias or a constant the packs do not
                    # chunk): there is no defining chunk to put first, so the case is not judged.
                    run.definition_hits.append(None)
                else:
                    # Ids repeat only for identical chunks, so the first result's id names the target's.
                    run.definition_hits.append(bool(results) and results[0].chunk.chunk_id == target_ids[target])
    return runs


def _scored(case: Case, results: Sequence[Any], weights: LineWeights) -> QueryScore:
    return score_query(case, results, weights)


def compare_runs(a: ProfileRun, b: ProfileRun) -> list[PairedStats]:
    """Paired t-tests of ``b - a`` per metric, over the pooled queries."""
    return [paired_t([value(qb) - value(qa) for qa, qb in zip(a.scores, b.scores, strict=True)])
            for _label, _key, value in METRICS]


def _style_mrr(run: ProfileRun) -> dict[str, tuple[int, float]]:
    by_style: dict[str, list[float]] = {}
    for style, score in zip(run.styles, run.scores, strict=True):
        by_style.setdefault(style or "-", []).append(score.mrr)
    return {s: (len(v), plain_sum(v) / len(v)) for s, v in sorted(by_style.items())}


def render_human(fixture_paths: Sequence[str], embedder: str, runs: Sequence[ProfileRun]) -> str:
    lines = [f"CCE relevance — ranking profiles ({SCHEMA})",
             f"  fixtures: {len(fixture_paths)} file(s), {len(runs[0].scores) if runs else 0} queries",
             f"  embedder: {embedder}", "",
             "  profile          P@k      recall         MRR          F1   def@1"]
    for run in runs:
        hits, judged = run.def_at_1
        share = f"{hits}/{judged}" if judged else "-"
        lines.append(f"  {run.profile:<10}" + "".join(f"{format6(run.mean(i)):>12}" for i in range(len(METRICS)))
                     + f"   {share}")
    if len(runs) == 2:
        a, b = runs
        lines += ["", f"  paired t-test, {b.profile} - {a.profile} (n = {len(a.scores)})",
                  "  metric        delta           t           p"]
        for (label, _key, _value), stats in zip(METRICS, compare_runs(a, b), strict=True):
            t = format6(stats.t) if stats.t is not None else "-"
            p = format6(stats.p) if stats.p is not None else "-"
            lines.append(f"  {label:<8}{format6(stats.mean_delta):>12}{t:>12}{p:>12}")
    lines += ["", "  MRR by style   " + "".join(f"{r.profile:>12}" for r in runs)]
    styles = _style_mrr(runs[0]) if runs else {}
    per_run = [_style_mrr(r) for r in runs]
    for style, (count, _m) in styles.items():
        lines.append(f"  {style + f' ({count})':<15}" + "".join(f"{format6(m[style][1]):>12}" for m in per_run))
    # def@1 per style: the "identifier" row is the share of bare-name lookups whose defining chunk comes first.
    per_run_defs = [_style_def_at_1(r) for r in runs]
    judged_styles = [s for s in (per_run_defs[0] if per_run_defs else {}) if per_run_defs[0][s][1]]
    if judged_styles:
        lines += ["", "  def@1 by style " + "".join(f"{r.profile:>12}" for r in runs)]
        for style in judged_styles:
            lines.append(f"  {style:<15}" + "".join(f"{f'{d[style][0]}/{d[style][1]}':>12}" for d in per_run_defs))
    return "\n".join(lines) + "\n"


def _style_def_at_1(run: ProfileRun) -> dict[str, tuple[int, int]]:
    """(first-ranked definitions, judged cases) per query style."""
    by_style: dict[str, list[bool]] = {}
    for style, hit in zip(run.styles, run.definition_hits, strict=True):
        if hit is not None:
            by_style.setdefault(style or "-", []).append(hit)
    return {s: (sum(v), len(v)) for s, v in sorted(by_style.items())}


def _stats_json(stats: PairedStats) -> dict[str, Any]:
    return {"n": stats.n, "mean_delta": stats.mean_delta, "t": stats.t, "p": stats.p,
            "ci95": list(stats.ci95) if stats.ci95 is not None else None}


def render_json(fixture_paths: Sequence[str], embedder: str, runs: Sequence[ProfileRun]) -> str:
    body: dict[str, Any] = {
        "schema": SCHEMA, "fixtures": list(fixture_paths), "embedder": embedder,
        "profiles": [{
            "profile": r.profile,
            **{key: r.mean(i) for i, (_label, key, _v) in enumerate(METRICS)},
            "def_at_1": {"hits": r.def_at_1[0], "judged": r.def_at_1[1]},
            "mrr_by_style": {s: {"queries": n, "mrr": m} for s, (n, m) in _style_mrr(r).items()},
            "def_at_1_by_style": {s: {"hits": h, "judged": j} for s, (h, j) in _style_def_at_1(r).items()},
            "queries": [{"id": q.id, "mrr": q.mrr, "recall": q.recall, "first_relevant_rank": q.first_relevant_rank,
                         "style": st, "definition_first": d}
                        for q, st, d in zip(r.scores, r.styles, r.definition_hits, strict=True)],
        } for r in runs],
    }
    if len(runs) == 2:
        body["comparison"] = {key: _stats_json(s) for (_l, key, _v), s in zip(METRICS, compare_runs(*runs),
                                                                              strict=True)}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"

"""Each stage of the default ranking profile switched off in turn, on the labeled question sets.

Usage::

    python benchmarks/ranking_stages.py eval/questions/*.jsonl [--refinements] [--bench]

Every fixture file's corpus is indexed once in memory (hash embedder); each
case is then searched with the full default pipeline, with the family's, and
with the default pipeline minus one stage (``retrieval.default_ranking.Stages``).
The table gives MRR@10, recall@10 and def@1 per variant and the paired t-test
of MRR against the full pipeline, so a stage that does not earn its place
shows up as a delta near zero (or a gain when it is off).

``--refinements`` adds the finer parts of the definition stage, the file view
and the answer assembly, each undone in turn (they have no switch of their own
in ``.cce/config``: they are parts of a stage, patched here for measuring).
``--bench`` also prints each variant's Recall@5 / Recall@10 on the five pinned
bench corpora under /work/corpora (``cce bench``'s built-in query sets).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cce_core.evaluation.paired_stats import paired_t
from cce_core.evaluation.profile_compare import case_extras, defining_chunk
from cce_core.evaluation.relevance import LineWeights, corpus_dir, parse_fixtures, score_query
from cce_core.indexing.indexer import build_index
from cce_core.plugins.host import default_host
from cce_core.retrieval import default_ranking, definitions
from cce_core.retrieval.default_ranking import DefaultRanker, Stages
from cce_core.retrieval.searcher import Searcher

STAGE_VARIANTS = ["family", "default", *(f"-{f.name}" for f in dataclasses.fields(Stages))]
BENCH_CORPORA = [("sinatra", "ruby"), ("hyperfine", "rust"), ("zustand", "typescript"), ("jq", "c"),
                 ("flask", "python")]


def _old_module_line(line: str, written: str) -> float:
    return 1.0 if definitions.declared_name(line) == written else 0.0


# name -> (module, attribute, stand-in): each undoes one refinement while it is patched in.
REFINEMENTS: dict[str, list[tuple[object, str, object]]] = {
    "-context declarations": [(DefaultRanker, "_context_declarers", lambda self, scanned, written: [])],
    "-implementation bonus": [(DefaultRanker, "_implementations", lambda self, declarers: set())],
    "-module line shapes": [(default_ranking, "line_declaration_weight", _old_module_line)],
    "-file length cap": [(default_ranking, "FILE_B", 0.75), (default_ranking, "FILE_LENGTH_CAP", float("inf"))],
    "-duplicate check": [(default_ranking, "DUPLICATE_CHECK_TOKENS", 0)],
}


@contextmanager
def patched(variant: str) -> Iterator[None]:
    saved = [(owner, name, getattr(owner, name)) for owner, name, _new in REFINEMENTS.get(variant, [])]
    for owner, name, new in REFINEMENTS.get(variant, []):
        setattr(owner, name, new)
    try:
        yield
    finally:
        for owner, name, old in saved:
            setattr(owner, name, old)


def _searcher_for(variant: str, data: object, embedder: object, corpus: str) -> Searcher:
    profile = "family" if variant == "family" else "default"
    searcher = Searcher(data, embedder, profile=profile, source_root=corpus)  # type: ignore[arg-type]
    if variant.startswith("-") and variant[1:] in {f.name for f in dataclasses.fields(Stages)}:
        searcher.default_ranker.stages = Stages(**{variant[1:]: False})
    return searcher


def run(fixtures: list[str], variants: list[str]) -> dict[str, dict[str, list[float]]]:
    host = default_host()
    embedder = host.embedder("hash")
    out: dict[str, dict[str, list[float]]] = {v: {"mrr": [], "recall": [], "def": []} for v in variants}
    for path in fixtures:
        text = Path(path).read_text(encoding="utf-8")
        fixture_set = parse_fixtures(text)
        extras = case_extras(text)
        corpus = corpus_dir(path, fixture_set, None)
        if not os.path.isdir(corpus):
            print(f"skip {path}: no corpus at {corpus}", file=sys.stderr)
            continue
        data, _ = build_index(corpus, host, embedder, protect_secrets=True)
        weights = LineWeights(data.chunks)
        ids = list(data.chunk_ids)
        targets = [defining_chunk(data, *e.definition) if e.definition else None for e in extras]
        for variant in variants:
            searcher = _searcher_for(variant, data, embedder, corpus)
            for case, target in zip(fixture_set.cases, targets, strict=True):
                with patched(variant):
                    results = searcher.search(case.query, top_k=case.k)[: case.k]
                score = score_query(case, results, weights)
                out[variant]["mrr"].append(score.mrr)
                out[variant]["recall"].append(score.recall)
                if target is not None:
                    out[variant]["def"].append(1.0 if results and ids.index(results[0].chunk.chunk_id) == target
                                               else 0.0)
    return out


def bench(variants: list[str], root: Path = Path("/work/corpora")) -> dict[str, list[str]]:
    """Recall@5 / Recall@10 (as ``cce bench`` counts them) per variant and pinned corpus."""
    from cce_core.evaluation.bench import TOP_K, builtin_query_set

    host = default_host()
    embedder = host.embedder("hash")
    out: dict[str, list[str]] = {v: [] for v in variants}
    for name, lang in BENCH_CORPORA:
        corpus = root / name
        if not corpus.is_dir():
            print(f"skip bench {corpus}: not a directory", file=sys.stderr)
            continue
        _label, queries = builtin_query_set(lang)
        data, _ = build_index(str(corpus), host, embedder, protect_secrets=True)
        indexed = [f.path for f in data.files]
        used = [q for q in queries if any(q.matches(p) for p in indexed)]
        for variant in variants:
            searcher = _searcher_for(variant, data, embedder, str(corpus))
            ranks: list[int | None] = []
            for q in used:
                with patched(variant):
                    results = searcher.search(q.query, top_k=TOP_K, graph=False)
                ranks.append(next((i for i, r in enumerate(results, 1) if q.matches(r.chunk.file_path)), None))
            at5 = sum(1 for r in ranks if r is not None and r <= 5)
            at10 = sum(1 for r in ranks if r is not None and r <= 10)
            out[variant].append(f"{name} {at5}/{at10}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fixtures", nargs="+")
    ap.add_argument("--refinements", action="store_true", help="also undo each refinement in turn")
    ap.add_argument("--bench", action="store_true", help="also score the pinned bench corpora")
    args = ap.parse_args()
    variants = STAGE_VARIANTS + (list(REFINEMENTS) if args.refinements else [])
    out = run(args.fixtures, variants)
    base = out["default"]["mrr"]
    print(f"queries: {len(base)}")
    print("| variant | MRR@10 | recall@10 | def@1 | ΔMRR vs default | p |")
    print("|---|---|---|---|---|---|")
    for variant, m in out.items():
        mean = sum(m["mrr"]) / len(m["mrr"])
        recall = sum(m["recall"]) / len(m["recall"])
        defs = sum(m["def"]) / len(m["def"]) if m["def"] else 0.0
        if variant == "default":
            delta, p = "—", "—"
        else:
            stats = paired_t([a - b for a, b in zip(m["mrr"], base, strict=True)])
            delta = f"{stats.mean_delta:+.3f}"
            p = f"{stats.p:.3g}" if stats.p is not None else "—"
        print(f"| {variant} | {mean:.3f} | {recall:.3f} | {defs:.3f} | {delta} | {p} |")
    if args.bench:
        print()
        print("| variant | bench Recall@5 / Recall@10 hits (of 10 each) |")
        print("|---|---|")
        for variant, rows in bench(variants).items():
            print(f"| {variant} | {', '.join(rows)} |")


if __name__ == "__main__":
    main()

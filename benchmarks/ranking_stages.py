"""Each stage of the default ranking profile switched off in turn, on the labeled question sets.

Usage::

    python benchmarks/ranking_stages.py eval/questions/*.jsonl [--markdown]

Every fixture file's corpus is indexed once in memory (hash embedder); each
case is then searched with the full default pipeline, with the family's, and
with the default pipeline minus one stage (``retrieval.default_ranking.Stages``).
The table gives MRR@10, recall@10 and def@1 per variant and the paired t-test
of MRR against the full pipeline, so a stage that does not earn its place
shows up as a delta near zero (or a gain when it is off).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cce_core.evaluation.paired_stats import paired_t
from cce_core.evaluation.profile_compare import case_extras, defining_chunk
from cce_core.evaluation.relevance import LineWeights, corpus_dir, parse_fixtures, score_query
from cce_core.indexing.indexer import build_index
from cce_core.plugins.host import default_host
from cce_core.retrieval.default_ranking import Stages
from cce_core.retrieval.searcher import Searcher

VARIANTS = ["family", "default", *(f"-{f.name}" for f in dataclasses.fields(Stages))]


def run(fixtures: list[str]) -> dict[str, dict[str, list[float]]]:
    host = default_host()
    embedder = host.embedder("hash")
    out: dict[str, dict[str, list[float]]] = {v: {"mrr": [], "recall": [], "def": []} for v in VARIANTS}
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
        for variant in VARIANTS:
            profile = "family" if variant == "family" else "default"
            searcher = Searcher(data, embedder, profile=profile, source_root=corpus)
            if variant.startswith("-"):
                searcher.default_ranker.stages = Stages(**{variant[1:]: False})
            for case, target in zip(fixture_set.cases, targets, strict=True):
                results = searcher.search(case.query, top_k=case.k)[: case.k]
                score = score_query(case, results, weights)
                out[variant]["mrr"].append(score.mrr)
                out[variant]["recall"].append(score.recall)
                if target is not None:
                    out[variant]["def"].append(1.0 if results and ids.index(results[0].chunk.chunk_id) == target
                                               else 0.0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fixtures", nargs="+")
    args = ap.parse_args()
    out = run(args.fixtures)
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


if __name__ == "__main__":
    main()

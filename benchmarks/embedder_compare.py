"""Installed embedders side by side: ranking quality under both profiles, index time and fresh-search time.

Why it exists: issue #20 asks that the semantic embedder installed with one
command be the one that wins on quality per second, measured. ``cce relevance
--compare hash,E`` scores one fixture file at a time and always with the
``family`` ranking; this script pools every file of a set, scores each
embedder under each profile, and times what a user meets:

* quality — hybrid (or ``--backend``) MRR per embedder and profile over the
  question set (``eval/questions/*.jsonl``) and the paraphrase set
  (``eval/relevance/paraphrase-*.jsonl``), each corpus indexed in memory
  once per embedder, with a paired t-test of every embedder against the
  first one named;
* ``--timing`` — wall time of ``cce index CORPUS --store TMP`` per corpus and
  embedder, interleaved over ``--rounds`` rounds (median printed), then of a
  fresh ``cce search`` process on each store (median of ``--runs``).

Needs the embedders installed and the corpora the fixture headers name
(``../corpora`` beside the repository). Nothing is written outside a
temporary folder. Run from the repository root::

    python benchmarks/embedder_compare.py hash,minilm,wordllama --timing
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cce_core.cli.shared import command_host
from cce_core.evaluation import relevance as rel
from cce_core.evaluation.paired_stats import paired_t

SETS = {
    "questions": sorted(str(p) for p in Path("eval/questions").glob("*.jsonl")),
    "paraphrase": sorted(str(p) for p in Path("eval/relevance").glob("paraphrase-*.jsonl")),
}
TIMED_CORPORA = ("flask", "zod")
QUERY = "send a big answer piece by piece"


Scores = dict[tuple[str, str, str], dict[str, float]]


def per_query_mrr(embedders: list[str], profiles: list[str], backend: str) -> Scores:
    """``(set, embedder, profile) -> {file|query id: MRR}``."""
    host = command_host()
    scores: Scores = {}
    for set_name, files in SETS.items():
        for path in files:
            fixtures = rel.parse_fixtures(Path(path).read_text(encoding="utf-8"))
            corpus = rel.corpus_dir(path, fixtures, None)
            for embedder in embedders:
                for profile in profiles:
                    searcher = rel.corpus_searcher(corpus, host, embedder, profile=profile)
                    report = rel.evaluate_backend(searcher, backend, fixtures.cases)
                    into = scores.setdefault((set_name, embedder, profile), {})
                    for case, query in zip(fixtures.cases, report.queries, strict=True):
                        into[f"{path}|{case.id}"] = query.mrr
                    del searcher
    return scores


def print_quality(scores: Scores, embedders: list[str], profiles: list[str]) -> None:
    for set_name in SETS:
        for profile in profiles:
            base = scores[(set_name, embedders[0], profile)]
            line = f"{set_name:10} {profile:7} n={len(base):3}  {embedders[0]} {statistics.fmean(base.values()):.3f}"
            for other_name in embedders[1:]:
                other = scores[(set_name, other_name, profile)]
                deltas = [other[key] - base[key] for key in base]
                test = paired_t(deltas)
                wins, losses = sum(d > 0 for d in deltas), sum(d < 0 for d in deltas)
                p = "n/a" if test.p is None else f"{test.p:.2g}"
                line += (f" | {other_name} {statistics.fmean(other.values()):.3f} (Δ {test.mean_delta:+.3f}, p {p}, "
                         f"w/t/l {wins}/{len(deltas) - wins - losses}/{losses})")
            print(line)


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True)
    return time.perf_counter() - start


def print_timing(embedders: list[str], corpora: Path, rounds: int, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="cce-embedder-compare-") as tmp:
        index_times: dict[tuple[str, str], list[float]] = {}
        for _ in range(rounds):
            for corpus in TIMED_CORPORA:
                for embedder in embedders:
                    store = Path(tmp) / f"{corpus}-{embedder}" / "index.cce"
                    argv = ["cce", "index", str(corpora / corpus), "--store", str(store), "--embedder", embedder,
                            "--no-metrics", "--rebuild"]
                    index_times.setdefault((corpus, embedder), []).append(timed(argv))
        search_times: dict[tuple[str, str], list[float]] = {}
        for _ in range(runs):
            for corpus in TIMED_CORPORA:
                for embedder in embedders:
                    store = Path(tmp) / f"{corpus}-{embedder}" / "index.cce"
                    search_times.setdefault((corpus, embedder), []).append(
                        timed(["cce", "search", QUERY, "--store", str(store)]))
        for key, values in index_times.items():
            print(f"cce index {key[0]:6} {key[1]:10} median {statistics.median(values):.2f} s  "
                  f"(fresh search median {statistics.median(search_times[key]) * 1000:.0f} ms)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("embedders", help="comma-separated installed embedders; the first is the baseline")
    parser.add_argument("--profiles", default="family,default")
    parser.add_argument("--backend", default="hybrid")
    parser.add_argument("--timing", action="store_true", help="also time cce index and a fresh cce search")
    parser.add_argument("--corpora", default="../corpora")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    embedders = [name for name in args.embedders.split(",") if name]
    profiles = [name for name in args.profiles.split(",") if name]
    if len(embedders) < 2:
        print("error: name at least two embedders, e.g. hash,wordllama", file=sys.stderr)
        return 2
    print_quality(per_query_mrr(embedders, profiles, args.backend), embedders, profiles)
    if args.timing:
        print_timing(embedders, Path(args.corpora), args.rounds, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the default ranking profile costs against the family's, as ratios measured in one run.

Usage::

    python benchmarks/ranking_speed.py /work/corpora/jq /work/corpora/zod [--rounds 9]

Per corpus (indexed first with ``cce index``):

- **fresh**: a whole ``cce search`` process per query, the two profiles
  interleaved query by query so machine noise hits both alike; median of
  ``rounds`` x queries. Bytecode caching is on, as users have it.
- **warm**: one resident searcher per profile (as ``cce mcp`` keeps), p50 of
  every query repeated; and a ~500-word issue text, the long-query target.

The issue's targets: fresh default <= 1.3x family, warm p50 <= 2x, long
query warm <= 300 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERIES = [
    "parse a json value",
    "how are errors reported to the user when the input is invalid",
    "register_blueprint",
    "safeParse",
    "execute bytecode",
    "Class.method lookup",
]
ISSUE = ("When I pass an empty input file the program crashes instead of printing an error. Steps to reproduce: "
         "run the command with the --arg option and a file that has no trailing newline; the parser reports a "
         "segmentation fault in the lexer and the process exits with code 139. Expected: a clear error message "
         "naming the file and the line. ") * 8


def fresh(corpus: Path, rounds: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "CCE_RANKING_PROFILE")}
    times: dict[str, list[float]] = {"family": [], "default": []}
    for _ in range(rounds):
        for query in QUERIES:
            for profile in ("family", "default"):
                started = time.perf_counter()
                subprocess.run(["cce", "search", query, "--dir", str(corpus), "--no-metrics", "--ranking", profile],
                               capture_output=True, env=env, check=True)
                times[profile].append(time.perf_counter() - started)
    return {p: statistics.median(v) for p, v in times.items()}


def warm(corpus: Path) -> dict[str, tuple[float, float]]:
    from cce_core.indexing.store import default_store_path, load_store
    from cce_core.plugins.host import default_host
    from cce_core.retrieval.searcher import Searcher

    data = load_store(default_store_path(corpus))
    embedder = default_host().embedder("hash")
    out: dict[str, tuple[float, float]] = {}
    for profile in ("family", "default"):
        searcher = Searcher(data, embedder, kernel="numpy", profile=profile)
        for query in QUERIES:
            searcher.search(query)
        samples = []
        for _ in range(25):
            for query in QUERIES:
                started = time.perf_counter()
                searcher.search(query)
                samples.append(time.perf_counter() - started)
        long_samples = []
        for _ in range(9):
            started = time.perf_counter()
            searcher.search(ISSUE)
            long_samples.append(time.perf_counter() - started)
        out[profile] = (statistics.median(samples), statistics.median(long_samples))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="+", type=Path)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    print(f"issue text: {len(ISSUE.split())} words")
    print("| corpus | fresh family / default s | ratio | warm p50 family / default ms | ratio | long query warm ms |")
    print("|---|---|---|---|---|---|")
    for corpus in args.corpora:
        subprocess.run(["cce", "index", str(corpus), "--no-metrics"], capture_output=True, check=True)
        f = fresh(corpus, args.rounds)
        w = warm(corpus)
        print(f"| {corpus.name} | {f['family']:.3f} / {f['default']:.3f} | {f['default'] / f['family']:.2f}x | "
              f"{w['family'][0] * 1e3:.2f} / {w['default'][0] * 1e3:.2f} | {w['default'][0] / w['family'][0]:.2f}x | "
              f"{w['default'][1] * 1e3:.1f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

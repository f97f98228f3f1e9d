#!/usr/bin/env python3
"""From how much text a second chunking process pays off: one process against two, on growing slices of a corpus.

``parallel_chunking`` forks a second process only for a batch of at least
``PARALLEL_MIN_FILES`` files and ``PARALLEL_MIN_BYTES`` of text: below that,
forking, handing results back and compiling queries before the fork would
cost more than the second core saves. This script measures where that line
actually lies, so the thresholds rest on a measurement rather than a guess.

For each corpus, the files the walker keeps are shuffled (a fixed seed, so
every slice holds the corpus' mix of languages and file sizes rather than
its first directories) and cut into slices of growing size (by text bytes). Each slice is chunked by
:func:`chunk_files` as a fresh ``cce index`` would (queries compiled anew,
strict redaction), once with ``CCE_WORKERS=1`` and once with ``CCE_WORKERS=2``,
interleaved, ``--reps`` times; the wall time of each is the best of the
reps. The report gives, per slice, its files and bytes, both times and
their ratio, and the smallest slice from which two processes win in every
larger slice too (the crossover). Nothing is asserted; see
benchmarks/README.md.

Usage::

    python benchmarks/parallel_crossover.py CORPUS [CORPUS ...] [--reps 7] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cce_core.indexing.parallel_chunking as chunking_module
from cce_core.indexing.bm25 import TokenIdEncoder
from cce_core.indexing.walker import walk
from cce_core.plugins.host import PluginHost, default_host

# Slice sizes, in bytes of text: around the thresholds, and far enough above to see the trend.
SLICE_BYTES = [64 << 10, 128 << 10, 192 << 10, 256 << 10, 320 << 10, 384 << 10, 512 << 10, 768 << 10, 1 << 20,
               3 << 19, 2 << 20, 4 << 20]
SEED = 24  # the shuffle's: any fixed value keeps the slices the same from run to run


def slices(items: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """The leading files of ``items`` holding up to each of :data:`SLICE_BYTES` (whole files), distinct only."""
    cut: list[list[tuple[str, str]]] = []
    total = sum(len(text) for _path, text in items)
    for limit in SLICE_BYTES:
        taken: list[tuple[str, str]] = []
        size = 0
        for path, text in items:
            if size + len(text) > limit and taken:
                break
            taken.append((path, text))
            size += len(text)
        if cut and len(taken) == len(cut[-1]):
            continue
        cut.append(taken)
        if size >= total:
            break
    return cut


def chunk_seconds(host: PluginHost, items: list[tuple[str, str]], workers: int) -> float:
    """Wall time of chunking ``items`` with ``workers`` processes, queries compiled anew (as in a new process)."""
    os.environ["CCE_WORKERS"] = str(workers)
    chunking_module._idle_chunker = None  # no chunker kept from the previous call: a fresh process has none
    started = time.perf_counter()
    chunking_module.chunk_files(host, items, "strict", None, encoder=TokenIdEncoder())
    return time.perf_counter() - started


def measure(corpus: Path, host: PluginHost, reps: int) -> dict[str, Any]:
    items = [(wf.path, wf.text) for wf in walk(str(corpus), protect_secrets=True).files]
    random.Random(SEED).shuffle(items)
    rows = []
    for part in slices(items):
        chunk_seconds(host, part, 1)  # warm-up: the files' pages and the grammar's first use
        one: list[float] = []
        two: list[float] = []
        for _ in range(reps):
            one.append(chunk_seconds(host, part, 1))
            two.append(chunk_seconds(host, part, 2))
        rows.append({"files": len(part), "bytes": sum(len(t.encode("utf-8")) for _p, t in part),
                     "one_process_s": min(one), "two_processes_s": min(two),
                     "one_median_s": sorted(one)[reps // 2], "two_median_s": sorted(two)[reps // 2]})
    crossover = None
    for k in range(len(rows)):
        if all(row["two_processes_s"] < row["one_process_s"] for row in rows[k:]):
            crossover = rows[k]
            break
    return {"corpus": corpus.name, "rows": rows, "crossover": crossover}


def render(result: dict[str, Any]) -> str:
    lines = [f"parallel chunking crossover — {result['corpus']} (best of the reps, wall)",
             f"    {'files':>6} {'bytes':>10} {'1 process':>10} {'2 processes':>12} {'2 / 1':>7}"]
    for row in result["rows"]:
        ratio = row["two_processes_s"] / row["one_process_s"]
        lines.append(f"    {row['files']:>6} {row['bytes']:>10,} {row['one_process_s'] * 1000:>8.1f}ms "
                     f"{row['two_processes_s'] * 1000:>10.1f}ms {ratio:>7.2f}")
    crossover = result["crossover"]
    lines.append("    two processes win from: " + (f"{crossover['files']} files, {crossover['bytes']:,} bytes"
                                                 if crossover else "never, in these slices"))
    lines.append(f"    thresholds now: {chunking_module.PARALLEL_MIN_FILES} files and "
                 f"{chunking_module.PARALLEL_MIN_BYTES:,} bytes")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("corpora", nargs="+", type=Path)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    host = default_host()
    results = []
    for corpus in args.corpora:
        result = measure(corpus, host, args.reps)
        print(render(result), flush=True)
        results.append(result)
    if args.json_out:
        args.json_out.write_text(json.dumps({"schema": "cce.parallel-crossover/v1", "results": results}, indent=2))


if __name__ == "__main__":
    main()

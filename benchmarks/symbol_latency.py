"""Warm latency of the symbol queries, as an MCP session answers them (issue #21).

An MCP session opens a store's symbol index once and keeps it; every
``find_symbol``, ``find_references`` and ``call_graph`` after that is a lookup
in memory. This script does the same in one process: it opens the index
(timed), draws names from the store's own definitions with a fixed seed, and
times the lookup each tool makes in the open index (definitions, references,
callers one hop deep), so what is measured is what an agent waits for, minus
rendering and the transport.

    python benchmarks/symbol_latency.py STORE [--names 300] [--seed 21]

STORE is a store file (``<root>/.cce/index.cce``). Prints one table row per
query kind with p50 and p95 in milliseconds; ``--json`` prints the figures.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("store", type=Path, help="the store file, e.g. ROOT/.cce/index.cce")
    parser.add_argument("--names", type=int, default=300, help="how many names to ask about (default 300)")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    from cce_core.symbols.index import open_symbols

    started = time.perf_counter()
    index = open_symbols(args.store)
    open_seconds = time.perf_counter() - started
    if not index.available:
        print(f"error: {index.unavailable_reason}", file=sys.stderr)
        return 1
    definitions = index.all_definitions()
    names = sorted({d.qualified_name for d in definitions})
    chosen = random.Random(args.seed).sample(names, min(args.names, len(names)))
    target = args.store
    timings: dict[str, list[float]] = {"find_symbol": [], "find_references": [], "call_graph": []}
    for name in chosen:
        for kind, ask in (("find_symbol", lambda n: index.definitions(n)),
                          ("find_references", lambda n: index.references(n)),
                          ("call_graph", lambda n: index.callers(n, 1))):
            t = time.perf_counter()
            ask(name)
            timings[kind].append((time.perf_counter() - t) * 1000)
    figures = {
        "store": str(target), "definitions": len(definitions), "files": len(index.files()),
        "open_seconds": round(open_seconds, 3), "names": len(chosen), "seed": args.seed,
        "queries": {kind: {"p50_ms": round(_percentile(v, 0.5), 3), "p95_ms": round(_percentile(v, 0.95), 3)}
                    for kind, v in timings.items()},
    }
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    print(f"{target}: {figures['files']} files, {figures['definitions']} definitions; "
          f"symbol index opened in {figures['open_seconds']} s; {len(chosen)} names (seed {args.seed})")
    print("| query | p50 ms | p95 ms |\n|---|---|---|")
    for kind, row in figures["queries"].items():
        print(f"| {kind} | {row['p50_ms']} | {row['p95_ms']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

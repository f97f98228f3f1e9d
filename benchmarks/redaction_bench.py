#!/usr/bin/env python3
"""Redaction throughput: the strict secrets profile against the family redactor, in the same run.

Redaction runs over every indexed file before chunking, so its cost is paid on
every index of every repository. This script measures what the strict profile
(the default) costs relative to the family's redactor, which is what indexing
paid before it, on real corpora.

What is measured
----------------
1. The corpus is walked with the indexer's own walker (secret protection on),
   so exactly the texts ``cce index`` would redact are timed.
2. Each round redacts every text with the family redactor, then with the
   strict one (alternating, so a slow spell on a shared machine hits both);
   the best of ``--reps`` rounds is kept for each, and the ratio strict/family
   is reported with both MB/s figures.
3. What strict changes: files whose redacted text differs from the family's,
   and the markers each profile added, by label (useful for spotting false
   positives: look at them with ``--show``).

Usage::

    python benchmarks/redaction_bench.py /work/corpora/jq /work/corpora/zod [--reps 5] [--json] [--show N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from cce_core.indexing.walker import walk
from cce_core.secrets.redactor import FAMILY, STRICT, redact_with, scrub


def _best_of(texts: list[str], profile: str, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        started = time.perf_counter()
        for text in texts:
            redact_with(text, profile)
        best = min(best, time.perf_counter() - started)
    return best


def measure(corpus: Path, reps: int, show: int) -> dict[str, object]:
    files = walk(str(corpus), protect_secrets=True).files
    texts = [wf.text for wf in files]
    size_mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    family_s = strict_s = float("inf")
    for _ in range(reps):  # alternate so both see the same machine load
        family_s = min(family_s, _best_of(texts, FAMILY, 1))
        strict_s = min(strict_s, _best_of(texts, STRICT, 1))
    labels: dict[str, Counter[str]] = {FAMILY: Counter(), STRICT: Counter()}
    differing: list[str] = []
    for wf in files:
        family = scrub(wf.text, FAMILY)
        strict = scrub(wf.text, STRICT)
        labels[FAMILY].update(family.counts)
        labels[STRICT].update(strict.counts)
        if family.text != strict.text:
            differing.append(wf.path)
            if len(differing) <= show:
                _show_difference(wf.path, family.text, strict.text)
    return {
        "corpus": corpus.name,
        "files": len(texts),
        "mb": round(size_mb, 2),
        "family_s": round(family_s, 4),
        "strict_s": round(strict_s, 4),
        "family_mb_s": round(size_mb / family_s, 1) if family_s else None,
        "strict_mb_s": round(size_mb / strict_s, 1) if strict_s else None,
        "ratio": round(strict_s / family_s, 2) if family_s else None,
        "files_differing": len(differing),
        "family_labels": dict(sorted(labels[FAMILY].items())),
        "strict_labels": dict(sorted(labels[STRICT].items())),
    }


def _show_difference(path: str, family: str, strict: str) -> None:
    for before, after in zip(family.split("\n"), strict.split("\n"), strict=False):
        if before != after:
            print(f"  {path}:\n    family: {before.strip()[:160]}\n    strict: {after.strip()[:160]}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="+", type=Path)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--show", type=int, default=0, help="print up to N differing lines per corpus (stderr)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [measure(corpus, args.reps, args.show) for corpus in args.corpora]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'corpus':<10} {'files':>6} {'MB':>7} {'family MB/s':>12} {'strict MB/s':>12} {'ratio':>6} {'differ':>7}  "
          "strict labels")
    for r in rows:
        print(f"{r['corpus']:<10} {r['files']:>6} {r['mb']:>7} {r['family_mb_s']:>12} {r['strict_mb_s']:>12} "
              f"{r['ratio']:>6} {r['files_differing']:>7}  {r['strict_labels']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

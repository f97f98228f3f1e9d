"""File-level issue localization over the whole eval/localization set, per ranking profile and embedder.

Why it exists: issue #20 asks that the engine's answer to an issue text be set
beside the numbers the localization papers publish and beside plain whole-file
BM25 computed in the same run. This script runs the library behind
``cce relevance eval/localization`` (:mod:`cce_core.evaluation.localization`)
for every installed embedder that can start, and writes the markdown tables
docs/localization.md carries, with the published figures beside them.

The repositories must be mirrored first (``DIR/<owner>+<name>/repo``, any git
directory with the base commits); trees are cached under ``--cache`` (default
``~/.cache/cce/localization``). Run from the repository root::

    python benchmarks/localization.py --repos /work/.mirror --out /tmp/localization.md --json-out /tmp/loc.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cce_core.evaluation import localization as loc  # noqa: E402
from cce_core.foundation.errors import CceError  # noqa: E402
from cce_core.plugins.host import default_host  # noqa: E402

# Published file-level figures on SWE-bench Lite (percent), for the table beside ours.
PUBLISHED = (
    ("BM25", "38.7", "61.7", "SweRank (Reddy et al., arXiv 2505.07849), Table 1"),
    ("CodeRankEmbed", "52.6", "84.7", "SweRank, Table 1"),
    ("SweRankEmbed-Small", "66.4", "90.9", "SweRank, Table 1"),
    ("LocAgent (Claude 3.5)", "77.7", "94.2", "SweRank, Table 1 (LocAgent: Chen et al., arXiv 2503.09089)"),
)


def _pct(x: float) -> str:
    return f"{x * 100:.1f}"


def _table(report: loc.LocalizationReport, language: str | None = None) -> list[str]:
    lines = ["| ranker | Acc@1 | Acc@3 | Acc@5 | Acc@10 | MRR@10 | Hit@1 | Hit@5 |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for ranker in report.rankers:
        agg = loc.aggregate(report.scores_of(ranker, language))
        cells = [*(_pct(a) for a in agg.acc), _pct(agg.mrr), _pct(agg.hit[0]), _pct(agg.hit[2])]
        lines.append(f"| {ranker} | " + " | ".join(cells) + " |")
    return lines


def _language_table(report: loc.LocalizationReport) -> list[str]:
    languages = report.languages()
    counts = {lang: sum(1 for r in report.results if r.case.language == lang) for lang in languages}
    lines = ["| ranker | " + " | ".join(f"{lang} ({counts[lang]})" for lang in languages) + " |",
             "|---|" + "---:|" * len(languages)]
    for ranker in report.rankers:
        cells = []
        for lang in languages:
            agg = loc.aggregate(report.scores_of(ranker, lang))
            cells.append(f"{_pct(agg.acc[0])} / {_pct(agg.acc[2])} / {_pct(agg.mrr)}")
        lines.append(f"| {ranker} | " + " | ".join(cells) + " |")
    return lines


def _tests(report: loc.LocalizationReport) -> list[str]:
    lines = ["| a → b | mean ΔRR@10 | t | p | 95% CI |", "|---|---:|---:|---:|---|"]
    for c in report.comparisons:
        s = c.stats
        t = f"{s.t:+.3f}" if s.t is not None else "n/a"
        p = f"{s.p:.4f}" if s.p is not None else "n/a"
        ci = f"[{s.ci95[0]:+.3f}, {s.ci95[1]:+.3f}]" if s.ci95 is not None else "n/a"
        lines.append(f"| {c.a} → {c.b} | {s.mean_delta:+.3f} | {t} | {p} | {ci} |")
    return lines


def _subset(report: loc.LocalizationReport, lite_ids: set[str]) -> loc.LocalizationReport:
    """The report restricted to the SWE-bench Lite cases (the set the published figures are on)."""
    results = tuple(r for r in report.results if r.case.id in lite_ids)
    return loc.LocalizationReport(report.sources, report.embedder, report.profiles, report.rankers, results,
                                  loc.compare(results, report.profiles))


def markdown(reports: list[tuple[loc.LocalizationReport, float]], skipped: list[str], lite_ids: set[str]) -> str:
    first = reports[0][0]
    repos = len({r.case.repo for r in first.results})
    out = [f"Cases: {len(first.results)} over {repos} repositories; profiles: {', '.join(first.profiles)}; "
           "Acc@k = every expected file in the top k, Hit@k = at least one, MRR@10 over the first expected file; "
           f"engine: files by best chunk of `search(top_k={loc.SEARCH_TOP_K}, graph=False)`.", ""]
    for report, seconds in reports:
        out += [f"### Embedder `{report.embedder}` ({seconds:.0f} s for the whole set)", "",
                "All cases:", "", *_table(report), "",
                "By language (Acc@1 / Acc@5 / MRR@10):", "", *_language_table(report), "",
                "Paired t-tests on the per-case reciprocal rank (all cases):", "", *_tests(report), ""]
        lite = _subset(report, lite_ids)
        if lite.results:
            out += [f"SWE-bench Lite part only ({len(lite.results)} cases), beside the published figures below:", "",
                    *_table(lite), "", *_tests(lite), ""]
    out += ["Published file-level results on all of SWE-bench Lite (Acc@1 / Acc@5, percent):", "",
            "| system | Acc@1 | Acc@5 | source |", "|---|---:|---:|---|"]
    out += [f"| {name} | {a1} | {a5} | {source} |" for name, a1, a5, source in PUBLISHED]
    if skipped:
        out += ["", "Embedders not run: " + "; ".join(skipped)]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default=str(REPO / "eval" / "localization"), help="set file or directory")
    parser.add_argument("--repos", default=loc.DEFAULT_REPOS_DIR, help="where the git mirrors are")
    parser.add_argument("--cache", default=None, help="tree cache (default ~/.cache/cce/localization)")
    parser.add_argument("--embedders", default=None, help="comma-separated (default: every installed one)")
    parser.add_argument("--out", default=None, help="write the markdown here (default: stdout)")
    parser.add_argument("--json-out", default=None, help="also write every cce.localization.report/v1 here")
    args = parser.parse_args()

    host = default_host()
    names = args.embedders.split(",") if args.embedders else sorted(host.embedders)
    cases = loc.read_sets([args.sets])
    sets = Path(args.sets)
    lite_files = sorted(sets.glob("swe-bench-lite*.jsonl")) if sets.is_dir() else []
    lite_ids = {c.id for c in loc.read_sets([str(f) for f in lite_files]).cases} if lite_files else set()
    cache = Path(args.cache) if args.cache else None
    reports: list[tuple[loc.LocalizationReport, float]] = []
    skipped: list[str] = []
    for name in names:
        started = time.perf_counter()
        try:
            report = loc.evaluate(cases, host, repos_dir=args.repos, cache_dir=cache, embedder_name=name,
                                  progress=lambda line, name=name: print(f"{name} {line}", file=sys.stderr,
                                                                         flush=True))
        except CceError as exc:
            if not reports and name == "hash":
                raise SystemExit(f"error: {exc}") from None
            skipped.append(f"`{name}` ({exc})")
            print(f"skipped {name}: {exc}", file=sys.stderr)
            continue
        reports.append((report, time.perf_counter() - started))
    if not reports:
        raise SystemExit("error: no embedder could run")
    text = markdown(reports, skipped, lite_ids)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.json_out:
        documents = [json.loads(loc.render_json(r)) for r, _ in reports]
        Path(args.json_out).write_text(json.dumps(documents, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

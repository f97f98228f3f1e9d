#!/usr/bin/env python3
"""Where a fresh index spends its time, stage by stage, beside the parse floor of the same run.

``perf.py`` says how far ``cce index`` is from the parse floor; this script
says why. It answers two questions on one corpus, in one process:

(a) **Chunking CPU by stage.** Every file the walker keeps goes through the
    indexer's per-file step (redact, parse, find the chunk, import and tag
    nodes, build the symbol record, cut the chunks, tokenize) on one core,
    with the thread CPU of each stage added up. The stages are timed by
    wrapping the functions that do them (the wrappers are installed here, for
    measuring only); what no wrapper covers (cutting the chunks, the module
    chunks of unclaimed files, bookkeeping) is the remainder. The best of
    ``--reps`` passes is kept, after one warm-up pass that compiles the
    queries.
(b) **The wall-clock timeline of ``index_directory``** into a fresh store:
    when each phase (walk, read, parallel chunking, vectors, postings, the
    graph, the segment, the manifest) starts and ends, in milliseconds from
    the call. Each run starts without the chunker an earlier call kept, so
    it compiles its queries as a new ``cce index`` process does. The serial
    phases before and after chunking are the part of the pipeline that both
    cores cannot share.

Both are printed against the in-process parse floor of ``perf.py`` (read +
parse every kept file with its pack's grammar), measured in the same run.
Nothing is asserted; see benchmarks/README.md.

Usage::

    python benchmarks/index_stages.py CORPUS [CORPUS ...] [--reps 5] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perf import _parsers_for, parse_once, parse_plan

import cce_core.indexing.indexer as indexer_module
import cce_core.indexing.parallel_chunking as chunking_module
from cce_core.indexing.chunker import Chunker
from cce_core.indexing.walker import walk
from cce_core.plugins.host import PluginHost, default_host
from cce_core.symbols.extract import SymbolExtractor

# (a): stage label -> (object, attribute) whose calls make up that stage. Order is print order.
STAGES: dict[str, tuple[Any, str]] = {
    "redaction (secret scrub)": (chunking_module, "scrub"),
    "tag query walk (symbols.run)": (SymbolExtractor, "run"),
    "symbol records (symbols.encoded)": (SymbolExtractor, "encoded"),
    "imports (host.extract_imports)": (PluginHost, "extract_imports"),
    "tokenize for BM25": (chunking_module, "tokenize_bytes"),
}
PARSE_STAGE = "parse (tree-sitter)"
REST_STAGE = "cutting chunks, module chunks, the rest"

# (b): phase label -> attribute of the indexer module (each is called from index_directory or build_batch).
PHASES: dict[str, str] = {
    "walk (remembered or listed)": "scan_remembered",
    "read files": "read_listed",
    "chunk (parallel)": "chunk_files",
    "vectors": "_embed",
    "BM25 postings": "build_bm25",
    "import graph": "build_edges",
    "write the segment": "save_segment",
    "commit the manifest": "commit_manifest",
    "reopen the store": "load_store",
    "fingerprint": "record_fingerprint",
}


@contextmanager
def timed_calls(target: Any, attribute: str, record: Callable[[float, float], None],
                clock: Callable[[], float]) -> Iterator[None]:
    """Replace ``target.attribute`` by a wrapper that reports each call's (start, end) by ``clock``."""
    original = getattr(target, attribute)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = clock()
        try:
            return original(*args, **kwargs)
        finally:
            record(started, clock())

    setattr(target, attribute, wrapper)
    try:
        yield
    finally:
        setattr(target, attribute, original)


class _TimedParser:
    """A tree-sitter parser whose ``parse`` calls add their thread CPU to ``totals``."""

    def __init__(self, parser: Any, totals: dict[str, float]) -> None:
        self._parser, self._totals = parser, totals

    def parse(self, source: bytes) -> Any:
        started = time.thread_time()
        try:
            return self._parser.parse(source)
        finally:
            self._totals[PARSE_STAGE] += time.thread_time() - started


def chunking_stages(host: PluginHost, items: list[tuple[str, str]], reps: int) -> dict[str, float]:
    """Thread CPU (s) of each stage over all ``items``, best pass of ``reps`` (by total)."""
    chunker = Chunker(host)
    chunker.prepare(path for path, _text in items)
    for path, text in items:  # warm-up: every language's parser and queries exist from here on
        chunking_module._chunk_text(chunker, path, text, "strict")
    best: dict[str, float] | None = None
    for _ in range(reps):
        totals = dict.fromkeys([*STAGES, PARSE_STAGE], 0.0)
        for pack_parser in chunker._parsers.values():
            pack_parser.parser = _TimedParser(pack_parser.parser, totals)  # type: ignore[assignment]
        with _stage_wrappers(totals):
            started = time.thread_time()
            for path, text in items:
                chunking_module._chunk_text(chunker, path, text, "strict")
            total = time.thread_time() - started
        for pack_parser in chunker._parsers.values():
            pack_parser.parser = pack_parser.parser._parser  # type: ignore[attr-defined]
        totals[REST_STAGE] = total - sum(totals.values())
        totals["total"] = total
        if best is None or total < best["total"]:
            best = totals
    assert best is not None
    return best


@contextmanager
def _stage_wrappers(totals: dict[str, float]) -> Iterator[None]:
    with ExitStack() as stack:
        for label, (target, attribute) in STAGES.items():
            def record(started: float, ended: float, label: str = label) -> None:
                totals[label] += ended - started
            stack.enter_context(timed_calls(target, attribute, record, time.thread_time))
        yield


def index_timeline(corpus: Path, host: PluginHost) -> tuple[float, dict[str, tuple[int, float, float, float]]]:
    """(wall seconds, phase -> (calls, first start, last end, summed duration) in s from the call)."""
    calls: dict[str, list[tuple[float, float]]] = {label: [] for label in PHASES}
    chunking_module._idle_chunker = None  # a new process has compiled no query yet
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        for label, attribute in PHASES.items():
            def record(started: float, ended: float, spans: list[tuple[float, float]] = calls[label]) -> None:
                spans.append((started, ended))
            stack.enter_context(timed_calls(indexer_module, attribute, record, time.perf_counter))
        origin = time.perf_counter()
        indexer_module.index_directory(corpus, Path(tmp) / "index.cce", host, host.embedder("hash"))
        wall = time.perf_counter() - origin
    phases = {label: (len(spans), spans[0][0] - origin, spans[-1][1] - origin, sum(e - s for s, e in spans))
              for label, spans in calls.items() if spans}
    return wall, phases


def floor_seconds(corpus: Path, reps: int) -> float:
    """Best in-process read + parse of every kept file (perf.py's parse floor)."""
    plan, _facts = parse_plan(corpus)
    parsers = _parsers_for(plan)
    parse_once(plan, parsers)  # warm the page cache and the parsers
    best = float("inf")
    for _ in range(reps):
        started = time.thread_time()
        parse_once(plan, parsers)
        best = min(best, time.thread_time() - started)
    return best


def measure(corpus: Path, reps: int) -> dict[str, Any]:
    host = default_host()
    walked = walk(str(corpus), protect_secrets=True)
    items = [(wf.path, wf.text) for wf in walked.files]
    floor = floor_seconds(corpus, reps)
    stages = chunking_stages(host, items, reps)
    # The timeline of the best of ``reps`` runs (by wall), after one warm-up run.
    index_timeline(corpus, host)
    wall, phases = min((index_timeline(corpus, host) for _ in range(reps)), key=lambda run: run[0])
    return {"corpus": corpus.name, "files": len(items), "bytes": sum(len(t.encode("utf-8")) for _p, t in items),
            "workers": os.environ.get("CCE_WORKERS", "auto"), "floor_s": floor, "stages_s": stages,
            "index_wall_s": wall,
            "phases": {k: {"calls": n, "start_s": a, "end_s": b, "busy_s": d} for k, (n, a, b, d) in phases.items()}}


def render(result: dict[str, Any]) -> str:
    floor = result["floor_s"]
    lines = [f"index stages — {result['corpus']} ({result['files']} files, {result['bytes'] / 1e6:.2f} MB); "
             f"parse floor (in-process, cpu best) {floor * 1000:.0f} ms", "",
             "(a) chunking on one core, thread cpu            ms    x floor   share"]
    stages = result["stages_s"]
    for label in [PARSE_STAGE, *STAGES, REST_STAGE, "total"]:
        seconds = stages[label]
        share = seconds / stages["total"]
        lines.append(f"    {label:<42s} {seconds * 1000:7.0f}  {seconds / floor:6.2f}x  {share:6.1%}")
    lines += ["", f"(b) index_directory timeline, wall {result['index_wall_s'] * 1000:.0f} ms "
              f"({result['index_wall_s'] / floor:.2f}x the floor; workers {result['workers']})",
              "    phase                              calls   start     end    busy (ms from the call)"]
    for label, phase in result["phases"].items():
        lines.append(f"    {label:<34s} {phase['calls']:5d} {phase['start_s'] * 1000:7.0f} "
                     f"{phase['end_s'] * 1000:7.0f} {phase['busy_s'] * 1000:7.0f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("corpora", nargs="+", type=Path)
    ap.add_argument("--reps", type=int, default=5, help="passes per measure; the best is kept (default 5)")
    ap.add_argument("--json-out", type=Path, help="also write the results as JSON here")
    args = ap.parse_args(argv)
    results = []
    for corpus in args.corpora:
        if not corpus.is_dir():
            print(f"error: {corpus} is not a directory", file=sys.stderr)
            return 2
        results.append(measure(corpus.resolve(), max(1, args.reps)))
        print(render(results[-1]), end="\n\n", flush=True)
    if args.json_out is not None:
        args.json_out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""kill -9 a store writer at random points; the store must answer as before the run or as after it.

Issue #13's store writes segments and a manifest instead of one file, so a
writer killed half-way must still leave a store that a reader opens and
answers from exactly as before the interrupted run, or exactly as after it:
never an error, never a mix of the two. And the next ``cce index`` must
succeed. This script checks that for three writers:

(a) a fresh ``cce index`` (before = no store: the reader's own answer to a
    missing store, recorded the same way);
(b) an incremental ``cce index`` after editing three files, adding two and
    deleting two;
(c) ``cce index DIR --compact``, when ``cce index --help`` lists it.

For each, an uninterrupted run on a restored copy (after one warm-up run)
gives the "after" answers and the run's duration; then ``--rounds`` times: restore the starting store,
start the writer in a session of its own, SIGKILL it at a uniformly random
point of [0, duration] (seeded), kill whatever it left running, ask the fixed
queries through a fresh process (``open_searcher``, what ``cce search`` uses;
``cce search --json`` results), classify the answers, then re-run ``cce index``
and check it succeeds and answers as after.

    python benchmarks/kill9_store.py /work/corpora/jq --rounds 3
    python benchmarks/kill9_store.py CORPUS --rounds 20 --seed 7 --out kill9.json

The corpus is copied into the work directory (edits never touch it). Linux
only (``/proc``). Exits 1 when any round is bad.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Sibling scripts, not a package.
from kill9_orphans import session_members
from perf import child_env, find_cce
from scale_bench import Edits, apply_mixed_edits, build_tree, edit_candidates, pick_queries, run

SCHEMA = "cce.kill9-store/v1"
SCALE_BENCH = Path(__file__).resolve().parent / "scale_bench.py"


def log(msg: str) -> None:
    print(f"kill9_store: {msg}", file=sys.stderr, flush=True)


class Harness:
    """The tree, the store under test, its snapshots and the reader."""

    def __init__(self, work: Path, tree: Path, cce: str, env: dict[str, str], queries: list[str], top_k: int):
        self.work, self.tree, self.cce, self.env = work, tree, cce, env
        self.store_dir = work / "store"
        self.store = self.store_dir / "index.cce"
        self.queries_file = work / "queries.json"
        self.queries_file.write_text(json.dumps(queries), encoding="utf-8")
        self.top_k = top_k

    def index_argv(self, *extra: str) -> list[str]:
        return [self.cce, "index", str(self.tree), "--store", str(self.store), "--no-metrics", *extra]

    def answers(self) -> dict[str, Any]:
        """The fixed queries answered by a fresh process over the store (or the error it met)."""
        argv = [sys.executable, str(SCALE_BENCH), "--answer-child", str(self.store), str(self.queries_file),
                str(self.top_k)]
        proc = subprocess.run(argv, capture_output=True, text=True, env=self.env, check=False)
        try:
            return json.loads(proc.stdout)
        except ValueError:
            return {"ok": False, "error": f"reader exited {proc.returncode}: {proc.stderr.strip()[-300:]}"}

    def snapshot(self, name: str) -> Path:
        dest = self.work / f"snap-{name}"
        shutil.rmtree(dest, ignore_errors=True)
        if self.store_dir.exists():
            shutil.copytree(self.store_dir, dest, symlinks=True)
        else:
            dest.mkdir()
            (dest / ".absent").touch()
        return dest

    def restore(self, snap: Path) -> None:
        shutil.rmtree(self.store_dir, ignore_errors=True)
        if not (snap / ".absent").exists():
            shutil.copytree(snap, self.store_dir, symlinks=True)

    def clean_run(self, argv: list[str]) -> float:
        started = time.monotonic()
        run(argv, self.env)
        return time.monotonic() - started

    def killed_run(self, argv: list[str], delay: float) -> dict[str, Any]:
        """Start ``argv`` in its own session, SIGKILL it after ``delay`` s, then kill anything it left."""
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=self.env, start_new_session=True)
        started = time.monotonic()
        while proc.poll() is None and time.monotonic() - started < delay:
            time.sleep(0.002)
        finished = proc.poll() is not None
        if not finished:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 2.0
        while session_members(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        leftovers = session_members(proc.pid)
        for pid in leftovers:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return {"delay_s": round(delay, 3), "finished_first": finished, "exit": proc.returncode,
                "leftovers_after_2s": len(leftovers)}


def classify(got: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> str:
    if got == after:
        return "as_after"
    if got == before:
        return "as_before"
    return "bad"


def describe(got: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> str:
    if not got.get("ok"):
        return got.get("error", "no answer")
    for ref_name, ref in (("before", before), ("after", after)):
        if ref.get("ok"):
            for n, (mine, theirs) in enumerate(zip(got["answers"], ref["answers"], strict=False)):
                if mine != theirs:
                    return f"query {n} differs from {ref_name}"
    return "answers match neither reference"


def scenario(h: Harness, name: str, start: Path, argv: list[str], rounds: int, rng: random.Random,
             before: dict[str, Any]) -> dict[str, Any]:
    """One writer: a clean reference run, then ``rounds`` killed runs from the same starting store."""
    h.restore(start)
    h.clean_run(argv)  # warm-up (bytecode, page cache), so the timed run is the one the kills sample
    h.restore(start)
    duration = h.clean_run(argv)
    after = h.answers()
    if not after.get("ok"):
        raise SystemExit(f"kill9_store: {name}: the uninterrupted run left a store that does not answer: "
                         f"{after.get('error')}")
    end_snap = h.snapshot(f"{name}-after")
    counts = {"as_before": 0, "as_after": 0, "bad": 0}
    details = []
    for n in range(rounds):
        h.restore(start)
        trial = h.killed_run(argv, rng.uniform(0.0, duration))
        got = h.answers()
        verdict = classify(got, before, after)
        if verdict == "bad":
            trial["problem"] = describe(got, before, after)
        rerun = run(h.index_argv(), h.env, check=False)
        trial["rerun_exit"] = rerun.returncode
        if rerun.returncode != 0:
            verdict = "bad"
            trial["problem"] = f"re-run of cce index failed: {rerun.stderr.strip()[-300:]}"
        elif h.answers() not in ([before, after] if name == "compaction" else [after]):
            # Finishing a fresh or incremental job must give the uninterrupted answers; a plain re-run after a
            # killed compaction compacts nothing, so either state is right there.
            verdict = "bad"
            trial["problem"] = "the re-run answers differ from the uninterrupted run's"
        trial["verdict"] = verdict
        counts[verdict] += 1
        details.append(trial)
        log(f"{name} round {n + 1}/{rounds}: kill at {trial['delay_s']:.2f} s of {duration:.2f} s"
            f"{' (finished first)' if trial['finished_first'] else ''}: {verdict}"
            f"{' — ' + trial['problem'] if 'problem' in trial else ''}")
    h.restore(end_snap)
    return {"duration_s": round(duration, 3), "before_equals_after": before == after, **counts, "rounds": details}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("corpus", type=Path, help="checkout to copy and index (never written to)")
    ap.add_argument("--rounds", type=int, default=20, help="kills per writer (default 20)")
    ap.add_argument("--seed", type=int, default=13, help="kill points and edited files (default 13)")
    ap.add_argument("--queries", type=int, default=20, help="how many fixed queries (default 20)")
    ap.add_argument("--top-k", type=int, default=10, help="results per query (default 10, as cce search)")
    ap.add_argument("--work", type=Path, help="work directory (default: a temporary one, removed afterwards)")
    ap.add_argument("--cce", help="cce executable (default: the one beside this Python)")
    ap.add_argument("--out", help="write the JSON report here")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        ap.error(f"not a directory: {args.corpus}")
    if args.rounds < 1 or args.queries < 1:
        ap.error("--rounds and --queries must be at least 1")
    corpus = args.corpus.resolve()
    own_work = args.work is None
    work = Path(tempfile.mkdtemp(prefix="cce-kill9-store-")) if own_work else args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        return _main(args, corpus, work)
    finally:
        if own_work:
            shutil.rmtree(work, ignore_errors=True)


def _main(args: argparse.Namespace, corpus: Path, work: Path) -> int:
    cce = find_cce(args.cce)
    env = child_env("cache", work)
    compact = "--compact" in run([cce, "index", "--help"], env).stdout
    base = work / "tree-copy"
    build_tree(base, [(corpus.name, corpus)])
    tree = base / "tree"
    edits = Edits(tree, base / "undo")
    edits.revert()
    source, queries = pick_queries([], corpus.name, args.queries)
    h = Harness(work, tree, cce, env, queries, args.top_k)
    rng = random.Random(args.seed)
    run([cce, "--version"], env)  # bytecode warm-up
    report: dict[str, Any] = {"schema": SCHEMA, "corpus": str(corpus), "cce": cce, "seed": args.seed,
                              "queries": {"count": len(queries), "source": source}, "scenarios": {}}
    try:
        # (a) fresh index: the starting state is no store at all.
        shutil.rmtree(h.store_dir, ignore_errors=True)
        empty = h.snapshot("empty")
        before = h.answers()
        report["scenarios"]["fresh"] = scenario(h, "fresh", empty, h.index_argv(), args.rounds, rng, before)
        # (b) incremental: from the fresh store (tree state A) to the edited tree (state B).
        state_a = h.snapshot("A")
        before = h.answers()
        changed = apply_mixed_edits(edits, edit_candidates(tree, rng), 0)
        result = scenario(h, "incremental", state_a, h.index_argv(), args.rounds, rng, before)
        report["scenarios"]["incremental"] = {**result, "changes": changed}
        # (c) compaction of the store the incremental run produced.
        if compact:
            state_b = h.snapshot("B")
            before = h.answers()
            report["scenarios"]["compaction"] = scenario(h, "compaction", state_b, h.index_argv("--compact"),
                                                         args.rounds, rng, before)
        else:
            report["scenarios"]["compaction"] = "not available in this build"
            log("compaction: not available in this build")
    finally:
        edits.revert()
    bad = 0
    print(f"kill -9 of store writers on {corpus} ({len(queries)} queries, seed {args.seed}):")
    print(f"{'writer':<12} {'rounds':>6} {'as before':>9} {'as after':>8} {'bad':>4}  uninterrupted run")
    for name, res in report["scenarios"].items():
        if isinstance(res, str):
            print(f"{name:<12} {res}")
            continue
        bad += res["bad"]
        note = " (before = after)" if res["before_equals_after"] else ""
        print(f"{name:<12} {len(res['rounds']):>6} {res['as_before']:>9} {res['as_after']:>8} {res['bad']:>4}  "
              f"{res['duration_s']:.2f} s{note}")
    report["bad"] = bad
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print("PASS: every killed run left a store answering as before or as after" if not bad else
          f"FAIL: {bad} round(s) left a store that errored, mixed states, or could not be re-indexed")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""kill -9 ``cce index`` at random moments and count the processes it leaves behind.

Issue #15 found forked chunking workers outliving a killed parent by seconds.
Each trial starts ``cce index CORPUS --store <temp>`` in a session of its own
(so every descendant is findable by session id in ``/proc``), waits a random
time, SIGKILLs the parent alone, waits one second and lists what is still
alive in that session. Leftovers are reported, then killed.

    python benchmarks/kill9_orphans.py /path/to/rails --trials 20
    python benchmarks/kill9_orphans.py CORPUS --trials 20 --workers 4 --after-workers 3 --json

By default the kill comes at a uniformly random point of a warm full index (timed
once before the trials); ``--after-workers S`` instead waits for the first
worker and kills within the next ``S`` seconds, so every trial hits them busy.

The store goes to a temporary directory, never into the corpus. Linux only
(``/proc``). tests/test_orphans.py runs the same trial on a generated corpus.
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
from dataclasses import asdict, dataclass
from pathlib import Path


def session_members(sid: int) -> list[int]:
    """Live (non-zombie) processes whose session id is ``sid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(int(name))
    return found


@dataclass
class Trial:
    delay: float  # seconds after start at which the parent was killed
    workers_at_kill: int  # processes of the session besides the parent, just before the kill
    finished_first: bool  # the index completed before the kill came
    leftovers: list[int]  # processes still alive 1 s after the kill


def cce_command() -> str:
    beside = Path(sys.executable).with_name("cce")
    return str(beside) if beside.exists() else (shutil.which("cce") or "cce")


def run_trial(corpus: Path, store: Path, delay: float, *, workers: int | None = None, wait_for_workers: bool = False,
              cce: str | None = None, settle: float = 1.0) -> Trial:
    """One index, SIGKILLed after ``delay`` s (counted from the first worker when ``wait_for_workers``)."""
    env = dict(os.environ)
    if workers:
        env["CCE_WORKERS"] = str(workers)
    if store.exists():
        store.unlink()
    proc = subprocess.Popen([cce or cce_command(), "index", str(corpus), "--store", str(store), "--no-metrics"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            start_new_session=True, env=env)
    started = time.monotonic()
    if wait_for_workers:
        while proc.poll() is None and len(session_members(proc.pid)) < 2 and time.monotonic() - started < 120:
            time.sleep(0.005)
        started = time.monotonic()
    while proc.poll() is None and time.monotonic() - started < delay:
        time.sleep(0.002)
    finished = proc.poll() is not None
    present = [p for p in session_members(proc.pid) if p != proc.pid]
    if not finished:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(settle)
    leftovers = session_members(proc.pid)
    for pid in leftovers:  # never leave them running, whatever the verdict
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return Trial(round(delay, 3), len(present), finished, leftovers)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--workers", type=int, default=None, help="CCE_WORKERS for the runs (default: automatic)")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--after-workers", type=float, default=None, metavar="S",
                        help="kill at a random moment within S seconds of the first worker appearing")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="cce-kill9-") as tmp:
        store = Path(tmp) / "index.cce"
        env = {**os.environ, **({"CCE_WORKERS": str(args.workers)} if args.workers else {})}
        for _warm in range(2):  # the second, warm run is the one timed
            if store.exists():
                store.unlink()
            began = time.monotonic()
            full = subprocess.run([cce_command(), "index", str(args.corpus), "--store", str(store), "--no-metrics"],
                                  capture_output=True, text=True, env=env)
            duration = time.monotonic() - began
            if full.returncode != 0:
                print(full.stderr, file=sys.stderr)
                return 1
        if args.after_workers is not None:
            trials = [run_trial(args.corpus, store, rng.uniform(0, args.after_workers), workers=args.workers,
                                wait_for_workers=True) for _ in range(args.trials)]
        else:
            trials = [run_trial(args.corpus, store, rng.uniform(0.02, 0.98) * duration, workers=args.workers)
                      for _ in range(args.trials)]
    summary = {
        "corpus": str(args.corpus), "full_index_s": round(duration, 2), "trials": len(trials),
        "killed_with_workers_running": sum(t.workers_at_kill > 0 and not t.finished_first for t in trials),
        "trials_with_leftovers": sum(bool(t.leftovers) for t in trials),
        "details": [asdict(t) for t in trials],
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"corpus {summary['corpus']}: full index {summary['full_index_s']} s")
        for n, t in enumerate(trials, 1):
            state = "finished before the kill" if t.finished_first else f"{t.workers_at_kill} worker(s) at kill"
            print(f"  trial {n:>2}: kill at {t.delay:6.2f} s, {state}, leftovers after 1 s: {len(t.leftovers)}")
        print(f"{summary['trials']} trials, {summary['killed_with_workers_running']} with workers running at the kill, "
              f"{summary['trials_with_leftovers']} with a process left after 1 s")
    return 1 if summary["trials_with_leftovers"] else 0


if __name__ == "__main__":
    raise SystemExit(main())

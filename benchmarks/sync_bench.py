#!/usr/bin/env python3
"""Is pulling a prebuilt index faster than building one? `cce sync push`/`pull` against a local `cce index`.

On one corpus (a git checkout), in one run, interleaved round by round so a
slow spell hits every measure alike:

* `cce index` of a fresh clone (store deleted before each run): the cost a
  developer pays without Sync;
* `cce sync push` from the source clone (a new commit per round, so every
  push builds and publishes a new artifact): what CI pays;
* `cce sync pull --latest --force` into a consumer directory with no source
  checkout: what everyone else pays instead of indexing;

plus the artifact's size next to the store's. Wall and CPU time are both
reported: `cce index` chunks on both cores, a pull works on one. The remote is a bare git
repository on this machine (`file://`), so the figures leave out the network;
over a real remote, pull adds the transfer of the artifact. Each measure is a
fresh `cce` process, as a user runs it; medians of the rounds are reported,
and the ratios pull / index and push / index.

Usage::

    python benchmarks/sync_bench.py CORPUS [--rounds 5] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CPU: dict[str, list[float]] = {}


def run(argv: list[str], env: dict[str, str], cwd: Path, *, label: str | None = None) -> float:
    """Wall seconds of one command; its CPU seconds (user + system, children included) go to CPU[label]."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed in {cwd}:\n{proc.stdout}\n{proc.stderr}")
    if label is not None:
        CPU.setdefault(label, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return elapsed


def git(env: dict[str, str], cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cce", default=str(Path(sys.executable).with_name("cce")))
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="cce-sync-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users have bytecode caching
    env.update({"CCE_HOME": str(work / "ccehome"), "PYTHONPYCACHEPREFIX": str(work / "pycache"),
                "GIT_CONFIG_GLOBAL": str(work / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"})
    (work / "gitconfig").write_text("[user]\n\tname = bench\n\temail = bench@localhost\n", encoding="utf-8")
    cce = args.cce
    try:
        subprocess.run(["git", "init", "--bare", "-q", "-b", "main", str(work / "cache.git")], env=env, check=True)
        url = f"file://{work / 'cache.git'}"
        src, consumer, local = work / "src", work / "consumer", work / "local"
        git(env, work, "clone", "-q", str(args.corpus.resolve()), str(src))
        git(env, src, "checkout", "-q", "-B", "main")
        git(env, work, "clone", "-q", str(src), str(local))
        consumer.mkdir()
        run([cce, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "bench"], env, src)
        run([cce, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "bench"], env, consumer)
        # Warm-up: page cache, .pyc files, the plugin entry-point cache, the working clones.
        run([cce, "index", ".", "--no-metrics"], env, local)
        run([cce, "sync", "push"], env, src)
        run([cce, "sync", "pull", "--latest", "--force"], env, consumer)

        samples: dict[str, list[float]] = {"index": [], "push": [], "pull": []}
        for round_ in range(args.rounds):
            (local / ".cce" / "index.cce").unlink()
            samples["index"].append(run([cce, "index", ".", "--no-metrics"], env, local, label="index"))
            # A new commit, so the push builds and publishes a new artifact and the pull installs it.
            (src / ".cce-bench-round").write_text(f"{round_}\n", encoding="utf-8")
            git(env, src, "add", "-A")
            git(env, src, "commit", "-q", "-m", f"bench round {round_}")
            samples["push"].append(run([cce, "sync", "push"], env, src, label="push"))
            samples["pull"].append(run([cce, "sync", "pull", "--latest", "--force"], env, consumer, label="pull"))

        sha = git(env, src, "rev-parse", "HEAD")
        check = work / "check"
        git(env, work, "clone", "-q", url, str(check))
        artifact = check / "hash" / "2.3" / "bench" / f"{sha}.cce"
        med = {k: statistics.median(v) for k, v in samples.items()}
        report = {
            "schema": "cce.sync-bench/v1",
            "corpus": args.corpus.name,
            "commit": git(env, args.corpus.resolve(), "rev-parse", "--short", "HEAD"),
            "rounds": args.rounds,
            "median_s": med,
            "median_cpu_s": {k: statistics.median(v) for k, v in CPU.items()},
            "artifact_bytes": artifact.stat().st_size,
            "store_bytes": (local / ".cce" / "index.cce").stat().st_size,
            "pulled_store_bytes": (consumer / ".cce" / "index.cce").stat().st_size,
            "ratios": {"pull_vs_index": med["pull"] / med["index"], "push_vs_index": med["push"] / med["index"],
                       "pull_vs_index_cpu": statistics.median(CPU["pull"]) / statistics.median(CPU["index"])},
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{report['corpus']}@{report['commit']} · {args.rounds} rounds, medians (fresh processes, file:// remote)")
    cpu = report["median_cpu_s"]
    for key in ("index", "push", "pull"):
        print(f"  {key:<6} {med[key]:7.3f} s wall · {cpu[key]:7.3f} s cpu")
    print(f"  pull / index {report['ratios']['pull_vs_index']:.2f}× wall, "
          f"{report['ratios']['pull_vs_index_cpu']:.2f}× cpu   push / index {report['ratios']['push_vs_index']:.2f}×")
    print(f"  artifact {report['artifact_bytes']:,} bytes · local store {report['store_bytes']:,} · pulled store "
          f"{report['pulled_store_bytes']:,}")
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

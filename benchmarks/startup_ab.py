#!/usr/bin/env python3
"""Start-up of two builds of ``cce`` side by side: does a change make ``cce --version`` or a fresh search slower?

A structural change (moving modules, a new public API) must not cost start-up
time, and start-up times drift on a shared VM by more than the effect being
looked for. So both builds are measured in the same run, interleaved command by
command, and compared as ratios: head / base for each command, and
search / --version within each build.

"base" is a git revision of this repository, checked out into a worktree and
installed with its own ``requirements.txt`` into a venv of its own (pip's cache
makes the second run fast); "head" is the ``cce`` beside ``sys.executable``
(or ``--head-cce``). Bytecode caching is ON for both, as users have it: the
warm-up runs write the ``.pyc`` files (under a private ``PYTHONPYCACHEPREFIX``)
before anything is timed.

Usage::

    python benchmarks/startup_ab.py CORPUS --base REV [--reps 41] [--query Q] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child_env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    # Users have bytecode caching; keep the .pyc files in the run's own directory, not the checkout.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    return env


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, argv))} failed:\n{proc.stdout}\n{proc.stderr}")
    return elapsed


def build_base(rev: str, work: Path) -> Path:
    """A venv with ``rev`` of this repository installed from its own requirements.txt; its ``cce``."""
    tree = work / "base-tree"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), rev], check=True,
                   capture_output=True)
    venv = work / "base-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-r", "requirements.txt"]
    proc = subprocess.run(pip, cwd=tree, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"installing {rev} failed:\n{proc.stdout}\n{proc.stderr}")
    return venv / "bin" / "cce"


def measure(cce: Path, store: Path, query: str, env: dict[str, str]) -> dict[str, float]:
    version = run([str(cce), "--version"], env)
    search = run([str(cce), "search", query, "--store", str(store), "--no-metrics", "--top-k", "10"], env)
    return {"version": version, "search": search}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--base", required=True, help="git revision to compare against")
    parser.add_argument("--head-cce", type=Path, default=Path(sys.executable).with_name("cce"))
    parser.add_argument("--reps", type=int, default=41)
    parser.add_argument("--query", default="parse the input and report an error")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="cce-ab-"))
    env = child_env(work)
    try:
        builds = {"base": build_base(args.base, work), "head": args.head_cce}
        stores = {}
        for name, cce in builds.items():
            stores[name] = work / f"{name}.cce"
            run([str(cce), "index", str(args.corpus), "--store", str(stores[name]), "--no-metrics"], env)
            for _ in range(3):  # warm-up: page cache, .pyc files, the plugin entry-point cache
                measure(cce, stores[name], args.query, env)
        samples: dict[str, dict[str, list[float]]] = {n: {"version": [], "search": []} for n in builds}
        for rep in range(args.reps):
            # Alternate which build goes first, so neither always runs right after the other.
            order = list(builds) if rep % 2 == 0 else list(reversed(builds))
            for name in order:
                for key, value in measure(builds[name], stores[name], args.query, env).items():
                    samples[name][key].append(value)
        med = {n: {k: statistics.median(v) for k, v in s.items()} for n, s in samples.items()}
        report = {
            "schema": "cce.startup-ab/v1",
            "corpus": str(args.corpus),
            "base": args.base,
            "head": subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                   text=True).stdout.strip(),
            "reps": args.reps,
            "median_s": med,
            "ratios": {
                "version_head_vs_base": med["head"]["version"] / med["base"]["version"],
                "search_head_vs_base": med["head"]["search"] / med["base"]["search"],
                "search_vs_version_base": med["base"]["search"] / med["base"]["version"],
                "search_vs_version_head": med["head"]["search"] / med["head"]["version"],
            },
        }
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(work / "base-tree")],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print(f"corpus {report['corpus']} · base {report['base']} · head {report['head']} · {args.reps} interleaved reps")
    for name in ("base", "head"):
        m = med[name]
        print(f"  {name:<5} cce --version {m['version'] * 1000:7.1f} ms   cce search {m['search'] * 1000:7.1f} ms")
    for key, value in report["ratios"].items():
        print(f"  {key:<24} {value:.3f}")
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

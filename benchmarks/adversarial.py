#!/usr/bin/env python3
"""The long adversarial run of issue #23: hostile MCP input, racing writers, secrets by context.

The fast suite (tests/test_adversarial_mcp.py, tests/test_store_lock.py,
tests/test_mcp_transport.py, tests/test_secret_profiles.py) pins each rule
with a few hundred seeded cases. This script runs the same generators much
longer and prints, per group, how many cases it tried, how many failed and
the worst case it met. Exit status 1 when anything failed. Everything runs
locally (pipes and files; no network).

Groups:

``mcp``
    ``--mcp N`` (default 10,000) seeded hostile lines fed to one real ``cce mcp``
    (lone surrogates in methods, ids, params and tool arguments; cancels with
    ids of every shape; unserved methods; random tool arguments; byte-level
    mutations), each followed by a ``ping``: every line must get exactly the
    answer the rules give, never ``internal error`` or code 0; the process
    must exit 0 at end of input with a clean stderr. Worst case: the slowest
    line (until its ping came back).
``sigint``
    ``--sigint N`` servers, each sent a seeded number of hostile lines and a
    search, then SIGINT: each must end within 10 s.
``writers``
    the concurrency matrix: every ordered pair of writers among ``cce index``,
    ``cce index --compact`` and a sync-pull install, with and without an edit
    before, ``--rounds`` times, on one store; each pair must exit 0, and the
    store must pass ``cce doctor`` and answer ``cce search``. Plus
    ``cce knowledge index`` pairs on one knowledge store.
``kill9``
    ``--kills N`` writers killed with ``kill -9`` at a seeded moment; the next
    ``cce index`` (``CCE_LOCK_TIMEOUT=30``) must succeed without waiting for a
    lock, and the store must pass ``cce doctor``.
``secrets``
    ``--secrets N`` seeded issue-#23 contexts (YAML blocks, Dockerfile ``ENV``,
    XML, ``curl -u``, ``mysql -p``, ``sqlplus``, netrc, pgpass, auth pairs, long
    options) whose value must not survive the strict profile, idempotently;
    and the same contexts with placeholders, which must survive untouched.

Usage::

    python benchmarks/adversarial.py [--mcp 10000] [--rounds 3] [--kills 20] [--secrets 5000] [--seed 23] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_adversarial_mcp as cases  # the fast suite's generators, run longer here
from test_mcp import index, write_tiny_repo
from test_store_lock import write_corpus


@dataclass
class Group:
    tried: int = 0
    failed: int = 0
    worst: tuple[float, str] = (0.0, "")
    examples: list[str] = field(default_factory=list)

    def record(self, ok: bool, what: str, cost: float = 0.0) -> None:
        self.tried += 1
        if not ok:
            self.failed += 1
            if len(self.examples) < 5:
                self.examples.append(what[:300])
        if cost > self.worst[0]:
            self.worst = (cost, what[:160])


def cce() -> str:
    beside = Path(sys.executable).with_name("cce")
    return str(beside) if beside.exists() else (shutil.which("cce") or "cce")


def run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    merged = {k: v for k, v in os.environ.items() if k != "CCE_DEBUG"}
    merged.update(env or {})
    return subprocess.run([cce(), *map(str, args)], capture_output=True, text=True, env=merged, timeout=600)


# --------------------------------------------------------------------------- groups


def mcp_group(work: Path, count: int, seed: int) -> Group:
    group = Group()
    root = write_tiny_repo(work / "mcp" / "tiny")
    index(root)

    def note(n: int, raw: bytes, problem: str | None, seconds: float) -> None:
        group.record(problem is None, f"#{n} {raw[:100]!r}: {problem}", seconds)

    try:
        code = cases.run_mcp_cases(root, count, seed, note)
        group.record(code == 0, f"exit status {code} at end of input")
    except AssertionError as exc:
        group.record(False, f"server: {exc}")
    return group


def sigint_group(work: Path, count: int, seed: int) -> Group:
    group = Group()
    root = write_tiny_repo(work / "sigint" / "tiny")
    index(root)
    rng = random.Random(seed)
    for trial in range(count):
        session = cases.Session(root)
        try:
            for n in range(rng.randrange(0, 30)):
                session.answers_to(cases.hostile_line(rng, n))
            session.server.send(cases.line({"jsonrpc": "2.0", "id": "busy", "method": "tools/call",
                                            "params": {"name": "context_search", "arguments": {"query": "pay"}}}))
            time.sleep(rng.random() * 0.05)
            started = time.monotonic()
            session.server.proc.send_signal(signal.SIGINT)
            try:
                code = session.server.proc.wait(timeout=10)
                group.record(code in (-signal.SIGINT, 130), f"trial {trial}: exit {code}", time.monotonic() - started)
            except subprocess.TimeoutExpired:
                group.record(False, f"trial {trial}: alive 10 s after SIGINT", 10.0)
        finally:
            if session.server.proc.poll() is None:
                session.server.proc.kill()
                session.server.proc.wait(timeout=10)
    return group


def _store_ok(root: Path) -> tuple[bool, str]:
    doctor = run("doctor", "--dir", root)
    if doctor.returncode != 0:
        return False, "doctor: " + doctor.stdout[-300:]
    search = run("search", "handler payload", "--dir", root, "--no-metrics")
    return search.returncode == 0, "" if search.returncode == 0 else "search: " + search.stderr[-200:]


def writers_group(work: Path, rounds: int, seed: int) -> Group:
    group = Group()
    root = write_corpus(work / "writers" / "repo", files=40)
    artifact = cases.make_artifact(work / "writers")
    if run("index", root, "--no-metrics").returncode != 0:
        raise SystemExit("the first cce index failed")
    kinds = ["index", "compact", "pull"]
    rng = random.Random(seed)
    n = 0
    for _round in range(rounds):
        for first in kinds:
            for second in kinds:
                for edit in (False, True):
                    n += 1
                    if edit:
                        target = root / "pkg1" / f"mod_{rng.randrange(40) // 4 * 4 + 1:03d}.py"
                        target.write_text(f"def edited_{n}(x):\n    return x - {n}\n", encoding="utf-8")
                    started = time.monotonic()
                    done = cases.race_pair(root, artifact, first, second)
                    seconds = time.monotonic() - started
                    bad = [d.stderr.strip()[-200:] for d in done if d.returncode != 0]
                    ok, why = _store_ok(root)
                    group.record(not bad and ok, f"{first} + {second}{' after an edit' if edit else ''} {bad or why}"
                                 .rstrip(), seconds)
    feed = work / "writers" / "feed.jsonl"
    feed.write_text("".join(json.dumps({"schema": "cce.knowledge/v1", "id": f"r{i}", "source": "notes",
                                        "title": f"Runbook {i}", "body": f"Restart service {i} when it hangs."}) + "\n"
                            for i in range(200)), encoding="utf-8")
    for trial in range(rounds * 2):
        env = {k: v for k, v in os.environ.items() if k != "CCE_DEBUG"}
        started = time.monotonic()
        procs = [subprocess.Popen([cce(), "knowledge", "index", str(feed), "--dir", str(root)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=300) for p in procs]
        bad = [err[-200:] for p, (_out, err) in zip(procs, outs, strict=True) if p.returncode != 0]
        ok, why = _store_ok(root)
        group.record(not bad and ok, f"knowledge index + knowledge index #{trial} {bad or why}".rstrip(),
                     time.monotonic() - started)
    return group


def kill9_group(work: Path, count: int, seed: int) -> Group:
    group = Group()
    root = write_corpus(work / "kill9" / "repo", files=60)
    rng = random.Random(seed)
    env = {k: v for k, v in os.environ.items() if k != "CCE_DEBUG"}
    for trial in range(count):
        if rng.random() < 0.5:
            shutil.rmtree(root / ".cce", ignore_errors=True)
        else:
            (root / "pkg3" / f"k_{trial}.py").write_text(f"def k_{trial}():\n    return {trial}\n", encoding="utf-8")
        args = [cce(), "index", str(root), "--no-metrics", *(["--compact"] if rng.random() < 0.3 else [])]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        killed_at = rng.random() * 1.5
        time.sleep(killed_at)
        proc.kill()
        proc.wait(timeout=30)
        started = time.monotonic()
        after = run("index", root, "--no-metrics", env={"CCE_LOCK_TIMEOUT": "30"})
        seconds = time.monotonic() - started
        ok, why = _store_ok(root)
        waited = "waiting for another" in after.stderr
        group.record(after.returncode == 0 and not waited and ok,
                     f"kill -9 at {killed_at:.2f} s, then cce index: exit {after.returncode}"
                     f"{' (waited for a lock)' if waited else ''} {after.stderr[-200:]} {why}".rstrip(), seconds)
    return group


def secrets_group(count: int, seed: int) -> Group:
    from cce_core.indexing.secret_scanner import redact_strict

    group = Group()
    for name, text, value in cases.secret_cases(seed, count):
        started = time.perf_counter()
        out = redact_strict(text)
        seconds = time.perf_counter() - started
        ok = value not in out and value[-8:] not in out and redact_strict(out) == out
        group.record(ok, f"{name}: {text!r}", seconds)
    rng = random.Random(seed)
    for placeholder in ("${DB_PASSWORD}", "$SECRET", "{{ token }}", "changeme", "your-password-here", "%PASS%",
                        "${{ secrets.DB }}", "********"):
        for name, render in cases.CONTEXTS:
            text = render(rng, rng.choice(cases.KEYS), placeholder)
            group.record(redact_strict(text) == text, f"placeholder {placeholder} in {name}: {text!r}")
    return group


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mcp", type=int, default=10_000, help="hostile MCP lines (default 10,000)")
    parser.add_argument("--sigint", type=int, default=20, help="servers interrupted with SIGINT (default 20)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the writer matrix (default 3)")
    parser.add_argument("--kills", type=int, default=20, help="writers killed with kill -9 (default 20)")
    parser.add_argument("--secrets", type=int, default=5_000, help="seeded secret contexts (default 5,000)")
    parser.add_argument("--seed", type=int, default=cases.SEED)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args(argv)

    started = time.monotonic()
    groups: dict[str, Group] = {}
    with tempfile.TemporaryDirectory(prefix="cce-adversarial-") as tmp:
        work = Path(tmp)
        groups["mcp"] = mcp_group(work, args.mcp, args.seed)
        groups["sigint"] = sigint_group(work, args.sigint, args.seed)
        groups["writers"] = writers_group(work, args.rounds, args.seed)
        groups["kill9"] = kill9_group(work, args.kills, args.seed)
        groups["secrets"] = secrets_group(args.secrets, args.seed)
    elapsed = time.monotonic() - started
    failed = sum(g.failed for g in groups.values())
    if args.json:
        print(json.dumps({"seed": args.seed, "seconds": round(elapsed, 1),
                          "groups": {k: {"tried": g.tried, "failed": g.failed, "worst_seconds": round(g.worst[0], 4),
                                         "worst_case": g.worst[1], "failures": g.examples}
                                     for k, g in groups.items()}}, indent=2))
    else:
        print(f"{'group':<9} {'tried':>7} {'failed':>7} {'worst (s)':>10}  worst case")
        for name, g in groups.items():
            print(f"{name:<9} {g.tried:>7} {g.failed:>7} {g.worst[0]:>10.3f}  {g.worst[1][:90]}")
            for example in g.examples:
                print(f"          FAILED {example}")
        total = sum(g.tried for g in groups.values())
        print(f"{'total':<9} {total:>7} {failed:>7}   ({elapsed:.0f} s, seed {args.seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

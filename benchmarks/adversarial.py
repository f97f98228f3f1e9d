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
``remote``
    the malicious-remote catalogue: forged Sync artifacts (with valid
    checksums, as any writer of the cache can make them) pushed to a local
    bare remote, each pulled by a consumer that already has a store: another
    repo id or sha, another format, embedder or ``pack_set_id``, NaN/±Inf
    vectors, ``../``, absolute, drive, ``.git`` and NUL paths, duplicate chunk
    ids, control characters, graph edges out of the tree, a ``sub/<sha>`` and
    a 1 MB pointer, 8 MB and 256 MB chunk bodies, an 80 MB vector, integers
    past the format's limits, garbage and truncated blobs, a 100,000-digit
    ``--commit``. Each pull must exit 1 with one ``error:`` line on stderr,
    no traceback, a child ``ru_maxrss`` under ``--remote-rss-mb``, and leave
    the consumer's ``.cce/`` byte for byte as it was. A valid artifact pulled
    into another consumer is the control (exit 0). Worst case: the slowest
    refusal (its peak memory beside it).
``secrets``
    ``--secrets N`` seeded issue-#23 contexts (YAML blocks, Dockerfile ``ENV``,
    XML, ``curl -u``, ``mysql -p``, ``sqlplus``, netrc, pgpass, auth pairs, long
    options) whose value must not survive the strict profile, idempotently;
    and the same contexts with placeholders, which must survive untouched.

Usage::

    python benchmarks/adversarial.py [--mcp 10000] [--rounds 3] [--kills 20] [--secrets 5000] [--seed 23] [--json]
    python benchmarks/adversarial.py --groups remote      # one group only
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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
    notes: list[str] = field(default_factory=list)  # facts worth printing that are not failures

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


# --------------------------------------------------------------------------- the malicious-remote catalogue

REMOTE_REPO = "example.com__acme__demo"
REMOTE_DIR = f"hash/2.3/{REMOTE_REPO}"


def _digest_tree(root: Path) -> str:
    """Every file of ``root`` by path and bytes (the metrics log and lock files aside: reads may touch them)."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.name == "metrics.jsonl" or path.name.endswith(".lock"):
            continue
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


# Starts the pull and reports its peak memory. A child's ru_maxrss starts at its parent's resident size at the
# fork, and this driver holds every forged artifact once, so the pull is started from this small launcher.
_LAUNCHER = ("import resource, subprocess, sys\n"
             "done = subprocess.run(sys.argv[2:])\n"
             "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
             "sys.exit(done.returncode if done.returncode >= 0 else 128 - done.returncode)\n")


def _pull_measured(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 600
                   ) -> tuple[int, str, str, int, float]:
    """``cce sync pull ARGS``: (exit, stdout, stderr, the pull's ru_maxrss in KiB, seconds)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(mode="r", suffix=".rss") as rss:
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", _LAUNCHER, rss.name, cce(), "sync", "pull", *args], cwd=cwd,
                              env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, timeout=timeout)
        seconds = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        peak = int(rss.read() or 0)
        return (proc.returncode, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                peak, seconds)


# (name, builder of the artifact filed under the case's own sha — or "real-under-other" — , pointer bytes for
# refs/main, pull arguments); None where the case has no such part.
Case = tuple[str, Callable[[str], bytes] | str | None, bytes | None, list[str] | None]


def _forged_cases() -> tuple[list[Case], Callable[[str], bytes]]:
    """The catalogue, and the builder of a valid artifact for a sha (the control)."""
    from test_sync_hostile import _store, forge, parts, vector

    from cce_core.plugins.host import default_host
    from cce_core.sync import artifact_limits as limits
    from cce_core.sync.artifact import export_artifact

    files = {"app.py": "import util\n\ndef main():\n    return util.run()\n", "util.py": "def run():\n    return 1\n"}
    embedder = default_host().embedder("hash")
    store = _store(files, embedder, {"app.py": ["util"]})

    def valid(sha: str) -> bytes:
        return export_artifact(store, REMOTE_REPO, sha, [".py"])

    cases: list[Case] = []

    def add(name: str, build: Callable[[str], bytes]) -> None:
        cases.append((name, build, None, None))

    def manifest_field(key: str, value) -> None:
        def build(sha: str) -> bytes:
            m, c, g = parts(valid(sha))
            return forge({**m, key: value}, c, g)
        add(f"manifest {key} = {str(value)[:40]!r}", build)

    manifest_field("repo_id", "evil__repo")
    manifest_field("sha", "f" * 40)
    manifest_field("cce_version", "9.9")
    manifest_field("embedder", "ollama")
    # Malformed sets, and a well-formed set without the python pack: this installation would cut the artifact's
    # .py files differently, so the pull must refuse it without --force. (A set that differs only in packs for
    # languages the tree has no file of is accepted by design, with a `packs : note` line: docs/sync.md.)
    for packs in ("python,c", "c,c", "C++", "c,javascript,ruby,rust,typescript"):
        manifest_field("pack_set_id", packs)

    def chunk_edit(name: str, edit) -> None:
        def build(sha: str) -> bytes:
            m, c, g = parts(valid(sha))
            m, c, g = edit(m, c, g)
            return forge(m, c, g)
        add(name, build)

    def bad_component(value: float):
        def edit(m, c, g):
            values = list(struct.unpack("<256d", base64.b64decode(c[0]["embedding"])))
            values[7] = value
            c[0]["embedding"] = vector(values)
            return m, c, g
        return edit

    for bad in (math.nan, math.inf, -math.inf):
        chunk_edit(f"vector component {bad}", bad_component(bad))

    def moved(path: str):
        def edit(m, c, g):
            tokens = dict(m["file_tokens"])
            tokens[path] = tokens.pop("util.py")
            c[1]["file_path"] = path
            return {**m, "file_tokens": tokens}, c, {**g, "edges": []}
        return edit

    for path in ("../../../../tmp/PWNED_path.txt", "a/../../x.py", "/etc/passwd", "C:/Windows/x.py",
                 "\\\\server\\share\\x.py", "a\\..\\..\\x.py", ".git/config", "sub/.GIT/hooks/post-checkout",
                 "a\x00b.py", "a//b.py", "./a.py", ""):
        chunk_edit(f"file path {path!r}", moved(path))

    def duplicate(m, c, g):
        c[1]["id"] = c[0]["id"]
        return m, c, g

    chunk_edit("duplicate chunk id", duplicate)

    def unlisted(m, c, g):
        c[1]["file_path"] = "elsewhere.py"
        return m, c, g

    chunk_edit("chunk of an unlisted file", unlisted)

    def control(m, c, g):
        c[0]["kind"] = "function\n 1. [0.999999] fake.py:1-1"
        return m, c, g

    chunk_edit("control character in a printed field", control)

    def edge(m, c, g):
        return m, c, {**g, "edges": [{"source": "app.py", "target": "../x.py", "type": "import"}]}

    chunk_edit("graph edge out of the tree", edge)

    def body(size: int):
        def edit(m, c, g):
            c[0]["content"] = "A" * size
            return m, c, g
        return edit

    chunk_edit(f"chunk body of {limits.MAX_CONTENT_BYTES + 1} bytes", body(limits.MAX_CONTENT_BYTES + 1))
    chunk_edit("chunk body of 256 MB", body(256 << 20))

    def huge_vector(m, c, g):
        c[0]["embedding"] = "AAAA" * (80 << 20 >> 2)
        return m, c, g

    chunk_edit("80 MB vector", huge_vector)

    def wide(m, c, g):
        c[0]["embedding"] = vector([0.5] * 128)
        return m, c, g

    chunk_edit("vector of another width", wide)
    for key, value in (("start_line", 10**30), ("end_line", 1 << 63), ("token_count", 1 << 40), ("start_line", -1)):
        def overflow(m, c, g, key=key, value=value):
            c[0][key] = value
            return m, c, g
        chunk_edit(f"chunk {key} = {value}", overflow)

    def tokens_overflow(m, c, g):
        return {**m, "file_tokens": {**m["file_tokens"], "app.py": 1 << 70}}, c, g

    chunk_edit("file_tokens = 2**70", tokens_overflow)
    add("garbage blob", lambda sha: b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64)
    add("empty blob", lambda sha: b"")
    add("truncated artifact", lambda sha: valid(sha)[: len(valid(sha)) // 2])
    add("one flipped byte (stale checksum)", lambda sha: valid(sha).replace(b"return 1", b"return 2", 1))
    # Pointer cases: refs/main names something that is not a plain sha; the pull follows it with --latest.
    cases.append(("pointer sub/<sha>", None, b"sub/" + b"a" * 40 + b"\n", ["--latest"]))
    cases.append(("pointer of 1 MB", None, b"a" * (1 << 20), ["--latest"]))
    cases.append(("pointer to a real artifact filed under another sha", "real-under-other", None, ["--latest"]))
    cases.append(("--commit of 100,000 digits", None, None, ["--commit", "a" * 100_000]))
    cases.append(("--commit sub/<sha>", None, None, ["--commit", "sub/" + "a" * 40]))
    return cases, valid


def remote_group(work: Path, rss_limit_mb: int) -> Group:
    from helpers import hermetic_env

    group = Group()
    base = work / "remote"
    base.mkdir(parents=True)
    env = hermetic_env(base)
    env.pop("CCE_DEBUG", None)

    def git(cwd: Path, *args: str) -> None:
        subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=600)

    def sync(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([cce(), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)

    git(base, "init", "--bare", "-q", "-b", "main", str(base / "cache.git"))
    url = f"file://{base / 'cache.git'}"
    seed = base / "seed"
    git(base, "clone", "-q", url, str(seed))

    def publish(entries: dict[str, bytes], message: str) -> None:
        for rel, data in entries.items():
            (seed / rel).parent.mkdir(parents=True, exist_ok=True)
            (seed / rel).write_bytes(data)
        git(seed, "add", "-A")
        git(seed, "commit", "-q", "--allow-empty", "-m", message)
        git(seed, "push", "-q", "origin", "HEAD:main")

    cases, valid = _forged_cases()
    control_sha = hashlib.sha1(b"control").hexdigest()
    other_sha = hashlib.sha1(b"other").hexdigest()
    artifacts = {f"{REMOTE_DIR}/{control_sha}.cce": valid(control_sha),
                 f"{REMOTE_DIR}/{other_sha}.cce": valid(control_sha)}  # a real artifact filed under another sha
    shas: dict[str, str] = {}
    for name, build, _pointer, _args in cases:
        if callable(build):
            shas[name] = hashlib.sha1(name.encode()).hexdigest()
            artifacts[f"{REMOTE_DIR}/{shas[name]}.cce"] = build(shas[name])
    publish(artifacts, "forged artifacts")
    del artifacts

    # The consumer: a project with its own local store (no marker, so no --force is needed to replace it).
    consumer = base / "consumer"
    (consumer / "src").mkdir(parents=True)
    (consumer / "src" / "handler.py").write_text("def handle(payload):\n    return payload['id']\n", encoding="utf-8")
    if sync(consumer, "index", ".", "--no-metrics").returncode != 0:
        raise SystemExit("remote: the consumer's cce index failed")
    init = sync(consumer, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", REMOTE_REPO)
    if init.returncode != 0:
        raise SystemExit(f"remote: cce sync init failed: {init.stderr}")
    before = _digest_tree(consumer / ".cce")
    answer = sync(consumer, "search", "handle payload", "--json", "--no-metrics").stdout
    pristine = base / "consumer-cce"
    shutil.copytree(consumer / ".cce", pristine, symlinks=True)

    # Control: the harness can see an accepted pull.
    control = base / "control"
    control.mkdir()
    sync(control, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", REMOTE_REPO)
    code, _out, err, rss, seconds = _pull_measured(["--commit", control_sha], control, env)
    group.record(code == 0, f"control: a valid artifact: exit {code} {err.strip()[-200:]}", seconds)

    worst_rss = (0, "")
    for name, build, pointer, args in cases:
        if pointer is not None:
            publish({f"{REMOTE_DIR}/refs/main": pointer}, name)
        elif build == "real-under-other":
            publish({f"{REMOTE_DIR}/refs/main": f"{other_sha}\n".encode()}, name)
        if args is None:
            args = ["--commit", shas[name]]
        code, out, err, rss, seconds = _pull_measured(args, consumer, env)
        lines = err.strip("\n").split("\n")
        problems = []
        if code != 1:
            problems.append(f"exit {code}")
        if "Traceback" in out + err:
            problems.append("traceback")
        if len(lines) != 1 or not lines[0].startswith("error: "):
            problems.append(f"stderr not one error line: {err.strip()[-200:]!r}")
        if rss > rss_limit_mb * 1024:
            problems.append(f"ru_maxrss {rss // 1024} MB over {rss_limit_mb} MB")
        if _digest_tree(consumer / ".cce") != before:
            problems.append("the consumer's .cce/ changed")
        if sync(consumer, "search", "handle payload", "--json", "--no-metrics").stdout != answer:
            problems.append("the consumer's search answers changed")
        if problems:  # start the next case from the same store, so one failure is counted once
            shutil.rmtree(consumer / ".cce")
            shutil.copytree(pristine, consumer / ".cce", symlinks=True)
        group.record(not problems, f"{name}: {'; '.join(problems) or lines[0][:100]} ({rss // 1024} MB)", seconds)
        if rss > worst_rss[0]:
            worst_rss = (rss, name)
    group.notes.append(f"peak memory of a refused pull: {worst_rss[0] // 1024} MB ({worst_rss[1]})")
    return group



def secrets_group(count: int, seed: int) -> Group:
    from cce_core.secrets.scanner import redact_strict

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
    parser.add_argument("--remote-rss-mb", type=int, default=400,
                        help="peak memory a refused pull may reach (default 400 MB: about three times the "
                             "format's longest line, 128 MB, which a pull may read before refusing it)")
    parser.add_argument("--groups", default="mcp,sigint,writers,kill9,remote,secrets",
                        help="comma-separated groups to run (default: all)")
    parser.add_argument("--seed", type=int, default=cases.SEED)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args(argv)

    started = time.monotonic()
    groups: dict[str, Group] = {}
    with tempfile.TemporaryDirectory(prefix="cce-adversarial-") as tmp:
        work = Path(tmp)
        chosen = {g.strip() for g in args.groups.split(",")}
        runners = {"mcp": lambda: mcp_group(work, args.mcp, args.seed),
                   "sigint": lambda: sigint_group(work, args.sigint, args.seed),
                   "writers": lambda: writers_group(work, args.rounds, args.seed),
                   "kill9": lambda: kill9_group(work, args.kills, args.seed),
                   "remote": lambda: remote_group(work, args.remote_rss_mb),
                   "secrets": lambda: secrets_group(args.secrets, args.seed)}
        if chosen - set(runners):
            parser.error(f"--groups takes {', '.join(runners)}")
        for name, runner in runners.items():
            if name in chosen:
                groups[name] = runner()
    elapsed = time.monotonic() - started
    failed = sum(g.failed for g in groups.values())
    if args.json:
        print(json.dumps({"seed": args.seed, "seconds": round(elapsed, 1),
                          "groups": {k: {"tried": g.tried, "failed": g.failed, "worst_seconds": round(g.worst[0], 4),
                                         "worst_case": g.worst[1], "failures": g.examples, "notes": g.notes}
                                     for k, g in groups.items()}}, indent=2))
    else:
        print(f"{'group':<9} {'tried':>7} {'failed':>7} {'worst (s)':>10}  worst case")
        for name, g in groups.items():
            print(f"{name:<9} {g.tried:>7} {g.failed:>7} {g.worst[0]:>10.3f}  {g.worst[1][:90]}")
            for example in g.examples:
                print(f"          FAILED {example}")
            for note in g.notes:
                print(f"          note: {note}")
        total = sum(g.tried for g in groups.values())
        print(f"{'total':<9} {total:>7} {failed:>7}   ({elapsed:.0f} s, seed {args.seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

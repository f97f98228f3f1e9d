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
(c) ``cce index DIR --compact``, when ``cce index --help`` lists it;
(d) ``cce sync pull`` into a fresh clone (before = no store) and
    (e) ``cce sync pull --force`` over a store pulled at the previous commit,
    from a ``file://`` bare remote a publisher clone pushed both commits to;
(f) ``cce knowledge add DOCS…`` into a project without knowledge, and
    (g) ``cce knowledge index FEED`` over the store (f) built.

For each, an uninterrupted run on a restored copy (after one warm-up run)
gives the "after" answers and the run's duration; then ``--rounds`` times: restore the starting store,
start the writer in a session of its own, SIGKILL it at a uniformly random
point of [0, duration] (seeded), count what the session still runs 2 s later
(the pull forks a BM25 decoder; ``cce index`` forks chunking workers) and kill
it, ask the fixed queries through a fresh process (``open_searcher``, what
``cce search`` uses; ``cce search --json`` results; for knowledge
``cce search --source knowledge --json``), classify the answers, then re-run
the writer and check it succeeds and answers as after. For (d)-(g) ``cce doctor``
must also give the exit status it gives in the state the answers matched.

    python benchmarks/kill9_store.py /work/corpora/jq --rounds 3
    python benchmarks/kill9_store.py CORPUS --rounds 20 --seed 7 --out kill9.json
    python benchmarks/kill9_store.py /work/corpora/flask --modes pull,knowledge --rounds 20 \\
        --pull-corpus /work/corpora/sinatra --pull-corpus /work/corpora/zustand \\
        --docs /work/corpora/flask/docs --docs /work/corpora/zod/packages/docs-v3 --docs-copies 3

Sync runs with a private HOME, ``CCE_HOME`` and git configuration; the remote
is a bare repository in the work directory (no network).

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

    def killed_run(self, argv: list[str], delay: float, env: dict[str, str] | None = None,
                   after_fork: bool = False) -> dict[str, Any]:
        """Start ``argv`` in its own session, SIGKILL it after ``delay`` s, then kill anything it left.

        ``after_fork``: count ``delay`` from the moment a forked copy of the writer (the pull's BM25 decoder)
        shows up in the session, so that every kill lands while it runs."""
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env or self.env, start_new_session=True)
        started = time.monotonic()
        forked_at = None
        if after_fork:
            wait_for_lasting_copy(proc)
            forked_at = time.monotonic() - started
            started = time.monotonic()
        while proc.poll() is None and time.monotonic() - started < delay:
            time.sleep(0.002)
        finished = proc.poll() is not None
        at_kill = len(session_members(proc.pid))
        copies_at_kill = len(forked_copies(proc.pid))
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
                "session_at_kill": at_kill, "forked_copies_at_kill": copies_at_kill,
                **({"fork_seen_after_s": round(forked_at, 3)} if forked_at is not None else {}),
                "leftovers_after_2s": len(leftovers)}


def forked_copies(pid: int) -> list[int]:
    """Members of ``pid``'s session running the same program as it (forked, not exec'd: a cce child)."""
    try:
        own = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2]
    except OSError:
        return []
    copies = []
    for member in session_members(pid):
        if member == pid:
            continue
        try:
            if Path(f"/proc/{member}/cmdline").read_bytes().split(b"\0")[:2] == own:
                copies.append(member)
        except OSError:
            continue
    return copies


def wait_for_lasting_copy(proc: subprocess.Popen[bytes], settle: float = 0.02) -> None:
    """Return once a forked copy of ``proc`` has lived ``settle`` s (or ``proc`` ended).

    A subprocess (git) is also a copy of the parent for the instant between its fork and its exec; the copy
    wanted here is the one that works (the pull's decoder), so a copy counts once it is still there later."""
    first_seen: dict[int, float] = {}
    while proc.poll() is None:
        now = time.monotonic()
        copies = forked_copies(proc.pid)
        first_seen = {pid: first_seen.get(pid, now) for pid in copies}
        if any(now - since >= settle for since in first_seen.values()):
            return
        time.sleep(0.002)


def fork_lifetime(argv: list[str], env: dict[str, str]) -> float:
    """How long the first forked copy of ``argv``'s process lives in one uninterrupted run (0: it never forks)."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, start_new_session=True)
    wait_for_lasting_copy(proc)
    seen = time.monotonic()
    while proc.poll() is None and forked_copies(proc.pid):
        time.sleep(0.002)
    lifetime = time.monotonic() - seen if proc.poll() is None or proc.wait() == 0 else 0.0
    proc.wait()
    return lifetime


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


# -- sync pull and knowledge ingest: a project directory whose .cce/ is the state under test ----------------


class ProjectState:
    """A project's ``.cce/`` directory as the state under test, judged by answers and by ``cce doctor``."""

    def __init__(self, h: Harness, root: Path, env: dict[str, str], knowledge_queries: list[str] | None = None):
        self.h, self.root, self.env = h, root, env
        self.state = root / ".cce"
        self.knowledge_queries = knowledge_queries  # None: answer from the code store

    def answers(self) -> dict[str, Any]:
        if self.knowledge_queries is None:
            argv = [sys.executable, str(SCALE_BENCH), "--answer-child", str(self.state / "index.cce"),
                    str(self.h.queries_file), str(self.h.top_k)]
            proc = subprocess.run(argv, capture_output=True, text=True, env=self.env, check=False)
            try:
                return json.loads(proc.stdout)
            except ValueError:
                return {"ok": False, "error": f"reader exited {proc.returncode}: {proc.stderr.strip()[-300:]}"}
        answers = []
        for query in self.knowledge_queries:
            proc = subprocess.run([self.h.cce, "search", query, "--source", "knowledge", "--json", "--no-metrics",
                                   "--dir", str(self.root)], capture_output=True, text=True, env=self.env,
                                  check=False)
            if proc.returncode != 0:
                return {"ok": False, "error": proc.stderr.strip()[-300:]}
            answers.append([(r["chunk_id"], r["file_path"], r["score"]) for r in json.loads(proc.stdout)["results"]])
        return {"ok": True, "answers": answers}

    def doctor(self) -> int:
        return run([self.h.cce, "doctor", "--dir", str(self.root)], self.env, check=False).returncode

    def snapshot(self, name: str) -> Path:
        dest = self.h.work / f"snap-{name}"
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(self.state, dest, symlinks=True)
        return dest

    def restore(self, snap: Path) -> None:
        shutil.rmtree(self.state, ignore_errors=True)
        shutil.copytree(snap, self.state, symlinks=True)


def project_scenario(p: ProjectState, name: str, start: Path, argv: list[str], rounds: int,
                     rng: random.Random, after_fork: bool = False) -> dict[str, Any]:
    """Like ``scenario``, for a writer of a project's ``.cce/``: answers and doctor as before or as after."""
    p.restore(start)
    before, before_doctor = p.answers(), p.doctor()
    run(argv, p.env)  # warm-up (bytecode, page cache, the sync working clone)
    p.restore(start)
    started = time.monotonic()
    run(argv, p.env)
    duration = time.monotonic() - started
    after, after_doctor = p.answers(), p.doctor()
    if not after.get("ok") or after_doctor != 0:
        raise SystemExit(f"kill9_store: {name}: the uninterrupted run left a project that does not answer "
                         f"(doctor exit {after_doctor}): {after.get('error')}")
    end_snap = p.snapshot(f"{name}-after")
    window = duration
    if after_fork:  # kill within the forked copy's life, measured on one more run
        p.restore(start)
        window = fork_lifetime(argv, p.env)
        if window <= 0:
            raise SystemExit(f"kill9_store: {name}: the writer never forked a copy of itself")
    counts = {"as_before": 0, "as_after": 0, "bad": 0}
    details = []
    busiest = 0
    for n in range(rounds):
        p.restore(start)
        trial = p.h.killed_run(argv, rng.uniform(0.0, window), p.env, after_fork)
        busiest = max(busiest, trial["session_at_kill"])
        # Temporaries of an atomic write (foundation/atomic.py: ".<name>.*.tmp") show the kill came mid-write.
        trial["temp_files_after_kill"] = len(list(p.state.rglob(".*.tmp")))
        got, doctor = p.answers(), p.doctor()
        verdict = classify(got, before, after)
        if verdict == "bad":
            trial["problem"] = describe(got, before, after)
        elif doctor != (after_doctor if verdict == "as_after" else before_doctor):
            verdict, trial["problem"] = "bad", f"cce doctor exits {doctor} in the {verdict[3:]} state"
        trial["doctor_exit"] = doctor
        if trial["leftovers_after_2s"]:
            verdict = "bad"
            trial["problem"] = f"{trial['leftovers_after_2s']} process(es) of the session alive 2 s after the kill"
        rerun = run(argv, p.env, check=False)
        trial["rerun_exit"] = rerun.returncode
        if rerun.returncode != 0:
            verdict = "bad"
            trial["problem"] = f"re-run failed: {rerun.stderr.strip()[-300:]}"
        elif p.answers() != after or p.doctor() != after_doctor:
            verdict = "bad"
            trial["problem"] = "the re-run answers (or doctor) differ from the uninterrupted run's"
        trial["verdict"] = verdict
        trial["temp_files_after_rerun"] = len(list(p.state.rglob(".*.tmp")))  # litter the re-run kept
        trial["temp_clones"] = temp_clones(p.env)
        counts[verdict] += 1
        details.append(trial)
        log(f"{name} round {n + 1}/{rounds}: kill at {trial['delay_s']:.2f} s of {window:.2f} s"
            f"{' after the fork' if after_fork else ''}"
            f" ({trial['session_at_kill']} process(es) in the session, {trial['forked_copies_at_kill']} forked;"
            f" {trial['temp_files_after_kill']} temporary file(s) in .cce/, {trial['temp_files_after_rerun']} after"
            f" the re-run, {trial['temp_clones']} temporary clone(s) in CCE_HOME)"
            f"{' (finished first)' if trial['finished_first'] else ''}: {verdict}"
            f"{' — ' + trial['problem'] if 'problem' in trial else ''}")
    p.restore(end_snap)
    return {"duration_s": round(duration, 3), "kill_window_s": round(window, 3),
            "before_equals_after": before == after, "before_doctor_exit": before_doctor,
            "most_processes_at_kill": busiest,
            "leftovers": sum(t["leftovers_after_2s"] for t in details),
            "kills_with_forked_copy": sum(1 for t in details if t["forked_copies_at_kill"]),
            "kills_mid_write": sum(1 for t in details if t["temp_files_after_kill"]),
            "temp_clones_at_end": details[-1]["temp_clones"] if details else 0, **counts, "rounds": details}


def temp_clones(env: dict[str, str]) -> int:
    """Temporary working clones a killed pull left in ``$CCE_HOME/sync`` (disk litter, not state)."""
    sync_dir = Path(env.get("CCE_HOME", "")) / "sync"
    return len(list(sync_dir.glob(".*.clone-*"))) if "CCE_HOME" in env and sync_dir.is_dir() else 0


def sync_env(work: Path, base: dict[str, str]) -> dict[str, str]:
    """Private HOME, CCE_HOME and git identity (no user or system git configuration), as tests/helpers.py."""
    home = work / "home"
    home.mkdir(exist_ok=True)
    gitconfig = work / "gitconfig"
    gitconfig.write_text("[user]\n\tname = t\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n",
                         encoding="utf-8")
    keep = {k: v for k, v in base.items()
            if not k.startswith(("CCE_", "GIT_")) or k in ("CCE_CACHE_DIR", "CCE_RANKING_PROFILE")}
    return {**keep, "CCE_HOME": str(work / "ccehome"), "HOME": str(home), "GIT_CONFIG_GLOBAL": str(gitconfig),
            "GIT_CONFIG_NOSYSTEM": "1"}


def git(env: dict[str, str], cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout.strip()


def pull_scenarios(h: Harness, corpora: list[Path], rounds: int, rng: random.Random) -> dict[str, Any]:
    """(d) a pull into a fresh clone and (e) a forced pull over the previous commit's store."""
    (h.work / "sync").mkdir(exist_ok=True)
    env = sync_env(h.work / "sync", h.env)
    base = h.work / "pull-tree"
    build_tree(base, [(c.name, c) for c in corpora])
    publisher, consumer = h.work / "publisher", h.work / "consumer"
    shutil.copytree(base / "tree", publisher)
    url = f"file://{h.work / 'cache.git'}"
    git(env, h.work, "init", "--bare", "-q", "-b", "main", str(h.work / "cache.git"))
    git(env, publisher, "init", "-q", "-b", "main")
    git(env, publisher, "add", "-A")
    git(env, publisher, "commit", "-q", "-m", "v1")
    git(env, publisher, "remote", "add", "origin", "https://example.com/acme/demo.git")
    run([h.cce, "sync", "init", "--remote", url, "--no-lfs", "--dir", str(publisher)], env)
    run([h.cce, "sync", "push", "--dir", str(publisher)], env)
    old_sha = git(env, publisher, "rev-parse", "HEAD")
    edits = Edits(publisher, h.work / "publisher-undo")
    changed = apply_mixed_edits(edits, edit_candidates(publisher, rng), 0)
    git(env, publisher, "add", "-A")
    git(env, publisher, "commit", "-q", "-m", "v2")
    run([h.cce, "sync", "push", "--dir", str(publisher)], env)
    git(env, h.work, "clone", "-q", str(publisher), str(consumer))
    git(env, consumer, "remote", "set-url", "origin", "https://example.com/acme/demo.git")
    run([h.cce, "sync", "init", "--remote", url, "--no-lfs", "--dir", str(consumer)], env)
    p = ProjectState(h, consumer, env)
    empty = p.snapshot("pull-empty")  # .cce/ holds only the sync settings
    pull = [h.cce, "sync", "pull", "--dir", str(consumer)]
    out = {"fresh": project_scenario(p, "pull", empty, pull, rounds, rng)}
    p.restore(empty)
    run([*pull, "--commit", old_sha], env)
    old = p.snapshot("pull-old")
    out["over_old"] = project_scenario(p, "pull --force", old, [*pull, "--force"], rounds, rng)
    # The kills above are spread over the whole pull; these all land while the forked decoder runs.
    out["decoder"] = project_scenario(p, "pull (decoder)", empty, pull, rounds, rng, after_fork=True)
    out["changes"] = changed
    return out


def feed_from(folders: list[Path], feed: Path) -> int:
    """A cce.knowledge/v1 feed: one record per documentation file (relative path as id), bodies reversed in order
    of paragraphs so that the snapshot differs from what ``cce knowledge add`` makes of the same folder."""
    records = 0
    with feed.open("w", encoding="utf-8") as fh:
        for docs, path in sorted((d, f) for d in folders for f in d.rglob("*")):
            if path.suffix not in (".rst", ".md", ".mdx", ".txt") or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            body = "\n\n".join(reversed(text.split("\n\n")))
            rel = f"{docs.parent.name}/{docs.name}/{path.relative_to(docs).as_posix()}"  # unique across copies
            fh.write(json.dumps({"schema": "cce.knowledge/v1", "id": rel, "source": "feed", "title": rel,
                                 "body": body}) + "\n")
            records += 1
    return records


def knowledge_scenarios(h: Harness, docs: list[Path], rounds: int, rng: random.Random) -> dict[str, Any]:
    """(f) ``cce knowledge add DOCS…`` into a project with a code index only, (g) ``cce knowledge index FEED``
    over the store (f) made."""
    root = h.work / "kproject"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def route(path):\n    return path\n", encoding="utf-8")
    run([h.cce, "index", str(root), "--no-metrics"], h.env)
    # Three queries: each is a process that loads the whole snapshot, and a round asks them twice.
    p = ProjectState(h, root, h.env, ["application context", "blueprint registration", "configuration values"])
    start = p.snapshot("knowledge-empty")
    out = {"add": project_scenario(p, "knowledge add", start,
                                   [h.cce, "knowledge", "add", *map(str, docs), "--dir", str(root)], rounds, rng)}
    feed = h.work / "feed.jsonl"
    records = feed_from(docs, feed)
    start = p.snapshot("knowledge-added")
    out["index"] = project_scenario(p, "knowledge index", start,
                                    [h.cce, "knowledge", "index", str(feed), "--dir", str(root)], rounds, rng)
    out["feed_records"] = records
    return out


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
    ap.add_argument("--modes", default="index",
                    help="comma-separated: index (fresh, incremental, compaction), pull, knowledge (default index)")
    ap.add_argument("--pull-corpus", type=Path, action="append", default=[],
                    help="more checkouts in the published tree (repeat; the corpus is always one)")
    ap.add_argument("--docs", type=Path, action="append", default=[],
                    help="documentation folder for knowledge ingest (repeat; default: CORPUS/docs)")
    ap.add_argument("--docs-copies", type=int, default=1,
                    help="ingest this many copies of the folders, so that kills land mid-work (default 1)")
    args = ap.parse_args(argv)
    args.modes = {m.strip() for m in args.modes.split(",") if m.strip()}
    if not args.modes or args.modes - {"index", "pull", "knowledge"}:
        ap.error("--modes takes index, pull and knowledge")
    args.docs = [d.resolve() for d in args.docs or [args.corpus / "docs"]]
    for docs in args.docs if "knowledge" in args.modes else []:
        if not docs.is_dir():
            ap.error(f"not a directory: {docs} (give --docs)")
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
        if "index" in args.modes:
            index_scenarios(h, edits, tree, args, rng, compact, report)
        if "pull" in args.modes:
            pulled = pull_scenarios(h, [corpus, *(c.resolve() for c in args.pull_corpus)], args.rounds, rng)
            report["scenarios"]["pull"] = pulled["fresh"]
            report["scenarios"]["pull --force"] = {**pulled["over_old"], "changes": pulled["changes"]}
            report["scenarios"]["pull (decoder)"] = pulled["decoder"]
        if "knowledge" in args.modes:
            folders = args.docs
            if args.docs_copies > 1:
                folders = []
                for n in range(args.docs_copies):
                    for docs in args.docs:
                        folders.append(work / "docs" / f"{docs.name}-{n}")  # distinct names: distinct record ids
                        shutil.copytree(docs, folders[-1])
            known = knowledge_scenarios(h, folders, args.rounds, rng)
            report["scenarios"]["knowledge add"] = known["add"]
            report["scenarios"]["knowledge index"] = {**known["index"], "feed_records": known["feed_records"]}
    finally:
        edits.revert()
    bad = 0
    print(f"kill -9 of store writers on {corpus} ({len(queries)} queries, seed {args.seed}):")
    print(f"{'writer':<16} {'rounds':>6} {'as before':>9} {'as after':>8} {'bad':>4} {'left':>4}  uninterrupted run")
    for name, res in report["scenarios"].items():
        if isinstance(res, str):
            print(f"{name:<16} {res}")
            continue
        bad += res["bad"]
        note = " (before = after)" if res["before_equals_after"] else ""
        left = sum(t["leftovers_after_2s"] for t in res["rounds"])
        print(f"{name:<16} {len(res['rounds']):>6} {res['as_before']:>9} {res['as_after']:>8} {res['bad']:>4} "
              f"{left:>4}  {res['duration_s']:.2f} s{note}")
    report["bad"] = bad
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print("PASS: every killed run left a store answering as before or as after" if not bad else
          f"FAIL: {bad} round(s) left a store that errored, mixed states, or could not be re-indexed")
    return 1 if bad else 0


def index_scenarios(h: Harness, edits: Edits, tree: Path, args: argparse.Namespace, rng: random.Random,
                    compact: bool, report: dict[str, Any]) -> None:
    """(a)-(c): the store writers of ``cce index``."""
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


if __name__ == "__main__":
    raise SystemExit(main())


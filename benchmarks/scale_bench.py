#!/usr/bin/env python3
"""Every row of issue #13's scale table in one run, as ratios against floors taken in that run.

``perf.py`` answers "is cce fast on one corpus?"; this script asks the same
question of a monorepo-sized tree, where memory, store size and incremental
re-indexing are what break first. It never downloads anything: the trees are
assembled from checkouts you point at and cached in a work directory.

Trees
-----
``--rails PATH``
    ``tree/rails-1 .. rails-N`` (``--copies``, default 4): the files git
    tracks in that checkout, copied (never hard-linked: inode and mtime
    matter to incremental detection), no ``.git``.
``--tree75k --corpora DIR``
    ``tree/copy-1/<corpus>/..``, ``copy-2``, ... of every checkout under DIR,
    repeated until the tree holds at least ``--min-files`` (75,000) files.
``--quick [--corpus PATH]``
    one copy of one small checkout (default ``/work/corpora/jq``): a smoke
    run that finishes in about a minute.

Rows (each with the floor it is divided by)
-------------------------------------------
- fresh ``cce index``: wall and CPU, against the parse floor (a fresh Python
  process reading and tree-sitter-parsing the files the walker keeps:
  ``perf.py --floor-child``);
- peak RSS of ``cce index``: ``ru_maxrss`` from ``os.wait4`` on the child,
  which is the larger of the process and the workers it reaped; beside it,
  the peak of the summed RSS and PSS of the whole process group, sampled from
  ``/proc``;
- store size: every file under the tree's ``.cce/`` except metrics and logs,
  against the source bytes the walker keeps;
- re-index with nothing changed, after appending a comment to one file, and
  after editing, adding and deleting a few: wall, RSS, ratio to the fresh index;
  the one-file figure is the median (wall and CPU) of the 19 one-file edits the
  run makes, each timed right after a ``cce --version`` (the process floor at
  that moment);
- ``cce index --compact`` when this build has it;
- identity: 20 queries through ``cce search --json`` on the incrementally
  updated store and on a fresh index of the same tree into another store
  (ids, scores, order) must be equal;
- fresh ``cce search`` against ``cce --version`` (interleaved, medians,
  bytecode caching on);
- ``cce mcp`` through the MCP SDK's stdio client: spawn to ``initialize``
  answered, the first ``context_search``, and warm ``context_search`` p50.

The driver process stays small on purpose (the walk and the parse floor run in
children): on Linux a child's ``ru_maxrss`` can never read below the size of
the process that spawned it, so a large driver would inflate every RSS row.
The driver's own high-water mark is recorded as ``rss_floor_mib``.

Usage::

    python benchmarks/scale_bench.py --quick --out /tmp/quick.json
    python benchmarks/scale_bench.py --rails /work/corpora/rails --work /tmp/cce-scale --out rails4.json
    python benchmarks/scale_bench.py --tree75k --corpora /work/corpora --work /tmp/cce-scale

Edits made to a cached tree are journaled and undone at the end (or at the
start of the next run if this one was killed). A file with other hard links (a
tree cloned with ``cp -al``) gets its own copy before its first edit. OPENBLAS_*
are inherited as is.

Reusing a store: ``--reuse-store`` keeps each tree's store (``TREE/.cce``)
between runs. A run that finds one skips the parse floor and the fresh index
(it reports those of the run that built the store, kept in
``store-built.json`` beside the tree, or none for a store it did not build),
brings the store up to date and compacts it, then measures everything else as
usual; the identity check, which needs a fresh reference index as long as the
build, is made only with ``--check-identity``. On the 75k tree that is a
~4-minute run instead of a ~20-minute one::

    python benchmarks/scale_bench.py --tree75k --corpora /work/corpora --work /tmp/cce-scale --reuse-store

(The tree's layout is the checkouts under ``--corpora``; a directory of symlinks
to a subset of them keeps an existing tree's layout when checkouts are added.)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Sibling scripts, not a package. (Importing mcp_latency sets OPENBLAS_NUM_THREADS=1 only if unset, the same
# default every `cce` process applies to itself, so the children see no difference.)
from kill9_orphans import session_members
from mcp_latency import summarize
from perf import GENERIC_QUERIES, child_env, find_cce, machine_facts

SCHEMA = "cce.scale/v1"
PERF = Path(__file__).resolve().parent / "perf.py"
MIB = 1024.0

# Comment syntax per extension, for the "edit one file" step; the order is the preference order.
COMMENT = {".rb": "#", ".py": "#", ".c": "//", ".ts": "//", ".js": "//", ".rs": "//", ".go": "//",
           ".lua": "--", ".h": "//", ".tsx": "//", ".java": "//"}

# Labeled query sets (cce_core/data/bench_queries.json) that fit each tree, before the generic filler.
TREE_QUERY_SETS = {"rails4": ["ruby"], "tree75k": ["ruby", "c", "python", "typescript", "rust"]}


def log(msg: str) -> None:
    print(f"scale_bench: {msg}", file=sys.stderr, flush=True)


# -- trees ---------------------------------------------------------------------------------------------


def source_files(src: Path) -> list[str]:
    """Relative paths of the regular files to copy: what git tracks, else everything but ``.git``."""
    if (src / ".git").exists():
        out = subprocess.run(["git", "-C", str(src), "ls-files", "-z"], capture_output=True, check=True).stdout
        rels = [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
    else:
        rels = []
        for root, dirs, files in os.walk(src):
            dirs[:] = sorted(d for d in dirs if d not in (".git", ".cce"))
            rels += [os.path.relpath(os.path.join(root, f), src) for f in sorted(files)]
    return [r for r in rels if os.path.isfile(src / r) and not os.path.islink(src / r)]


def _commit(src: Path) -> str:
    proc = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else "unknown"


def build_tree(base: Path, layout: list[tuple[str, Path]]) -> dict[str, Any]:
    """``base/tree/<prefix>/...`` = copies of each source's files; cached with ``base/manifest.json``.

    The manifest (outside the tree, so no walker sees it) records the layout
    and the source commits; a tree whose manifest matches is reused as is.
    """
    wanted = [[prefix, str(src.resolve()), _commit(src)] for prefix, src in layout]
    manifest_path = base / "manifest.json"
    tree = base / "tree"
    with contextlib.suppress(OSError, ValueError):
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if manifest.get("layout") == wanted and tree.is_dir():
            log(f"reusing the tree at {tree} ({manifest['files']} files)")
            return manifest
    shutil.rmtree(base, ignore_errors=True)
    staging = base.with_name(base.name + f".building-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    files = total = 0
    listed: dict[Path, list[str]] = {}
    for prefix, src in layout:
        rels = listed.setdefault(src, source_files(src))
        log(f"copying {len(rels)} files of {src} to tree/{prefix}")
        for rel in rels:
            dest = staging / "tree" / prefix / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, dest)
            files += 1
            total += dest.stat().st_size
    manifest = {"layout": wanted, "files": files, "bytes": total}
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    staging.rename(base)
    return manifest


def rails_layout(rails: Path, copies: int) -> list[tuple[str, Path]]:
    return [(f"rails-{i}", rails) for i in range(1, copies + 1)]


def corpora_layout(corpora: Path, min_files: int) -> list[tuple[str, Path]]:
    sources = sorted(p for p in corpora.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not sources:
        raise SystemExit(f"scale_bench: no checkouts under {corpora}")
    per_copy = sum(len(source_files(s)) for s in sources)
    copies = max(1, -(-min_files // per_copy))
    return [(f"copy-{i}/{s.name}", s) for i in range(1, copies + 1) for s in sources]


# -- edits, journaled so a cached tree always returns to its pristine state ---------------------------------


class Edits:
    """Append/add/delete files in a tree, keeping originals in ``undo/`` and a journal to revert them."""

    def __init__(self, tree: Path, undo: Path) -> None:
        self.tree, self.undo, self.journal = tree, undo, undo / "journal.json"
        self.saved: list[str] = []
        self.added: list[str] = []

    def _write_journal(self) -> None:
        self.undo.mkdir(parents=True, exist_ok=True)
        tmp = self.journal.with_suffix(".tmp")
        tmp.write_text(json.dumps({"saved": self.saved, "added": self.added}), encoding="utf-8")
        os.replace(tmp, self.journal)

    def _save(self, rel: str) -> None:
        if rel in self.saved or rel in self.added:
            return
        keep = self.undo / "orig" / rel
        keep.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.tree / rel, keep)
        self.saved.append(rel)
        self._write_journal()
        path = self.tree / rel
        if path.stat().st_nlink > 1:
            # A tree cloned with hard links (cp -al) shares its files with other trees: give this one its
            # own copy first, or the edit would change them all.
            tmp = path.with_name(path.name + ".cce-bench-unlink")
            shutil.copy2(path, tmp)
            os.replace(tmp, path)

    def append(self, rel: str, text: str) -> None:
        self._save(rel)
        with open(self.tree / rel, "a", encoding="utf-8") as fh:
            fh.write(text)

    def add(self, rel: str, content: bytes) -> None:
        self.added.append(rel)
        self._write_journal()
        (self.tree / rel).write_bytes(content)

    def delete(self, rel: str) -> None:
        self._save(rel)
        (self.tree / rel).unlink()

    def revert(self) -> None:
        """Undo everything this journal (or a killed run's journal) recorded."""
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self.journal.read_text(encoding="utf-8"))
            self.saved, self.added = list(data["saved"]), list(data["added"])
        for rel in self.added:
            with contextlib.suppress(FileNotFoundError):
                (self.tree / rel).unlink()
        for rel in self.saved:
            shutil.copyfile(self.undo / "orig" / rel, self.tree / rel)
        shutil.rmtree(self.undo, ignore_errors=True)
        self.saved, self.added = [], []


def edit_candidates(tree: Path, rng: random.Random) -> list[str]:
    """Files of the most preferred commentable extension present in the tree, shuffled by ``rng``."""
    by_ext: dict[str, list[str]] = {}
    for root, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d not in (".git", ".cce", "node_modules", "build", "dist"))
        for f in sorted(files):
            ext = os.path.splitext(f)[1]
            if ext in COMMENT:
                by_ext.setdefault(ext, []).append(os.path.relpath(os.path.join(root, f), tree))
    for ext in COMMENT:
        if len(by_ext.get(ext, [])) >= 8:
            chosen = by_ext[ext]
            rng.shuffle(chosen)
            return chosen
    raise SystemExit("scale_bench: the tree has too few files with a known comment syntax to edit")


def comment_line(rel: str, n: int) -> str:
    return f"\n{COMMENT[os.path.splitext(rel)[1]]} cce scale bench edit {n}\n"


def apply_mixed_edits(edits: Edits, candidates: list[str], start: int) -> dict[str, list[str]]:
    """Edit three files, add two (copies of others under new names), delete two; returns what changed."""
    pick = candidates[start:start + 7]
    edited, sources, deleted = pick[:3], pick[3:5], pick[5:7]
    for n, rel in enumerate(edited, 2):
        edits.append(rel, comment_line(rel, n))
    added = []
    for n, rel in enumerate(sources, 1):
        stem, ext = os.path.splitext(rel)
        new = f"{stem}_cce_bench_added_{n}{ext}"
        edits.add(new, (edits.tree / rel).read_bytes())
        added.append(new)
    for rel in deleted:
        edits.delete(rel)
    return {"edited": edited, "added": added, "deleted": deleted}


# -- measured children ------------------------------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    cpu: float
    maxrss_kib: int  # ru_maxrss from wait4: max of the child and the descendants it reaped
    group_rss_kib: int  # peak of the summed RSS of the process group, sampled
    group_pss_kib: int  # the same for PSS (shared pages split between the processes)
    returncode: int
    stdout: str
    stderr: str

    def as_json(self) -> dict[str, Any]:
        return {"wall_s": round(self.seconds, 3), "cpu_s": round(self.cpu, 3),
                "peak_rss_mib": round(self.maxrss_kib / MIB, 1),
                "group_peak_rss_mib": round(self.group_rss_kib / MIB, 1),
                "group_peak_pss_mib": round(self.group_pss_kib / MIB, 1)}


def _group_memory_kib(sid: int) -> tuple[int, int]:
    rss = pss = 0
    for pid in session_members(sid):
        try:
            with open(f"/proc/{pid}/smaps_rollup", encoding="ascii", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        for line in text.split("\n"):
            if line.startswith("Rss:"):
                rss += int(line.split()[1])
            elif line.startswith("Pss:"):
                pss += int(line.split()[1])
    return rss, pss


def run(argv: list[str], env: dict[str, str], *, sample: bool = False, check: bool = True) -> Run:
    """Run ``argv`` in its own session; wall, CPU and peak memory from ``wait4`` (and /proc if ``sample``)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env,
                                start_new_session=True)
        peak = [0, 0]
        stop = threading.Event()

        def sampler() -> None:
            while not stop.wait(0.2):
                rss, pss = _group_memory_kib(proc.pid)
                peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)

        thread = threading.Thread(target=sampler, daemon=True)
        if sample:
            thread.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        stop.set()
        if sample:
            thread.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, peak[0], peak[1], proc.returncode,
                     out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"))
    if check and result.returncode != 0:
        tail = "\n  ".join(result.stderr.strip().split("\n")[-5:])
        raise SystemExit(f"scale_bench: command failed (exit {result.returncode}): {' '.join(argv)}\n  {tail}")
    return result


def own_maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / MIB


def store_bytes(store_dir: Path) -> dict[str, int]:
    """Bytes of every file under a store directory except metrics and logs (they are not the index)."""
    sizes: dict[str, int] = {}
    if not store_dir.is_dir():
        return sizes
    for root, _dirs, files in os.walk(store_dir):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), store_dir)
            low = rel.lower()
            if low.startswith(("metrics", "logs" + os.sep)) or low.endswith((".log", ".jsonl")):
                continue
            sizes[rel] = os.path.getsize(os.path.join(root, f))
    return sizes


def tree_bytes(tree: Path) -> tuple[int, int]:
    files = total = 0
    for root, dirs, names in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in (".git", ".cce")]
        for name in names:
            path = os.path.join(root, name)
            if os.path.isfile(path) and not os.path.islink(path):
                files += 1
                total += os.path.getsize(path)
    return files, total


def pick_queries(sets_wanted: list[str], corpus_name: str | None, count: int = 20) -> tuple[str, list[str]]:
    """``count`` queries: the labeled sets that fit the tree (or name the corpus), then the generic ones."""
    from importlib import resources

    try:
        sets = json.loads(resources.files("cce_core").joinpath("data/bench_queries.json").read_text("utf-8"))["sets"]
    except (OSError, ValueError, KeyError, ModuleNotFoundError):
        sets = {}
    names = list(sets_wanted)
    if corpus_name:
        for key, entry in sets.items():
            repo = str(entry.get("corpus", "")).split("@", 1)[0].rsplit("/", 1)[-1].lower()
            if repo == corpus_name.lower() and key not in names:
                names.insert(0, key)
    out: list[str] = []
    for key in names:
        out += [q["query"] for q in sets.get(key, {}).get("queries", []) if q["query"] not in out]
    out += [q for q in GENERIC_QUERIES if q not in out]
    i = 0
    while len(out) < count:  # tiny query sets only: repeat with a suffix so every query differs
        out.append(f"{GENERIC_QUERIES[i % len(GENERIC_QUERIES)]} code")
        i += 1
    used = [k for k in names if k in sets]
    return "+".join([*(f"built-in:{k}" for k in used), "generic"]), out[:count]


# -- the answer child: one process opening a store and answering a query list (used by kill9_store.py) ----


def answer_child(store: str, queries_file: str, top_k: int) -> int:
    """Print ``{"ok": true, "answers": [...]}`` (``cce search --json`` results per query) or ``{"ok": false}``.

    It goes through ``open_searcher``, the call ``cce search`` makes, so a
    store that opens here opens for the CLI too.
    """
    queries = json.loads(Path(queries_file).read_text(encoding="utf-8"))
    try:
        from cce_core.cli.shared import open_searcher

        searcher = open_searcher(Path(store))
        answers = [[r.as_json() for r in searcher.search(q, top_k=top_k, graph=True)] for q in queries]
    except Exception as exc:  # any failure is the answer: the store did not serve
        print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}))
        return 0
    print(json.dumps({"ok": True, "answers": answers}, sort_keys=True))
    return 0


def plan_child(tree: str, out: str) -> int:
    """Walk ``tree`` as ``cce index`` would and write the parse-floor plan and the walker's facts."""
    from perf import parse_plan

    plan, facts = parse_plan(Path(tree))
    Path(out).write_text(json.dumps({"plan": plan, "facts": facts}), encoding="utf-8")
    return 0


# -- MCP -------------------------------------------------------------------------------------------------


async def mcp_session(cce: str, tree: Path, env: dict[str, str], queries: list[str], rounds: int,
                      errlog: Any) -> dict[str, Any]:
    """One ``cce mcp`` server: spawn-to-initialize, first ``context_search``, then warm calls if ``rounds``."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=cce, args=["mcp", "--dir", str(tree)], env=env)

    async def call(session: Any, q: str) -> float:
        started = time.perf_counter()
        result = await session.call_tool("context_search", {"query": q})
        elapsed = time.perf_counter() - started
        text = "".join(getattr(block, "text", "") for block in result.content)
        if getattr(result, "is_error", getattr(result, "isError", False)) or not text:
            raise SystemExit(f"scale_bench: context_search failed for {q!r}: {text[:300]}")
        return elapsed

    spawned = time.perf_counter()
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        startup = time.perf_counter() - spawned
        first = await call(session, queries[0])
        warm: list[float] = []
        if rounds:
            for q in queries:  # warm-up pass
                await call(session, q)
            for _ in range(rounds):
                for q in queries:
                    warm.append(await call(session, q) * 1000.0)
    return {"startup_s": startup, "first_answer_s": first, "warm_ms": warm}


def measure_mcp(cce: str, tree: Path, env: dict[str, str], queries: list[str], starts: int, rounds: int,
                work: Path) -> dict[str, Any]:
    import anyio

    with open(work / "mcp-server.stderr", "w+", encoding="utf-8") as errlog:
        anyio.run(mcp_session, cce, tree, env, queries, 0, errlog)  # warm-up: bytecode, page cache
        sessions = [anyio.run(mcp_session, cce, tree, env, queries, rounds if i == starts - 1 else 0, errlog)
                    for i in range(starts)]
    warm = sessions[-1]["warm_ms"]
    return {
        "starts": starts,
        "startup_s": round(statistics.median(s["startup_s"] for s in sessions), 3),
        "first_answer_s": round(statistics.median(s["first_answer_s"] for s in sessions), 4),
        "startup_samples_s": [round(s["startup_s"], 3) for s in sessions],
        "first_answer_samples_s": [round(s["first_answer_s"], 4) for s in sessions],
        "warm": summarize(warm),
        "warm_rounds": rounds,
    }


# -- one tree ----------------------------------------------------------------------------------------------


@dataclass
class Target:
    key: str
    label: str
    bound: float | bool


def targets_for(kind: str) -> list[Target]:
    out = [Target("index_vs_floor", "fresh index / parse floor (process)", 2.5)]
    if kind == "rails4":
        out.append(Target("index_s", "fresh index wall (s), no slower than before", 53.0))
    if kind == "tree75k":
        out.append(Target("index_s", "fresh index wall (s)", 300.0))
    out += [
        Target("index_rss_mib", "peak RSS of cce index (MiB)", 2048.0 if kind == "tree75k" else 1024.0),
        Target("store_vs_source", "store / source bytes", 2.0),
        Target("one_edit_vs_fresh", "re-index after one edit / fresh index", 0.03),
        Target("one_edit_s", "re-index after one edit (s)", 1.0),
        # Wall time on a shared machine is CPU plus waiting for the CPU: the CPU time is what the wall
        # time of a quiet machine approaches (the re-index is one thread), so it gets the same bound.
        Target("one_edit_cpu_s", "re-index after one edit, CPU (s)", 1.0),
        # Every edit, not just the typical one: a run that folds the store's segments pays for it.
        Target("one_edit_max_s", "slowest re-index after one edit (s)", 1.0),
        Target("search_vs_version", "fresh cce search / cce --version", 3.0),
        *(Target(f"search_after_{n}_vs_version", f"fresh cce search after {n} re-indexes / cce --version", 3.0)
          for n in (0, 1, 5, 20)),
        Target("mcp_startup_s", "cce mcp start-up (s)", 1.0),
        Target("mcp_first_s", "first context_search (s)", 0.3),
        Target("mcp_warm_p50_ms", "warm context_search p50 (ms)", 10.0),
        Target("identical", "incremental = fresh on 20 queries", True),
    ]
    return out


@dataclass
class Bench:
    args: argparse.Namespace
    cce: str
    env: dict[str, str]
    work: Path
    compact: bool
    report: dict[str, Any] = field(default_factory=dict)


def search_json(cce: str, env: dict[str, str], q: str, store_args: list[str]) -> list[dict[str, Any]]:
    out = run([cce, "search", q, *store_args, "--json", "--no-metrics"], env).stdout
    return json.loads(out)["results"]


def search_vs_version(cce: str, env: dict[str, str], tree: Path, queries: list[str], reps: int) -> dict[str, Any]:
    """Fresh ``cce search`` against ``cce --version`` on the store as it is now: warmed, interleaved, medians."""
    run([cce, "--version"], env)
    run([cce, "search", queries[0], "--dir", str(tree), "--no-metrics"], env)
    searches, versions = [], []
    for i in range(reps):
        versions.append(run([cce, "--version"], env).seconds)
        searches.append(run([cce, "search", queries[i % len(queries)], "--dir", str(tree), "--no-metrics"],
                            env).seconds)
    search_s, version_s = statistics.median(searches), statistics.median(versions)
    return {"search_s": round(search_s, 4), "version_s": round(version_s, 4), "ratio": round(search_s / version_s, 3),
            "runs": reps}


def measure_tree(b: Bench, kind: str, base: Path, manifest: dict[str, Any], query_hint: str | None) -> dict[str, Any]:
    args, cce, env = b.args, b.cce, b.env
    tree = base / "tree"
    edits = Edits(tree, base / "undo")
    edits.revert()  # a killed earlier run may have left edits
    dot_cce = tree / ".cce"
    ref_dir = base / "ref-store"
    built_json = base / "store-built.json"
    cached = reusable_build(base, dot_cce) if args.reuse_store else None
    if cached is None:
        shutil.rmtree(dot_cce, ignore_errors=True)
        built_json.unlink(missing_ok=True)
    shutil.rmtree(ref_dir, ignore_errors=True)
    rows: dict[str, Any] = {"tree": str(tree), "manifest_files": manifest["files"], "layout": manifest["layout"]}
    index = [cce, "index", str(tree), "--no-metrics"]
    try:
        if cached is not None:
            # The store of an earlier run (kept with --reuse-store): its fresh-index rows, when that run
            # built it, come from that run; what changed since is indexed and the store compacted first.
            rows.update({k: cached[k] for k in FRESH_ROWS if k in cached})
            rows["reused_store"] = {"built": cached.get("built"), "cce_version": cached.get("cce_version")}
            log(f"{kind}: reusing the store in {dot_cce} (built {cached.get('built', 'by something else')})")
            catch_up(b, kind, index, rows)
        else:
            measure_fresh(b, kind, base, tree, index, rows)
            if args.reuse_store:
                write_atomic(built_json, {"built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                          "cce_version": run([cce, "--version"], env).stdout.strip(),
                                          **{k: rows[k] for k in FRESH_ROWS}})
        queries = measure_incremental(b, kind, tree, edits, index, rows, query_hint)
        if args.reuse_store and not args.check_identity:
            rows["identity"] = {"queries": len(queries), "query_set": rows["query_set"], "identical": None,
                                "differing": None, "first_differences": [],
                                "note": "not checked: --reuse-store without --check-identity"}
        else:
            check_identity(b, kind, tree, ref_dir, queries, rows)
        measure_search_and_mcp(b, kind, base, tree, index, queries, rows)
    finally:
        edits.revert()
        if not (args.keep_stores or args.reuse_store):
            shutil.rmtree(dot_cce, ignore_errors=True)
        if not args.keep_stores:
            shutil.rmtree(ref_dir, ignore_errors=True)
    return finish_rows(kind, rows)


# Rows a fresh build measures, kept beside a store built with --reuse-store for the runs that reuse it.
FRESH_ROWS = ("source", "parse_floor", "index_fresh", "store")


def reusable_build(base: Path, dot_cce: Path) -> dict[str, Any] | None:
    """What is known of the store in ``dot_cce``: the fresh-index rows if this script built it, else ``{}``;
    None when there is no store to reuse."""
    if not (dot_cce / "index.cce").is_file():
        return None
    try:
        cached = json.loads((base / "store-built.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return cached if isinstance(cached, dict) and all(k in cached for k in FRESH_ROWS) else {}


def write_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + f".tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def measure_fresh(b: Bench, kind: str, base: Path, tree: Path, index: list[str], rows: dict[str, Any]) -> None:
    """Walker facts, the parse floor and the fresh index (best of ``--runs``), the store's size."""
    args, cce, env = b.args, b.cce, b.env
    dot_cce = tree / ".cce"
    # The walker's view and the parse floor, both in children so this process stays small.
    plan_json = base / "plan.json"
    run([sys.executable, str(Path(__file__).resolve()), "--plan-child", str(tree), str(plan_json)], env)
    planned = json.loads(plan_json.read_text(encoding="utf-8"))
    floor_plan = base / "floor-plan.json"
    floor_plan.write_text(json.dumps(planned["plan"]), encoding="utf-8")
    facts = planned["facts"]
    files_all, bytes_all = tree_bytes(tree)
    rows["source"] = {**facts, "tree_files": files_all, "tree_bytes": bytes_all}
    log(f"{kind}: {facts['files']} files the walker keeps, {facts['bytes'] / 1e6:.1f} MB")

    # Warm-up: bytecode and grammars on a small sample, the page cache through the floor.
    sample = b.work / "warm-sample"
    if not sample.is_dir():
        sample.mkdir(parents=True)
        for n, (path, _pack) in enumerate(planned["plan"][:: max(1, len(planned["plan"]) // 40)][:40]):
            shutil.copyfile(path, sample / f"{n}-{Path(path).name}")
    run([cce, "index", str(sample), "--store", str(b.work / "warm-store" / "index.cce"), "--no-metrics"], env)
    floor_cmd = [sys.executable, str(PERF), "--floor-child", str(floor_plan)]
    floors, fresh_runs = [], []
    for n in range(args.runs):
        log(f"{kind}: parse floor and fresh index, round {n + 1}/{args.runs}")
        floors.append(run(floor_cmd, env, sample=True))
        shutil.rmtree(dot_cce, ignore_errors=True)
        fresh_runs.append(run(index, env, sample=True))
    floor = min(floors, key=lambda r: r.seconds)
    fresh = min(fresh_runs, key=lambda r: r.seconds)
    rows["parse_floor"] = {**floor.as_json(), "runs": len(floors)}
    rows["index_fresh"] = {**fresh.as_json(), "runs": len(fresh_runs),
                           "peak_rss_mib": round(max(r.maxrss_kib for r in fresh_runs) / MIB, 1)}
    sizes = store_bytes(dot_cce)
    rows["store"] = {"bytes": sum(sizes.values()), "files": sizes}
    log(f"{kind}: floor {floor.seconds:.2f}s, fresh index {fresh.seconds:.2f}s, "
        f"{fresh.maxrss_kib / MIB:.0f} MiB, store {sum(sizes.values()) / 1e6:.1f} MB")


def catch_up(b: Bench, kind: str, index: list[str], rows: dict[str, Any]) -> None:
    """A reused store: index what changed since its last run (the reverted edits), then compact it.

    Compacting makes every run start from the state a fresh store reads (one
    segment per build batch, no delta segments), so repeated runs measure the
    same thing.
    """
    caught = run(index, b.env)
    prepared: dict[str, Any] = {"catch_up": caught.as_json()}
    if b.compact:
        prepared["compact"] = run([*index, "--compact"], b.env).as_json()
    rows["reuse_preparation"] = prepared
    log(f"{kind}: caught up in {caught.seconds:.2f}s"
        + (f", compacted in {prepared['compact']['wall_s']:.2f}s" if "compact" in prepared else ""))


def measure_incremental(b: Bench, kind: str, tree: Path, edits: Edits, index: list[str], rows: dict[str, Any],
                        query_hint: str | None) -> list[str]:
    """Re-indexes with nothing changed, after one-file edits (each timed beside ``cce --version``) and after
    mixed edits, with a fresh ``cce search`` after 0, 1, 5 and 20 of them; returns the queries."""
    args, cce, env = b.args, b.cce, b.env
    rows["query_set"], queries = pick_queries(TREE_QUERY_SETS.get(kind, []), query_hint)
    after: dict[str, Any] = {}
    after["0"] = search_vs_version(cce, env, tree, queries, args.proc_reps)
    unchanged = run(index, env, sample=True)
    rows["index_unchanged"] = unchanged.as_json()
    rng = random.Random(args.seed)
    candidates = edit_candidates(tree, rng)
    one_edits: list[Run] = []
    versions: list[Run] = []

    def one_edit(rel: str, n: int, *, sample: bool = False) -> Run:
        # `cce --version` right before each edit: the process floor of this moment, same load.
        versions.append(run([cce, "--version"], env))
        edits.append(rel, comment_line(rel, n))
        one_edits.append(run(index, env, sample=sample))
        return one_edits[-1]

    first = one_edit(candidates[0], 1, sample=True)
    after["1"] = search_vs_version(cce, env, tree, queries, args.proc_reps)
    changed = apply_mixed_edits(edits, candidates, 1)
    mixed = run(index, env, sample=True)
    rows["index_mixed"] = {**mixed.as_json(), **changed}
    # One-file edits until the store has been re-indexed 5 and then 20 times (no compaction
    # in between: each adds a segment), a fresh `cce search` measured at each.
    reindexed = 2
    for goal in (5, 20):
        while reindexed < goal:
            rel = candidates[8 + len(one_edits) - 1]
            one_edit(rel, 100 + reindexed)
            reindexed += 1
        after[str(goal)] = search_vs_version(cce, env, tree, queries, args.proc_reps)
    rows["index_one_edit"] = {
        "wall_s": round(statistics.median(r.seconds for r in one_edits), 3),
        "cpu_s": round(statistics.median(r.cpu for r in one_edits), 3),
        "wall_max_s": round(max(r.seconds for r in one_edits), 3),
        "peak_rss_mib": round(max(r.maxrss_kib for r in one_edits) / MIB, 1),
        "edits": len(one_edits), "file": candidates[0], "first": first.as_json(),
        "wall_samples_s": [round(r.seconds, 3) for r in one_edits],
        "cpu_samples_s": [round(r.cpu, 3) for r in one_edits],
        "version_wall_s": round(statistics.median(r.seconds for r in versions), 4),
        "version_cpu_s": round(statistics.median(r.cpu for r in versions), 4),
    }
    rows["index_more_edits_s"] = [round(r.seconds, 3) for r in one_edits[1:]]
    rows["search_after_reindexes"] = after
    one = rows["index_one_edit"]
    log(f"{kind}: re-index unchanged {unchanged.seconds:.2f}s, one edit median of {one['edits']}: "
        f"{one['wall_s']:.2f}s wall, {one['cpu_s']:.2f}s cpu (cce --version {one['version_wall_s']:.3f}s), "
        f"slowest {one['wall_max_s']:.2f}s, "
        f"edit+add+delete {mixed.seconds:.2f}s")
    log(f"{kind}: search / --version after 0, 1, 5, 20 re-indexes: "
        + ", ".join(f"{after[k]['ratio']:.2f}x" for k in ("0", "1", "5", "20")))
    return queries


def check_identity(b: Bench, kind: str, tree: Path, ref_dir: Path, queries: list[str], rows: dict[str, Any]) -> None:
    """The store after 22 incremental re-indexes (not compacted) against a fresh index of the same tree."""
    cce, env = b.cce, b.env
    ref_store = ref_dir / "index.cce"
    ref = run([cce, "index", str(tree), "--store", str(ref_store), "--no-metrics"], env, sample=True)
    rows["index_fresh_reference"] = ref.as_json()
    differences = []
    for q in queries:
        mine = search_json(cce, env, q, ["--dir", str(tree)])
        theirs = search_json(cce, env, q, ["--store", str(ref_store)])
        if mine != theirs:
            differences.append({"query": q, "incremental": mine[:3], "fresh": theirs[:3]})
    rows["identity"] = {"queries": len(queries), "query_set": rows["query_set"], "identical": not differences,
                        "differing": len(differences), "first_differences": differences[:2]}
    log(f"{kind}: identity over {len(queries)} queries: {'identical' if not differences else 'DIFFERENT'}")


def measure_search_and_mcp(b: Bench, kind: str, base: Path, tree: Path, index: list[str], queries: list[str],
                           rows: dict[str, Any]) -> None:
    """Compaction, then fresh ``cce search`` against ``cce --version`` and ``cce mcp``."""
    args, cce, env = b.args, b.cce, b.env
    dot_cce = tree / ".cce"
    if b.compact:
        comp = run([*index, "--compact"], env, sample=True)
        rows["compaction"] = {**comp.as_json(), "store_bytes_after": sum(store_bytes(dot_cce).values())}
    else:
        rows["compaction"] = "not available in this build"

    # Fresh cce search against cce --version: warm both, then interleave.
    run([cce, "--version"], env)
    run([cce, "search", queries[0], "--dir", str(tree), "--no-metrics"], env)
    searches, versions = [], []
    for i in range(args.proc_reps):
        versions.append(run([cce, "--version"], env))
        searches.append(run([cce, "search", queries[i % len(queries)], "--dir", str(tree), "--no-metrics"], env))
    rows["search"] = {"median_s": round(statistics.median(r.seconds for r in searches), 4),
                      "cpu_median_s": round(statistics.median(r.cpu for r in searches), 4),
                      "peak_rss_mib": round(max(r.maxrss_kib for r in searches) / MIB, 1),
                      "runs": len(searches)}
    rows["version"] = {"median_s": round(statistics.median(r.seconds for r in versions), 4),
                       "cpu_median_s": round(statistics.median(r.cpu for r in versions), 4),
                       "peak_rss_mib": round(max(r.maxrss_kib for r in versions) / MIB, 1),
                       "runs": len(versions)}
    rows["rss_floor_mib"] = round(own_maxrss_mib(), 1)
    log(f"{kind}: cce search {rows['search']['median_s']:.3f}s vs --version {rows['version']['median_s']:.3f}s")
    rows["mcp"] = measure_mcp(cce, tree, env, queries, args.mcp_starts, args.mcp_rounds, base)
    log(f"{kind}: mcp start-up {rows['mcp']['startup_s']:.2f}s, first answer {rows['mcp']['first_answer_s']:.3f}s,"
        f" warm p50 {rows['mcp']['warm']['p50_ms']:.1f} ms")


def finish_rows(kind: str, rows: dict[str, Any]) -> dict[str, Any]:
    """Ratios and the verdict of every target; a target whose measure was skipped has ``pass`` None."""
    one = rows["index_one_edit"]
    fresh = "index_fresh" in rows  # absent when a reused store was not built by this script
    fresh_s = rows["index_fresh"]["wall_s"] if fresh else None

    def of_fresh(value: float) -> float | None:
        return value / fresh_s if fresh_s else None

    values: dict[str, float | bool | None] = {
        "index_vs_floor": fresh_s / rows["parse_floor"]["wall_s"] if fresh_s else None,
        "index_vs_floor_cpu": rows["index_fresh"]["cpu_s"] / rows["parse_floor"]["cpu_s"] if fresh else None,
        "index_s": fresh_s,
        "index_rss_mib": rows["index_fresh"]["peak_rss_mib"] if fresh else None,
        "store_vs_source": rows["store"]["bytes"] / rows["source"]["bytes"] if fresh else None,
        "store_vs_tree": rows["store"]["bytes"] / rows["source"]["tree_bytes"] if fresh else None,
        "unchanged_vs_fresh": of_fresh(rows["index_unchanged"]["wall_s"]),
        "one_edit_vs_fresh": of_fresh(one["wall_s"]),
        "one_edit_s": one["wall_s"],
        "one_edit_cpu_s": one["cpu_s"],
        "one_edit_max_s": one["wall_max_s"],
        "one_edit_vs_version": one["wall_s"] / one["version_wall_s"],
        "mixed_vs_fresh": of_fresh(rows["index_mixed"]["wall_s"]),
        "search_vs_version": rows["search"]["median_s"] / rows["version"]["median_s"],
        **{f"search_after_{k}_vs_version": float(v["ratio"]) for k, v in rows["search_after_reindexes"].items()},
        "mcp_startup_s": rows["mcp"]["startup_s"],
        "mcp_startup_vs_version": rows["mcp"]["startup_s"] / rows["version"]["median_s"],
        "mcp_first_s": rows["mcp"]["first_answer_s"],
        "mcp_warm_p50_ms": rows["mcp"]["warm"]["p50_ms"],
        "identical": rows["identity"]["identical"],
    }
    results = []
    for t in targets_for(kind):
        value = values[t.key]
        ok = None if value is None else value is True if isinstance(t.bound, bool) else float(value) <= t.bound
        results.append({"key": t.key, "label": t.label, "bound": t.bound, "value": value, "pass": ok})
    rows["values"] = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in values.items()}
    rows["targets"] = results
    return rows


# -- rendering -----------------------------------------------------------------------------------------


def _passed(ok: bool | None) -> str:
    return "not measured" if ok is None else "pass" if ok else "**MISS**"


def _verdict(r: dict[str, Any], key: str) -> tuple[str, str]:
    for t in r["targets"]:
        if t["key"] == key:
            bound = t["bound"]
            text = "identical" if isinstance(bound, bool) else f"≤ {bound:g}"
            return text, _passed(t["pass"])
    return "—", ""


def render(name: str, r: dict[str, Any]) -> str:
    v, one = r["values"], r["index_one_edit"]
    fr, fl, s = r.get("index_fresh"), r.get("parse_floor"), r.get("source")

    def pct(key: str) -> str:
        return "—" if v[key] is None else f"{v[key]:.1%}"

    fresh_cell = f"fresh index {fr['wall_s']:.2f} s" if fr else "fresh index not measured"

    def reindex(label: str, row: dict[str, Any], ratio_key: str, target_key: str | None = None) -> str:
        tgt, ok = "—", ""
        for t in r["targets"]:
            if t["key"] == target_key:
                tgt, ok = f"≤ {t['bound']:.0%}", _passed(t["pass"])
        return (f"| {label} | {row['wall_s']:.2f} s, {row['peak_rss_mib']:.0f} MiB | {fresh_cell} "
                f"| {pct(ratio_key)} | {tgt} | {ok} |")

    if s is not None:
        head = (f"### {name}: {s['files']} files the walker keeps ({s['bytes'] / 1e6:.1f} MB); "
                f"tree {s['tree_files']} files")
    else:
        head = f"### {name}: {r['manifest_files']} files in the tree"
    lines = [head, ""]
    reused = r.get("reused_store")
    if reused and reused.get("built"):
        lines += [f"Reused store (`--reuse-store`), built {reused['built']} by {reused['cce_version']}; the "
                  "fresh-index rows are that build's.", ""]
    elif reused:
        lines += ["Reused store (`--reuse-store`) that this script did not build: no fresh-index rows.", ""]
    lines += ["| measure | value | floor | ratio | target | result |", "|---|---|---|---|---|---|"]
    if fr and fl and s:
        lines.append(
            f"| `cce index`, fresh | {fr['wall_s']:.2f} s (cpu {fr['cpu_s']:.1f} s) | parse floor {fl['wall_s']:.2f} s "
            f"(cpu {fl['cpu_s']:.1f} s) | {v['index_vs_floor']:.2f}× (cpu {v['index_vs_floor_cpu']:.2f}×) | "
            f"{_verdict(r, 'index_vs_floor')[0]}× | {_verdict(r, 'index_vs_floor')[1]} |")
        if any(t["key"] == "index_s" for t in r["targets"]):
            tgt, ok = _verdict(r, "index_s")
            lines.append(f"| `cce index`, fresh, wall | {fr['wall_s']:.2f} s | | | {tgt} s | {ok} |")
        tgt, ok = _verdict(r, "index_rss_mib")
        lines += [
            f"| peak RSS of `cce index` | {fr['peak_rss_mib']:.0f} MiB (group: RSS {fr['group_peak_rss_mib']:.0f}, "
            f"PSS {fr['group_peak_pss_mib']:.0f} MiB) | parse floor {fl['peak_rss_mib']:.0f} MiB | "
            f"| {tgt} MiB | {ok} |",
            f"| store size | {r['store']['bytes'] / 1e6:.1f} MB | source the walker keeps {s['bytes'] / 1e6:.1f} MB "
            f"(whole tree {s['tree_bytes'] / 1e6:.1f} MB) | {v['store_vs_source']:.2f}× "
            f"(tree {v['store_vs_tree']:.2f}×) | "
            f"{_verdict(r, 'store_vs_source')[0]}× | {_verdict(r, 'store_vs_source')[1]} |",
        ]
    lines += [
        reindex("re-index, nothing changed", r["index_unchanged"], "unchanged_vs_fresh"),
        reindex(f"re-index after editing one file (median of {one['edits']})", one, "one_edit_vs_fresh",
                "one_edit_vs_fresh"),
    ]
    tgt, ok = _verdict(r, "one_edit_s")
    lines += [
        f"| re-index after editing one file, wall / cpu (median of {one['edits']}) | {one['wall_s']:.2f} s / "
        f"{one['cpu_s']:.2f} s | `cce --version` {one['version_wall_s']:.3f} s / {one['version_cpu_s']:.3f} s | "
        f"{v['one_edit_vs_version']:.1f}× | {tgt} s (wall) | {ok} |",
        f"| re-index after editing one file, cpu (median of {one['edits']}) | {one['cpu_s']:.2f} s | | | "
        f"{_verdict(r, 'one_edit_cpu_s')[0]} s (cpu) | {_verdict(r, 'one_edit_cpu_s')[1]} |",
        f"| slowest re-index after editing one file (of {one['edits']}) | {v['one_edit_max_s']:.2f} s | | | "
        f"{_verdict(r, 'one_edit_max_s')[0]} s | {_verdict(r, 'one_edit_max_s')[1]} |",
        reindex("re-index after 3 edits, 2 adds, 2 deletes", r["index_mixed"], "mixed_vs_fresh"),
    ]
    comp = r["compaction"]
    if isinstance(comp, dict):
        lines.append(f"| `cce index --compact` | {comp['wall_s']:.2f} s, {comp['peak_rss_mib']:.0f} MiB; store "
                     f"{comp['store_bytes_after'] / 1e6:.1f} MB | | | — | |")
    else:
        lines.append(f"| `cce index --compact` | {comp} | | | — | |")
    se, ve, m = r["search"], r["version"], r["mcp"]
    tgt, ok = _verdict(r, "search_vs_version")
    lines.append(f"| fresh `cce search` (median of {se['runs']}) | {se['median_s']:.3f} s, "
                 f"{se['peak_rss_mib']:.0f} MiB | `cce --version` {ve['median_s']:.3f} s | "
                 f"{v['search_vs_version']:.2f}× | {tgt}× | {ok} |")
    for n, row in r.get("search_after_reindexes", {}).items():
        tgt, ok = _verdict(r, f"search_after_{n}_vs_version")
        label = "on the fresh store" if n == "0" else f"after {n} incremental re-index{'es' if n != '1' else ''}"
        lines.append(f"| fresh `cce search` {label} (median of {row['runs']}) | {row['search_s']:.3f} s | "
                     f"`cce --version` {row['version_s']:.3f} s | {row['ratio']:.2f}× | {tgt}× | {ok} |")
    tgt, ok = _verdict(r, "mcp_startup_s")
    lines.append(f"| `cce mcp` start-up (median of {m['starts']}) | {m['startup_s']:.3f} s | `cce --version` "
                 f"{ve['median_s']:.3f} s | {v['mcp_startup_vs_version']:.2f}× | {tgt} s | {ok} |")
    tgt, ok = _verdict(r, "mcp_first_s")
    lines.append(f"| first `context_search` | {m['first_answer_s'] * 1000:.0f} ms | | | {tgt} s | {ok} |")
    tgt, ok = _verdict(r, "mcp_warm_p50_ms")
    lines.append(f"| warm `context_search` p50 ({m['warm']['n']} calls) | {m['warm']['p50_ms']:.1f} ms "
                 f"(p95 {m['warm']['p95_ms']:.1f}) | | | {tgt} ms | {ok} |")
    idn = r["identity"]
    tgt, ok = _verdict(r, "identical")
    same = idn.get("note", "") if idn["identical"] is None else "identical" if idn["identical"] else \
        f"{idn['differing']} differ"
    lines.append(f"| incremental vs fresh, {idn['queries']} queries | {same} | | | {tgt} | {ok} |")
    lines.append("")
    lines.append(f"RSS rows are `ru_maxrss` of the child (max of it and its reaped workers); this driver's own "
                 f"high-water mark, below which no child can read, is {r['rss_floor_mib']:.0f} MiB.")
    return "\n".join(lines) + "\n"


# -- main ---------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--rails", type=Path, help="rails checkout: build and measure the N×rails tree")
    ap.add_argument("--copies", type=int, default=4, help="rails copies (default 4)")
    ap.add_argument("--tree75k", action="store_true", help="build and measure the tree of repeated corpora")
    ap.add_argument("--corpora", type=Path, help="directory of checkouts for --tree75k")
    ap.add_argument("--min-files", type=int, default=75_000, help="--tree75k size (default 75000)")
    ap.add_argument("--quick", action="store_true", help="smoke run on one small corpus (--corpus)")
    ap.add_argument("--corpus", type=Path, default=Path("/work/corpora/jq"), help="corpus for --quick")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "cce-scale-bench",
                    help="where trees are built and cached (default: $TMPDIR/cce-scale-bench)")
    ap.add_argument("--runs", type=int, default=1, help="parse floor / fresh index rounds, best kept (default 1)")
    ap.add_argument("--proc-reps", type=int, default=None, help="cce search / --version pairs (default 7, quick 5)")
    ap.add_argument("--mcp-starts", type=int, default=None, help="measured cce mcp start-ups (default 3, quick 1)")
    ap.add_argument("--mcp-rounds", type=int, default=None,
                    help="warm rounds over the 20 queries through MCP (default 3, quick 1)")
    ap.add_argument("--seed", type=int, default=13, help="which files get edited (default 13)")
    ap.add_argument("--cce", help="cce executable (default: the one beside this Python)")
    ap.add_argument("--keep-stores", action="store_true", help="leave the stores in the work dir afterwards")
    ap.add_argument("--reuse-store", action="store_true",
                    help="keep each tree's store (TREE/.cce) between runs and start from it when present instead "
                         "of a fresh index; the fresh-index rows are then those of the run that built it")
    ap.add_argument("--check-identity", action="store_true",
                    help="with --reuse-store: still build the fresh reference store for the identity check")
    ap.add_argument("--out", help="write the JSON report here")
    ap.add_argument("--plan-child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--answer-child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.plan_child:
        return plan_child(*args.plan_child)
    if args.answer_child:
        return answer_child(args.answer_child[0], args.answer_child[1], int(args.answer_child[2]))
    if not (args.rails or args.tree75k or args.quick):
        ap.error("give --rails PATH, --tree75k --corpora DIR, or --quick")
    if args.tree75k and not args.corpora:
        ap.error("--tree75k needs --corpora DIR")
    for given in (args.rails, args.corpora, args.corpus if args.quick else None):
        if given is not None and not given.is_dir():
            ap.error(f"not a directory: {given}")
    quick = args.quick
    args.proc_reps = args.proc_reps or (5 if quick else 7)
    args.mcp_starts = args.mcp_starts or (1 if quick else 3)
    args.mcp_rounds = args.mcp_rounds or (1 if quick else 3)
    if min(args.runs, args.proc_reps, args.mcp_starts, args.mcp_rounds) < 1 or args.proc_reps < 5:
        ap.error("--runs, --mcp-starts and --mcp-rounds must be at least 1, --proc-reps at least 5")

    cce = find_cce(args.cce)
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    # Bytecode caching on, as an installed cce has it (the machine sets PYTHONDONTWRITEBYTECODE=1).
    env = child_env("cache", work)
    help_text = run([cce, "index", "--help"], env).stdout
    bench = Bench(args, cce, env, work, "--compact" in help_text)
    started = time.time()
    trees: dict[str, Any] = {}
    jobs: list[tuple[str, Path, list[tuple[str, Path]], str | None]] = []
    if quick:
        jobs.append(("quick", work / f"quick-{args.corpus.resolve().name}", [(args.corpus.resolve().name,
                                                                                args.corpus.resolve())],
                     args.corpus.resolve().name))
    if args.rails:
        jobs.append(("rails4", work / f"rails{args.copies}", rails_layout(args.rails.resolve(), args.copies), None))
    if args.tree75k:
        jobs.append(("tree75k", work / "tree75k", corpora_layout(args.corpora.resolve(), args.min_files), None))
    for kind, base, layout, hint in jobs:
        manifest = build_tree(base, layout)
        trees[kind] = measure_tree(bench, kind, base, manifest, hint)
    report = {
        "schema": SCHEMA,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "seconds": round(time.time() - started, 1),
        "cce": cce,
        "machine": machine_facts(),
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                     if k not in ("plan_child", "answer_child")},
        "compact_available": bench.compact,
        "trees": trees,
    }
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with contextlib.suppress(BrokenPipeError):
        for kind, rows in trees.items():
            sys.stdout.write(render(kind, rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Warm ``context_search`` latency through the real MCP server, against the in-process search floor.

An agent pays for every tool call in wall time, so what matters is the round
trip it sees: request out over stdio, the server's parsing and dispatch, the
search, the formatting and the metrics line, the response back and the
client's decoding. This script measures exactly that, with the official MCP
SDK's stdio client driving a ``cce mcp`` subprocess, and divides it by the
cost of the search alone (``Searcher.search`` in this process, same queries,
same ``top_k``, graph expansion on as the tool's default), measured in the
same run. The ratio says how much the protocol layer adds; the milliseconds
are indicative only.

What is measured
----------------
1. The corpus is indexed into a temporary store (hash embedder, protection
   on), or ``--store`` is copied there, so the server's metrics lines land in
   the temporary directory and neither the corpus nor the given store is
   written to.
2. ``cce mcp --dir CORPUS --store TMP/index.cce`` is started through
   ``mcp.client.stdio.stdio_client``; start-up (spawn to initialised) and the
   first call are reported separately (cold).
3. ``--warmup`` passes over the queries on every side, then ``--reps``
   rounds. Each round runs the query set in-process, then through the server,
   so a slow spell on a shared machine hits both. Percentiles are by nearest
   rank over every call.
4. Between the two, the same tool without any transport: the server's
   session object (``cce_core.agents.mcp_server.McpSession``) called in this
   process on its own copy of the store. Floor → tool → MCP splits the cost
   into search, formatting (compression, metrics line) and protocol.
5. The server's own view: the ``latency_ms`` of the search events it appended
   to the metrics log beside the store.

Usage::

    python benchmarks/mcp_latency.py CORPUS [--reps 30] [--warmup 2] [--top-k 8] [--json]
    python benchmarks/mcp_latency.py CORPUS --store CORPUS/.cce/index.cce --lang c

Queries come from ``cce_core/data/bench_queries.json`` (the set naming the
corpus, or ``--lang``), else a generic list, as in ``perf.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# The same default `cce` itself applies before numpy loads: one query is one matrix-vector product.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
# perf.py is a sibling script, not a package.
from perf import (
    Contention,
    child_env,
    corpus_commit,
    corpus_queries,
    find_cce,
    machine_facts,
    nearest_rank,
    wait_idle,
)

SCHEMA = "cce.mcp-latency/v1"
TARGET_P50_MS = 5.0


def _log(quiet: bool):
    return (lambda msg: None) if quiet else (lambda msg: print(f"mcp_latency: {msg}", file=sys.stderr, flush=True))


def prepare_store(corpus: Path, given: Path | None, work: Path, log) -> tuple[Path, dict[str, Any]]:
    """A store the run may write beside: a copy of ``given``, or a fresh index of ``corpus``."""
    store = work / "store" / "index.cce"
    store.parent.mkdir(parents=True)
    if given is not None:
        if not given.is_file():
            raise SystemExit(f"mcp_latency: no store at {given}")
        shutil.copyfile(given, store)
        return store, {"store": f"copy of {given}"}
    from cce_core.indexing.indexer import index_directory
    from cce_core.plugins.host import default_host

    host = default_host()
    host.require_healthy()
    log(f"indexing {corpus} into a temporary store")
    _, stats = index_directory(corpus, store, host, host.embedder("hash"), protect_secrets=True)
    return store, {"store": "fresh temporary index (hash embedder)", "index_seconds": round(stats.seconds, 3)}


def make_floor(store: Path):
    """A warm in-process ``Searcher`` over ``store``, with the embedder that built it."""
    from cce_core.indexing.store import load_store
    from cce_core.plugins.host import default_host
    from cce_core.retrieval.searcher import Searcher

    data = load_store(store)
    return Searcher(data, default_host().embedder(data.embedder or "hash")), data


def _sdk_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mcp")
    except PackageNotFoundError:
        return "-"


def make_tool_session(corpus: Path, store: Path, work: Path):
    """The server's session object in this process (tool without transport), on its own store copy."""
    try:
        from cce_core.agents.mcp_server import McpSession
    except ImportError:
        return None
    copy = work / "inproc" / "index.cce"
    copy.parent.mkdir()
    shutil.copyfile(store, copy)
    return McpSession(corpus, copy)


def summarize(values_ms: list[float]) -> dict[str, float]:
    return {
        "n": len(values_ms),
        "p50_ms": round(nearest_rank(values_ms, 50), 3),
        "p95_ms": round(nearest_rank(values_ms, 95), 3),
        "mean_ms": round(statistics.fmean(values_ms), 3) if values_ms else 0.0,
        "min_ms": round(min(values_ms), 3) if values_ms else 0.0,
    }


def server_latencies(store: Path) -> list[float]:
    """``latency_ms`` of the MCP search events the server logged beside ``store``."""
    out = []
    try:
        lines = (store.parent / "metrics.jsonl").read_text(encoding="utf-8").split("\n")
    except OSError:
        return out
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") == "search" and event.get("source") == "mcp":
            value = event.get("latency_ms")
            if isinstance(value, int | float):
                out.append(float(value))
    return out


def _server_pid(cce_args: list[str]) -> int | None:
    """The pid of the ``cce mcp`` child this process started (Linux /proc), or None."""
    me = os.getpid()
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == me and all(a.encode() in argv for a in cce_args):
            return int(entry)
    return None


def _cpu_seconds_of(pid: int | None) -> float | None:
    """User + system CPU seconds of a live process, from /proc/PID/stat."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Clock:
    """Wall and CPU time of one measured side, per call."""

    def __init__(self) -> None:
        self.wall_ms: list[float] = []
        self.cpu_s = 0.0

    def add(self, wall_ms: float, cpu_s: float) -> None:
        self.wall_ms.append(wall_ms)
        self.cpu_s += cpu_s

    def cpu_ms_per_call(self) -> float | None:
        return round(self.cpu_s * 1000.0 / len(self.wall_ms), 3) if self.wall_ms else None


async def drive(args: argparse.Namespace, corpus: Path, store: Path, cce: str, work: Path, queries: list[str],
                searcher, tool_session, log) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    arguments = {"top_k": args.top_k}
    if args.detail:
        arguments["detail"] = args.detail
    server_args = ["mcp", "--dir", str(corpus), "--store", str(store)]
    params = StdioServerParameters(command=cce, args=server_args, env=child_env(args.bytecode, work))
    floor, tool, mcp = _Clock(), _Clock(), _Clock()
    sizes: list[int] = []

    def floor_pass(record: bool) -> None:
        for q in queries:
            cpu, started = time.process_time(), time.perf_counter()
            searcher.search(q, top_k=args.top_k, graph=True)
            if record:
                floor.add((time.perf_counter() - started) * 1000.0, time.process_time() - cpu)
        if tool_session is None:
            return
        for q in queries:
            cpu, started = time.process_time(), time.perf_counter()
            text, is_error = tool_session.call("context_search", {"query": q, **arguments})
            if record:
                tool.add((time.perf_counter() - started) * 1000.0, time.process_time() - cpu)
            if is_error:
                raise SystemExit(f"mcp_latency: in-process context_search failed for {q!r}: {text[:300]}")

    async def mcp_call(session, q: str, record: bool) -> float:
        cpu, started = time.process_time(), time.perf_counter()
        result = await session.call_tool("context_search", {"query": q, **arguments})
        elapsed = (time.perf_counter() - started) * 1000.0
        if record:
            mcp.add(elapsed, time.process_time() - cpu)
        text = "".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:
            raise SystemExit(f"mcp_latency: context_search failed for {q!r}: {text[:300]}")
        if not text:
            raise SystemExit(f"mcp_latency: context_search returned no text for {q!r}")
        sizes.append(len(text.encode("utf-8")))
        return elapsed

    with open(work / "server.stderr", "w+", encoding="utf-8") as errlog:
        try:
            spawned = time.perf_counter()
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                startup_ms = (time.perf_counter() - spawned) * 1000.0
                tools = [t.name for t in (await session.list_tools()).tools]
                if "context_search" not in tools:
                    raise SystemExit(f"mcp_latency: the server lists no context_search tool (has: {tools})")
                first_ms = await mcp_call(session, queries[0], False)
                log(f"server up in {startup_ms:.0f} ms, first call {first_ms:.1f} ms; warming up")
                for _ in range(args.warmup):
                    floor_pass(False)
                    for q in queries:
                        await mcp_call(session, q, False)
                sizes.clear()
                pid = _server_pid(server_args)
                log(f"measuring {args.reps} rounds × {len(queries)} queries")
                contention = Contention()
                server_cpu = 0.0 if pid is not None else None
                for _ in range(args.reps):
                    floor_pass(True)
                    before = _cpu_seconds_of(pid)
                    for q in queries:
                        await mcp_call(session, q, True)
                    after = _cpu_seconds_of(pid)
                    if server_cpu is not None and before is not None and after is not None:
                        server_cpu += after - before
                foreign = contention.foreign_share()
                measured = time.perf_counter() - contention.wall0
        except BaseException:
            errlog.seek(0)
            tail = errlog.read().strip().split("\n")[-5:]
            if any(tail):
                print("mcp_latency: server stderr:\n  " + "\n  ".join(tail), file=sys.stderr)
            raise
    if foreign is not None and server_cpu is not None:
        # Contention counts every process but this one; the server's CPU is ours too.
        foreign = max(foreign - server_cpu / (measured * (os.cpu_count() or 1)), 0.0)
    n = len(mcp.wall_ms)
    return {
        "startup_ms": round(startup_ms, 1),
        "first_call_ms": round(first_ms, 3),
        "mcp": summarize(mcp.wall_ms),
        "floor": summarize(floor.wall_ms),
        "tool_in_process": summarize(tool.wall_ms) if tool.wall_ms else None,
        "cpu_ms_per_call": {
            "floor": floor.cpu_ms_per_call(),
            "tool_in_process": tool.cpu_ms_per_call(),
            "mcp_server": None if server_cpu is None or not n else round(server_cpu * 1000.0 / n, 3),
            "mcp_client": mcp.cpu_ms_per_call(),
        },
        "mean_response_bytes": round(statistics.fmean(sizes)) if sizes else 0,
        "foreign_cpu_share": None if foreign is None else round(foreign, 3),
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    import anyio

    corpus = Path(args.corpus).resolve()
    if not corpus.is_dir():
        raise SystemExit(f"mcp_latency: not a directory: {corpus}")
    cce = find_cce(args.cce)
    log = _log(args.quiet)
    source, queries = corpus_queries(corpus, args.lang)
    work = Path(tempfile.mkdtemp(prefix="cce-mcp-latency-"))
    try:
        store, store_info = prepare_store(corpus, Path(args.store).resolve() if args.store else None, work, log)
        searcher, data = make_floor(store)
        tool_session = make_tool_session(corpus, store, work)
        idle = wait_idle(args.wait_idle, log) if args.wait_idle > 0 else None
        result = anyio.run(drive, args, corpus, store, cce, work, queries, searcher, tool_session, log)
        server = server_latencies(store)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    mcp, floor = result["mcp"], result["floor"]
    return {
        "schema": SCHEMA,
        "corpus": str(corpus),
        "commit": corpus_commit(corpus, args.commit),
        "files": len(data.files),
        "chunks": len(data.chunks),
        **store_info,
        "queries": {"source": source, "count": len(queries)},
        "top_k": args.top_k,
        "detail": args.detail or "server default",
        "warmup_passes": args.warmup,
        "rounds": args.reps,
        "cce": cce,
        "machine": {**machine_facts(), "mcp_sdk": _sdk_version()},
        "idle_share_before": None if idle is None else round(idle, 3),
        **result,
        "server_search_latency": summarize(server[-len(queries) * args.reps:]) if server else None,
        "ratio_p50": round(mcp["p50_ms"] / floor["p50_ms"], 2) if floor["p50_ms"] else None,
        "ratio_p95": round(mcp["p95_ms"] / floor["p95_ms"], 2) if floor["p95_ms"] else None,
        "overhead_p50_ms": round(mcp["p50_ms"] - floor["p50_ms"], 3),
        "cpu_ratio_server": _ratio(result["cpu_ms_per_call"]["mcp_server"], result["cpu_ms_per_call"]["floor"]),
        "target_p50_ms": TARGET_P50_MS,
        "target_met": mcp["p50_ms"] <= TARGET_P50_MS,
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a is not None and b else None


def render(r: dict[str, Any]) -> str:
    mcp, floor, server = r["mcp"], r["floor"], r["server_search_latency"]
    lines = [
        f"corpus   : {r['corpus']} @ {r['commit']} — {r['files']} files, {r['chunks']} chunks ({r['store']})",
        f"queries  : {r['queries']['count']} ({r['queries']['source']}), top_k {r['top_k']}, detail {r['detail']}, "
        f"{r['warmup_passes']} warm-up pass(es), {r['rounds']} rounds → {mcp['n']} calls",
        f"server   : start-up {r['startup_ms']:.0f} ms, first call {r['first_call_ms']:.1f} ms, "
        f"mean response {r['mean_response_bytes']} bytes",
        f"context_search via MCP : p50 {mcp['p50_ms']:.2f} ms  p95 {mcp['p95_ms']:.2f} ms  "
        f"mean {mcp['mean_ms']:.2f}  min {mcp['min_ms']:.2f}",
        f"Searcher.search floor  : p50 {floor['p50_ms']:.2f} ms  p95 {floor['p95_ms']:.2f} ms  "
        f"mean {floor['mean_ms']:.2f}  min {floor['min_ms']:.2f}",
    ]
    tool = r["tool_in_process"]
    if tool:
        lines.append(f"tool in-process (no MCP): p50 {tool['p50_ms']:.2f} ms  p95 {tool['p95_ms']:.2f} ms  "
                     f"mean {tool['mean_ms']:.2f}  min {tool['min_ms']:.2f}")
    if server:
        lines.append(f"search as the server logs it: p50 {server['p50_ms']:.2f} ms  p95 {server['p95_ms']:.2f} ms")
    cpu = r["cpu_ms_per_call"]
    if cpu["mcp_server"] is not None:
        lines.append(f"CPU per call: floor {cpu['floor']:.2f} ms · tool in-process {cpu['tool_in_process'] or 0:.2f} ms"
                     f" · MCP server {cpu['mcp_server']:.2f} ms + client {cpu['mcp_client']:.2f} ms "
                     f"(server / floor {r['cpu_ratio_server']}×)")
    lines.append(f"MCP / floor: p50 {r['ratio_p50']}×  p95 {r['ratio_p95']}×  (protocol + formatting add "
                 f"{r['overhead_p50_ms']:.2f} ms at p50)")
    lines.append(f"target p50 ≤ {r['target_p50_ms']:g} ms: {'pass' if r['target_met'] else 'MISS'}")
    if r["foreign_cpu_share"] is not None:
        lines.append(f"other processes used {r['foreign_cpu_share']:.0%} of the CPUs while measuring")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("corpus", help="directory whose code the server searches")
    parser.add_argument("--store", help="use a copy of this store instead of indexing the corpus")
    parser.add_argument("--lang", help="labeled query set to use (a key of bench_queries.json)")
    parser.add_argument("--top-k", type=int, default=8, help="context_search top_k (default: 8, the tool's)")
    parser.add_argument("--detail", choices=["signature", "compact", "full"], help="context_search detail")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured passes over the queries (default: 2)")
    parser.add_argument("--reps", type=int, default=30, help="measured rounds over the queries (default: 30)")
    parser.add_argument("--cce", help="the cce executable (default: beside this Python, else on PATH)")
    parser.add_argument("--commit", help="corpus commit to record (default: its git HEAD)")
    parser.add_argument("--bytecode", choices=["cache", "env"], default="cache",
                        help="server bytecode: a private pycache (default) or the environment as is")
    parser.add_argument("--wait-idle", type=float, default=0.0, help="wait up to N s for a quiet machine first")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--json-out", help="also write the JSON report to this file")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    if args.reps < 1 or args.warmup < 0 or args.top_k < 1:
        parser.error("--reps and --top-k must be at least 1, --warmup at least 0")
    report = measure(args)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

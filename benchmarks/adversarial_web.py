#!/usr/bin/env python3
"""The long adversarial run against the two servers: ``cce dashboard`` and ``cce mcp``.

The fast tests (tests/test_dashboard_hardening.py, tests/test_mcp_transport.py,
tests/test_input_hardening.py) pin each rule once. This script tries many more
inputs, as an attacker and as an unlucky client would, and prints how many it
tried and how many were handled as the rules say (``tried / passed``), per
group and in total. Exit status 1 when anything failed.

Dashboard (a real ``cce dashboard`` on 127.0.0.1, raw sockets):
  * Host headers: the served names, missing, duplicated (either order, any
    case), foreign names and addresses, wrong or missing port, folded or padded;
  * request targets: absolute-form, authority-form, asterisk, ``//`` paths,
    over-long lines; every method with a good and a foreign Host;
  * protocol versions and broken request lines, header floods;
  * slow clients: idle, partial head, no newline, a slowloris dribble, an
    HTTP/0.9 line; each must be closed or answered within the deadline while
    another client is served;
  * 200 and then 400 concurrent requests, every one answered.

MCP (a real ``cce mcp`` over a raw pipe, on a two-file index):
  * the malformed lines of the fast test plus seeded random fuzz (random bytes,
    mutated valid requests); after each line a ``ping`` must still be answered,
    every output line must be JSON-RPC, and a line the rules call malformed
    must get its error;
  * extreme tool arguments (huge, negative, wrong-typed numbers);
  * 10 MB arguments to several tools, resident memory before and after;
  * 1,000 rapid ``context_search`` calls, resident memory sampled.

Usage::

    python benchmarks/adversarial_web.py [--fuzz 2000] [--seed 7] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cce_core.agents.mcp_transport import MAX_MESSAGE_BYTES, classify
from cce_core.observability.dashboard_server import REQUEST_DEADLINE_SECONDS


def cce_executable() -> str:
    beside = Path(sys.executable).with_name("cce")
    return str(beside) if beside.exists() else (shutil.which("cce") or "cce")


class Tally:
    """tried / passed per group, with the first failures kept for the report."""

    def __init__(self) -> None:
        self.groups: dict[str, list[int]] = {}
        self.failures: list[str] = []
        self.facts: dict[str, Any] = {}

    def check(self, group: str, name: str, ok: bool, detail: Any = "") -> bool:
        counts = self.groups.setdefault(group, [0, 0])
        counts[0] += 1
        counts[1] += 1 if ok else 0
        if not ok and len(self.failures) < 50:
            self.failures.append(f"{group}: {name}: {detail}")
        return ok


# --------------------------------------------------------------------------- dashboard


def exchange(port: int, data: bytes, *, timeout: float = 15) -> tuple[bytes, float]:
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            if data:
                s.sendall(data)
            out = b""
            while chunk := s.recv(65536):
                out += chunk
        except OSError:
            out = b""
    return out, time.monotonic() - start


def status_of(raw: bytes) -> int | None:
    try:
        return int(raw.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def _concurrent_get(port: int, request: bytes, barrier: threading.Barrier, statuses: list[int | None]) -> None:
    try:
        barrier.wait(timeout=60)
        raw, _ = exchange(port, request, timeout=60)
        status = status_of(raw)
    except Exception:
        status = None
    statuses.append(status)  # list.append is atomic


def start_dashboard(log: Path) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([cce_executable(), "dashboard", "--metrics", str(log), "--port", "0", "--no-open"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    port = int(first.split("127.0.0.1:", 1)[1].split("/", 1)[0])
    return proc, port


def dashboard_probes(tally: Tally, work: Path) -> None:
    log = work / "metrics.jsonl"
    log.write_text('{"schema":"cce.metrics/v1","event":"search","ts":"2026-07-04T10:00:00Z","id":"aaaaaaaaaaaa",'
                   '"query":"secret query","result_count":1,"tokens_saved":5,"savings_ratio":0.5,"top_score":0.9,'
                   '"empty":false,"low_confidence":false}\n', encoding="utf-8")
    proc, port = start_dashboard(log)
    ours = f"127.0.0.1:{port}".encode()
    try:
        def probe(group: str, name: str, data: bytes, want: Callable[[int | None, bytes], bool]) -> None:
            raw, _ = exchange(port, data)
            status = status_of(raw)
            leaked = b"secret query" in raw and status != 200
            tally.check(group, name, want(status, raw) and not leaked, (status, raw[:120]))

        def req(host_lines: bytes, target: bytes = b"/api/metrics", method: bytes = b"GET",
                version: bytes = b"HTTP/1.1") -> bytes:
            return method + b" " + target + b" " + version + b"\r\n" + host_lines + b"\r\n"

        def is_(code: int) -> Callable[[int | None, bytes], bool]:
            return lambda status, _raw: status == code

        for name in (b"127.0.0.1", b"localhost", b"LocalHost", b"[::1]"):
            probe("host", f"served {name!r}", req(b"Host: " + name + b":%d\r\n" % port), is_(200))
        probe("host", "missing", req(b""), is_(400))
        probe("host", "missing, HTTP/1.0", req(b"", version=b"HTTP/1.0"), is_(400))
        for a, b in ((ours, b"evil.example"), (b"evil.example", ours), (ours, ours), (ours, b"")):
            probe("host", f"duplicate {a!r},{b!r}", req(b"Host: " + a + b"\r\nhOsT: " + b + b"\r\n"), is_(400))
        foreign = [b"evil.example", b"evil.example:%d" % port, b"127.0.0.1.evil.example:%d" % port,
                   b"localhost.evil.example:%d" % port, b"127.0.0.2:%d" % port, b"0.0.0.0:%d" % port,
                   b"2130706433:%d" % port, b"0x7f000001:%d" % port, b"127.1:%d" % port,
                   b"[::ffff:127.0.0.1]:%d" % port,
                   b"localhost", b"127.0.0.1", b"127.0.0.1:80", b"127.0.0.1:%d" % (port + 1), b"127.0.0.1:0%d" % port,
                   b"127.0.0.1:%d@evil.example" % port, b"evil.example#@127.0.0.1:%d" % port, b"",
                   b"127.0.0.1:%d evil" % port, b"localhost.:%d" % port, b"127.0.0.1:%d:%d" % (port, port),
                   b"[::1]", b"\xff\xfe:%d" % port, b"127.0.0.1:99999999999999999999999"]
        for host in foreign:
            probe("host", f"foreign {host!r}", req(b"Host: " + host + b"\r\n"), lambda s, _r: s in (400, 403))
        probe("host", "folded value", req(b"Host: " + ours + b"\r\n evil.example\r\n"), lambda s, _r: s in (400, 403))
        probe("host", "space before colon", req(b"Host : evil.example\r\n"), lambda s, _r: s in (400, 403))

        for target in (b"http://evil.example/api/metrics", b"http://" + ours + b"/api/metrics",
                       b"https://evil.example/", b"HTTP://EVIL.EXAMPLE/api/metrics", b"evil.example:443", b"*",
                       b"api/metrics"):
            probe("target", f"{target!r}", req(b"Host: " + ours + b"\r\n", target), is_(400))
        probe("target", "// path", req(b"Host: " + ours + b"\r\n", b"//evil.example/api/metrics"), is_(404))
        probe("target", "70 KB path", req(b"Host: " + ours + b"\r\n", b"/" + b"a" * 70_000), is_(414))
        probe("target", "query ignored", req(b"Host: " + ours + b"\r\n", b"/api/health?x=1"), is_(200))

        for method in (b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"CONNECT", b"BREW"):
            probe("method", f"{method!r} served host", req(b"Host: " + ours + b"\r\n", method=method), is_(405))
            probe("method", f"{method!r} foreign host", req(b"Host: evil.example\r\n", method=method), is_(403))
        probe("method", "HEAD", req(b"Host: " + ours + b"\r\n", method=b"HEAD"), is_(200))

        probe("protocol", "HTTP/9.9", req(b"Host: " + ours + b"\r\n", version=b"HTTP/9.9"), is_(505))
        probe("protocol", "HTTP/2.0", req(b"Host: " + ours + b"\r\n", version=b"HTTP/2.0"), is_(505))
        probe("protocol", "garbage line", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
              lambda s, _r: s in (400, None))
        probe("protocol", "four words", b"GET / HTTP/1.1 extra\r\nHost: " + ours + b"\r\n\r\n", is_(400))
        probe("protocol", "101 headers", req(b"Host: " + ours + b"\r\n" + b"X-A: b\r\n" * 101), is_(431))
        probe("protocol", "70 KB header", req(b"Host: " + ours + b"\r\nX-A: " + b"b" * 70_000 + b"\r\n"),
              lambda s, _r: s in (400, 431))
        raw, secs = exchange(port, b"GET /\r\n")
        tally.check("slow", "HTTP/0.9 answered at once", status_of(raw) == 400 and secs < 2, (raw[:60], secs))

        slow_cases: dict[str, tuple[bytes, float]] = {
            "idle": (b"", 0), "partial head": (b"GET /api/metrics HTTP/1.1\r\nHost: " + ours + b"\r\n", 0),
            "no newline": (b"GET /api/metrics HTT", 0),
            "slowloris 0.25 s/byte": (b"GET /api/metrics HTTP/1.1\r\nHost: " + ours + b"\r\nX: " + b"a" * 100, 0.25),
            "slowloris 1 s/byte": (b"GET /api/metrics HTTP/1.1\r\nHost: " + ours + b"\r\n", 1.0),
            "HTTP/0.9 without newline": (b"GET /", 0),
        }
        closed: dict[str, float] = {}

        def hold(name: str, data: bytes, pause: float) -> None:
            start = time.monotonic()
            with socket.create_connection(("127.0.0.1", port), timeout=40) as s:
                try:
                    if pause:
                        for i in range(len(data)):
                            s.sendall(data[i:i + 1])
                            time.sleep(pause)
                    elif data:
                        s.sendall(data)
                    while s.recv(65536):
                        pass
                except OSError:
                    pass
            closed[name] = time.monotonic() - start

        threads = [threading.Thread(target=hold, args=(n, d, p)) for n, (d, p) in slow_cases.items()]
        for t in threads:
            t.start()
        time.sleep(0.5)
        raw, _ = exchange(port, req(b"Host: " + ours + b"\r\n", b"/api/health"))
        tally.check("slow", "served while slow clients hold connections", status_of(raw) == 200, raw[:80])
        for t in threads:
            t.join(timeout=60)
        for name in slow_cases:
            secs = closed.get(name, 999.0)
            tally.check("slow", f"{name} closed by the deadline", secs <= REQUEST_DEADLINE_SECONDS + 3, secs)
        tally.facts["slow_client_close_seconds"] = {k: round(v, 2) for k, v in closed.items()}

        request = req(b"Host: " + ours + b"\r\n")
        for n in (200, 400):
            statuses: list[int | None] = []
            barrier = threading.Barrier(n)
            start = time.monotonic()
            workers = [threading.Thread(target=_concurrent_get, args=(port, request, barrier, statuses))
                       for _ in range(n)]
            for t in workers:
                t.start()
            for t in workers:
                t.join(timeout=120)
            secs = time.monotonic() - start
            answered = sum(1 for s in statuses if s == 200)
            tally.facts[f"concurrent_{n}"] = {"answered_200": answered, "seconds": round(secs, 2)}
            tally.check("concurrency", f"{n} concurrent GET /api/metrics", answered == n, (answered, secs))
        tally.check("concurrency", "server still running", proc.poll() is None, proc.poll())
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# --------------------------------------------------------------------------- mcp


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for row in f:
            if row.startswith("VmRSS:"):
                return int(row.split()[1])
    return -1


class Mcp:
    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen([cce_executable(), "mcp", "--dir", str(root)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "adversarial", "version": "1"}}})
        self.reply()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.pings = 0

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.out.put(line)
        self.out.put(None)

    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj: Any) -> None:
        self.raw(json.dumps(obj).encode("utf-8") + b"\n")

    def reply(self, timeout: float = 60) -> Any:
        line = self.out.get(timeout=timeout)
        if line is None:
            raise EOFError("the server closed its output")
        return json.loads(line)

    def until_ping(self) -> tuple[bool, list[Any]]:
        """Send a ping; (answered, the other replies that came before it)."""
        self.pings += 1
        ping_id = f"ping-{self.pings}"
        self.send({"jsonrpc": "2.0", "id": ping_id, "method": "ping"})
        others = []
        try:
            while True:
                r = self.reply()
                if isinstance(r, dict) and r.get("id") == ping_id:
                    return r.get("result") == {}, others
                others.append(r)
        except (EOFError, queue.Empty, ValueError):
            return False, others

    def close(self) -> int:
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        return self.proc.wait(timeout=60)


def is_jsonrpc_reply(r: Any) -> bool:
    return (isinstance(r, dict) and r.get("jsonrpc") == "2.0" and "id" in r
            and (("result" in r) != ("error" in r)))


def fuzz_lines(rng: random.Random, n: int) -> list[bytes]:
    base = [b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"context_search",'
            b'"arguments":{"query":"hash password","top_k":3}}}',
            b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}',
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}']
    tokens = [b"{", b"}", b"[", b"]", b'"', b":", b",", b"null", b"true", b"1e999", b"-0", b"\\u0000", b"\\ud800",
              b"\xff", b"\xc3", b"\xe2\x82", b"\x00", b"\t", b'"jsonrpc"', b'"2.0"', b'"id"', b'"method"', b"NaN"]
    out = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            line = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        elif kind == 1:
            line = bytearray(rng.choice(base))
            for _ in range(rng.randrange(1, 6)):
                pos = rng.randrange(len(line) + 1)
                op = rng.randrange(3)
                if op == 0 and line:
                    del line[pos:pos + rng.randrange(1, 8)]
                elif op == 1:
                    line[pos:pos] = rng.choice(tokens)
                else:
                    line[pos:pos] = bytes([rng.randrange(256)])
            line = bytes(line)
        else:
            line = b"".join(rng.choice(tokens) for _ in range(rng.randrange(1, 40)))
        out.append(line.replace(b"\n", b" ").replace(b"\r", b" "))
    return out


def mcp_probes(tally: Tally, work: Path, fuzz: int, seed: int) -> None:
    root = work / "tiny"
    root.mkdir()
    (root / "auth.py").write_text("def hash_password(pw):\n    return pw + 'salt'\n", encoding="utf-8")
    (root / "payments.py").write_text("import auth\n\ndef process_payment(amount):\n    return amount\n",
                                      encoding="utf-8")
    done = subprocess.run([cce_executable(), "index", str(root), "--no-metrics"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"cce index failed: {done.stderr}")

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from test_mcp_transport import MALFORMED  # the fast test's list, tried here too

    server = Mcp(root)
    try:
        for name, data, want_id, want_code in MALFORMED:
            server.raw(data + b"\n")
            alive, others = server.until_ping()
            got = [(r.get("id"), r.get("error", {}).get("code")) for r in others if isinstance(r, dict)]
            tally.check("mcp malformed", name, alive and got == [(want_id, want_code)], (alive, got))

        rng = random.Random(seed)
        for i, line in enumerate(fuzz_lines(rng, fuzz)):
            message, reply = classify(line)
            server.raw(line + b"\n")
            alive, others = server.until_ping()
            well_formed = all(is_jsonrpc_reply(r) for r in others)
            if reply is not None:
                expected = json.loads(reply)["error"]["code"]
                ok = [r.get("error", {}).get("code") for r in others] == [expected]
            elif message is not None and hasattr(message, "method") and hasattr(message, "id"):
                ok = len(others) == 1  # a valid request: exactly one answer (result or error)
            else:
                ok = others == []  # blank, a notification or a stray response: no answer
            tally.check("mcp fuzz", f"#{i} {line[:40]!r}", alive and well_formed and ok, (alive, others[:2]))
            if not alive:
                server.close()
                server = Mcp(root)

        extremes = [("context_search", {"query": "hash", "top_k": 10**30}),
                    ("context_search", {"query": "hash", "top_k": -10**30}),
                    ("context_search", {"query": "hash", "top_k": 1e308}),
                    ("context_search", {"query": "hash", "top_k": "9" * 400}),
                    ("context_search", {"query": "hash", "top_k": True}),
                    ("context_search", {"query": "hash", "top_k": {"a": 1}}),
                    ("context_search", {"query": "hash", "max_tokens": 10**30}),
                    ("context_search", {"query": "hash", "max_tokens": -10**30}),
                    ("context_search", {"query": "hash", "max_tokens": 0}),
                    ("context_search", {"query": ["a"]}),
                    ("context_search", {"query": "\u0000\ud7ff\uffff" * 100}),
                    ("related_context", {"chunk_id": "039f8bd5b80a698e", "top_k": 10**30}),
                    ("related_context", {"chunk_id": "../../etc/passwd"}),
                    ("expand_chunk", {"chunk_id": "039f8bd5b80a698e", "scope": "x" * 10_000}),
                    ("session_recall", {"query": "x", "top_k": 10**30}),
                    ("record_feedback", {"query_id": "x" * 10_000, "helpful": "yes"}),
                    ("record_decision", {"text": "t", "tags": [1, None, {"a": 1}] * 100}),
                    ("summarize_context", {"scope": 10**30}),
                    ("set_output_compression", {"level": 10**30}),
                    ("no_such_tool", {})]
        for i, (tool, args) in enumerate(extremes):
            server.send({"jsonrpc": "2.0", "id": f"x{i}", "method": "tools/call",
                         "params": {"name": tool, "arguments": args}})
            r = server.reply()
            text = r.get("result", {}).get("content", [{}])[0].get("text", "") if isinstance(r, dict) else ""
            ok = is_jsonrpc_reply(r) and r.get("id") == f"x{i}" and "internal error" not in text
            tally.check("mcp arguments", f"{tool} {str(args)[:50]}", ok, str(r)[:200])

        before = rss_kib(server.proc.pid)
        peak = before
        for tool, key in (("context_search", "query"), ("record_decision", "text"), ("session_recall", "query"),
                          ("expand_chunk", "chunk_id")):
            server.send({"jsonrpc": "2.0", "id": f"big-{tool}", "method": "tools/call",
                         "params": {"name": tool, "arguments": {key: "word " * 2_000_000}}})
            r = server.reply()
            peak = max(peak, rss_kib(server.proc.pid))
            ok = (is_jsonrpc_reply(r) and r.get("id") == f"big-{tool}"
                  and r.get("error", {}).get("code") == -32600)
            tally.check("mcp 10 MB", f"{tool} 10 MB argument refused with its id", ok, str(r)[:200])
        alive, _ = server.until_ping()
        tally.check("mcp 10 MB", "alive afterwards", alive)
        tally.check("mcp 10 MB", "resident memory grew < 20 MiB", peak - before < 20 * 1024, (before, peak))
        tally.facts["mcp_10mb_rss_kib"] = {"before": before, "peak": peak, "limit_bytes": MAX_MESSAGE_BYTES}

        n = 1000
        calls = b"".join(json.dumps({"jsonrpc": "2.0", "id": 10_000 + i, "method": "tools/call",
                                     "params": {"name": "context_search",
                                                "arguments": {"query": f"payment {i}"}}}).encode() + b"\n"
                         for i in range(n))
        start = time.monotonic()
        writer = threading.Thread(target=server.raw, args=(calls,))
        writer.start()
        samples: dict[int, int] = {0: rss_kib(server.proc.pid)}
        ids: set[Any] = set()
        errors = 0
        for k in range(1, n + 1):
            r = server.reply(timeout=120)
            ids.add(r.get("id"))
            errors += 0 if r.get("result", {}).get("isError") is False else 1
            if k in (100, 250, 500, 750, 1000):
                samples[k] = rss_kib(server.proc.pid)
        writer.join()
        secs = time.monotonic() - start
        growth = samples[1000] - samples[100]
        tally.facts["mcp_1000_calls"] = {"seconds": round(secs, 2), "calls_per_second": round(n / secs, 1),
                                         "rss_kib": samples, "growth_100_to_1000_kib": growth}
        tally.check("mcp rapid calls", "1,000 calls all answered", ids == set(range(10_000, 10_000 + n)) and not errors,
                    (len(ids), errors))
        tally.check("mcp rapid calls", "RSS growth from call 100 to 1,000 < 30 MiB", growth < 30 * 1024, samples)
        code = server.close()
        tally.check("mcp rapid calls", "clean exit at end of input", code == 0, code)
    finally:
        if server.proc.poll() is None:
            server.proc.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fuzz", type=int, default=2000, help="random MCP lines to try (default 2000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args(argv)

    tally = Tally()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cce-adversarial-") as tmp:
        work = Path(tmp)
        (work / "dash").mkdir()
        dashboard_probes(tally, work / "dash")
        (work / "mcp").mkdir()
        mcp_probes(tally, work / "mcp", args.fuzz, args.seed)
    tried = sum(c[0] for c in tally.groups.values())
    passed = sum(c[1] for c in tally.groups.values())
    if args.json:
        print(json.dumps({"schema": "cce.adversarial-web/v1", "groups": tally.groups, "tried": tried,
                          "passed": passed, "facts": tally.facts, "failures": tally.failures,
                          "seconds": round(time.monotonic() - started, 1), "seed": args.seed}, indent=2))
    else:
        print(f"{'group':<22} {'tried':>6} {'passed':>7}")
        for group, (t, p) in tally.groups.items():
            print(f"{group:<22} {t:>6} {p:>7}")
        print(f"{'total':<22} {tried:>6} {passed:>7}")
        for key, value in tally.facts.items():
            print(f"{key}: {json.dumps(value)}")
        for failure in tally.failures:
            print(f"FAILED {failure}")
    return 0 if tried == passed else 1


if __name__ == "__main__":
    os.environ.pop("CCE_DEBUG", None)
    sys.exit(main())

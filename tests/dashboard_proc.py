"""Run the real ``cce dashboard`` as a subprocess and talk to it (shared by the dashboard tests)."""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from helpers import cce_executable

from cce_core.observability.metrics import format_iso, parse_iso

SERVING = re.compile(r"^cce dashboard: serving http://127\.0\.0\.1:(\d+)/  \(loopback only, read-only\)$")
ANCHOR_NOW = "2026-07-05T00:00:00Z"  # the "now" the anchor's expected aggregate was computed at


def anchor_source(reference: Path) -> Path:
    return reference / "test" / "fixture" / "base" / "metrics_sample.jsonl"


def copy_anchor(reference: Path, dest: Path) -> Path:
    src = anchor_source(reference)
    if not src.is_file():
        import pytest

        pytest.skip(f"metrics anchor not found at {src}")
    shutil.copyfile(src, dest)
    dest.chmod(0o644)
    return dest


def rebase_to_today(src: Path, dest: Path) -> Path:
    """The anchor log moved by whole days so that its "now" is today's UTC midnight.

    Whole days keep every event on the same side of every window and day boundary, so the
    server's wall-clock north-star windows give exactly the anchor's expected values (for
    any time of today, and up to three days later).
    """
    shift = (int(time.time()) // 86400) * 86400 - parse_iso(ANCHOR_NOW)
    lines = []
    for line in src.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        obj = json.loads(line)
        obj["ts"] = format_iso(parse_iso(obj["ts"]) + shift)
        lines.append(json.dumps(obj, separators=(",", ":")))
    dest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


# A week of use shaped like the log in issue #19: every search in the last seven days (none before), agent and
# human searches, two that found nothing, two whose best hit scored under 0.30, a confident wrong hit (0.846,
# rated not helpful) and savings in three layers. Retrieval saves 199,988 tokens, all layers 223,836
# ($0.60 against $0.67 at $3 per million). Each tuple: (days before midnight, hour, source, query, results,
# baseline, served, top score, latency ms, chunk_compression (saved, baseline), grammar (saved, baseline), id).
WEEK_SEARCHES = [
    (3, 9, "cli", "parse config", 5, 60_000, 6_000, 0.846, 10.0, (0, 0), (2_000, 3_000), "a00000000001"),
    (3, 10, "mcp", "session cookie signing", 5, 50_000, 5_012, 0.91, 20.0, (6_000, 9_000), (2_500, 3_500),
     "a00000000002"),
    (3, 11, "mcp", "zzz nothing", 0, 0, 0, 0.0, 30.0, (0, 0), (0, 0), "a00000000003"),
    (3, 12, "cli", "blueprint registration", 5, 40_000, 4_000, 0.88, 40.0, (0, 0), (1_848, 2_600), "a00000000004"),
    (2, 9, "mcp", "teardown appcontext", 5, 45_000, 5_000, 0.27, 25.0, (5_000, 7_000), (1_500, 2_100),
     "a00000000005"),
    (2, 10, "mcp", "zzz nothing", 0, 0, 0, 0.0, 35.0, (0, 0), (0, 0), "a00000000006"),
    (1, 9, "mcp", "json provider", 5, 30_000, 5_000, 0.79, 15.0, (2_000, 3_000), (3_000, 4_000), "a00000000007"),
    (1, 10, "cli", "teardown appcontext", 5, 1_000, 1_200, 0.22, 90.0, (0, 0), (0, 0), "a00000000008"),
]
WEEK_RETRIEVAL_SAVED = 199_988
WEEK_TOTAL_SAVED = 223_836


def today_midnight() -> int:
    return (int(time.time()) // 86400) * 86400


def week_events(midnight: int) -> list[dict]:
    """The week log's events (index, eight searches, two feedback votes) relative to ``midnight``."""
    def at(days: int, hour: int) -> str:
        return format_iso(midnight - days * 86400 + hour * 3600)

    out: list[dict] = [{"schema": "cce.metrics/v1", "event": "index", "ts": at(3, 8), "id": "b00000000001",
                        "files_indexed": 83, "chunks": 1207, "index_bytes": 900_000, "duration_ms": 800.0,
                        "embedder": "hash", "full": True, "sha": "0123456789abcdef0123", "source": "local",
                        "sensitive_skipped": 2}]
    for days, hour, source, query, count, baseline, served, top, latency, chunk, grammar, ident in WEEK_SEARCHES:
        saved = max(0, baseline - served)
        zero = {"saved_tokens": 0, "baseline_tokens": 0}
        out.append({
            "schema": "cce.metrics/v1", "event": "search", "ts": at(days, hour), "id": ident, "query": query,
            "top_k": 5, "graph_enabled": True, "embedder": "hash", "result_count": count,
            "baseline_tokens": baseline, "served_tokens": served, "tokens_saved": saved,
            "savings_ratio": saved / baseline if baseline else 0.0,
            "savings": {"retrieval": {"saved_tokens": saved, "baseline_tokens": baseline},
                        "chunk_compression": {"saved_tokens": chunk[0], "baseline_tokens": chunk[1]},
                        "grammar": {"saved_tokens": grammar[0], "baseline_tokens": grammar[1]},
                        "output": zero, "memory": zero, "turn_summarization": zero,
                        "progressive_disclosure": zero},
            "top_score": top, "mean_score": top * 0.8, "empty": count == 0,
            "low_confidence": count > 0 and top < 0.30, "latency_ms": latency, "source": source})
    out.append({"schema": "cce.metrics/v1", "event": "feedback", "ts": at(3, 13), "id": "c00000000001",
                "target_id": "a00000000001", "helpful": False, "note": "wrong file: the hit was the CLI parser"})
    out.append({"schema": "cce.metrics/v1", "event": "feedback", "ts": at(1, 11), "id": "c00000000002",
                "target_id": "a00000000007", "helpful": True, "note": ""})
    return out


def write_week_log(dest: Path, midnight: int | None = None) -> Path:
    """The week log written to ``dest``; ``midnight`` defaults to today's (UTC), so the server's clock sees it."""
    events = week_events(today_midnight() if midnight is None else midnight)
    dest.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events), encoding="utf-8")
    return dest


def write_fortnight_log(dest: Path) -> Path:
    """The week log with the same week before it: slower by half, and both of its votes not helpful."""
    midnight = today_midnight()
    prior = week_events(midnight - 7 * 86400)
    for event in prior:
        event["id"] = "p" + event["id"][1:]
        if event["event"] == "search":
            event["latency_ms"] *= 1.5
        elif event["event"] == "feedback":
            event["target_id"] = "p" + event["target_id"][1:]
            event["helpful"] = False
    events = [e for e in prior if e["event"] != "index"] + week_events(midnight)
    dest.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events), encoding="utf-8")
    return dest


class Dashboard:
    """``cce dashboard ... --port 0 --no-open`` running in the background."""

    def __init__(self, *args: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None,
                 startup_timeout: float = 30) -> None:
        env = dict(os.environ)
        env.pop("CCE_DEBUG", None)
        env.pop("PYTHONUNBUFFERED", None)  # the serving line must arrive because the command flushes it
        self.proc = subprocess.Popen([cce_executable(), "dashboard", *map(str, args)], cwd=cwd, env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.stdout_lines: list[str] = []
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()
        first = self.next_line(startup_timeout)
        if first is None:
            self.stop()
            raise AssertionError(f"cce dashboard exited before serving; stderr: {self.proc.stderr.read()!r}")
        m = SERVING.match(first)
        if not m:
            self.stop()
            raise AssertionError(f"unexpected first line: {first!r}")
        self.port = int(m.group(1))
        self.base = f"http://127.0.0.1:{self.port}"

    def _pump(self) -> None:
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self.stdout_lines.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def next_line(self, timeout: float = 10) -> str | None:
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty as exc:
            raise AssertionError(f"no output from cce dashboard within {timeout}s") from exc

    def request(self, path: str, method: str = "GET", body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            res = conn.getresponse()
            return res.status, {k.lower(): v for k, v in res.getheaders()}, res.read()
        finally:
            conn.close()

    def get_json(self, path: str) -> object:
        status, _headers, body = self.request(path)
        assert status == 200, (path, status, body)
        return json.loads(body)

    def interrupt(self, timeout: float = 10) -> tuple[int, str, str]:
        """Send Ctrl-C (SIGINT) and collect the exit status and remaining output."""
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=timeout)
        rest = []
        while True:
            line = self.next_line(5)
            if line is None:
                break
            rest.append(line)
        return code, "\n".join(rest), self.proc.stderr.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._pump_thread.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

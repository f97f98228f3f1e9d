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

from conftest import cce_executable

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

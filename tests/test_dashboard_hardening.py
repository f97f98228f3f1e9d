"""The dashboard's HTTP handling under attack, through raw sockets on loopback.

A web page can rebind its DNS name to 127.0.0.1 and make the browser talk to
the dashboard, which holds the user's search queries; a local process can hold
connections open. Each probe here was walked around or held the server before
the hardening (duplicate Host, absolute-form target, HTTP/0.9 hold), or is
part of the contract that replaced it (exactly one loopback Host with the
served port, a whole-request deadline, 200 concurrent requests answered).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest
from dashboard_proc import Dashboard

from cce_core.observability import dashboard_server
from cce_core.observability.dashboard_server import (
    REQUEST_DEADLINE_SECONDS,
    DashboardApp,
    host_problem,
    make_server,
    target_path,
)


class _Log:
    def __init__(self) -> None:
        self.events: list = []
        self.skipped = 0


@pytest.fixture(scope="module")
def dash(tmp_path_factory: pytest.TempPathFactory):
    log = tmp_path_factory.mktemp("dash") / "metrics.jsonl"
    log.write_text('{"schema":"cce.metrics/v1","event":"search","ts":"2026-07-04T10:00:00Z","id":"aaaaaaaaaaaa",'
                   '"query":"q","result_count":1,"tokens_saved":5,"savings_ratio":0.5,"top_score":0.9,'
                   '"empty":false,"low_confidence":false}\n', encoding="utf-8")
    d = Dashboard("--metrics", log, "--port", "0", "--no-open")
    yield d
    d.stop()


def exchange(port: int, data: bytes, *, timeout: float = 10) -> tuple[bytes, float]:
    """Send ``data``, read until the server closes; (everything read, seconds until the close)."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        if data:
            s.sendall(data)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out, time.monotonic() - start


def status_and_body(raw: bytes) -> tuple[int, dict]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)


def get(port: int, host: bytes | None, target: bytes = b"/api/health", extra: bytes = b"") -> tuple[int, dict]:
    host_line = b"Host: " + host + b"\r\n" if host is not None else b""
    raw, _ = exchange(port, b"GET " + target + b" HTTP/1.1\r\n" + host_line + extra + b"\r\n")
    return status_and_body(raw)


# --------------------------------------------------------------------------- Host and request target


def test_the_served_host_is_answered(dash: Dashboard):
    for host in (f"127.0.0.1:{dash.port}", f"localhost:{dash.port}", f"LOCALHOST:{dash.port}", f"[::1]:{dash.port}"):
        assert get(dash.port, host.encode()) == (200, {"events": 1, "skipped": 0, "status": "ok"}), host


def test_a_duplicated_host_header_is_refused_whichever_comes_first(dash: Dashboard):
    ours = f"127.0.0.1:{dash.port}".encode()
    refused = (400, {"error": "duplicate host header"})
    assert get(dash.port, ours, extra=b"Host: evil.example\r\n") == refused
    assert get(dash.port, b"evil.example", extra=b"Host: " + ours + b"\r\n") == refused
    assert get(dash.port, ours, extra=b"host: " + ours + b"\r\n") == refused


def test_an_absolute_form_target_is_refused(dash: Dashboard):
    ours = f"127.0.0.1:{dash.port}".encode()
    for target in (b"http://evil.example/api/metrics", b"http://" + ours + b"/api/metrics", b"*",
                   b"evil.example:443"):
        assert get(dash.port, ours, target) == (400, {"error": "absolute-form request target refused"}), target
    # A path that merely looks like an authority is a path: not found, never the metrics.
    assert get(dash.port, ours, b"//evil.example/api/metrics") == (404, {"error": "not found"})


def test_a_missing_or_foreign_host_is_refused(dash: Dashboard):
    assert get(dash.port, None) == (400, {"error": "missing host header"})
    raw, _ = exchange(dash.port, b"GET /api/health HTTP/1.0\r\n\r\n")
    assert status_and_body(raw) == (400, {"error": "missing host header"})
    for host in (b"localhost", b"127.0.0.1", b"127.0.0.1:1", b"127.0.0.2:%d" % dash.port, b"evil.example",
                 b"localhost.:%d" % dash.port, b"127.0.0.1:%d@evil.example" % dash.port, b"",
                 b"127.0.0.1:%d evil.example" % dash.port, b"[::1]", b"0x7f.0.0.1:%d" % dash.port):
        assert get(dash.port, host) == (403, {"error": "forbidden host"}), host


def test_every_method_is_checked_for_its_host_first(dash: Dashboard):
    raw, _ = exchange(dash.port, b"POST /api/health HTTP/1.1\r\nHost: evil.example\r\nContent-Length: 0\r\n\r\n")
    assert status_and_body(raw) == (403, {"error": "forbidden host"})
    raw, _ = exchange(dash.port, b"POST /api/health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % dash.port)
    assert status_and_body(raw) == (405, {"error": "method not allowed"})


# --------------------------------------------------------------------------- slow and broken clients


def test_an_http09_request_is_answered_at_once(dash: Dashboard):
    raw, seconds = exchange(dash.port, b"GET /\r\n")
    assert seconds < REQUEST_DEADLINE_SECONDS - 1  # answered, not timed out
    assert status_and_body(raw) == (400, {"error": "http/0.9 requests are not supported"})


def test_idle_partial_and_dribbling_clients_are_cut_off_while_others_are_served(dash: Dashboard):
    ours = f"127.0.0.1:{dash.port}".encode()
    results: dict[str, float] = {}

    def hold(name: str, data: bytes, dribble: bool = False) -> None:
        start = time.monotonic()
        with socket.create_connection(("127.0.0.1", dash.port), timeout=30) as s:
            try:
                if dribble:
                    for i in range(len(data)):
                        s.sendall(data[i:i + 1])
                        time.sleep(0.25)
                else:
                    s.sendall(data)
                while s.recv(65536):
                    pass
            except OSError:
                pass  # the server closed while we were still sending
        results[name] = time.monotonic() - start

    slow = b"GET /api/health HTTP/1.1\r\nHost: " + ours + b"\r\nX-Pad: " + b"a" * 200 + b"\r\n\r\n"
    threads = [threading.Thread(target=hold, args=args) for args in (
        ("idle", b""), ("partial", b"GET /api/health HTTP/1.1\r\nHost: " + ours + b"\r\n"),
        ("no newline", b"GET /api/health HTT"), ("slowloris", slow, True))]
    for t in threads:
        t.start()
    time.sleep(0.5)
    assert get(dash.port, ours)[0] == 200  # served while four connections are being held
    for t in threads:
        t.join(timeout=40)
    assert set(results) == {"idle", "partial", "no newline", "slowloris"}
    for name, seconds in results.items():
        # Cut off by the deadline, not before it; the upper margin absorbs a loaded CI machine.
        assert REQUEST_DEADLINE_SECONDS - 0.5 <= seconds <= REQUEST_DEADLINE_SECONDS + 10, (name, seconds)
    assert dash.proc.poll() is None


@pytest.mark.slow
def test_200_concurrent_requests_are_all_answered(dash: Dashboard):
    n = 200
    barrier = threading.Barrier(n)
    statuses: list[int] = []
    errors: list[str] = []
    lock = threading.Lock()
    request = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % dash.port

    def one() -> None:
        try:
            barrier.wait(timeout=30)
            raw, _ = exchange(dash.port, request, timeout=30)
            with lock:
                statuses.append(status_and_body(raw)[0])
        except Exception as exc:  # collected and reported below
            with lock:
                errors.append(repr(exc))

    start = time.monotonic()
    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    elapsed = time.monotonic() - start
    assert errors == []
    assert statuses == [200] * n
    assert elapsed < 30, elapsed


def test_connections_past_the_cap_get_503(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(dashboard_server, "MAX_CONNECTIONS", 2)
    app = DashboardApp(tmp_path / "m.jsonl", reader=lambda _p: _Log(), page=b"<html></html>")
    server = make_server(app, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    held = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(2)]
    try:
        time.sleep(0.3)
        raw, seconds = exchange(server.port, b"")
        assert seconds < REQUEST_DEADLINE_SECONDS - 1  # answered, not timed out
        assert status_and_body(raw) == (503, {"error": "too many connections"})
    finally:
        for s in held:
            s.close()
        server.shutdown()
        server.server_close()
    # The slots come back when the held connections end.


# --------------------------------------------------------------------------- the pure rules


def test_host_problem_rules():
    assert host_problem(["127.0.0.1:8787"], 8787) is None
    assert host_problem(["localhost:8787"], 8787) is None
    assert host_problem(["[::1]:8787"], 8787) is None
    assert host_problem(["localhost"], 80) is None  # no port means 80
    assert host_problem([], 8787) == (400, "missing host header")
    assert host_problem(["127.0.0.1:8787", "127.0.0.1:8787"], 8787) == (400, "duplicate host header")
    for bad in ("localhost", "127.0.0.1:8788", "evil.example:8787", "127.0.0.1:8787\r\n x", "127.0.0.1:+8787",
                "127.0.0.1:08787x", "[::1]x:8787", "::1:8787", "localhost:99999999999999999999"):
        assert host_problem([bad], 8787) == (403, "forbidden host"), bad


def test_target_path_rules():
    assert target_path("/api/health?x=1") == "/api/health"
    assert target_path("/#frag") == "/"
    for bad in ("http://evil.example/", "HTTP://127.0.0.1/", "*", "evil.example:443", ""):
        assert target_path(bad) is None, bad


def test_ctrl_c_while_a_handler_thread_starts_answers_the_request_then_stops(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Ctrl-C can land in ``Thread.start`` while it waits for the new handler thread to run.

    The thread then serves the request on its own. Before the fix the server gave the thread's slot
    back a second time (a ``ValueError`` traceback on the terminal) and shut the request down under the
    thread. Now the request is answered, the stop comes from the serve loop, and nothing is printed.
    """
    app = DashboardApp(tmp_path / "m.jsonl", reader=lambda _p: _Log(), page=b"<html></html>")
    server = make_server(app, 0)
    start_thread = threading.Thread.start

    def start_then_interrupted(thread: threading.Thread) -> None:
        start_thread(thread)
        raise KeyboardInterrupt  # what a SIGINT during Thread.start's wait raises in the main thread

    answers: list[bytes] = []
    client = threading.Thread(target=lambda: answers.append(exchange(
        server.port, f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())[0]))
    client.start()
    try:
        monkeypatch.setattr(threading.Thread, "start", start_then_interrupted)
        try:
            server._handle_request_noblock()  # accepts the client's connection
        except KeyboardInterrupt:
            pytest.fail("the interrupt escaped while the handler thread was serving the request")
        monkeypatch.setattr(threading.Thread, "start", start_thread)
        with pytest.raises(KeyboardInterrupt):
            server.service_actions()  # the serve loop's next turn stops the server
        client.join(timeout=10)
    finally:
        monkeypatch.setattr(threading.Thread, "start", start_thread)
        server.server_close()
    assert [status_and_body(raw)[0] for raw in answers] == [200]
    assert capsys.readouterr().err == ""
    deadline = time.monotonic() + 10
    while server._slots._value != dashboard_server.MAX_CONNECTIONS and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.01)
    assert server._slots._value == dashboard_server.MAX_CONNECTIONS  # type: ignore[attr-defined]

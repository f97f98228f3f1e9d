"""``cce dashboard``: a read-only HTTP server on the loopback interface.

It serves one self-contained page (``data/dashboard.html``: inline CSS and JS,
charts drawn as SVG by the page itself) and three JSON routes computed from the
metrics log on every request:

=====================  =======================================================
``GET /``              the page, ``text/html; charset=utf-8``
``GET /api/dashboard`` everything the page shows, from one read of the log:
                       :func:`~cce_core.observability.dashboard_view.dashboard_view`
                       + ``generated_ts`` (the page's only request)
``GET /api/metrics``   the family's ``aggregate(events, now, price)`` +
                       ``generated_ts``, pretty JSON with sorted keys
``GET /api/health``    ``{"events":N,"skipped":N,"status":"ok"}``
anything else          404 ``{"error":"not found"}``
=====================  =======================================================

The query string is ignored. ``HEAD`` is answered like ``GET`` without a body;
every other method gets 405 ``{"error":"method not allowed"}`` and touches
nothing — the server never writes a file. Requests whose ``Host`` header names
anything but the loopback address are refused (403), so a web page that
rebinds its DNS name to 127.0.0.1 cannot read the metrics. The log is read
fresh for each request; a corrupt line is skipped and counted, never fatal.

The HTTP handling is strict because the server holds the user's search
queries: a request must carry exactly one ``Host`` header naming a loopback
name or address with the served port (a missing or duplicated one is 400, a
foreign one 403); the request target must be a path (absolute-form and
HTTP/0.9 requests are 400); a client has :data:`REQUEST_DEADLINE_SECONDS` from
connecting to send its whole request head, however it dribbles it; and at most
:data:`MAX_CONNECTIONS` connections are served at once (503 beyond that), each
on its own thread.

``cce dashboard --workspace`` serves the same routes from
:class:`WorkspaceDashboardApp`: ``/api/metrics`` is the roll-up over every
member's log plus the workspace-root log, with a ``by_package`` list (see
:mod:`cce_core.observability.workspace_usage`), and ``/api/health`` adds ``members``.
"""

from __future__ import annotations

import io
import json
import math
import re
import signal
import socket
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8787
DEFAULT_PRICE = 3.00  # the family's /api/metrics rate when no --price is given

HTML_TYPE = "text/html; charset=utf-8"
JSON_TYPE = "application/json"

# The page may only talk to the server it came from: no remote script, style,
# font, image or connection, even if someone edits the page carelessly.
PAGE_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

_READ_METHODS = ("GET", "HEAD")


def load_page() -> bytes:
    """The dashboard page shipped as package data."""
    return (files("cce_core") / "data" / "dashboard.html").read_bytes()


class DashboardApp:
    """What the routes answer, independent of sockets (so it can be tested in-process).

    ``price`` is ``--price``: None prices the page's headline like ``cce savings``
    (the embedded table) and the family's ``/api/metrics`` at :data:`DEFAULT_PRICE`.
    """

    def __init__(self, metrics_path: Path, price: float | None = None, *,
                 reader: Callable[[Path], Any] | None = None,
                 aggregator: Callable[..., dict] | None = None,
                 clock: Callable[[], float] = time.time,
                 page: bytes | None = None) -> None:
        if reader is None:
            from cce_core.observability.metrics import read_log

            reader = read_log
        if aggregator is None:
            from cce_core.observability.aggregate import aggregate

            aggregator = aggregate
        from cce_core.observability.metrics import format_iso

        self._format_iso = format_iso
        self.metrics_path = Path(metrics_path)
        self.price = price
        self._read = reader
        self._aggregate = aggregator
        self._clock = clock
        self.page = page if page is not None else load_page()

    @property
    def metrics_price(self) -> float:
        return self.price if self.price is not None else DEFAULT_PRICE

    def metrics(self) -> dict:
        log = self._read(self.metrics_path)
        now = int(self._clock())
        body = dict(self._aggregate(log.events, now, price=self.metrics_price))
        body["generated_ts"] = self._format_iso(now)
        return body

    def dashboard(self) -> dict:
        from cce_core.observability.dashboard_view import dashboard_view

        log = self._read(self.metrics_path)
        now = int(self._clock())
        body = dashboard_view(log.events, now, source=str(self.metrics_path), price=self.price)
        body["generated_ts"] = self._format_iso(now)
        return body

    def health(self) -> dict:
        log = self._read(self.metrics_path)
        return {"events": len(log.events), "skipped": int(log.skipped), "status": "ok"}

    def route(self, path: str) -> tuple[int, str, bytes]:
        """``(status, content type, body)`` for a GET of ``path`` (query string already removed)."""
        if path == "/":
            return 200, HTML_TYPE, self.page
        if path == "/api/dashboard":
            return 200, JSON_TYPE, _json(self.dashboard(), pretty=True, sort_keys=False)
        if path == "/api/metrics":
            return 200, JSON_TYPE, _json(self.metrics(), pretty=True)
        if path == "/api/health":
            return 200, JSON_TYPE, _json(self.health())
        return 404, JSON_TYPE, _json({"error": "not found"})


class WorkspaceDashboardApp(DashboardApp):
    """The routes of the workspace dashboard: all member logs and the root log, read fresh per request."""

    def __init__(self, logs: Any, price: float | None = None, *,
                 clock: Callable[[], float] = time.time, page: bytes | None = None) -> None:
        super().__init__(logs.root_log, price, clock=clock, page=page)
        self.logs = logs

    def metrics(self) -> dict:
        from cce_core.observability.workspace_usage import workspace_aggregate

        now = int(self._clock())
        body = dict(workspace_aggregate(self.logs.read(), now, self.metrics_price))
        body["generated_ts"] = self._format_iso(now)
        return body

    def dashboard(self) -> dict:
        from cce_core.observability.dashboard_view import dashboard_view

        snapshot = self.logs.read()
        now = int(self._clock())
        body = dashboard_view(snapshot.rollup_events(), now, source=f"{self.logs.root} (workspace)",
                              price=self.price, packages=snapshot.package_events())
        body["generated_ts"] = self._format_iso(now)
        return body

    def health(self) -> dict:
        snapshot = self.logs.read()
        # The family's workspace health answer carries no `skipped` count.
        return {"events": snapshot.events, "members": len(self.logs.members), "status": "ok"}


def _finite(value: Any) -> Any:
    """``value`` with every infinite or NaN number replaced by None, as the family's JSON writers print them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _json(obj: Any, *, pretty: bool = False, sort_keys: bool = True) -> bytes:
    # A forged log can drive a mean past the largest double; the page's JSON parser refuses "Infinity".
    obj = _finite(obj)
    if pretty:
        text = json.dumps(obj, indent=2, sort_keys=sort_keys, ensure_ascii=False)
    else:
        text = json.dumps(obj, sort_keys=sort_keys, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8")


# A client has this long, from connecting, to send its request line and headers; an idle connection, an
# HTTP/0.9-style line waiting for headers, or a slowloris dribbling a byte at a time is closed after it.
REQUEST_DEADLINE_SECONDS = 5.0
# Writing an answer to a client that does not read it may take at most this long.
WRITE_TIMEOUT_SECONDS = 10.0
# Connections served at once (a thread each); one more is answered 503 and closed.
MAX_CONNECTIONS = 256
# Connections the kernel may queue before they are accepted.
LISTEN_BACKLOG = 1024

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
_HOST_RE = re.compile(r"(?:\[([0-9A-Fa-f:.]{2,45})\]|([A-Za-z0-9.-]{1,253}))(?::([0-9]{1,5}))?")


def _host_is_loopback(host_header: str, port: int) -> bool:
    """True when one ``Host`` value names the loopback interface with ``port`` (no port means 80)."""
    match = _HOST_RE.fullmatch(host_header.strip(" \t"))
    if match is None:
        return False
    name = (match.group(1) or match.group(2) or "").lower()
    given = int(match.group(3)) if match.group(3) else 80
    return name in _LOOPBACK_NAMES and given == port


def host_problem(values: list[str], port: int) -> tuple[int, str] | None:
    """Why a request with these ``Host`` header values is refused, as ``(status, error)``; None if it is not."""
    if not values:
        return 400, "missing host header"
    if len(values) > 1:
        return 400, "duplicate host header"
    if not _host_is_loopback(values[0], port):
        return 403, "forbidden host"
    return None


def target_path(target: str) -> str | None:
    """The path of an origin-form request target (query and fragment dropped); None for any other form."""
    if not target.startswith("/"):
        return None  # absolute-form ("http://host/..."), authority-form, asterisk-form
    return target.split("?", 1)[0].split("#", 1)[0]


class _DeadlineReader(io.RawIOBase):
    """Socket reads that fail once a fixed instant has passed, however the bytes trickle in."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self.deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the request was not sent in time")
        self._sock.settimeout(remaining)
        return self._sock.recv_into(buffer)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cce-dashboard"
    timeout = REQUEST_DEADLINE_SECONDS
    app: DashboardApp  # set on the per-server subclass
    server: DashboardServer  # the one that made this handler (typeshed says any socketserver)

    def setup(self) -> None:
        super().setup()
        # One request per connection (every answer closes it), so one deadline covers the whole head.
        self.rfile = io.BufferedReader(
            _DeadlineReader(self.connection, time.monotonic() + REQUEST_DEADLINE_SECONDS))

    def parse_request(self) -> bool:
        words = str(self.raw_requestline, "iso-8859-1").split()
        if len(words) == 2:
            # HTTP/0.9 ("GET /" and no version): refused at once instead of waiting for headers.
            self.command, self.path = words
            self.requestline = " ".join(words)
            self.request_version = "HTTP/1.0"
            self.close_connection = True
            self.send_error(400, "HTTP/0.9 requests are not supported")
            return False
        if not super().parse_request():
            return False
        self.connection.settimeout(WRITE_TIMEOUT_SECONDS)  # the head is in; only the answer is left
        problem = host_problem(self.headers.get_all("Host") or [], self.server.server_port)
        if problem is None and target_path(self.path) is None:
            problem = 400, "absolute-form request target refused"
        if problem is not None:
            status, error = problem
            self._send(status, JSON_TYPE, _json({"error": error}), send_body=self.command != "HEAD")
            return False
        return True

    def version_string(self) -> str:
        return self.server_version

    # --- dispatch -----------------------------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._serve(send_body=True)

    def do_HEAD(self) -> None:
        self._serve(send_body=False)

    def __getattr__(self, name: str):
        # BaseHTTPRequestHandler looks up ``do_<METHOD>``; every method other than GET/HEAD is refused
        # with a JSON 405 instead of the stock HTML 501.
        if name.startswith("do_"):
            return self._method_not_allowed
        raise AttributeError(name)

    def _method_not_allowed(self) -> None:
        self._send(405, JSON_TYPE, _json({"error": "method not allowed"}), send_body=True,
                   extra={"Allow": ", ".join(_READ_METHODS)})

    def _serve(self, *, send_body: bool) -> None:
        path = target_path(self.path) or "/"  # parse_request already refused anything but a path
        try:
            status, ctype, body = self.app.route(path)
        except Exception:  # a bug or an unreadable log must not take the server down
            status, ctype, body = 500, JSON_TYPE, _json({"error": "internal error"})
        extra = {"Content-Security-Policy": PAGE_CSP} if ctype == HTML_TYPE else None
        self._send(status, ctype, body, send_body=send_body, extra=extra)

    # --- output -------------------------------------------------------------------------------------------------
    def _send(self, status: int, ctype: str, body: bytes, *, send_body: bool,
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status, HTTPStatus(status).phrase)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if send_body:
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # Malformed request lines, oversized headers, ...: a JSON error like every other answer, with a
        # status line even when the request line was too broken to say which HTTP version it spoke.
        if self.request_version == "HTTP/0.9":
            self.request_version = "HTTP/1.0"
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "error"
        self._send(code, JSON_TYPE, _json({"error": (message or phrase).lower()}),
                   send_body=self.command != "HEAD" and code >= 200 and code not in (204, 304))

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the terminal shows only the three start-up lines


class DashboardServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._interrupted = False  # a Ctrl-C that process_request put off until the serve loop's next turn

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            _answer_busy(request)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except KeyboardInterrupt:
            # Ctrl-C landed while Thread.start waited for the new thread, which may already be serving
            # this request and gives the slot back itself: the request is left to it (never shut down
            # under it) and the serve loop stops at its next turn (service_actions).
            self._interrupted = True
        except BaseException:  # the thread never started (cannot start a new thread)
            self._slots.release()
            raise

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve until shutdown or Ctrl-C, noticing Ctrl-C within ``poll_interval`` whatever the handler threads do.

        CPython 3.11 can lose the first SIGINT of a threaded server: a handler
        thread that takes the GIL recomputes the interpreter's "something
        pending" flag, and, not being the main thread, computes it without the
        pending signal, so the main thread's serve loop never runs the handler
        (about one Ctrl-C in twenty here). The signal's number still reaches the
        wakeup fd, which the serve loop reads between polls.
        """
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "set_wakeup_fd"):
            super().serve_forever(poll_interval)
            return
        reader, writer = socket.socketpair()
        reader.setblocking(False)
        writer.setblocking(False)
        previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        self._signal_reader: socket.socket | None = reader
        try:
            super().serve_forever(poll_interval)
        finally:
            signal.set_wakeup_fd(previous)
            self._signal_reader = None
            reader.close()
            writer.close()

    def service_actions(self) -> None:
        if self._interrupted:
            self._interrupted = False
            raise KeyboardInterrupt
        reader = getattr(self, "_signal_reader", None)
        if reader is None:
            return
        try:
            received = reader.recv(64)
        except (BlockingIOError, InterruptedError):
            return
        if signal.SIGINT in received:
            raise KeyboardInterrupt

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/"


def _answer_busy(request: socket.socket) -> None:
    """A short 503 to a connection over :data:`MAX_CONNECTIONS`, written without waiting on the client."""
    body = _json({"error": "too many connections"})
    head = (f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: {JSON_TYPE}\r\nContent-Length: {len(body)}\r\n"
            "Cache-Control: no-store\r\nRetry-After: 1\r\nConnection: close\r\n\r\n").encode("ascii")
    try:
        request.setblocking(False)
        request.send(head + body)
    except OSError:
        pass


def make_server(app: DashboardApp, port: int = DEFAULT_PORT) -> DashboardServer:
    """Bind 127.0.0.1:``port`` (0 = any free port). Raises ``OSError`` if the bind fails."""
    handler = type("DashboardHandler", (_Handler,), {"app": app})
    return DashboardServer((LOOPBACK, port), handler)

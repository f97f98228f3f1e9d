"""A stand-in for an Ollama server, so embedder tests never touch the network.

:class:`OllamaStub` listens on ``127.0.0.1`` on a free port in a background
thread, records every request body, and answers ``POST /api/embed`` with
deterministic vectors (:func:`stub_vector`). Switch :attr:`OllamaStub.mode` to
make it misbehave, optionally only after :attr:`OllamaStub.fail_after`
successful answers (a failure in the middle of an index run). ``stop()`` closes
the port, so later requests are refused.

Use it as a context manager::

    with OllamaStub() as stub:
        os.environ["CCE_OLLAMA_URL"] = stub.url
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STUB_DIM = 8

#: Every way the stub can answer ``/api/embed``.
MODES = (
    "ok",  # one stub_vector per input
    "http500",  # status 500 with an Ollama-style {"error": ...} body
    "http404",  # status 404 "model not found", as Ollama says for an unpulled model
    "badjson",  # status 200, a body that is not JSON
    "missing",  # status 200, JSON without "embeddings"
    "wrongcount",  # one embedding fewer than inputs
    "empty",  # an empty vector for every input
    "ragged",  # vectors of different lengths within one answer
    "notnumber",  # a vector holding a string
    "wide",  # vectors one dimension wider than usual (a "model change" between batches)
    "slow",  # sleeps `delay` seconds, then answers like "ok"
)


def stub_vector(text: str) -> list[float]:
    """A deterministic, content-dependent vector: length plus character-class counts."""
    counts = [0.0] * (STUB_DIM - 1)
    for ch in text:
        counts[ord(ch) % (STUB_DIM - 1)] += 1.0
    return [1.0 + len(text) / 1000.0, *counts]


def closed_port_url() -> str:
    """The URL of a local port that was free a moment ago and has nothing listening now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class _Handler(BaseHTTPRequestHandler):
    server: _StubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        stub = self.server.stub
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        mode = stub._record(self.path, body)
        if self.path != "/api/embed":
            self._send_json(404, {"error": "404 page not found"})
            return
        inputs = body.get("input") if isinstance(body, dict) else None
        if not isinstance(inputs, list):
            self._send_json(400, {"error": "missing input"})
            return
        if mode == "slow":
            time.sleep(stub.delay)
        vectors = [stub_vector(str(text)) for text in inputs]
        if mode in ("ok", "slow"):
            self._send_json(200, {"model": body.get("model"), "embeddings": vectors})
        elif mode == "http500":
            self._send_json(500, {"error": "stub: the model runner crashed"})
        elif mode == "http404":
            self._send_json(404, {"error": f'model "{body.get("model")}" not found, try pulling it first'})
        elif mode == "badjson":
            self._send(200, b"<html>definitely not json</html>", "text/html")
        elif mode == "missing":
            self._send_json(200, {"model": body.get("model"), "embedding": vectors})
        elif mode == "wrongcount":
            self._send_json(200, {"embeddings": vectors[:-1]})
        elif mode == "empty":
            self._send_json(200, {"embeddings": [[] for _ in inputs]})
        elif mode == "ragged":
            self._send_json(200, {"embeddings": [v + [0.0] * (i % 2) for i, v in enumerate(vectors)]})
        elif mode == "notnumber":
            self._send_json(200, {"embeddings": [["x", *v[1:]] for v in vectors]})
        elif mode == "wide":
            self._send_json(200, {"embeddings": [[*v, 0.5] for v in vectors]})
        else:  # pragma: no cover - a typo in a test
            self._send_json(500, {"error": f"unknown stub mode {mode!r}"})


class _StubServer(ThreadingHTTPServer):
    daemon_threads = True
    stub: OllamaStub


class OllamaStub:
    """A local fake Ollama; see the module docstring."""

    def __init__(self, mode: str = "ok", *, fail_after: int | None = None, delay: float = 1.0) -> None:
        self.mode = mode
        #: After this many successful answers, answer in ``mode`` (before: "ok").
        self.fail_after = fail_after
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._server = _StubServer(("127.0.0.1", 0), _Handler)
        self._server.stub = self
        self._thread: threading.Thread | None = None
        host, port = self._server.server_address[:2]
        self.url = f"http://{host}:{port}"

    def _record(self, path: str, body: Any) -> str:
        with self._lock:
            served = len(self.requests)
            self.paths.append(path)
            self.requests.append(body if isinstance(body, dict) else {"_raw": body})
            if self.fail_after is not None and served < self.fail_after:
                return "ok"
            return self.mode

    @property
    def inputs(self) -> list[list[str]]:
        """The ``input`` list of every request, in arrival order."""
        with self._lock:
            return [list(r.get("input") or []) for r in self.requests]

    def start(self) -> OllamaStub:
        self._thread = threading.Thread(target=self._server.serve_forever, name="ollama-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the port (later connections are refused)."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> OllamaStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

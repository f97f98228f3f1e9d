"""``cce corpus serve``: the knowledge store over loopback HTTP, ``GET /docs?service=NAME``, bearer token required.

A triage service on the same machine asks the knowledge corpus for the
documents about one service by plain HTTP, not MCP. This is that one route,
answering from the same knowledge search agents use, in the reference's
format:

=========================  ==================================================================
``GET /docs?service=S``    200 ``{"docs":[{"body":…,"id":…,"title":…}]}`` (compact, sorted keys):
                           the hits for ``S`` — widened by an optional ``q=`` of incident words —
                           best first, at most ``--top-k``; ``id`` is the section's chunk id, and
                           ``body`` the section cut to 500 characters at a sentence (else a word
                           boundary and ``…``)
no or wrong bearer token   401 ``{"error":"unauthorized"}`` + ``WWW-Authenticate: Bearer``, for
                           every path and method, before anything else is looked at
a method but GET           405 ``{"error":"method not allowed"}``
any other path             404 ``{"error":"not found"}``
no (or a blank) service    400 ``{"error":"missing service"}``
=========================  ==================================================================

``service`` and ``q`` are form-decoded (``+`` is a space, ``%XX`` a byte,
bad escapes kept as they are). ``q`` is untrusted incident text, so it is
fenced before use: control characters become spaces, it is cut to 500
characters and trimmed; nothing survives → no ``q``. Either only ever
becomes a search term; no request text is echoed into a response.

Hardening: the server binds a loopback address only; the token is compared
in constant time (:func:`hmac.compare_digest`); a request head may be at most
8 KiB (431 beyond) and must arrive within 5 seconds of connecting; a second
``Authorization`` header is refused like a wrong one; at most 64 connections
are served at once (503 beyond), each on its own thread, so one idle client
cannot hold up the others. The store is loaded once, at start: an absent
store serves ``{"docs":[]}``, a present but broken one stops the command.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import os
import select
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_core.foundation.bounded_read import read_small_text
from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import UNICODE_WHITESPACE

DEFAULT_PORT = 8799
DEFAULT_TOP_K = 10
TOKEN_ENV = "CCE_CORPUS_TOKEN"
# The consumer fences every string it is given at 500 characters; bodies and incident terms are fitted to that.
BODY_CHAR_CAP = 500
QUERY_CHAR_CAP = 500
MAX_HEAD_BYTES = 8 * 1024
REQUEST_DEADLINE_SECONDS = 5.0
WRITE_TIMEOUT_SECONDS = 10.0
MAX_CONNECTIONS = 64
# A token file holds one secret; anything larger is the wrong file.
MAX_TOKEN_FILE_BYTES = 64 * 1024

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
            431: "Request Header Fields Too Large", 500: "Internal Server Error", 503: "Service Unavailable"}
_SENTENCE_ENDS = ".!?"


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    authorizations: tuple[str, ...]  # every Authorization header value, as sent


@dataclass(frozen=True)
class Response:
    status: int
    body: str


def _error(status: int, message: str) -> Response:
    return Response(status, json.dumps({"error": message}, separators=(",", ":")))


# --------------------------------------------------------------------------- the query string


def _hex_value(byte: int) -> int | None:
    char = chr(byte)
    return int(char, 16) if char in "0123456789abcdefABCDEF" else None


def percent_decode(component: str) -> str:
    """One form-encoded component: ``+`` → space, ``%XX`` → that byte, a malformed escape kept verbatim."""
    raw = component.encode("latin-1", errors="replace")
    out = bytearray()
    i = 0
    while i < len(raw):
        byte = raw[i]
        if byte == ord("+"):
            out.append(ord(" "))
            i += 1
            continue
        if byte == ord("%") and i + 2 < len(raw):
            high, low = _hex_value(raw[i + 1]), _hex_value(raw[i + 2])
            if high is not None and low is not None:
                out.append(high * 16 + low)
                i += 3
                continue
        out.append(byte)
        i += 1
    return out.decode("utf-8", errors="replace")


def _query_pairs(target: str) -> list[tuple[str, str]]:
    query = target.split("?", 1)[1] if "?" in target else ""
    return [(key, value) for key, sep, value in (pair.partition("=") for pair in query.split("&")) if sep]


def service_param(target: str) -> str | None:
    """The first ``service`` value that is not blank once decoded; None when there is none."""
    for key, value in _query_pairs(target):
        if key == "service":
            decoded = percent_decode(value)
            if decoded.strip(UNICODE_WHITESPACE):
                return decoded
    return None


def fence_query_terms(raw: str) -> str | None:
    """Incident text made safe to search with: controls → spaces, at most 500 characters, trimmed; None if empty."""
    fenced = "".join(" " if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F else c for c in raw[:QUERY_CHAR_CAP])
    trimmed = fenced.strip(UNICODE_WHITESPACE)
    return trimmed or None


def q_param(target: str) -> str | None:
    """The first ``q`` value, decoded and fenced (None when absent or fenced to nothing)."""
    for key, value in _query_pairs(target):
        if key == "q":
            return fence_query_terms(percent_decode(value))
    return None


# --------------------------------------------------------------------------- the answer


def body_snippet(content: str) -> str:
    """``content`` within :data:`BODY_CHAR_CAP` characters: whole sentences if it can, else words and ``…``."""
    if len(content) <= BODY_CHAR_CAP:
        return content
    within = content[:BODY_CHAR_CAP]
    for i in range(len(within) - 1, -1, -1):
        if within[i] in _SENTENCE_ENDS and (i + 1 == len(within) or within[i + 1] in UNICODE_WHITESPACE):
            return within[:i + 1].rstrip(UNICODE_WHITESPACE)
    window = content[:BODY_CHAR_CAP - 1]  # one character is kept for the ellipsis
    cut = next((i for i in range(len(window) - 1, -1, -1) if window[i] in UNICODE_WHITESPACE), len(window))
    return window[:cut].rstrip(UNICODE_WHITESPACE) + "\u2026"


def docs_body(hits: list[Any]) -> str:
    """The ``{"docs":[…]}`` answer for knowledge hits (each with ``.chunk``)."""
    docs = [{"id": h.chunk.chunk_id, "title": h.chunk.title, "body": body_snippet(h.chunk.content)} for h in hits]
    return json.dumps({"docs": docs}, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def authorized(values: tuple[str, ...], token: str) -> bool:
    """Exactly one ``Authorization: Bearer <token>`` (scheme in any case), the token compared in constant time."""
    if len(values) != 1:
        return False
    scheme, _, presented = values[0].strip(UNICODE_WHITESPACE).partition(" ")
    if scheme.lower() != "bearer":
        return False
    # Header bytes arrive as latin-1 text: re-encoding gives back exactly the bytes the client sent.
    sent = presented.strip(UNICODE_WHITESPACE).encode("latin-1", errors="replace")
    return hmac.compare_digest(sent, token.encode("utf-8"))


class CorpusApp:
    """What the route answers, without sockets: the loaded knowledge, the token and the search settings."""

    def __init__(self, knowledge: Any, token: str, top_k: int = DEFAULT_TOP_K, min_score: float = 0.30) -> None:
        self.knowledge = knowledge  # a LoadedKnowledge: its ranking structures are built once and reused
        self.token = token
        self.top_k = top_k
        self.min_score = min_score

    def route(self, request: Request) -> Response:
        # The token first, for every path: an unauthenticated client cannot even learn which routes exist.
        if not authorized(request.authorizations, self.token):
            return _error(401, "unauthorized")
        if request.method != "GET":
            return _error(405, "method not allowed")
        if request.target.split("?", 1)[0] != "/docs":
            return _error(404, "not found")
        service = service_param(request.target)
        if service is None:
            return _error(400, "missing service")
        q = q_param(request.target)
        query = f"{service} {q}" if q is not None else service
        return Response(200, docs_body(self.knowledge.search(query, self.top_k, self.min_score)))


# --------------------------------------------------------------------------- HTTP on a socket


class _HeadTooLarge(Exception):
    pass


def _read_head(conn: socket.socket, deadline: float) -> bytes | None:
    """The request head (up to the blank line), or None when the client sent nothing or gave up."""
    buffer = bytearray()
    while True:
        for terminator in (b"\r\n\r\n", b"\n\n"):
            end = buffer.find(terminator)
            if end >= 0:
                if end + len(terminator) > MAX_HEAD_BYTES:
                    raise _HeadTooLarge
                return bytes(buffer[:end])
        if len(buffer) > MAX_HEAD_BYTES:
            raise _HeadTooLarge
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        conn.settimeout(remaining)
        try:
            data = conn.recv(4096)
        except OSError:  # the deadline passed (a timeout is an OSError) or the client reset
            data = b""
        if not data:
            return None
        buffer += data


def parse_head(head: bytes) -> Request | None:
    """The request line and the Authorization headers of a head; None for a malformed request line."""
    lines = head.decode("latin-1").replace("\r\n", "\n").split("\n")
    words = lines[0].split()
    if len(words) < 2:
        return None
    authorizations = tuple(value.strip(" \t") for name, sep, value in (line.partition(":") for line in lines[1:])
                           if sep and name.strip(" \t").lower() == "authorization")
    return Request(words[0], words[1], authorizations)


def _send(conn: socket.socket, response: Response) -> None:
    body = response.body.encode("utf-8")
    challenge = "WWW-Authenticate: Bearer\r\n" if response.status == 401 else ""
    head = (f"HTTP/1.1 {response.status} {_REASONS.get(response.status, 'OK')}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n{challenge}"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n")
    conn.settimeout(WRITE_TIMEOUT_SECONDS)
    conn.sendall(head.encode("ascii") + body)


def handle_connection(app: CorpusApp, conn: socket.socket) -> None:
    """Read one request, answer it, close the connection; never raises."""
    try:
        try:
            head = _read_head(conn, time.monotonic() + REQUEST_DEADLINE_SECONDS)
        except _HeadTooLarge:
            _send(conn, _error(431, "request head too large"))
            return
        if head is None:
            return
        request = parse_head(head)
        if request is None:
            _send(conn, _error(400, "bad request"))
            return
        try:
            response = app.route(request)
        except Exception:  # a bug must cost one answer, not the server
            response = _error(500, "internal error")
        _send(conn, response)
    except OSError:
        pass  # the client went away
    finally:
        with contextlib.suppress(OSError):
            conn.close()


def loopback_host(host: str) -> str:
    """``host`` as an address to bind, when it is a loopback one; :class:`CceError` otherwise."""
    address = "127.0.0.1" if host == "localhost" else host
    try:
        loopback = ipaddress.ip_address(address).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise CceError(f"cce corpus serve listens on the loopback interface only: --host {host} is not a loopback "
                       "address (use 127.0.0.1 or ::1)")
    return address


class CorpusServer:
    """A bound loopback listener that serves :class:`CorpusApp` until Ctrl-C (or :meth:`stop`)."""

    def __init__(self, app: CorpusApp, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> None:
        self.app = app
        address = loopback_host(host)
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.listener.bind((address, port))
            self.listener.listen(128)
        except OSError:
            self.listener.close()
            raise
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        host, port = self.listener.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/docs"

    def _serve_one(self, conn: socket.socket) -> None:
        try:
            handle_connection(self.app, conn)
        finally:
            self._slots.release()

    def _accept(self) -> None:
        conn, _peer = self.listener.accept()
        if not self._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                conn.setblocking(False)
                body = _error(503, "too many connections").body.encode()
                conn.send(f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                          f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
            conn.close()
            return
        threading.Thread(target=self._serve_one, args=(conn,), daemon=True).start()

    def serve_forever(self, poll_seconds: float = 0.5, on_tick: Callable[[], None] | None = None) -> None:
        """Accept until :meth:`stop` or Ctrl-C; Ctrl-C is noticed within ``poll_seconds`` whatever the threads do."""
        wake = _SignalWake.install()
        try:
            while not self._stopped.is_set():
                watched: list[Any] = [self.listener] + ([wake.reader] if wake else [])
                ready, _, _ = select.select(watched, [], [], poll_seconds)
                if wake is not None and wake.reader in ready:
                    wake.check()
                if self.listener in ready:
                    with contextlib.suppress(OSError):
                        self._accept()
                if on_tick is not None:
                    on_tick()
        finally:
            if wake is not None:
                wake.uninstall()

    def stop(self) -> None:
        self._stopped.set()

    def close(self) -> None:
        self.listener.close()


class _SignalWake:
    """The interpreter's signal wakeup fd, read by the accept loop: a Ctrl-C can never be lost to a thread."""

    def __init__(self, reader: socket.socket, writer: socket.socket, previous: int) -> None:
        self.reader, self.writer, self.previous = reader, writer, previous

    @classmethod
    def install(cls) -> _SignalWake | None:
        if threading.current_thread() is not threading.main_thread():
            return None
        reader, writer = socket.socketpair()
        reader.setblocking(False)
        writer.setblocking(False)
        previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        return cls(reader, writer, previous)

    def check(self) -> None:
        with contextlib.suppress(BlockingIOError, InterruptedError):
            if signal.SIGINT in self.reader.recv(64):
                raise KeyboardInterrupt

    def uninstall(self) -> None:
        signal.set_wakeup_fd(self.previous)
        self.reader.close()
        self.writer.close()


# --------------------------------------------------------------------------- starting up


def resolve_token(token_file: Path | None, environ: dict[str, str] | None = None) -> str:
    """The bearer token: ``--token-file`` wins over ``CCE_CORPUS_TOKEN``; trimmed, never empty."""
    if token_file is not None:
        _raw, text = read_small_text(token_file, "--token-file", MAX_TOKEN_FILE_BYTES, "64 KiB — it should hold "
                                                                                       "one token")
    else:
        text = (os.environ if environ is None else environ).get(TOKEN_ENV, "")
    token = text.strip(UNICODE_WHITESPACE)
    if not token:
        raise CceError(f"cce corpus serve requires a bearer token, so that only clients holding it can read the "
                       f"corpus: set {TOKEN_ENV} or pass --token-file PATH")
    return token


def load_knowledge_for_serving(root: Path) -> Any:
    """The project's knowledge, loaded once: an absent store serves no docs, a broken one is an error."""
    from cce_core.foundation.config import load_config
    from cce_core.knowledge.blend import LoadedKnowledge
    from cce_core.knowledge.feed import SCHEMA_ID
    from cce_core.knowledge.ingest import DISABLED_MESSAGE
    from cce_core.knowledge.store import KnowledgeStore, KnowledgeStoreMissing, load_store

    if not load_config(root).knowledge_enabled:
        raise CceError(DISABLED_MESSAGE)
    try:
        store = load_store(root)
    except KnowledgeStoreMissing:
        store = KnowledgeStore(SCHEMA_ID, "", 0, [])  # nothing ingested yet: answer with no docs until there is
    return LoadedKnowledge(store)

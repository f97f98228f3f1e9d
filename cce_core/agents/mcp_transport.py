"""The stdio transport of ``cce mcp``: newline-delimited JSON-RPC with every bad line answered.

The MCP SDK's own stdio transport decodes stdin leniently (an invalid UTF-8
byte becomes U+FFFD), reads a line of any length into memory, and hands a line
it cannot validate to the server as an exception, which the server only logs:
the client gets no answer at all for a non-JSON line, a request without
``"jsonrpc": "2.0"``, or one without a ``method``, and waits for a reply that
never comes. This module replaces that transport (the SDK's ``Server`` still
does the protocol) and answers every line:

=============================================  =====================================  ===========
line                                           answer                                 ``id``
=============================================  =====================================  ===========
blank                                          none (skipped)                         —
not UTF-8                                      ``-32700`` Parse error                 null
not JSON (or nested past the parser's depth)   ``-32700`` Parse error                 null
longer than :data:`MAX_MESSAGE_BYTES`          ``-32600`` Invalid Request             recovered*
JSON but not an object (a batch, a scalar)     ``-32600`` Invalid Request             null
``jsonrpc`` missing or not ``"2.0"``           ``-32600`` Invalid Request             echoed
no ``method`` and not a response               ``-32600`` Invalid Request             echoed
``method`` not a string, bad ``id``/params     ``-32600`` Invalid Request             echoed
a lone surrogate escape in the ``id``          ``-32600`` Invalid Request             null
a lone surrogate escape in the ``method``      ``-32600`` Invalid Request             echoed
a lone surrogate escape in a request's params  ``-32602`` Invalid params              echoed
the same in a notification's or reply's body   none (dropped, as the SDK drops bad    —
                                               notification params)
a valid JSON-RPC message                       passed to the SDK server               —
=============================================  =====================================  ===========

\\* An over-long line is never held in memory: only its first bytes are kept,
and its ``id`` is echoed when it is the first member of the object (or the
second, after ``"jsonrpc"``), which is how clients, the SDK's included, write
it; otherwise null.

A lone surrogate escape (``"\\ud800"`` with no partner) is valid JSON but not
Unicode: it cannot be encoded as UTF-8, so no tool can store or search it and
no reply that echoes it can be written. The SDK would accept it and then fail
while writing the reply (which used to take the whole session down), so it is
refused here, for every method and tool at once, with the place it was found.

The writer never dies of one reply: a reply the SDK built that cannot be
serialised becomes a ``-32603`` error for its id, and the session goes on.

While serving, file descriptor 0 reads from the null device and 1 writes to
stderr (as with the SDK's transport), so a stray ``print`` in a tool or a
child process's output can never corrupt the protocol stream.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

# One message may be at most this long (1 MiB). Queries, decision texts and
# chunk ids are far smaller; a longer line is answered with an error without
# ever being held in memory, so a 10 MB argument cannot inflate the process.
MAX_MESSAGE_BYTES = 1 << 20

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

_READ_CHUNK = 1 << 16
# After the server stops: how long queued replies may take to be written.
DRAIN_WRITES_SECONDS = 5.0
# A ``\\uD800``-``\\uDFFF`` escape in the raw text: only then can a parsed string hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ID_PREFIX = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"[^"\\]*"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\]|\\.){0,256}")'
)


# --------------------------------------------------------------------------- classifying one line


def error_reply(request_id: Any, code: int, message: str, data: str) -> bytes:
    """One JSON-RPC error response line (without the newline), in the SDK's key order."""
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message, "data": data}}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _echo_id(value: Any) -> Any:
    """The request id to echo: a string (valid Unicode) or an integer (not a bool); anything else is null."""
    if isinstance(value, str):
        return value if _is_unicode(value) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _is_unicode(text: str) -> bool:
    """Whether ``text`` can be encoded as UTF-8: it holds no surrogate (parsed JSON pairs are already combined)."""
    return _SURROGATE.search(text) is None


def _shown(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX``, safe to put in a reply."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def lone_surrogate_at(value: Any, where: str) -> str | None:
    """Where the first lone surrogate in ``value`` is (``params.arguments.query``, ``params.tags[1]``), or None.

    Keys and values are both looked at, iteratively (a message may nest as
    deep as the JSON parser allows).
    """
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if not _is_unicode(item):
                return path
        elif isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                child_path = f"{path}.{_shown(key)}" if path else _shown(key)
                if not _is_unicode(key):
                    return f"{child_path} (a key)"
                stack.append((child, child_path))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{i}]") for i, child in reversed(list(enumerate(item))))
    return None


def _surrogate_note(path: str) -> str:
    return f"{path} holds a lone surrogate escape (\\ud800-\\udfff without its pair), which is not valid Unicode"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def classify(line: bytes) -> tuple[Any, bytes | None]:
    """``(message, None)`` for a valid JSON-RPC message, ``(None, error line)`` otherwise, ``(None, None)`` for blank.

    ``message`` is the SDK's validated message object, ready for the server.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, error_reply(None, PARSE_ERROR, "Parse error",
                                 f"the message is not valid UTF-8 (byte {exc.start})")
    if not text.strip():
        return None, None
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        return None, error_reply(None, PARSE_ERROR, "Parse error", "the message is nested too deeply")
    except ValueError as exc:
        return None, error_reply(None, PARSE_ERROR, "Parse error", f"the message is not JSON: {exc}")
    if not isinstance(obj, dict):
        kind = "a batch (array)" if isinstance(obj, list) else "not a JSON object"
        return None, error_reply(None, INVALID_REQUEST, "Invalid Request", f"the message is {kind}")
    request_id = _echo_id(obj.get("id"))
    suspect = _SURROGATE_ESCAPE.search(text) is not None
    if suspect and isinstance(obj.get("id"), str) and request_id is None:
        return None, error_reply(None, INVALID_REQUEST, "Invalid Request", _surrogate_note("the id"))
    if obj.get("jsonrpc") != "2.0":
        return None, error_reply(request_id, INVALID_REQUEST, "Invalid Request",
                                 'the message lacks "jsonrpc": "2.0"')
    if obj.get("id") is not None and request_id is None:
        return None, error_reply(None, INVALID_REQUEST, "Invalid Request", "the id is not a string or an integer")
    if "method" not in obj:
        if request_id is None or ("result" not in obj and "error" not in obj):
            return None, error_reply(request_id, INVALID_REQUEST, "Invalid Request",
                                     "the message has no method")
    elif not isinstance(obj["method"], str):
        return None, error_reply(request_id, INVALID_REQUEST, "Invalid Request", "the method is not a string")
    elif suspect and not _is_unicode(obj["method"]):
        return None, error_reply(request_id, INVALID_REQUEST, "Invalid Request", _surrogate_note("the method"))
    if suspect and (where := lone_surrogate_at(obj, "")) is not None:
        if request_id is None or "method" not in obj:
            return None, None  # a notification or a client's reply: nothing may answer it, and it cannot be used
        if not where.startswith("params"):
            return None, error_reply(request_id, INVALID_REQUEST, "Invalid Request", _surrogate_note(where))
        return None, error_reply(request_id, INVALID_PARAMS, "Invalid params", _surrogate_note(where))
    try:
        import mcp_types as types

        # Validated as exactly the kind it claims to be: a request with bad params must not pass as a
        # notification (which is never answered).
        if "method" not in obj:
            message = types.jsonrpc_message_adapter.validate_python(obj, by_name=False)
        elif request_id is not None:
            message = types.JSONRPCRequest.model_validate(obj, by_name=False)
        else:
            message = types.JSONRPCNotification.model_validate(obj, by_name=False)
    except Exception as exc:  # pydantic's ValidationError, or a nesting it refuses
        detail = _validation_detail(exc)
        return None, error_reply(request_id, INVALID_REQUEST, "Invalid Request",
                                 f"not a valid JSON-RPC message: {detail}")
    return message, None


def _validation_detail(exc: Exception) -> str:
    """The first problem pydantic found, as ``field: message``."""
    try:
        first = exc.errors()[0]  # type: ignore[attr-defined]
        where = ".".join(str(part) for part in first.get("loc", ())) or "message"
        return f"{where}: {first.get('msg', '')}"
    except Exception:
        return type(exc).__name__


def too_long_reply(prefix: bytes, size: int) -> bytes:
    """The answer to a line of ``size`` bytes over the limit, of which ``prefix`` was kept."""
    match = _ID_PREFIX.match(prefix)
    request_id: Any = None
    if match is not None:
        try:
            request_id = _echo_id(json.loads(match.group(1)))
        except ValueError:
            request_id = None
    return error_reply(request_id, INVALID_REQUEST, "Invalid Request",
                       f"the message is {size} bytes; the limit is {MAX_MESSAGE_BYTES}")


def serialise_reply(message: Any) -> bytes | None:
    """One outgoing SDK message as a line's bytes; a reply that cannot be encoded becomes an internal error.

    Whatever a handler put in a reply, the writer must go on writing the
    others: one unserialisable reply used to end the whole session. A
    notification that cannot be encoded is dropped (None).
    """
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")  # type: ignore[no-any-return]
    except Exception as exc:
        request_id = getattr(message, "id", None)
        if request_id is None:
            return None
        return error_reply(_echo_id(request_id), INTERNAL_ERROR, "Internal error",
                           f"the reply could not be encoded ({type(exc).__name__})")


# --------------------------------------------------------------------------- framing


class LineSplitter:
    """Bytes in, complete lines out; a line over the limit comes out as ``(prefix, size)`` only.

    Memory stays below the limit plus one read, whatever the input.
    """

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.limit = limit
        self._buf = bytearray()
        self._dropping = False  # inside an over-long line
        self._dropped = 0  # bytes of that line not kept
        self._prefix = b""

    def feed(self, data: bytes) -> Iterator[tuple[bytes, int | None]]:
        """Yield ``(line, None)`` for each complete line and ``(prefix, size)`` for each over-long one."""
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            start = len(data) if end < 0 else end + 1
            if self._dropping:
                self._dropped += len(piece)
            else:
                self._buf += piece
                if len(self._buf) > self.limit:
                    self._dropping = True
                    self._prefix = bytes(self._buf[:4096])
                    self._dropped = len(self._buf)
                    self._buf.clear()
            if end >= 0:
                yield from self._finish()

    def close(self) -> Iterator[tuple[bytes, int | None]]:
        """The last line when the input ended without a newline."""
        if self._dropping or self._buf:
            yield from self._finish()

    def _finish(self) -> Iterator[tuple[bytes, int | None]]:
        if self._dropping:
            prefix, size = self._prefix, self._dropped
            self._dropping, self._dropped, self._prefix = False, 0, b""
            yield prefix, size
        else:
            line = bytes(self._buf)
            self._buf.clear()
            yield line, None


# --------------------------------------------------------------------------- the standard streams


@contextmanager
def claim_stdio() -> Iterator[tuple[int, int]]:
    """Private duplicates of fds 0 and 1 for the protocol; fd 0 reads /dev/null and fd 1 goes to stderr meanwhile."""
    sys.stdout.flush()
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    os.set_inheritable(wire_in, False)
    os.set_inheritable(wire_out, False)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    try:
        yield wire_in, wire_out
    finally:
        sys.stdout.flush()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (saved_in, saved_out, wire_out):
            os.close(fd)
        # wire_in is deliberately left open: a reader thread may still be blocked on it.


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


@asynccontextmanager
async def stdio_streams(in_fd: int, out_fd: int) -> AsyncIterator[tuple[Any, Any]]:
    """``(read stream, write stream)`` for the SDK server over two file descriptors.

    The read stream yields the SDK's ``SessionMessage`` for each valid line;
    every other line is answered here, through the same single writer as the
    server's replies, so lines never interleave. The write stream takes the
    server's ``SessionMessage`` replies.
    """
    import anyio
    from mcp.shared.message import SessionMessage

    read_send, read_recv = anyio.create_memory_object_stream[Any](0)
    write_send, write_recv = anyio.create_memory_object_stream[Any](0)
    own_replies = write_send.clone()
    broken = anyio.Event()

    async def reader() -> None:
        splitter = LineSplitter()
        async with read_send, own_replies:
            try:
                while True:
                    data = await anyio.to_thread.run_sync(os.read, in_fd, _READ_CHUNK, abandon_on_cancel=True)
                    batches = splitter.feed(data) if data else splitter.close()
                    for line, size in batches:
                        if size is not None:
                            await own_replies.send(too_long_reply(line, size))
                            continue
                        message, reply = classify(line)
                        if message is not None:
                            await read_send.send(SessionMessage(message))
                        elif reply is not None:
                            await own_replies.send(reply)
                    if not data:
                        return
            except OSError:
                return  # stdin failed: treat as end of input
            except anyio.BrokenResourceError:
                return  # the server stopped reading

    async def writer() -> None:
        async with write_recv:
            async for item in write_recv:
                if broken.is_set():
                    continue  # the client is gone: drain so nobody blocks
                data = item if isinstance(item, bytes) else serialise_reply(item.message)
                if data is None:
                    continue
                try:
                    await anyio.to_thread.run_sync(_write_all, out_fd, data + b"\n")
                except OSError:
                    broken.set()

    writer_done = anyio.Event()

    async def write_then_signal() -> None:
        try:
            await writer()
        finally:
            writer_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(write_then_signal)
        try:
            yield read_recv, write_send
        finally:
            # Let the replies already queued reach the client, then stop a reader still blocked on stdin.
            write_send.close()
            with anyio.move_on_after(DRAIN_WRITES_SECONDS, shield=True):
                await writer_done.wait()
            tg.cancel_scope.cancel()

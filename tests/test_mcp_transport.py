"""``cce mcp`` fed malformed input through a raw pipe, and the transport's rules in-process.

Every line a client writes gets an answer: a line that is not JSON, not UTF-8,
lacks ``"jsonrpc"``, lacks a ``method`` or is too long is answered with a
JSON-RPC error (never silence, never a dead server), and the session goes on.
The SDK's own client is used for the normal path and sees an over-long call
fail cleanly instead of hanging.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import cce_executable

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'mcp>=2.3,<3')")

from test_mcp import McpClient, index, write_tiny_repo

from cce_core.agents.mcp_transport import (
    INVALID_REQUEST,
    MAX_MESSAGE_BYTES,
    PARSE_ERROR,
    LineSplitter,
    classify,
    too_long_reply,
)

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode("utf-8") + b"\n"


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for row in f:
            if row.startswith("VmRSS:"):
                return int(row.split()[1])
    raise AssertionError("no VmRSS")


class RawMcp:
    """A ``cce mcp`` process written to byte by byte, its replies read line by line."""

    def __init__(self, root: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != "CCE_DEBUG"}
        self.proc = subprocess.Popen([cce_executable(), "mcp", "--dir", str(root)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.replies: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.send(line(INIT) + line(INITIALIZED))
        assert self.reply()["id"] == 0

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.replies.put(raw)
        self.replies.put(None)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def reply(self, timeout: float = 30) -> dict[str, Any]:
        raw = self.replies.get(timeout=timeout)
        assert raw is not None, "the server closed its output"
        return json.loads(raw)

    def close(self) -> tuple[int, bytes]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        return code, self.proc.stderr.read()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tiny_repo(tmp_path_factory.mktemp("mcp_transport") / "tiny")
    index(root)
    return root


@pytest.fixture
def raw(repo: Path) -> Iterator[RawMcp]:
    server = RawMcp(repo)
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait(timeout=10)


def error_of(reply: dict[str, Any]) -> tuple[Any, int]:
    assert set(reply) == {"jsonrpc", "id", "error"}, reply
    return reply["id"], reply["error"]["code"]


# --------------------------------------------------------------------------- a real process, raw bytes


MALFORMED: list[tuple[str, bytes, Any, int]] = [
    ("not JSON", b"this is not json", None, PARSE_ERROR),
    ("truncated JSON", b'{"jsonrpc":"2.0","id":1,"method":"ping"', None, PARSE_ERROR),
    ("NaN", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}', None, PARSE_ERROR),
    ("invalid UTF-8 line", b"\xff\xfe\xfd", None, PARSE_ERROR),
    ("invalid UTF-8 in a string", b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"\xc3("}}', None,
     PARSE_ERROR),
    ("deep nesting", b"[" * 100_000 + b"]" * 100_000, None, PARSE_ERROR),
    ("no jsonrpc", b'{"id":3,"method":"ping"}', 3, INVALID_REQUEST),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":"a","method":"ping"}', "a", INVALID_REQUEST),
    ("no jsonrpc, no id", b'{"method":"ping"}', None, INVALID_REQUEST),
    ("method-less", b'{"jsonrpc":"2.0","id":4}', 4, INVALID_REQUEST),
    ("method-less, no id", b'{"jsonrpc":"2.0"}', None, INVALID_REQUEST),
    ("method not a string", b'{"jsonrpc":"2.0","id":5,"method":5}', 5, INVALID_REQUEST),
    ("method null", b'{"jsonrpc":"2.0","id":6,"method":null}', 6, INVALID_REQUEST),
    ("id an object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None, INVALID_REQUEST),
    ("params a string", b'{"jsonrpc":"2.0","id":7,"method":"ping","params":"x"}', 7, INVALID_REQUEST),
    ("batch", b'[{"jsonrpc":"2.0","id":8,"method":"ping"}]', None, INVALID_REQUEST),
    ("scalar", b"42", None, INVALID_REQUEST),
    ("empty object", b"{}", None, INVALID_REQUEST),
]


def test_every_malformed_line_gets_an_error_and_the_session_goes_on(raw: RawMcp) -> None:
    for name, data, want_id, want_code in MALFORMED:
        raw.send(data + b"\n")
        assert error_of(raw.reply()) == (want_id, want_code), name
        raw.send(line({"jsonrpc": "2.0", "id": 100, "method": "ping"}))
        assert raw.reply() == {"jsonrpc": "2.0", "id": 100, "result": {}}, name
    raw.send(b"\n   \n\r\n")  # blank lines are skipped, not answered
    raw.send(line({"jsonrpc": "2.0", "id": 101, "method": "ping"}))
    assert raw.reply()["id"] == 101
    code, err = raw.close()
    assert code == 0
    assert b"Traceback" not in err


def test_a_10_mb_argument_is_refused_with_its_id_in_bounded_memory(raw: RawMcp) -> None:
    before = rss_kib(raw.proc.pid)
    big = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
           "params": {"name": "context_search", "arguments": {"query": "word " * 2_000_000}}}
    raw.send(line(big))
    reply = raw.reply()
    assert error_of(reply) == (9, INVALID_REQUEST)
    assert f"the limit is {MAX_MESSAGE_BYTES}" in reply["error"]["data"]
    after = rss_kib(raw.proc.pid)
    assert after - before < 20_000, (before, after)  # the 10 MB line was never held whole
    raw.send(line({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
                   "params": {"name": "context_search", "arguments": {"query": "hash password"}}}))
    result = raw.reply()
    assert result["id"] == 10 and "auth.py" in result["result"]["content"][0]["text"]
    assert raw.close()[0] == 0


def test_an_argument_just_under_the_limit_is_served(raw: RawMcp) -> None:
    text = "decision " * ((MAX_MESSAGE_BYTES - 200) // 9)
    raw.send(line({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
                   "params": {"name": "record_decision", "arguments": {"text": text}}}))
    reply = raw.reply()
    assert reply["id"] == 11 and reply["result"]["isError"] is False, reply
    assert raw.close()[0] == 0


def test_a_final_line_without_newline_is_answered(raw: RawMcp) -> None:
    raw.send(b'{"jsonrpc":"2.0","id":12,"method":"ping"}')
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()
    assert raw.reply() == {"jsonrpc": "2.0", "id": 12, "result": {}}
    assert raw.proc.wait(timeout=60) == 0


def test_1000_rapid_calls_are_all_answered_with_bounded_memory(raw: RawMcp) -> None:
    n = 1000
    calls = b"".join(line({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call",
                           "params": {"name": "context_search", "arguments": {"query": f"payment {i}"}}})
                     for i in range(n))
    writer = threading.Thread(target=raw.send, args=(calls,))
    start = time.monotonic()
    writer.start()
    seen: set[int] = set()
    rss_at_100 = 0
    for k in range(n):
        reply = raw.reply(timeout=120)
        assert "result" in reply and reply["result"]["isError"] is False, reply
        seen.add(reply["id"])
        if k == 99:
            rss_at_100 = rss_kib(raw.proc.pid)
    writer.join(timeout=60)
    rss_at_end = rss_kib(raw.proc.pid)
    elapsed = time.monotonic() - start
    assert seen == set(range(1000, 1000 + n))
    assert rss_at_end - rss_at_100 < 30_000, (rss_at_100, rss_at_end)  # KiB
    assert elapsed < 120, elapsed
    assert raw.close()[0] == 0


# --------------------------------------------------------------------------- the SDK client


def test_the_sdk_client_gets_an_error_for_an_oversized_call_and_keeps_its_session(repo: Path) -> None:
    from mcp.shared.exceptions import MCPError

    client = McpClient("--dir", repo)
    try:
        assert "auth.py" in client.text("context_search", {"query": "hash password"})
        with pytest.raises(MCPError) as caught:
            client.call("context_search", {"query": "x" * (MAX_MESSAGE_BYTES + 10)})
        assert "limit" in str(caught.value.error.data)
        assert "auth.py" in client.text("context_search", {"query": "hash password"})
    finally:
        client.close()


# --------------------------------------------------------------------------- the rules in-process


def test_classify_answers() -> None:
    message, reply = classify(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert reply is None and message.method == "ping"
    assert classify(b"   \r") == (None, None)
    response, reply = classify(b'{"jsonrpc":"2.0","id":1,"result":{}}')  # a client's reply to the server
    assert reply is None and response is not None
    _, reply = classify(b'{"jsonrpc":"2.0","id":true,"method":"ping"}')
    assert reply is not None and json.loads(reply)["id"] is None  # a bool id is not echoed
    _, reply = classify(b'{"id":1.5,"method":"ping"}')
    assert reply is not None and json.loads(reply)["id"] is None


def test_line_splitter_keeps_memory_below_the_limit() -> None:
    splitter = LineSplitter(limit=10)
    out = list(splitter.feed(b"short\n" + b"x" * 25))
    assert out == [(b"short", None)]
    assert len(splitter._buf) == 0
    out = list(splitter.feed(b"yy\nok"))
    assert out == [(b"x" * 25, 27)]  # what was buffered when the limit was passed, and the real size
    assert list(splitter.close()) == [(b"ok", None)]
    assert list(LineSplitter(limit=10).feed(b"a\nb\n\n")) == [(b"a", None), (b"b", None), (b"", None)]


def test_too_long_reply_recovers_a_leading_id_only() -> None:
    def rid(prefix: bytes) -> Any:
        return json.loads(too_long_reply(prefix, 5_000_000))["id"]

    assert rid(b'{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"arguments":{"query":"xx') == 42
    assert rid(b'{"id":"abc","jsonrpc":"2.0","method"') == "abc"
    assert rid(b'{"method":"tools/call","params":{"id":7,"q":"xxx') is None  # not a top-level id
    assert rid(b'{"jsonrpc":"2.0","id":4.5,"method"') is None
    assert rid(b"\xff\xfe garbage") is None

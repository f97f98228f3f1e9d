"""``cce mcp`` fed malformed input through a raw pipe, and the transport's rules in-process.

Every line a client writes gets an answer: a line that is not JSON, not UTF-8,
lacks ``"jsonrpc"``, lacks a ``method`` or is too long is answered with a
JSON-RPC error (never silence, never a dead server), and the session goes on.
The SDK's own client is used for the normal path and sees an over-long call
fail cleanly instead of hanging.

Issue #23: lone surrogate escapes in the method, the id, params and every
tool's arguments are answered (never a dead session); a cancel with any
``requestId`` shape leaves the server up; methods the server does not serve
are ``-32601`` whatever their params (raw and through the SDK client); SIGINT
ends an idle or a busy server at once, like SIGTERM.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from helpers import cce_executable

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'mcp>=2.3,<3')")

from test_mcp import McpClient, index, write_tiny_repo

from cce_core.agents.mcp_transport import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_MESSAGE_BYTES,
    PARSE_ERROR,
    LineSplitter,
    classify,
    serialise_reply,
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


# --------------------------------------------------------------------------- hostile input (issue #23, items 1-5)

# Lone surrogate escapes are valid JSON but not Unicode: no reply naming them can be encoded as UTF-8.
SURROGATE_LINES: list[tuple[str, bytes, Any, int]] = [
    ("surrogate in the method", rb'{"jsonrpc":"2.0","id":2,"method":"x\ud800y"}', 2, INVALID_REQUEST),
    ("low surrogate in the method", rb'{"jsonrpc":"2.0","id":"m","method":"tools/\udfffcall"}', "m", INVALID_REQUEST),
    ("surrogate in a string id", rb'{"jsonrpc":"2.0","id":"a\ud800","method":"ping"}', None, INVALID_REQUEST),
    ("surrogate in a notification's method", rb'{"jsonrpc":"2.0","method":"notifications/\ud800"}', None,
     INVALID_REQUEST),
    ("surrogate in the params of a request", rb'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"\udc00"}}',
     3, INVALID_PARAMS),
    ("surrogate in a params key", rb'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"\ud800":1}}', 4,
     INVALID_PARAMS),
]


def test_lone_surrogates_in_method_id_or_params_are_answered_and_the_server_goes_on(raw: RawMcp) -> None:
    for name, data, want_id, want_code in SURROGATE_LINES:
        raw.send(data + b"\n" + line({"jsonrpc": "2.0", "id": 100, "method": "ping"}))
        reply = raw.reply()
        assert error_of(reply) == (want_id, want_code), (name, reply)
        assert "surrogate" in reply["error"]["data"], name
        assert raw.reply() == {"jsonrpc": "2.0", "id": 100, "result": {}}, name
    # A valid surrogate *pair* is an ordinary character and is served.
    raw.send(line({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                   "params": {"name": "context_search", "arguments": {"query": "hash password \U0001f600"}}}))
    assert raw.reply()["result"]["isError"] is False
    code, err = raw.close()
    assert code == 0 and b"Traceback" not in err and b"internal error" not in err, err


def test_replies_already_due_still_arrive_around_a_surrogate_line(raw: RawMcp) -> None:
    calls = b"".join(line({"jsonrpc": "2.0", "id": 200 + i, "method": "tools/call",
                           "params": {"name": "context_search", "arguments": {"query": f"payment {i}"}}})
                     for i in range(5))
    raw.send(calls + rb'{"jsonrpc":"2.0","id":9,"method":"x\ud800y"}' + b"\n" + calls.replace(b'"id": 2', b'"id": 3'))
    ids = {raw.reply()["id"] for _ in range(11)}
    assert ids == {9, *range(200, 205), *range(300, 305)}
    assert raw.close()[0] == 0


@pytest.mark.parametrize("request_id", [{"a": 1}, [1, 2], [], {}, 1.5, True, None, "\ud800"])
def test_a_cancel_for_any_request_id_shape_leaves_the_server_up(raw: RawMcp, request_id: Any) -> None:
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
    raw.send(line(cancel) + line({"jsonrpc": "2.0", "id": 101, "method": "ping"}))
    assert raw.reply() == {"jsonrpc": "2.0", "id": 101, "result": {}}
    raw.send(line({"jsonrpc": "2.0", "id": 102, "method": "tools/call",
                   "params": {"name": "context_search", "arguments": {"query": "hash password"}}}))
    assert raw.reply()["id"] == 102
    code, err = raw.close()
    assert code == 0 and b"Traceback" not in err and b"internal error" not in err, err


SURROGATE_ARGUMENTS = [
    ("context_search", {"query": "hash \ud800 password"}),
    ("context_search", {"query": "hash", "package": "\udbff"}),
    ("expand_chunk", {"chunk_id": "039f8bd5b80a698e\ud800"}),
    ("expand_chunk", {"chunk_id": "039f8bd5b80a698e", "scope": "body\udc00"}),
    ("related_context", {"chunk_id": "\udfff"}),
    ("record_feedback", {"query_id": "abc\ud800", "helpful": True}),
    ("record_feedback", {"query_id": "abc", "helpful": True, "note": "\ud800"}),
    ("record_decision", {"text": "use \ud800 here", "tags": ["\udc00"]}),
    ("session_recall", {"query": "\ud800"}),
    ("set_output_compression", {"level": "\ud800"}),
    ("\ud800", {}),
]


def test_lone_surrogates_in_tool_arguments_are_invalid_params(raw: RawMcp, repo: Path) -> None:
    log = repo / ".cce" / "metrics.jsonl"
    before = log.read_bytes() if log.exists() else b""
    for n, (tool, args) in enumerate(SURROGATE_ARGUMENTS):
        raw.send(line({"jsonrpc": "2.0", "id": 300 + n, "method": "tools/call",
                       "params": {"name": tool, "arguments": args}}))
        reply = raw.reply()
        assert error_of(reply) == (300 + n, INVALID_PARAMS), (tool, reply)
        assert reply["error"]["message"] == "Invalid params"
        assert "lone surrogate" in reply["error"]["data"] and "params." in reply["error"]["data"], reply
    assert (log.read_bytes() if log.exists() else b"") == before  # nothing half-recorded
    code, err = raw.close()
    assert code == 0 and err == b"", err


UNSERVED = ["prompts/get", "prompts/list", "resources/read", "resources/list", "resources/templates/list",
            "resources/subscribe", "resources/unsubscribe", "logging/setLevel", "completion/complete"]


@pytest.mark.parametrize("params", [None, {}, {"name": "p", "uri": "file:///x", "level": "info",
                                                "ref": {"type": "ref/prompt", "name": "p"},
                                                "argument": {"name": "a", "value": "b"}}])
def test_methods_the_server_does_not_serve_are_method_not_found(raw: RawMcp, params: Any) -> None:
    for n, method in enumerate(UNSERVED):
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": 400 + n, "method": method}
        if params is not None:
            request["params"] = params
        raw.send(line(request))
        reply = raw.reply()
        assert error_of(reply) == (400 + n, -32601), (method, reply)
        assert reply["error"]["message"] == "Method not found"
    raw.send(line({"jsonrpc": "2.0", "id": 499, "method": "tools/list", "params": {}}))
    assert len(raw.reply()["result"]["tools"]) == 9
    assert raw.close()[0] == 0


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")  # the SDK client says so itself
def test_the_sdk_client_sees_method_not_found_for_unserved_capabilities(repo: Path) -> None:
    import mcp.types as types
    from mcp.shared.exceptions import MCPError

    client = McpClient("--dir", repo)
    try:
        calls = [partial(client.session.get_prompt, "p"), partial(client.session.read_resource, "file:///x"),
                 partial(client.session.set_logging_level, "info"),
                 partial(client.session.complete, types.PromptReference(type="ref/prompt", name="p"),
                         {"name": "a", "value": "b"})]
        for call in calls:
            with pytest.raises(MCPError) as caught:
                client.portal.call(call)
            assert caught.value.error.code == -32601
        assert "auth.py" in client.text("context_search", {"query": "hash password"})
    finally:
        client.close()


def _started(raw: RawMcp) -> None:
    raw.send(line({"jsonrpc": "2.0", "id": 600, "method": "ping"}))
    assert raw.reply()["id"] == 600


def test_sigint_ends_an_idle_server_promptly(raw: RawMcp) -> None:
    _started(raw)
    raw.proc.send_signal(signal.SIGINT)
    code = raw.proc.wait(timeout=10)  # it used to live on until stdin got a byte
    assert code in (-signal.SIGINT, 128 + signal.SIGINT, 130), code


def test_sigint_ends_a_busy_server_promptly(raw: RawMcp) -> None:
    _started(raw)
    calls = b"".join(line({"jsonrpc": "2.0", "id": 700 + i, "method": "tools/call",
                           "params": {"name": "context_search", "arguments": {"query": f"payment {i}"}}})
                     for i in range(300))
    raw.send(calls)
    assert raw.reply()["id"] == 700  # searching now
    raw.proc.send_signal(signal.SIGINT)
    code = raw.proc.wait(timeout=10)
    assert code in (-signal.SIGINT, 128 + signal.SIGINT, 130), code


def test_sigterm_still_ends_the_server(raw: RawMcp) -> None:
    _started(raw)
    raw.proc.send_signal(signal.SIGTERM)
    assert raw.proc.wait(timeout=10) != 0


def test_classify_names_where_a_lone_surrogate_is() -> None:
    _, reply = classify(rb'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"q":["a","\ud800"]}}}')
    body = json.loads(reply)
    assert body["id"] == 7 and body["error"]["code"] == INVALID_PARAMS
    assert "params.arguments.q[1]" in body["error"]["data"]
    message, reply = classify(rb'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"q":"\ud83d\ude00 \\ud800"}}')
    assert reply is None and message is not None  # a pair, and an escaped backslash before "ud800"
    message, reply = classify(rb'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\ud800"}}')
    assert (message, reply) == (None, None)  # a notification with unusable params is dropped, never answered


def test_a_reply_that_cannot_be_encoded_becomes_an_internal_error_for_its_id() -> None:
    from mcp.types import JSONRPCNotification, JSONRPCResponse

    bad = json.loads(serialise_reply(JSONRPCResponse(jsonrpc="2.0", id=5, result={"text": "a\ud800"})) or b"")
    assert bad["id"] == 5 and bad["error"]["code"] == -32603
    assert serialise_reply(JSONRPCNotification(jsonrpc="2.0", method="x", params={"t": "\udc00"})) is None
    assert serialise_reply(JSONRPCResponse(jsonrpc="2.0", id=6, result={})) == b'{"jsonrpc":"2.0","id":6,"result":{}}'

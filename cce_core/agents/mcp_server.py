"""The MCP server: tool dispatch on a session and the stdio transport.

An agent keeps one ``cce mcp`` process for a whole session and calls tools
many times; :class:`McpSession` is the session state of
:mod:`cce_core.agents.mcp_session` plus dispatch to the nine tools of
:mod:`cce_core.agents.mcp_tools`, where a failing call becomes an error result
and never a dead server.

The protocol is the official MCP Python SDK's low-level server; it is
imported only when the server starts, so other commands never pay for it. The
stdio framing is ours (:mod:`cce_core.agents.mcp_transport`): it answers every
malformed line with a JSON-RPC error, where the SDK's own transport stays silent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from cce_core.agents.mcp_session import SessionState
from cce_core.foundation.errors import CceError


class McpSession(SessionState):
    """A served session: the state plus tool dispatch."""

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> tuple[str, bool]:
        """Run one tool: ``(text, is_error)``. A failure becomes an error result, never a dead server."""
        from cce_core.agents.mcp_symbol_tools import lookup
        from cce_core.agents.mcp_tools import TOOLS
        from cce_core.hookspecs import EmbedderError

        tool = TOOLS.get(name) or lookup(self, name)
        if tool is None:
            return f"unknown tool: {name}", True
        args = dict(arguments) if isinstance(arguments, Mapping) else {}
        try:
            text, is_error = tool(self, args)
        except (CceError, EmbedderError) as exc:
            text, is_error = str(exc), True
        except Exception as exc:  # one bad call must not end the agent's session
            if os.environ.get("CCE_DEBUG"):
                raise
            text, is_error = f"internal error: {type(exc).__name__}: {exc} (set CCE_DEBUG=1 for details)", True
        self.ledger.note_served(text)
        return text, is_error


def serve_stdio(session: McpSession, *, watch: bool = False) -> None:
    """Serve ``session`` over stdin/stdout with the MCP SDK until the client closes the stream.

    ``watch``: keep the index fresh while serving (:meth:`SessionState.start_watch`),
    started once fd 1 points at stderr, so nothing the watcher does can reach the protocol stream.
    """
    try:
        import anyio
        import mcp.types as types
        from mcp.server.lowlevel import Server
    except ImportError as exc:
        raise CceError(f"the MCP server needs the `mcp` package ({exc}) — pip install 'mcp>=2.3,<3'") from exc

    from cce_core import __version__
    from cce_core.agents.mcp_symbol_tools import listed_for
    from cce_core.agents.mcp_tools import TOOL_DEFINITIONS
    from cce_core.agents.mcp_transport import claim_stdio, stdio_streams

    tools = [types.Tool(name=d["name"], description=d["description"], input_schema=d["inputSchema"])
             for d in TOOL_DEFINITIONS + listed_for(session)]

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text, is_error = session.call(params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)

    server = Server("cce", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware.insert(0, _unserved_is_method_not_found(server))

    async def main(in_fd: int, out_fd: int) -> None:
        async with stdio_streams(in_fd, out_fd) as (stdin_stream, stdout_stream):
            await _serve_until_answered(server, stdin_stream, stdout_stream)

    with claim_stdio() as (in_fd, out_fd), _interrupt_ends_the_process():
        if watch:
            session.start_watch()
        try:
            anyio.run(main, in_fd, out_fd)
        finally:
            session.stop_watch()


@contextmanager
def _interrupt_ends_the_process() -> Iterator[None]:
    """While serving, SIGINT ends the process at once, as SIGTERM does.

    Python turns SIGINT into a ``KeyboardInterrupt`` (or, under asyncio, a
    cancelled main task) that only the main thread sees, between bytecodes:
    the event loop then waits for its stdin reader thread, blocked in a read
    that no signal interrupts, so an interrupted server used to live on until
    stdin got a byte. Nothing the server holds needs an orderly exit: every
    store write is atomic and its lock a ``flock`` the kernel drops with the
    process (the same as after SIGTERM or kill -9).
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _unserved_is_method_not_found(server: Any) -> Any:
    """Middleware: a request for a method this server has no handler for is ``-32601``, whatever its params.

    The SDK validates the params of the protocol's own methods before it looks
    for a handler, so ``prompts/get`` or ``resources/read`` with params it
    dislikes came back as ``-32602`` (invalid params) from a server that has
    no prompts or resources at all; a client must learn the method is not
    served, not that it called it wrongly.
    """
    from mcp.shared.exceptions import MCPError
    from mcp.types import METHOD_NOT_FOUND

    async def middleware(ctx: Any, call_next: Any) -> Any:
        method = ctx.method
        if ctx.request_id is not None and method != "initialize" and server.get_request_handler(method) is None:
            raise MCPError(code=METHOD_NOT_FOUND, message="Method not found", data=method)
        return await call_next(ctx)

    return middleware


# How long, after the client closed its end, unanswered calls may still take to finish.
DRAIN_SECONDS = 60.0


class _Unanswered:
    """The ids of requests read from the client that have no reply written yet."""

    def __init__(self) -> None:
        import anyio

        self.ids: set[Any] = set()
        self.empty = anyio.Event()
        self.empty.set()

    def read(self, item: Any) -> None:
        import anyio
        from mcp.types import JSONRPCNotification, JSONRPCRequest

        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCRequest):
            self.ids.add(message.id)
            if self.empty.is_set():
                self.empty = anyio.Event()
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            request_id = (message.params or {}).get("requestId")
            # Only an id a request can have settles one: an object or a list is unhashable (it used to
            # end the server), and a bool is not the integer it compares equal to.
            if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
                self._settle(request_id)

    def written(self, item: Any) -> None:
        from mcp.types import JSONRPCError, JSONRPCResponse

        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self._settle(message.id)

    def _settle(self, request_id: Any) -> None:
        self.ids.discard(request_id)
        if not self.ids:
            self.empty.set()


async def _serve_until_answered(server: Any, stdin_stream: Any, stdout_stream: Any) -> None:
    """Run ``server`` between the stdio streams, answering every call read before end of input.

    The SDK cancels calls still running when its input ends, so a client that
    writes its requests and closes stdin (a script, a pipe) could lose the
    last replies. The input is relayed, and its end passed on only once every
    call read so far has been answered.
    """
    import anyio

    unanswered = _Unanswered()
    to_server, server_input = anyio.create_memory_object_stream[Any](0)
    server_output, from_server = anyio.create_memory_object_stream[Any](0)
    output_done = anyio.Event()

    async def relay_input() -> None:
        async with to_server:
            async for item in stdin_stream:
                unanswered.read(item)
                await to_server.send(item)
            with anyio.move_on_after(DRAIN_SECONDS):
                await unanswered.empty.wait()

    async def relay_output() -> None:
        try:
            async with from_server, stdout_stream:
                async for item in from_server:
                    await stdout_stream.send(item)
                    unanswered.written(item)
        finally:
            output_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(relay_input)
        tg.start_soon(relay_output)
        await server.run(server_input, server_output, server.create_initialization_options())
        await output_done.wait()
        tg.cancel_scope.cancel()

"""One MCP session: the served project, its cached index and the per-session state.

An agent keeps one ``cce mcp`` process for a whole session and calls tools
many times, so the loaded index is kept between calls and reloaded only when
the store file changes on disk (a re-index or a pull replaces it). A cached
answer must equal a cold one byte for byte, so the cache holds nothing that a
fresh load would compute differently. The session also owns what lives only
as long as the process: the output-compression level, the ledger behind
``summarize_context``, the served-token count and the footer's counters.

In workspace mode (``cce mcp --workspace``) the served index is the union of
the members' stores, assembled once per ``package`` scope by
:mod:`cce_core.federation` and reassembled when any in-scope member store
changes on disk; every search event goes to the workspace root's log.

The transport is the official MCP Python SDK's low-level server over stdio;
it is imported only when the server starts, so other commands never pay for it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import CceError

if TYPE_CHECKING:
    from .chunker import Chunk
    from .config import CceConfig
    from .federation import MemberStore
    from .plugins import PluginHost
    from .retrieval import Searcher
    from .store import StoreData
    from .workspace import Manifest

Fingerprint = tuple[int, int, int]


def _fingerprint(path: Path) -> Fingerprint | None:
    """(mtime, size, inode) of the store file, or None when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


class LoadedIndex:
    """One loaded store plus the lookups the tools need, built on first use."""

    def __init__(self, data: StoreData) -> None:
        self.data = data
        self.embedder: Any = None
        self.searcher: Searcher | None = None
        self._by_id: dict[str, Chunk] | None = None
        self._by_file: dict[str, list[Chunk]] | None = None
        self._neighbours: dict[str, list[str]] | None = None

    def chunk(self, chunk_id: str) -> Chunk | None:
        if self._by_id is None:
            by_id: dict[str, Chunk] = {}
            for c in self.data.chunks:
                by_id.setdefault(c.chunk_id, c)
            self._by_id = by_id
        return self._by_id.get(chunk_id)

    def chunks_in_file(self, path: str) -> list[Chunk]:
        """The chunks of one file, by start line then chunk id."""
        if self._by_file is None:
            by_file: dict[str, list[Chunk]] = {}
            for c in self.data.chunks:
                by_file.setdefault(c.file_path, []).append(c)
            for chunks in by_file.values():
                chunks.sort(key=lambda c: (c.start_line, c.chunk_id))
            self._by_file = by_file
        return list(self._by_file.get(path, ()))

    def neighbour_chunks(self, path: str) -> list[Chunk]:
        """The chunks of every file importing or imported by ``path``, by file, start line, chunk id."""
        if self._neighbours is None:
            from .graph import neighbours

            self._neighbours = neighbours(self.data.edges)
        out: list[Chunk] = []
        for other in self._neighbours.get(path, ()):  # already sorted by path
            out.extend(self.chunks_in_file(other))
        return out


class WorkspaceBundle:
    """The in-scope member stores of a workspace and their union, built on first use."""

    def __init__(self, members: list[MemberStore]) -> None:
        self.members = members
        self._union: LoadedIndex | None = None

    @property
    def union(self) -> LoadedIndex:
        """The members as one namespaced index (``<member>/<path>``), as the CLI's workspace search ranks it."""
        if self._union is None:
            from .federation import combined_store

            self._union = LoadedIndex(combined_store(self.members))
        return self._union

    @property
    def total_chunks(self) -> int:
        return sum(len(ms.data.chunks) for ms in self.members)


# Per member in scope: (name, package, store path, store fingerprint).
WorkspaceKey = tuple[tuple[str, str, str, Fingerprint | None], ...]

# Compact views kept per session (keyed by path, detail and the stored text itself).
_VIEW_CACHE_LIMIT = 20_000


class McpSession:
    """The state of one served session; tools read and update it."""

    def __init__(self, root: Path, store: Path | None = None, host: PluginHost | None = None,
                 workspace: bool = False) -> None:
        from .metrics import METRICS_FILE, metrics_beside
        from .session import SessionLedger
        from .store import STORE_DIR, default_store_path

        self.root = Path(root)
        self.workspace = workspace
        self.store_path = Path(store) if store is not None else default_store_path(self.root)
        # A workspace's agent searches land in the root log, where the roll-up dashboard reads them.
        self.metrics_path = (self.root / STORE_DIR / METRICS_FILE) if workspace else metrics_beside(self.store_path)
        config = self.config()
        self.output_level: str = config.output_level
        self.footer_mode: str = config.mcp_result_footer
        self.auto_tokens: int | None = config.summarization_auto_tokens
        self.ledger = SessionLedger()
        self.searches = 0
        self.tokens_saved = 0
        self._host = host
        self._views: dict[tuple[str, str, str], str] = {}
        self._cache: tuple[Fingerprint, LoadedIndex] | None = None
        self._workspace_cache: dict[tuple[str, ...] | None, tuple[WorkspaceKey, WorkspaceBundle]] = {}

    # -- configuration and plugins --------------------------------------

    def config(self) -> CceConfig:
        """The project's ``.cce/config``, read afresh (per-call keys follow edits mid-session)."""
        from .config import load_config

        return load_config(self.root)

    def host(self) -> PluginHost:
        if self._host is None:
            from .plugins import default_host

            self._host = default_host()
        return self._host

    def detail(self, requested: str | None) -> str:
        """The body detail for one call: the argument, else ``retrieval.detail``, else compact."""
        from .compress import parse_detail

        return parse_detail(requested, self.config().retrieval_detail)

    def compress(self, file_path: str, content: str, detail: str) -> str:
        """A chunk's view at ``detail``, memoised: it depends only on the stored text."""
        from .compress import FULL, compress

        if detail == FULL:
            return content
        key = (file_path, detail, content)
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= _VIEW_CACHE_LIMIT:
                self._views.clear()  # bounded; a long session over a huge index just recomputes
            view = self._views[key] = compress(self.host(), file_path, content, detail)
        return view

    # -- the index -------------------------------------------------------

    def load_index(self) -> LoadedIndex | None:
        """The current index, reused while the store file is unchanged; None when there is none."""
        from .store import load_store

        fp = _fingerprint(self.store_path)
        if fp is None:
            self._cache = None
            return None
        if self._cache is not None and self._cache[0] == fp:
            return self._cache[1]
        try:
            loaded = LoadedIndex(load_store(self.store_path))
        except CceError:
            self._cache = None
            return None
        self._cache = (fp, loaded)
        return loaded

    # -- the workspace ----------------------------------------------------

    def manifest(self) -> Manifest:
        """The workspace manifest, read afresh (cheap; a ``cce workspace init --force`` is picked up)."""
        from .workspace import load_manifest

        return load_manifest(self.root)

    def workspace_bundle(self, manifest: Manifest, scope: list[str] | None) -> WorkspaceBundle:
        """The members selected by ``scope`` (None = all), reused while none of their stores changed.

        An unknown member or package and an unindexed member raise the
        federation's own :class:`CceError`; failures are never cached.
        """
        from .federation import load_member_stores, select_members
        from .store import default_store_path

        cache_key = tuple(scope) if scope is not None else None
        key_parts = []
        for m in select_members(manifest, scope):
            store_path = default_store_path(self.root / m.path)
            key_parts.append((m.name, m.package, str(store_path), _fingerprint(store_path)))
        key: WorkspaceKey = tuple(key_parts)
        cached = self._workspace_cache.get(cache_key)
        if cached is not None and cached[0] == key and all(part[3] is not None for part in key):
            return cached[1]
        self._workspace_cache.pop(cache_key, None)
        bundle = WorkspaceBundle(load_member_stores(self.root, manifest, scope))
        if all(part[3] is not None for part in key):
            self._workspace_cache[cache_key] = (key, bundle)
        return bundle

    def member_roots(self) -> list[Path]:
        """The member directories of the workspace (none outside workspace mode or without a manifest)."""
        if not self.workspace:
            return []
        try:
            manifest = self.manifest()
        except CceError:
            return []
        return [self.root / m.path for m in manifest.members]

    # -- searching ---------------------------------------------------------

    def query_searcher(self, loaded: LoadedIndex, make: Any = None) -> tuple[Searcher | None, str | None]:
        """The searcher for the store's embedder, or (None, notice) when only keywords can be served.

        ``make(data, embedder)`` builds the searcher on first use (default: the
        standard :class:`~cce_core.retrieval.Searcher`).
        """
        from .mcp_tools import FALLBACK_NOTICE
        from .retrieval import Searcher

        name = loaded.data.embedder or "hash"
        notice = FALLBACK_NOTICE.format(name=name, title=name[:1].upper() + name[1:])
        host = self.host()
        host.require_healthy()
        if loaded.embedder is None:
            try:
                loaded.embedder = host.embedder(name)
            except CceError:
                return None, notice
        embedder = loaded.embedder
        healthy = getattr(embedder, "healthy", None)
        if healthy is not None and not healthy():
            return None, notice
        built_with = str(loaded.data.meta.get("embed_model", "") or "")
        configured = str(getattr(embedder, "model", "") or "")
        if built_with != configured:
            raise CceError(f'this index was built with the {name} model "{built_with}" but the embedder is now '
                           f'set to "{configured}" — re-index, or configure the model the index was built with')
        if loaded.searcher is None:
            # A resident server answers many queries: numpy's import is paid once, and on a large
            # index the vectorised kernel is several times faster per query than the one-shot one.
            loaded.searcher = make(loaded.data, embedder) if make else Searcher(loaded.data, embedder,
                                                                                   kernel="numpy")
        return loaded.searcher, None

    # -- per-session counters --------------------------------------------

    def note_search_usage(self, tokens_saved: int) -> None:
        self.searches += 1
        self.tokens_saved += int(tokens_saved)

    def session_usage(self) -> tuple[int, int]:
        """(searches, tokens saved) so far in this session, the current search included."""
        return self.searches, self.tokens_saved

    def auto_summarize_due(self) -> bool:
        """Whether the served text reached ``summarization.auto_tokens``; a hint only, never acted on."""
        return self.ledger.summarize_due(self.auto_tokens)

    # -- dispatch ----------------------------------------------------------

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> tuple[str, bool]:
        """Run one tool: ``(text, is_error)``. A failure becomes an error result, never a dead server."""
        from .hookspecs import EmbedderError
        from .mcp_tools import TOOLS

        tool = TOOLS.get(name)
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


def serve_stdio(session: McpSession) -> None:
    """Serve ``session`` over stdin/stdout with the MCP SDK until the client closes the stream."""
    try:
        import anyio
        import mcp.types as types
        from mcp.server.lowlevel import Server
        from mcp.server.stdio import stdio_server
    except ImportError as exc:
        raise CceError(f"the MCP server needs the `mcp` package ({exc}) — pip install 'mcp>=2.3,<3'") from exc

    from . import __version__
    from .mcp_tools import TOOL_DEFINITIONS

    tools = [types.Tool(name=d["name"], description=d["description"], input_schema=d["inputSchema"])
             for d in TOOL_DEFINITIONS]

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text, is_error = session.call(params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)

    server = Server("cce", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)

    async def main() -> None:
        async with stdio_server() as (stdin_stream, stdout_stream):
            await _serve_until_answered(server, stdin_stream, stdout_stream)

    anyio.run(main)


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
            self._settle((message.params or {}).get("requestId"))

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

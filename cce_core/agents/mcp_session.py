"""The state of one MCP session: the served project, its cached index, per-session counters.

An agent keeps one ``cce mcp`` process for a whole session and calls tools
many times, so the loaded index is kept between calls and reloaded only when
the store file changes on disk (a re-index or a pull replaces it). A cached
answer must equal a cold one byte for byte, so the cache holds nothing that a
fresh load would compute differently. The session also owns what lives only
as long as the process: the output-compression level, the ledger behind
``summarize_context``, the served-token count and the footer's counters.

In workspace mode (``cce mcp --workspace``) the served index is the union of
the members' stores, assembled once per ``package`` scope by
:mod:`cce_core.workspace.federation` and reassembled when any in-scope member store
changes on disk; every search event goes to the workspace root's log.

With a CCE Sync remote configured and ``sync.auto_pull: true``, the session
pulls the remote's latest index once before it is served
(:meth:`SessionState.warm_via_sync`), so an agent starts on the team's CI-built
index without anyone indexing. That pull is strictly best effort: the server
must come up on whatever index is local, whatever the remote does.

The knowledge store (``.cce/knowledge``) is cached the same way, keyed on its
``current`` pointer and snapshot file, and a store that is present but broken
is reported as such rather than taken for none (:meth:`SessionState.load_knowledge`).

With ``cce mcp --watch`` the session also keeps its index fresh: a watcher
thread (:mod:`cce_core.indexing.watch`) re-indexes the project after each
burst of saves, and :meth:`SessionState.load_index` first waits for a pass
that is due or running, so a search made right after a save sees the save.
The thread writes only to stderr; a watcher that dies says so there, and the
session goes on serving the index as it last was.

The tools (:mod:`cce_core.agents.mcp_tools`) read and update this state; the
server (:mod:`cce_core.agents.mcp_server`) adds tool dispatch and the stdio
transport on top, so the state never has to know the tools.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cce_core.foundation.errors import CceError

if TYPE_CHECKING:
    from collections.abc import Callable

    from cce_core.foundation.config import CceConfig
    from cce_core.indexing.chunk import Chunk
    from cce_core.indexing.indexer import IndexStats
    from cce_core.indexing.store import StoreData
    from cce_core.indexing.watch import DirectoryWatcher
    from cce_core.knowledge.blend import LoadedKnowledge
    from cce_core.plugins.host import PluginHost
    from cce_core.retrieval.searcher import Searcher
    from cce_core.workspace.federation import MemberStore
    from cce_core.workspace.manifest import Manifest

Fingerprint = tuple[int, int, int]

# The pinned degradation line (served verbatim for an ollama-built store); another
# embedder that reports itself unhealthy gets the same sentence with its own name.
FALLBACK_NOTICE = (
    "NOTICE: this index was built with the {name} embedder but {title} is unreachable — vector recall is "
    "disabled; results are keyword (BM25) matches only. Start {title}, or re-index with the default hash "
    "embedder (`cce index <dir>`), to restore semantic search."
)


def _say(line: str) -> None:
    """One line on stderr: stdout is the protocol stream."""
    import sys

    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _fingerprint(path: Path) -> Fingerprint | None:
    """(mtime, size, inode) of the store file, or None when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


class KnowledgeLoad:
    """What loading the knowledge store gave: ``loaded`` (with the store), ``absent`` or ``failed``."""

    def __init__(self, status: str, loaded: LoadedKnowledge | None = None, error: str | None = None) -> None:
        self.status = status
        self.loaded = loaded
        self.error = error

    @property
    def present(self) -> bool:
        """A store is on disk (loaded or broken), as opposed to never ingested."""
        return self.status != "absent"


class LoadedIndex:
    """One loaded store plus the lookups the tools need, built on first use."""

    def __init__(self, data: StoreData, import_neighbours: Callable[[], dict[str, list[str]] | None] | None = None
                 ) -> None:
        self.data = data
        self.embedder: Any = None
        self.searcher: Searcher | None = None
        self._by_id: dict[str, Chunk] | None = None
        self._by_file: dict[str, list[Chunk]] | None = None
        self._neighbours: dict[str, list[str]] | None = None
        # The default profile's neighbours (imports resolved by the packs); None keeps the family's graph.
        self._import_neighbours = import_neighbours

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
        if self._neighbours is None and self._import_neighbours is not None:
            # A store without symbol records (pulled, or older) falls back to the family's graph.
            self._neighbours = self._import_neighbours()
        if self._neighbours is None:
            from cce_core.indexing.graph import neighbours

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
            from cce_core.workspace.federation import combined_store

            self._union = LoadedIndex(combined_store(self.members))
        return self._union

    @property
    def total_chunks(self) -> int:
        return sum(len(ms.data.chunks) for ms in self.members)


# Per member in scope: (name, package, store path, store fingerprint).
WorkspaceKey = tuple[tuple[str, str, str, Fingerprint | None], ...]

# Compact views kept per session (keyed by path, detail and the stored text itself).
_VIEW_CACHE_LIMIT = 20_000


class SessionState:
    """The state of one served session; tools read and update it."""

    def __init__(self, root: Path, store: Path | None = None, host: PluginHost | None = None,
                 workspace: bool = False, ranking: str | None = None) -> None:
        from cce_core.agents.ledger import SessionLedger
        from cce_core.indexing.store import STORE_DIR, default_store_path
        from cce_core.observability.metrics import METRICS_FILE, metrics_beside
        from cce_core.retrieval.profiles import resolve_ranking

        self.root = Path(root)
        self.workspace = workspace
        self.store_path = Path(store) if store is not None else default_store_path(self.root)
        # A workspace's agent searches land in the root log, where the roll-up dashboard reads them.
        self.metrics_path = (self.root / STORE_DIR / METRICS_FILE) if workspace else metrics_beside(self.store_path)
        config = self.config()
        # Resolved once: every search of the session ranks the same way (retrieval.profiles).
        choice = resolve_ranking(ranking, self.root)
        self.ranking_profile, self.disabled_stages = choice.profile, choice.disabled
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
        self._knowledge_cache: tuple[tuple[Any, ...], LoadedKnowledge] | None = None
        self.watcher: DirectoryWatcher[IndexStats] | None = None

    # -- start-up ----------------------------------------------------------

    def warm_via_sync(self) -> str | None:
        """Pull the latest index when ``sync.remote`` is set and ``sync.auto_pull`` is on; never raises.

        Called before serving, so the first tool call already sees the pulled
        store. The pull never forces: a store pulled at another sha is the
        user's to replace (``cce sync pull --latest --force``), and the guard
        simply turns the pull into a no-op. A workspace pulls every member.
        Anything the pull would print is swallowed: stdout is the protocol
        stream. Returns one ``warning:`` line when a pull was due but failed
        (for stderr), else None.
        """
        import contextlib
        import io

        sink = io.StringIO()
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                from cce_core.agents.init_files import pull_latest
                from cce_core.sync.settings import load_sync_settings

                settings = load_sync_settings(self.root, warn=lambda _message: None)
                if not (settings.remote and settings.auto_pull):
                    return None
                pull_latest(self.root, force=False, workspace=self.workspace)
        except Exception as exc:  # whatever goes wrong, the local index is served
            text = str(exc).strip()
            first = text.splitlines()[0] if text else type(exc).__name__
            return f"warning: sync auto-pull failed: {first} — serving the local index"
        return None

    # -- configuration and plugins --------------------------------------

    def config(self) -> CceConfig:
        """The project's ``.cce/config``, read afresh (per-call keys follow edits mid-session)."""
        from cce_core.foundation.config import load_config

        return load_config(self.root)

    def host(self) -> PluginHost:
        if self._host is None:
            from cce_core.plugins.host import default_host

            self._host = default_host()
        return self._host

    def detail(self, requested: str | None) -> str:
        """The body detail for one call: the argument, else ``retrieval.detail``, else compact."""
        from cce_core.retrieval.detail_views import parse_detail

        return parse_detail(requested, self.config().retrieval_detail)

    def compress(self, file_path: str, content: str, detail: str) -> str:
        """A chunk's view at ``detail``, memoised: it depends only on the stored text."""
        from cce_core.retrieval.detail_views import FULL, compress

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
        """The current index, reused while the store file is unchanged; None when there is none.

        Under ``--watch``, a re-index that is due or running is waited for first (bounded).
        """
        from cce_core.indexing.store import load_store

        if self.watcher is not None:
            self.watcher.wait_fresh()
        fp = _fingerprint(self.store_path)
        if fp is None:
            self._cache = None
            return None
        if self._cache is not None and self._cache[0] == fp:
            return self._cache[1]
        try:
            loaded = LoadedIndex(load_store(self.store_path), self._import_neighbours_source())
        except CceError:
            self._cache = None
            return None
        self._cache = (fp, loaded)
        return loaded

    def _import_neighbours_source(self) -> Callable[[], dict[str, list[str]] | None] | None:
        """Where ``related_context`` finds a file's neighbours: the packs' import resolution, except under
        the family profile, whose answers keep the family's pinned import graph."""
        if self.ranking_profile == "family":
            return None
        store_path = self.store_path

        def resolve() -> dict[str, list[str]] | None:
            from cce_core.symbols.file_neighbours import import_neighbours
            from cce_core.symbols.index import open_symbols

            try:
                return import_neighbours(open_symbols(store_path))
            except CceError:
                return None

        return resolve

    # -- keeping the index fresh (--watch) ----------------------------------

    def start_watch(self) -> bool:
        """Watch the project and re-index after each burst of saves, on a daemon thread.

        The first pass runs at once (it catches up with edits made while no
        server ran). A pass re-indexes with the store's own embedder and secret
        protection (the defaults when there is no store yet), so it reuses every
        unchanged file. Everything it says goes to stderr, one line each.
        Returns False (after its error line) when the watcher cannot start; the
        session serves the index as it is either way.
        """
        import sys
        import threading

        from cce_core.indexing.watch import DirectoryWatcher, WatcherStopped, describe_pass

        if self.workspace:
            _say("error: --watch serves one project directory, not a workspace — serving without it")
            return False
        embedder_name, protect = self._store_build_settings()

        def reindex(_changed: frozenset[str]) -> IndexStats:
            from cce_core.services.index_project import reindex_pass

            host = self.host()
            host.require_healthy()
            return reindex_pass(self.root, self.store_path, host, host.ready_embedder(embedder_name, "index"),
                                protect_secrets=protect)

        def failed(exc: BaseException) -> None:
            from cce_core.services.index_project import reindex_failure_line

            _say(reindex_failure_line(exc))

        watcher: DirectoryWatcher[IndexStats] = DirectoryWatcher(
            self.root, reindex, on_pass=lambda r: _say(describe_pass(r, r.result.total_chunks)), on_error=failed,
            store_path=self.store_path)
        try:
            watcher.start()
        except WatcherStopped as exc:
            _say(f"error: {exc} — serving the index as it is, without updates")
            return False

        def loop() -> None:
            try:
                watcher.run(catch_up=True)
            except WatcherStopped as exc:
                _say(f"error: {exc} — serving the index as it is, without updates")
            except Exception as exc:  # a bug in the loop must not take the server down with it
                _say(f"error: the file watcher stopped: {type(exc).__name__}: {exc} — serving the index as it is")
            finally:
                watcher.close()
                if self.watcher is watcher:
                    self.watcher = None

        self.watcher = watcher
        threading.Thread(target=loop, name="cce-watch", daemon=True).start()
        sys.stderr.flush()
        return True

    def stop_watch(self) -> None:
        """Stop the watcher thread, if any (the server is closing)."""
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.close()

    def _store_build_settings(self) -> tuple[str, bool]:
        """(embedder name, protect secrets) the current store was built with; the defaults without one."""
        from cce_core.indexing.store import load_store

        try:
            meta = load_store(self.store_path).meta if self.store_path.is_file() else {}
        except CceError:
            meta = {}
        name = meta.get("embedder")
        return (name if isinstance(name, str) and name else "hash"), meta.get("redaction", True) is not False

    # -- the knowledge store ----------------------------------------------

    def load_knowledge(self) -> KnowledgeLoad:
        """The knowledge store, reused while its pointer and snapshot files are unchanged.

        Absent (never ingested) and failed (present but corrupt or unreadable)
        are told apart, so a broken store is reported instead of looking like
        no store. Failures are never cached.
        """
        from cce_core.knowledge.blend import LoadedKnowledge
        from cce_core.knowledge.store import KnowledgeStoreCorrupt, KnowledgeStoreMissing, load_store, pointer_path

        pointer = pointer_path(self.root)
        pointer_fp = _fingerprint(pointer)
        if pointer_fp is None:
            self._knowledge_cache = None
            return KnowledgeLoad("absent")
        try:
            named = pointer.read_bytes()
        except OSError:
            named = b""
        snapshot_fp = _fingerprint(pointer.parent / (named.decode("utf-8", "replace").strip() + ".json"))
        key = (pointer_fp, named, snapshot_fp)
        if self._knowledge_cache is not None and self._knowledge_cache[0] == key:
            return KnowledgeLoad("loaded", self._knowledge_cache[1])
        self._knowledge_cache = None
        try:
            loaded = LoadedKnowledge(load_store(self.root))
        except KnowledgeStoreMissing:
            return KnowledgeLoad("absent")
        except KnowledgeStoreCorrupt as exc:
            return KnowledgeLoad("failed", error=str(exc))
        self._knowledge_cache = (key, loaded)
        return KnowledgeLoad("loaded", loaded)

    # -- the workspace ----------------------------------------------------

    def manifest(self) -> Manifest:
        """The workspace manifest, read afresh (cheap; a ``cce workspace init --force`` is picked up)."""
        from cce_core.workspace.manifest import load_manifest

        return load_manifest(self.root)

    def workspace_bundle(self, manifest: Manifest, scope: list[str] | None) -> WorkspaceBundle:
        """The members selected by ``scope`` (None = all), reused while none of their stores changed.

        An unknown member or package and an unindexed member raise the
        federation's own :class:`CceError`; failures are never cached.
        """
        from cce_core.indexing.store import default_store_path
        from cce_core.workspace.federation import load_member_stores, select_members

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
        standard :class:`~cce_core.retrieval.searcher.Searcher`).
        """
        from cce_core.retrieval.searcher import Searcher
        from cce_core.retrieval.store_embedder import require_same_model

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
        if not embedder.healthy():
            return None, notice
        require_same_model(embedder, loaded.data)
        if loaded.searcher is None:
            # A resident server answers many queries: numpy's import is paid once, and on a large
            # index the vectorised kernel is several times faster per query than the one-shot one.
            loaded.searcher = make(loaded.data, embedder) if make else Searcher(
                loaded.data, embedder, kernel="numpy", profile=self.ranking_profile,
                disabled_stages=self.disabled_stages)
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

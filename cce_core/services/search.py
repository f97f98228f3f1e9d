"""``cce search``'s one use case: pick the pools (code, knowledge, both; a project or a workspace) and search them.

The front-end hands over what the user asked for; this module decides which
search runs — the project's default pools, the ``--source`` and scope rules —
and returns that search's outcome for the front-end to render.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cce_core.foundation.errors import CceError
from cce_core.services.plugin_warnings import Warn
from cce_core.services.search_knowledge import KnowledgeSearch
from cce_core.services.search_project import ProjectSearch
from cce_core.services.search_workspace import WorkspaceSearch

SOURCES = ("code", "knowledge", "both")


@dataclass(frozen=True)
class SearchRequest:
    """A search as asked: ``directory`` is the positional DIR, ``dir_option`` the ``--dir`` option."""

    query: str
    directory: Path | None = None
    dir_option: Path | None = None
    store: Path | None = None
    top_k: int = 10
    graph: bool = True
    record_event: bool = True
    workspace: bool = False
    package: str | None = None
    source: str | None = None
    ranking: str | None = None


SearchOutcome = ProjectSearch | KnowledgeSearch | WorkspaceSearch


def search(request: SearchRequest, warn: Warn) -> SearchOutcome:
    """Run the search ``request`` names; warnings (plugins, pack drift) go to ``warn`` as they arise."""
    from cce_core.foundation.textrules import tokenize

    if not tokenize(request.query):
        raise CceError("the query has no searchable words — give letters, digits or identifiers to look for")
    if request.package is not None and not request.workspace:
        raise CceError("--package scopes a workspace search — add --workspace")
    project = request.dir_option or request.directory
    source = request.source
    if source is None:
        from cce_core.knowledge.default_source import cli_default_source

        source = "code" if request.workspace or request.store is not None else cli_default_source(project or Path("."))
    if source not in SOURCES:
        raise CceError(f"unknown --source {source!r}: use code, knowledge or both")
    if source != "code":
        if request.workspace or request.store is not None:
            raise CceError("--source knowledge|both searches a project directory — drop --workspace and --store")
        from cce_core.services.search_knowledge import search_with_knowledge

        return search_with_knowledge(project or Path("."), request.query, source, top_k=request.top_k,
                                     graph=request.graph, ranking=request.ranking,
                                     record_event=request.record_event, warn=warn)
    if request.workspace:
        from cce_core.services.search_workspace import search_workspace

        root = next((p for p in (request.directory, request.dir_option) if p is not None), Path("."))
        return search_workspace(root, request.query, request.package, top_k=request.top_k, graph=request.graph,
                                ranking=request.ranking, warn=warn)
    from cce_core.services.search_project import search_project

    return search_project(_store_to_read(request.store, project), request.query, top_k=request.top_k,
                          graph=request.graph, ranking=request.ranking, record_event=request.record_event, warn=warn)


def _store_to_read(store: Path | None, directory: Path | None) -> Path:
    """``--store`` when given, else the store of the project directory (default: ., which must exist)."""
    from cce_core.indexing.store import default_store_path
    from cce_core.services.paths import require_dir

    if store is not None:
        return store
    return default_store_path(require_dir(directory) if directory is not None else Path("."))

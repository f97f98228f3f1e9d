"""Index every member of a workspace into its own store, then write the member dependency graph.

Each member is indexed exactly as ``cce index MEMBER`` would index it (its
events carry the workspace root's commit). The manifest is read and every
member directory checked before the plugins are even discovered, so a bad
manifest fails fast and no store is written for a half-valid workspace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cce_core.foundation.errors import CceError
from cce_core.indexing.indexer import IndexStats
from cce_core.indexing.store import default_store_path
from cce_core.services.index_project import ProgressDisplay, build_store

if TYPE_CHECKING:
    from cce_core.plugins.host import PluginHost


@dataclass
class MemberRun:
    name: str
    path: str
    store_path: Path
    stats: IndexStats


@dataclass
class WorkspaceIndexRun:
    manifest: Any
    graph: Any
    graph_file: str  # as workspace.manifest.graph_path spells it (a relative root stays relative)
    runs: list[MemberRun]


def check_member_dirs(root: Path, manifest: Any) -> None:
    """Every member directory exists — checked before any store is written."""
    for m in manifest.members:
        if not (root / m.path).is_dir():
            raise CceError(f"member '{m.name}' has no directory at {root / m.path} — fix .cce/workspace.yml "
                           "or run `cce workspace init --force`")


def index_workspace(root: Path, open_host: Callable[[], PluginHost], embedder_name: str, *,
                    protect_secrets: bool, log_metrics: bool, progress: ProgressDisplay | None = None,
                    on_start: Callable[[Any], None] | None = None,
                    on_member: Callable[[MemberRun], None] | None = None,
                    allow_outside_root: bool | None = None, reuse: bool = True) -> WorkspaceIndexRun:
    """Index the workspace at ``root``; ``open_host`` is called only once the manifest is known good.

    ``on_start`` hears the manifest once the embedder is ready, ``on_member``
    each member once indexed. A member outside the root is refused unless
    ``allow_outside_root`` (or, when None, the environment opt-in of
    ``load_manifest``) says otherwise.
    """
    from cce_core.workspace.manifest import build_graph, graph_path, load_manifest, save_graph

    if not root.is_dir():
        raise CceError(f"not a directory: {root}")
    manifest = load_manifest(root, allow_outside_root=allow_outside_root)
    check_member_dirs(root, manifest)
    host = open_host()
    embedder = host.ready_embedder(embedder_name, "index")
    if on_start is not None:
        on_start(manifest)
    runs: list[MemberRun] = []
    for m in manifest.members:
        member_dir = root / m.path
        store_path = default_store_path(member_dir)
        _data, stats = build_store(member_dir, store_path, host, embedder, protect_secrets=protect_secrets,
                                   log_metrics=log_metrics, progress=progress, label=f"indexing {m.name}",
                                   event_dir=root, reuse=reuse)
        run = MemberRun(m.name, m.path, store_path, stats)
        runs.append(run)
        if on_member is not None:
            on_member(run)
    graph = build_graph(root, manifest)
    save_graph(graph, root)
    return WorkspaceIndexRun(manifest, graph, graph_path(root), runs)

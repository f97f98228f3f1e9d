"""``cce init [DIR] [--agent claude] [--force]``: index a project and wire it up for Claude Code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer


def register(app: Any) -> None:
    app.command(name="init")(init)


def init(
    directory: Annotated[str, typer.Argument(help="Project directory to set up (default: .).")] = ".",
    agent: Annotated[str, typer.Option(help="The agent to configure; only claude (Claude Code) for now.")] = "claude",
    force: Annotated[
        bool, typer.Option("--force", help="Force the index refresh when it is pulled from a sync remote.")
    ] = False,
) -> None:
    """Build the index, register `cce mcp` in .mcp.json and add the guidance block to CLAUDE.md."""
    from ..agent_init import check_request, init_project

    check_request(directory, agent)  # before plugin discovery, so a typo fails fast
    result = init_project(directory, agent, _build_local_index, _workspace_builder())
    sys.stdout.write(result.report())


def _build_local_index(root: Path) -> tuple[int, int]:
    """What ``cce index ROOT`` does: hash embedder, secret protection on, one index event in the log."""
    from ..cli import _host, _log_index_event, _progress
    from ..indexer import index_directory
    from ..store import default_store_path

    host = _host()
    embedder = host.embedder("hash")
    store_path = default_store_path(root)
    with _progress("indexing") as progress:
        data, stats = index_directory(root, store_path, host, embedder, protect_secrets=True, progress=progress)
    _log_index_event(root, store_path, data.embedder or embedder.name, stats)
    return stats.files_indexed, stats.total_chunks


def _workspace_builder():
    """The workspace indexer, when this engine has workspace support (``cce_core.workspace``)."""
    from importlib.util import find_spec

    return _build_workspace_index if find_spec("cce_core.workspace") is not None else None


def _build_workspace_index(root: Path) -> tuple[int, int]:
    """What ``cce index --workspace ROOT`` does: every member into its own store, then the member graph."""
    from ..cli import _host, _log_index_event, _progress
    from ..errors import CceError
    from ..indexer import index_directory
    from ..store import default_store_path
    from ..workspace import build_graph, load_manifest, save_graph

    manifest = load_manifest(root)
    for m in manifest.members:
        if not (root / m.path).is_dir():
            raise CceError(f"member '{m.name}' has no directory at {root / m.path} — fix .cce/workspace.yml "
                           "or run `cce workspace init --force`")
    host = _host()
    embedder = host.embedder("hash")
    files = chunks = 0
    for m in manifest.members:
        store_path = default_store_path(root / m.path)
        with _progress(f"indexing {m.name}") as progress:
            data, stats = index_directory(root / m.path, store_path, host, embedder, protect_secrets=True,
                                          progress=progress)
        _log_index_event(root, store_path, data.embedder or embedder.name, stats)
        files += stats.files_indexed
        chunks += stats.total_chunks
    save_graph(build_graph(root, manifest), root)
    return files, chunks

"""``cce init [DIR] [--agent claude] [--remote URL] [--force]``: index a project and wire it up for Claude Code."""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from cce_core.cli.options import force_flag


def register(app: Any) -> None:
    app.command(name="init")(init)


def init(
    directory: Annotated[str, typer.Argument(help="Project directory to set up (default: .).")] = ".",
    agent: Annotated[str, typer.Option(help="The agent to configure; only claude (Claude Code) for now.")] = "claude",
    remote: Annotated[
        str | None, typer.Option(help="Pull the CI-built index from this CCE Sync remote instead of indexing "
                                      "locally (configures it, like cce sync init).")
    ] = None,
    force: Annotated[bool, force_flag("Force the index refresh: a sync pull past the overwrite guard, or a local "
                                      "rebuild from scratch (no reuse of the previous store).")] = False,
) -> None:
    """Build (or pull) the index, register `cce mcp` in .mcp.json and add the guidance block to CLAUDE.md."""
    from cce_core.agents.init_files import init_project

    # init_project checks the agent and the directory before any builder runs (before plugin discovery).
    workspace_builder = _workspace_builder()
    result = init_project(directory, agent, partial(_build_local_index, reuse=not force),
                          partial(workspace_builder, reuse=not force) if workspace_builder else None,
                          remote=remote, force=force)
    for warning in result.warnings:
        sys.stderr.write(warning + "\n")
    sys.stderr.flush()
    sys.stdout.write(result.report())


def _build_local_index(root: Path, *, reuse: bool = True) -> tuple[int, int]:
    """What ``cce index ROOT`` does: hash embedder, secret protection on, one index event in the log."""
    from cce_core.cli.index_runs import progress_bar
    from cce_core.cli.shared import command_host, store_for_write
    from cce_core.services.index_project import build_store

    host = command_host()
    _data, stats = build_store(root, store_for_write(None, root), host, host.embedder("hash"), protect_secrets=True,
                               log_metrics=True, progress=progress_bar, reuse=reuse)
    return stats.files_indexed, stats.total_chunks


def _workspace_builder():
    """The workspace indexer, when this engine has workspace support (``cce_core.workspace.manifest``)."""
    from importlib.util import find_spec

    return _build_workspace_index if find_spec("cce_core.workspace.manifest") is not None else None


def _build_workspace_index(root: Path, *, reuse: bool = True) -> tuple[int, int]:
    """What ``cce index --workspace ROOT`` does: every member into its own store, then the member graph."""
    from cce_core.cli.index_runs import progress_bar
    from cce_core.cli.shared import command_host
    from cce_core.services.index_workspace import index_workspace

    done = index_workspace(root, command_host, "hash", protect_secrets=True, log_metrics=True, progress=progress_bar,
                           reuse=reuse)
    return sum(r.stats.files_indexed for r in done.runs), sum(r.stats.total_chunks for r in done.runs)

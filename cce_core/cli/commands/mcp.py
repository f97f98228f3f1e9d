"""``cce mcp [DIR | --dir D] [--store P] [--workspace] [--watch]``: serve the project's index to an agent over MCP."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from cce_core.cli.options import StoreDefaultOption, ranking_option, watch_flag, workspace_flag


def register(app: Any) -> None:
    app.command(name="mcp")(mcp)


def mcp(
    directory: Annotated[Path | None, typer.Argument(help="Project directory to serve (same as --dir).")] = None,
    dir_: Annotated[Path | None, typer.Option("--dir", help="Project directory to serve (default: .).")] = None,
    store: StoreDefaultOption = None,
    workspace: Annotated[bool, workspace_flag("Serve every member of the workspace at DIR as one index (--store is "
                                              "ignored).")] = False,
    watch: Annotated[bool, watch_flag("Keep the index fresh: re-index changed files as they are saved (progress "
                                      "lines go to stderr).")] = False,
    ranking: Annotated[str | None, ranking_option("Ranking profile for every search: default or family. Else "
                                                  "CCE_RANKING_PROFILE, then ranking.profile in .cce/config.")] = None,
) -> None:
    """Run the MCP server on stdin/stdout: context_search and eight more tools for an agent.

    With `sync.auto_pull: true` and a sync remote configured, the latest
    index is pulled first (best effort: a failure is one stderr line, and the
    local index is served).

    With --watch, the project is re-indexed after each burst of saves (the
    first pass at start-up), and a search waits for a pass that is due, so
    it sees a file saved a moment before. See docs/watch.md.
    """
    from cce_core.agents.serve_mcp import serve_mcp
    from cce_core.cli.shared import chosen_dir
    from cce_core.cli.startup_gc import start_work

    root = chosen_dir(directory, dir_) or Path(".")
    start_work()  # a server lives on: collect as usual from here (see startup_gc)
    serve_mcp(root, store, workspace=workspace, watch=watch, ranking=ranking, warn=_warn)


def _warn(line: str) -> None:
    # Flushed at once: the server then holds the process, and the line must not wait for its exit.
    sys.stderr.write(line + "\n")
    sys.stderr.flush()

"""``cce mcp [DIR | --dir D] [--store P] [--workspace] [--watch]``: serve the project's index to an agent over MCP."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer


def register(app: Any) -> None:
    app.command(name="mcp")(mcp)


def mcp(
    directory: Annotated[Path | None, typer.Argument(help="Project directory to serve (same as --dir).")] = None,
    dir_: Annotated[Path | None, typer.Option("--dir", help="Project directory to serve (default: .).")] = None,
    store: Annotated[Path | None, typer.Option(help="Store file (default: DIR/.cce/index.cce).")] = None,
    workspace: Annotated[
        bool, typer.Option("--workspace", help="Serve every member of the workspace at DIR as one index "
                                               "(--store is ignored).")
    ] = False,
    watch: Annotated[
        bool, typer.Option("--watch", help="Keep the index fresh: re-index changed files as they are saved "
                                           "(progress lines go to stderr).")
    ] = False,
    ranking: Annotated[
        str | None, typer.Option("--ranking", help="Ranking profile for every search: default or family. Else "
                                                   "CCE_RANKING_PROFILE, then ranking.profile in .cce/config.")
    ] = None,
) -> None:
    """Run the MCP server on stdin/stdout: context_search and eight more tools for an agent.

    With `sync.auto_pull: true` and a sync remote configured, the latest
    index is pulled first (best effort: a failure is one stderr line, and the
    local index is served).

    With --watch, the project is re-indexed after each burst of saves (the
    first pass at start-up), and a search waits for a pass that is due, so
    it sees a file saved a moment before. See docs/watch.md.
    """
    import sys

    from cce_core.agents.mcp_server import McpSession, serve_stdio
    from cce_core.cli.shared import chosen_dir
    from cce_core.foundation.errors import CceError

    root = chosen_dir(directory, dir_) or Path(".")
    if watch and workspace:
        raise CceError("--watch serves one project directory; it does not go with --workspace")
    session = McpSession(root, None if workspace else store, workspace=workspace, ranking=ranking)
    warning = session.warm_via_sync()
    if warning is not None:
        sys.stderr.write(warning + "\n")
        sys.stderr.flush()
    serve_stdio(session, watch=watch)

"""``cce mcp``'s one call: the session over a project or a workspace, the best-effort sync pull, then the server.

It sits with the MCP server rather than in ``cce_core.services``: serving is
the MCP front-end itself, and services sit below every front-end. The order
matters to an agent: the pull (``sync.auto_pull``) runs before the
first byte of the protocol, so the first tool call already sees the pulled
index, and a failed pull is a warning on the caller's sink, never a reason
not to serve.
"""

from __future__ import annotations

from pathlib import Path

from cce_core.agents.mcp_server import McpSession, serve_stdio
from cce_core.foundation.errors import CceError
from cce_core.services.plugin_warnings import Warn


def serve_mcp(root: Path, store: Path | None, *, workspace: bool, watch: bool, ranking: str | None,
              warn: Warn) -> None:
    """Serve ``root`` (or the workspace at ``root``) over stdin/stdout until the client closes the stream.

    ``store`` is ignored with ``workspace`` (each member serves its own);
    ``watch`` re-indexes the project as files are saved and takes one project.
    """
    if watch and workspace:
        raise CceError("--watch serves one project directory; it does not go with --workspace")
    session = McpSession(root, None if workspace else store, workspace=workspace, ranking=ranking)
    warning = session.warm_via_sync()
    if warning is not None:
        warn(warning)
    serve_stdio(session, watch=watch)

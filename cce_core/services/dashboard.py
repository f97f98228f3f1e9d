"""Open the read-only metrics dashboard of a project or a workspace on a loopback port.

The server is bound here and handed back unstarted, so the front-end can say
where it listens before serving; a port that cannot be bound is one
``error:`` line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_core.foundation.errors import CceError


@dataclass(frozen=True)
class OpenDashboard:
    server: Any  # observability.dashboard_server.DashboardServer, bound, not yet serving
    metrics_path: Path | None  # a project's log
    members: int | None  # a workspace's member count


def open_dashboard(port: int, price: float | None, *, workspace_root: Path | None = None,
                   metrics: Path | None = None, store: Path | None = None,
                   project: Path | None = None) -> OpenDashboard:
    """Bind the dashboard of the workspace at ``workspace_root``, else of the log the options name."""
    from cce_core.observability.dashboard_server import DashboardApp, WorkspaceDashboardApp, make_server

    metrics_path = members = None
    app: DashboardApp
    if workspace_root is not None:
        from cce_core.observability.workspace_usage import workspace_logs

        logs = workspace_logs(workspace_root)
        app, members = WorkspaceDashboardApp(logs, price), len(logs.members)
    else:
        from cce_core.observability.metrics import resolve_metrics_path

        metrics_path = resolve_metrics_path(metrics, store, project)
        app = DashboardApp(metrics_path, price)
    try:
        server = make_server(app, port)
    except OSError as exc:
        raise CceError(f"dashboard failed: {exc.strerror or exc}") from exc
    return OpenDashboard(server, metrics_path, members)

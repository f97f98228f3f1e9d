"""Read the metrics a report is made from: one project's log, or every log of a workspace.

``cce usage``, ``cce savings`` and ``cce dashboard`` all pick the log the same
way: ``--metrics`` wins, then the log beside ``--store``, then ``DIR/.cce``;
with ``--workspace``, every member's log plus the workspace root's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class MetricsLogs:
    """Exactly one of ``events`` (a project: its log's events) and ``workspace`` (every log) is set."""

    path: Path | None  # the project's log
    events: list[Any] | None
    workspace: Any = None  # observability.workspace_usage logs

    @property
    def project_events(self) -> list[Any]:
        """The project log's events; only for logs read without ``workspace_root``."""
        if self.events is None:
            raise ValueError("a workspace's logs have no single event list: read .workspace")
        return self.events


def read_metrics(*, workspace_root: Path | None = None, metrics: Path | None = None, store: Path | None = None,
                 project: Path | None = None) -> MetricsLogs:
    """The workspace's logs when ``workspace_root`` is given, else the one log the options name."""
    if workspace_root is not None:
        from cce_core.observability.workspace_usage import workspace_logs

        return MetricsLogs(None, None, workspace_logs(workspace_root))
    from cce_core.observability.metrics import read_log, resolve_metrics_path

    path = resolve_metrics_path(metrics, store, project)
    return MetricsLogs(path, read_log(path).events)


def savings_of_log(path: Path) -> Any:
    """The savings ledger (``observability.savings.SavingsReport``) of the log at ``path``.

    The one computation the dashboard's headline and layer panel call too.
    """
    from cce_core.observability.metrics import read_log
    from cce_core.observability.savings import savings_report

    return savings_report(read_log(path).events)

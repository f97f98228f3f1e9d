"""Record a verdict on a search (helpful or not, with a note) in the metrics log it belongs to.

``cce feedback`` also says whether the log holds the search it rates (it
records the verdict either way); the MCP ``record_feedback`` tool writes into
the session's log.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FeedbackRecorded:
    metrics_path: Path
    event_id: str | None  # None: the log could not be written
    query_known: bool | None  # the log holds a search event with that id (None: not looked up)


def record_feedback(metrics_path: Path, query_id: str, helpful: bool, note: str, *,
                    check_known: bool = False) -> FeedbackRecorded:
    """Append the ``feedback`` event; ``check_known`` first looks the rated search up in the log."""
    from cce_core.observability.metrics import MetricsWriter, read_log

    known = None
    if check_known:
        known = any(ev.kind == "search" and ev.id == query_id for ev in read_log(metrics_path).events)
    return FeedbackRecorded(metrics_path, MetricsWriter(metrics_path).log_feedback(query_id, helpful, note), known)


def record_feedback_for(metrics: Path | None, store: Path | None, directory: Path | None, query_id: str,
                        helpful: bool, note: str) -> FeedbackRecorded:
    """The command line's feedback: the log named by ``--metrics``, beside ``--store``, or under ``DIR/.cce``."""
    from cce_core.observability.metrics import resolve_metrics_path

    return record_feedback(resolve_metrics_path(metrics, store, directory), query_id, helpful, note,
                           check_known=True)

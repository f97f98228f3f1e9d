"""``cce feedback QUERY_ID --helpful|--not-helpful``: rate one logged search."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer


def register(app: Any) -> None:
    app.command(name="feedback")(feedback)


def feedback(
    query_id: Annotated[str, typer.Argument(help="The query id a search printed (query-id: ...).")],
    helpful: Annotated[bool, typer.Option("--helpful", help="The results helped.")] = False,
    not_helpful: Annotated[bool, typer.Option("--not-helpful", help="The results did not help.")] = False,
    note: Annotated[str, typer.Option(help="A free-text remark stored with the verdict.")] = "",
    dir_: Annotated[Path | None, typer.Option("--dir", help="Indexed directory (default: .).")] = None,
    store: Annotated[Path | None, typer.Option(help="Store file; the log beside it is used.")] = None,
    metrics: Annotated[Path | None, typer.Option(help="Metrics log to write (overrides --store/--dir).")] = None,
) -> None:
    """Record whether the search QUERY_ID was helpful, in the metrics log."""
    from cce_core.cli.shared import require_dir
    from cce_core.foundation.errors import CceError
    from cce_core.observability.metrics import MetricsWriter, read_log, resolve_metrics_path

    if helpful == not_helpful:
        raise CceError("provide exactly one of --helpful or --not-helpful")
    if dir_ is not None and metrics is None and store is None:
        require_dir(dir_)  # the log is written under DIR/.cce: never create a mistyped directory
    path = resolve_metrics_path(metrics, store, dir_)
    if not any(ev.kind == "search" and ev.id == query_id for ev in read_log(path).events):
        typer.echo(f"warning: no search event with id {query_id} in {path}; recording anyway", err=True)
    event_id = MetricsWriter(path, enabled=True).log_feedback(query_id, helpful, note)
    if event_id is None:
        raise CceError("could not write feedback to the metrics log")
    verdict = "helpful" if helpful else "not helpful"
    typer.echo(f"recorded feedback ({verdict}) for {query_id}  [event {event_id}]")

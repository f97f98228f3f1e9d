"""``cce feedback QUERY_ID --helpful|--not-helpful``: rate one logged search."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cce_core.cli.options import IndexedDirOption


def register(app: Any) -> None:
    app.command(name="feedback")(feedback)


def feedback(
    query_id: Annotated[str, typer.Argument(help="The query id a search printed (query-id: ...).")],
    helpful: Annotated[bool, typer.Option("--helpful", help="The results helped.")] = False,
    not_helpful: Annotated[bool, typer.Option("--not-helpful", help="The results did not help.")] = False,
    note: Annotated[str, typer.Option(help="A free-text remark stored with the verdict.")] = "",
    dir_: IndexedDirOption = None,
    store: Annotated[Path | None, typer.Option(help="Store file; the log beside it is used.")] = None,
    metrics: Annotated[Path | None, typer.Option(help="Metrics log to write (overrides --store/--dir).")] = None,
) -> None:
    """Record whether the search QUERY_ID was helpful, in the metrics log."""
    from cce_core.cli.shared import metrics_log_dir
    from cce_core.foundation.errors import CceError
    from cce_core.services.feedback import record_feedback_for

    if helpful == not_helpful:
        raise CceError("provide exactly one of --helpful or --not-helpful")
    # The log is written under DIR/.cce: never create a mistyped directory.
    done = record_feedback_for(metrics, store, metrics_log_dir(None, dir_, metrics, store), query_id, helpful, note)
    if not done.query_known:
        typer.echo(f"warning: no search event with id {query_id} in {done.metrics_path}; recording anyway", err=True)
    if done.event_id is None:
        raise CceError("could not write feedback to the metrics log")
    verdict = "helpful" if helpful else "not helpful"
    typer.echo(f"recorded feedback ({verdict}) for {query_id}  [event {done.event_id}]")

"""``cce usage``: a one-shot summary of the metrics log (see :mod:`cce_core.observability.usage`).

``--workspace`` summarises a whole workspace instead: DIR (or ``--dir``,
default ``.``) is its root, and ``--store``/``--metrics`` are not used.

This is the only place the usage summary reads the wall clock; everything
below it takes ``now`` as an argument.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cce_core.cli.commands import write_utf8
from cce_core.cli.options import OptionalProjectDirOption


def register(app: Any) -> None:
    @app.command()
    def usage(
        directory: Annotated[
            Path | None, typer.Argument(metavar="[DIR]", help="Project directory (same as --dir); the "
                                                              "workspace root with --workspace.")
        ] = None,
        dir_: OptionalProjectDirOption = None,
        store: Annotated[Path | None, typer.Option(help="Read the metrics log next to this store file.")] = None,
        metrics: Annotated[Path | None, typer.Option(help="Read this metrics.jsonl (overrides --store/--dir).")] = None,
        since: Annotated[
            str | None,
            typer.Option(help="Window start: 90m, 24h, 7d, 4w, or an ISO UTC instant/date. Default: all time."),
        ] = None,
        source: Annotated[
            str, typer.Option(help="Show only mcp (agent), cli (human) or all searches; the JSON keeps both.")
        ] = "all",
        as_json: Annotated[bool, typer.Option("--json", help="Print cce.usage/v1 JSON.")] = False,
        workspace: Annotated[
            bool, typer.Option("--workspace", help="Summarise every member of the workspace at DIR, plus the "
                                                   "workspace-root log, with a per-package breakdown.")
        ] = False,
    ) -> None:
        """Summarise the metrics log: agent vs human searches, tokens saved, quality, recent queries."""
        import time

        from cce_core.cli.shared import chosen_dir, metrics_log_dir
        from cce_core.observability.usage import parse_since, parse_source, render, render_workspace
        from cce_core.services.metrics_logs import read_metrics

        now_secs = int(time.time())
        source_filter = parse_source(source)
        cut = parse_since(since, now_secs) if since is not None else None
        if workspace:
            logs = read_metrics(workspace_root=chosen_dir(dir_, directory) or Path("."))  # DIR wins, as it always did
            text = render_workspace(logs.workspace, now_secs, cut, source_filter, as_json=as_json)
        else:
            logs = read_metrics(metrics=metrics, store=store, project=metrics_log_dir(directory, dir_, metrics, store))
            text = render(logs.project_events, now_secs, cut, source_filter, as_json=as_json)
        write_utf8(text)

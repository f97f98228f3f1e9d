"""``cce dashboard``: serve the metrics dashboard on 127.0.0.1 (read-only).

With ``--workspace`` the positional DIR (or ``--dir``, default ``.``) is the
workspace root and the page shows the roll-up of every member's log plus the
workspace-root log, with a per-package table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def dashboard(
    directory: Annotated[Path | None, typer.Argument(help="Indexed directory (same as --dir); the workspace "
                                                         "root with --workspace.")] = None,
    dir_: Annotated[Path | None, typer.Option("--dir", help="Indexed directory (default: .).")] = None,
    store: Annotated[Path | None, typer.Option(help="Store file; the log is metrics.jsonl beside it.")] = None,
    metrics: Annotated[Path | None, typer.Option(help="Metrics log to read (overrides --store and --dir).")] = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0 = any free port).")] = 8787,
    price: Annotated[float | None, typer.Option(min=0.0, help="Dollars per million tokens for the $ saved "
                                                              "estimate (default: the embedded price table's rate, "
                                                              "as cce savings uses).")] = None,
    no_open: Annotated[bool, typer.Option("--no-open", help="Accepted for compatibility; no browser is ever "
                                                            "opened.")] = False,
    workspace: Annotated[bool, typer.Option("--workspace", help="Roll up every member of the workspace at DIR "
                                                                "(default: .) into one dashboard.")] = False,
) -> None:
    """Serve a read-only metrics dashboard on http://127.0.0.1:PORT/ until Ctrl-C."""
    import math

    from cce_core.cli.shared import chosen_dir
    from cce_core.foundation.errors import CceError
    from cce_core.observability.dashboard_server import DashboardApp, WorkspaceDashboardApp, make_server
    from cce_core.observability.metrics import resolve_metrics_path

    if price is not None and not math.isfinite(price):
        # inf or nan would turn every dollar figure into a non-JSON token the page cannot read.
        raise CceError(f"invalid --price value {price} — use a finite number of dollars per million tokens")

    if workspace:
        from cce_core.observability.workspace_usage import workspace_logs

        logs = workspace_logs(chosen_dir(dir_, directory) or Path("."))  # DIR wins here, as it always did
        app: DashboardApp = WorkspaceDashboardApp(logs, price)
        title, detail = "cce workspace dashboard", f"members : {len(logs.members)}"
    else:
        # The directory is checked only when the log is read from it.
        project = chosen_dir(directory, dir_) if metrics is None and store is None else dir_ or directory
        metrics_path = resolve_metrics_path(metrics, store, project)
        app = DashboardApp(metrics_path, price)
        title, detail = "cce dashboard", f"metrics log : {metrics_path}"
    try:
        server = make_server(app, port)
    except OSError as exc:
        raise CceError(f"dashboard failed: {exc.strerror or exc}") from exc
    print(f"{title}: serving {server.url}  (loopback only, read-only)", flush=True)
    print(detail, flush=True)
    print("press Ctrl-C to stop.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print(f"\n{title}: stopped.", flush=True)
    finally:
        server.server_close()


def register(app: typer.Typer) -> None:
    app.command(name="dashboard")(dashboard)

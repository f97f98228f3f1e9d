"""``cce dashboard``: serve the metrics dashboard on 127.0.0.1 (read-only).

With ``--workspace`` the positional DIR (or ``--dir``, default ``.``) is the
workspace root and the page shows the roll-up of every member's log plus the
workspace-root log, with a per-package table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cce_core.cli.options import IndexedDirOption


def dashboard(
    directory: Annotated[Path | None, typer.Argument(help="Indexed directory (same as --dir); the workspace "
                                                         "root with --workspace.")] = None,
    dir_: IndexedDirOption = None,
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

    from cce_core.cli.shared import chosen_dir, metrics_log_dir
    from cce_core.cli.startup_gc import start_work
    from cce_core.foundation.errors import CceError
    from cce_core.services.dashboard import open_dashboard

    if price is not None and not math.isfinite(price):
        # inf or nan would turn every dollar figure into a non-JSON token the page cannot read.
        raise CceError(f"invalid --price value {price} — use a finite number of dollars per million tokens")

    if workspace:
        opened = open_dashboard(port, price, workspace_root=chosen_dir(dir_, directory) or Path("."))  # DIR wins
        title, detail = "cce workspace dashboard", f"members : {opened.members}"
    else:
        opened = open_dashboard(port, price, metrics=metrics, store=store,
                                project=metrics_log_dir(directory, dir_, metrics, store))
        title, detail = "cce dashboard", f"metrics log : {opened.metrics_path}"
    server = opened.server
    try:  # from the first line on: a Ctrl-C right after "press Ctrl-C" is a stop too
        print(f"{title}: serving {server.url}  (loopback only, read-only)", flush=True)
        print(detail, flush=True)
        print("press Ctrl-C to stop.", flush=True)
        start_work()  # a server lives on: collect as usual from here (see startup_gc)
        server.serve_forever()
    except KeyboardInterrupt:
        print(f"\n{title}: stopped.", flush=True)
    finally:
        server.server_close()


def register(app: typer.Typer) -> None:
    app.command(name="dashboard")(dashboard)

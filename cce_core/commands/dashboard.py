"""``cce dashboard``: serve the metrics dashboard on 127.0.0.1 (read-only)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def dashboard(
    directory: Annotated[Path | None, typer.Argument(help="Indexed directory (same as --dir).")] = None,
    dir_: Annotated[Path | None, typer.Option("--dir", help="Indexed directory (default: .).")] = None,
    store: Annotated[Path | None, typer.Option(help="Store file; the log is metrics.jsonl beside it.")] = None,
    metrics: Annotated[Path | None, typer.Option(help="Metrics log to read (overrides --store and --dir).")] = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0 = any free port).")] = 8787,
    price: Annotated[float, typer.Option(min=0.0, help="Dollars per million tokens, for the $ saved estimate.")]
    = 3.00,
    no_open: Annotated[bool, typer.Option("--no-open", help="Accepted for compatibility; no browser is ever "
                                                            "opened.")] = False,
) -> None:
    """Serve a read-only metrics dashboard on http://127.0.0.1:PORT/ until Ctrl-C."""
    from ..dashboard import DashboardApp, make_server
    from ..errors import CceError
    from ..metrics import resolve_metrics_path

    metrics_path = resolve_metrics_path(metrics, store, dir_ if dir_ is not None else directory)
    app = DashboardApp(metrics_path, price)
    try:
        server = make_server(app, port)
    except OSError as exc:
        raise CceError(f"dashboard failed: {exc.strerror or exc}") from exc
    print(f"cce dashboard: serving {server.url}  (loopback only, read-only)", flush=True)
    print(f"metrics log : {metrics_path}", flush=True)
    print("press Ctrl-C to stop.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\ncce dashboard: stopped.", flush=True)
    finally:
        server.server_close()


def register(app: typer.Typer) -> None:
    app.command(name="dashboard")(dashboard)

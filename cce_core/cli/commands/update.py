"""``cce update [--check] [--index-url URL]``: compare the installed engine and plugins with the package index.

``--check`` prints what is newer and exits 10 when something is; without it
the one pip command is run with this interpreter (editable installs refused).
When the index knows none of the installed distributions nothing was compared:
one ``error:`` line and exit 1, as for an unreachable index.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command(name="update")(update)


def update(
    check: Annotated[bool, typer.Option("--check", help="Only report; exit 10 when an update is available.")] = False,
    index_url: Annotated[
        str | None, typer.Option("--index-url", help="Package index JSON API base (default: $CCE_INDEX_URL, else "
                                                     "https://pypi.org/pypi).")
    ] = None,
) -> None:
    """Check the package index for newer cce-core and cce-* plugins, and upgrade them with pip."""
    from cce_core.maintenance.updates import UPDATE_EXIT_CODE
    from cce_core.services.update import update_installation

    def show(report: str) -> None:
        sys.stdout.write(report)
        sys.stdout.flush()

    # A check that compared nothing exits 1: "up to date" would be a guess.
    outcome = update_installation(index_url, check_only=check, on_report=show)
    if not outcome.update_available:
        return
    if check:
        sys.exit(UPDATE_EXIT_CODE)
    code = outcome.pip_status
    if code != 0:
        sys.stderr.write(f"error: pip exited with status {code}; nothing else was changed\n")
        sys.exit(code)
    sys.stdout.write("updated — restart any running `cce mcp` or `cce dashboard` to use the new version\n")

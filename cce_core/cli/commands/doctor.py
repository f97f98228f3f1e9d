"""``cce doctor [DIR | --dir D | --store P]``: report store health and configuration drift; exit 1 on a FAIL."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import click
import typer


def register(app: typer.Typer) -> None:
    app.command(name="doctor")(doctor)


def doctor(
    directory: Annotated[Path | None, typer.Argument(help="Project root or workspace root (same as --dir).")]
    = None,
    dir_: Annotated[Path | None, typer.Option("--dir", help="Project root or workspace root (default: .).")] = None,
    store: Annotated[Path | None, typer.Option(help="Check this store file only.")] = None,
) -> None:
    """Check the index (or every workspace member): parse health, fingerprint drift, sync marker, knowledge."""
    from cce_core.cli.commands import write_utf8
    from cce_core.cli.shared import chosen_dir
    from cce_core.maintenance.doctor import FAILED_MESSAGE, run_doctor

    if (dir_ is not None or directory is not None) and store is not None:
        raise click.UsageError("--dir cannot be used with --store")
    report = run_doctor(directory=chosen_dir(directory, dir_), store=store)
    write_utf8(report.text())
    if not report.healthy:
        sys.stderr.write(f"error: {FAILED_MESSAGE}\n")
        sys.stderr.flush()
        sys.exit(1)

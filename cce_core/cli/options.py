"""The typer options several commands declare identically, defined once.

An option spelled the same everywhere is an ``Annotated`` alias. A flag that
means the same in several commands but whose help says what it does there
(``--no-metrics``, ``--workspace``, ``--watch``, ``--force``, ``--ranking``)
is a factory taking that command's wording, so the flag is spelled once and
every ``--help`` reads as it did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

IndexedDirOption = Annotated[Path | None, typer.Option("--dir", help="Indexed directory (default: .).")]
"""``--dir`` of the commands that read an index (search, stats, expand, feedback, dashboard)."""

StoreOverridesDirOption = Annotated[Path | None, typer.Option(help="Store file (overrides --dir).")]
"""``--store`` of the commands that read one store."""

ProjectDirOption = Annotated[Path, typer.Option("--dir", help="Project directory (default: .).")]
"""``--dir`` of the sync commands, defaulting to ``.``."""

OptionalProjectDirOption = Annotated[Path | None, typer.Option("--dir", help="Project directory (default: .).")]
"""``--dir`` where a positional DIR may stand in for it (usage, sync pull)."""

StoreDefaultOption = Annotated[Path | None, typer.Option(help="Store file (default: DIR/.cce/index.cce).")]
"""``--store`` of the commands that build or serve one project's store (index, mcp)."""


# The flags below mean the same in every command that has them, but each command says in its help what they
# do there; the factories spell the flag once and take the command's wording.

def no_metrics_flag(event: str) -> Any:
    """``--no-metrics``: do not record ``event`` (e.g. "an index") in the metrics log."""
    return typer.Option("--no-metrics", help=f"Do not append {event} event to the metrics log.")


def workspace_flag(what: str) -> Any:
    """``--workspace``: the command works on the workspace at the directory; ``what`` says how."""
    return typer.Option("--workspace", help=what)


def watch_flag(what: str) -> Any:
    """``--watch``: keep the index fresh as files are saved; ``what`` says how this command does it."""
    return typer.Option("--watch", help=what)


def force_flag(what: str) -> Any:
    """``--force``: go past a guard; ``what`` says which."""
    return typer.Option("--force", help=what)


def ranking_option(what: str) -> Any:
    """``--ranking PROFILE``: the ranking profile of the searches this command runs."""
    return typer.Option("--ranking", help=what)

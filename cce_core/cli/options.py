"""The typer options several commands declare identically, defined once.

An option whose help differs from command to command stays in its command;
only the ones spelled the same everywhere are here, so ``--help`` reads as
it did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

IndexedDirOption = Annotated[Path | None, typer.Option("--dir", help="Indexed directory (default: .).")]
"""``--dir`` of the commands that read an index (search, stats, expand, feedback, dashboard)."""

StoreOverridesDirOption = Annotated[Path | None, typer.Option(help="Store file (overrides --dir).")]
"""``--store`` of the commands that read one store."""

ProjectDirOption = Annotated[Path, typer.Option("--dir", help="Project directory (default: .).")]
"""``--dir`` of the sync commands, defaulting to ``.``."""

OptionalProjectDirOption = Annotated[Path | None, typer.Option("--dir", help="Project directory (default: .).")]
"""``--dir`` where a positional DIR may stand in for it (usage, sync pull)."""

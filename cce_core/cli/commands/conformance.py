"""``cce conformance DIR``: write the cross-engine conformance JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cce_core.cli.shared import command_host, require_dir, write_report


def register(app: typer.Typer) -> None:
    app.command(name="conformance")(conformance)


def conformance(
    fixture_dir: Annotated[Path, typer.Argument(help="Directory to chunk (e.g. samples).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the JSON.")] = Path(
        "conformance.json"),
) -> None:
    """Write the cross-engine conformance JSON for FIXTURE_DIR."""
    from cce_core.evaluation.conformance import conformance_json

    require_dir(fixture_dir)
    write_report(output, conformance_json(fixture_dir, command_host()))
    typer.echo(f"wrote {output}")

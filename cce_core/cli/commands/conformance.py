"""``cce conformance DIR``: write the cross-engine conformance JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cce_core.cli.shared import command_host, require_dir
from cce_core.foundation.errors import CceError


def register(app: typer.Typer) -> None:
    app.command(name="conformance")(conformance)


def conformance(
    fixture_dir: Annotated[Path, typer.Argument(help="Directory to chunk (e.g. samples).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the JSON.")] = Path(
        "conformance.json"),
) -> None:
    """Write the cross-engine conformance JSON for FIXTURE_DIR."""
    from cce_core.evaluation.conformance import conformance_json
    from cce_core.indexing.store import atomic_write

    require_dir(fixture_dir)
    text = conformance_json(fixture_dir, command_host())
    try:
        atomic_write(output, text.encode("utf-8"))
    except OSError as exc:
        raise CceError(f"could not write {output}: {exc.strerror or exc}") from exc
    typer.echo(f"wrote {output}")

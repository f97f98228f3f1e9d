"""``cce packs``: list the installed plugins, validate them, scaffold a new pack."""

from __future__ import annotations

from typing import Annotated

import typer

from cce_core.foundation.errors import CceError


def register(app: typer.Typer) -> None:
    app.command(name="packs")(packs)


def packs(
    validate: Annotated[bool, typer.Option("--validate", help="Run all three validator layers.")] = False,
) -> None:
    """List the installed language packs, or validate them."""
    from importlib.metadata import PackageNotFoundError, version

    from cce_core.authoring.validate import validate_all
    from cce_core.plugins.host import default_host

    host = default_host()
    if validate:
        startup, reports = validate_all(host)
        for problem in startup:
            typer.echo(problem)
        failed = 0
        for report in reports:
            if report.ok:
                typer.echo(f"[pack:{report.name}] ok")
            else:
                failed += 1
                for d in report.diagnostics:
                    typer.echo(d)
        if startup or failed:
            raise CceError(f"{failed + len(startup)} problem(s) found — see the diagnostics above")
        typer.echo(f"all {len(reports)} packs passed validation")
        return

    def dist_version(name: str) -> str:
        try:
            return version(name) if name else "?"
        except PackageNotFoundError:
            return "?"

    for problem in host.startup_problems():
        typer.echo(f"warning: {problem}", err=True)
    registered = host.packs.packs
    typer.echo(f"Registered language packs ({len(registered)}):")
    if not registered:
        typer.echo("  (none installed — every file indexes as one module chunk; pip install cce-pack-<language>)")
    for p in registered:
        try:
            kinds = str(p.grammar().node_kind_count)
        except Exception:
            kinds = "?"
        grammar = f"{p.grammar_distribution} {dist_version(p.grammar_distribution)}" if p.grammar_distribution else "?"
        typer.echo(
            f"  {p.name:<12} {','.join(p.extensions):<24} {len(p.function_types)} fn / {len(p.class_types)} class "
            f"types · grammar {grammar} ({kinds} node kinds) · from {p.distribution or '?'} "
            f"{dist_version(p.distribution)}"
        )
    typer.echo(f"pack_set_id: {host.packs.pack_set_id}")

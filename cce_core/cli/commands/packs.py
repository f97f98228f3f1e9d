"""``cce packs``: list every installed plugin, validate them, or scaffold a new language pack."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cce_core.foundation.errors import CceError

if TYPE_CHECKING:
    from cce_core.services.plugin_listing import PluginListing

packs_app = typer.Typer(help="List the installed plugins (packs, embedders, overrides), validate them, or scaffold "
                             "a new pack.", no_args_is_help=False, invoke_without_command=True)


def register(app: typer.Typer) -> None:
    app.add_typer(packs_app, name="packs")


@packs_app.callback()
def packs(
    ctx: typer.Context,
    validate: Annotated[bool, typer.Option("--validate", help="Run all three validator layers on every pack, and "
                                                              "check every plugin's hook names.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the listing as JSON.")] = False,
) -> None:
    """List every installed plugin: language packs, embedders, document chunkers and each plugin's hooks."""
    if ctx.invoked_subcommand is not None:
        return
    if validate:
        _validate()
        return
    from cce_core.services.plugin_listing import list_plugins

    listing = list_plugins()
    if as_json:
        sys.stdout.write(json.dumps(listing.as_json(), indent=2, ensure_ascii=False) + "\n")
        return
    _print_listing(listing)


def _print_listing(listing: PluginListing) -> None:
    inventory = listing.inventory
    for problem in inventory.problems:
        typer.echo(f"warning: {problem}", err=True)
    typer.echo(f"Registered language packs ({len(inventory.packs)}):")
    if not inventory.packs:
        typer.echo(f"  (none installed — every file indexes as one module chunk; {listing.pack_install_hint})")
    for entry in inventory.packs:
        p = entry.pack
        kinds = "?" if entry.node_kinds is None else str(entry.node_kinds)
        grammar = f"{p.grammar_distribution} {entry.grammar_version}" if p.grammar_distribution else "?"
        typer.echo(
            f"  {p.name:<12} {','.join(p.extensions):<24} {len(p.function_types)} fn / {len(p.class_types)} class "
            f"types · grammar {grammar} ({kinds} node kinds) · symbols {listing.symbols.get(p.name, 'none')} "
            f"· from {p.distribution or '?'} {entry.version}"
        )
    typer.echo(f"Embedders ({len(inventory.embedders)}):")
    for emb in inventory.embedders:
        detail = f"cannot be built: {emb.problem}" if emb.problem else (
            f"model {emb.model or '-'} · dim {'?' if emb.dim is None else emb.dim}"
            + ("" if emb.size_bytes is None else f" · size {emb.size_bytes / 1e6:.1f} MB"))
        typer.echo(f"  {emb.name:<12} {detail} · from {emb.distribution or '?'} {emb.version}")
    typer.echo(f"Document chunkers ({len(inventory.document_chunkers)}):")
    if not inventory.document_chunkers:
        typer.echo(f"  (none installed — knowledge ingest needs one; {listing.document_chunker_install_hint})")
    for doc in inventory.document_chunkers:
        c = doc.chunker
        typer.echo(f"  {c.name:<12} {','.join(c.extensions) or '-':<24} formats {','.join(c.formats)} · "
                   f"from {c.distribution or '?'} {doc.version}")
    typer.echo(f"Plugins ({len(inventory.plugins)}):")
    for plugin in inventory.plugins:
        typer.echo(f"  {plugin.name:<12} {plugin.distribution or '?'} {plugin.version} · "
                   f"{', '.join(plugin.hooks) or '(no hooks)'}")
    typer.echo(f"pack_set_id: {inventory.pack_set_id}")


def _validate() -> None:
    from cce_core.services.plugin_validation import validate_plugins

    outcome = validate_plugins()
    for problem in outcome.startup_problems:
        typer.echo(problem)
    for label, group in (("pack", outcome.packs), ("document", outcome.document_chunkers)):
        for report in group:
            if report.ok:
                typer.echo(f"[{label}:{report.name}] ok")
            else:
                for d in report.diagnostics:
                    typer.echo(d)
    if outcome.problem_count:
        raise CceError(f"{outcome.problem_count} problem(s) found — see the diagnostics above")
    if outcome.document_chunkers:
        typer.echo(f"all {len(outcome.document_chunkers)} document chunkers passed validation")
    typer.echo(f"all {len(outcome.packs)} packs passed validation")


@packs_app.command("new")
def new(
    name: Annotated[str, typer.Argument(help="The pack's name: lowercase, e.g. lua. The distribution is "
                                             "cce-pack-NAME.")],
    grammar: Annotated[str, typer.Option("--grammar", help="The installed grammar distribution, e.g. "
                                                           "tree-sitter-lua.")],
    extensions: Annotated[str | None, typer.Option("--extensions", help="Comma-separated extensions the pack "
                                                                        "claims (default: .NAME).")] = None,
    out_dir: Annotated[Path, typer.Option("--dir", help="Where to create cce-pack-NAME/ (default: .).")] = Path("."),
    sample: Annotated[Path | None, typer.Option("--sample", help="A real source file to ship as the pack's sample "
                                                                 "(default: the smallest suitable file found "
                                                                 "under the current directory).")] = None,
) -> None:
    """Scaffold an installable language pack for an installed tree-sitter grammar."""
    from cce_core.authoring.scaffold import render_report, scaffold_pack

    exts = [e.strip() for e in extensions.split(",") if e.strip()] if extensions is not None else None
    if exts is not None and not exts:
        raise CceError("--extensions names no extension — give e.g. --extensions .lua")
    report = scaffold_pack(name, grammar, exts, out_dir, sample)
    typer.echo(render_report(report))

"""``cce map [--tokens N] [--dir D|--store P|--workspace] [--json]``: the most central files and definitions.

An outline for a first look at a repository, Aider-style: files ranked by
PageRank over the reference graph, each with its most used definitions'
signatures, until about N tokens (default 1024) are spent.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cce_core.cli.options import IndexedDirOption, StoreOverridesDirOption
from cce_core.cli.symbol_options import PackageOption, WorkspaceFlag


def register(app: Any) -> None:
    app.command(name="map")(map_command)


def map_command(
    tokens: Annotated[int, typer.Option("--tokens", help="Token budget of the outline (default 1024).")] = 1024,
    dir_: IndexedDirOption = None,
    store: StoreOverridesDirOption = None,
    workspace: WorkspaceFlag = False,
    package: PackageOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object: {files, rows: [rows]}.")] = False,
) -> None:
    """Print an outline of the most central files and their key definitions within --tokens."""
    from cce_core.agents.symbol_texts import render_json, render_map
    from cce_core.cli.symbol_options import show_symbol_answer, symbol_target
    from cce_core.services.symbols import repo_map

    answer = repo_map(symbol_target(dir_, store, workspace, package), tokens=tokens)
    show_symbol_answer(answer.notice, bool(answer.files), lambda: render_json(answer.as_json()) if json_out
                       else render_map(answer))

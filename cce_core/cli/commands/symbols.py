"""``cce symbols NAME [--fuzzy] [--dir D|--store P|--workspace] [--json]``: where NAME is defined.

NAME is a bare name (``render``) or a qualified one (``Flask.route``,
``Class#method``, ``a::b``); each row is a definition's kind, location and
signature. ``--fuzzy`` also matches parts and subsequences, best first.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cce_core.cli.options import IndexedDirOption, StoreOverridesDirOption
from cce_core.cli.symbol_options import LimitOption, PackageOption, WorkspaceFlag


def register(app: Any) -> None:
    app.command(name="symbols")(symbols)


def symbols(
    name: Annotated[str, typer.Argument(help="Symbol name, bare or qualified (Class.method).")],
    fuzzy: Annotated[bool, typer.Option("--fuzzy", help="Also match parts and subsequences of names.")] = False,
    dir_: IndexedDirOption = None,
    store: StoreOverridesDirOption = None,
    workspace: WorkspaceFlag = False,
    package: PackageOption = None,
    limit: LimitOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object: {definitions: [rows]}.")] = False,
) -> None:
    """Show where NAME is defined: kind, file:line and signature of each definition."""
    from cce_core.agents.symbol_texts import render_definitions, render_json
    from cce_core.cli.symbol_options import show_symbol_answer, symbol_target
    from cce_core.services.symbols import find_symbol

    answer = find_symbol(symbol_target(dir_, store, workspace, package), name, fuzzy=fuzzy, limit=limit)
    show_symbol_answer(answer.notice, bool(answer.rows), lambda: render_json(answer.as_json("definitions"))
                       if json_out else render_definitions(answer))

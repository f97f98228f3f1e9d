"""``cce refs NAME [--dir D|--store P|--workspace] [--json]``: every use of NAME, grouped by file.

Each use is printed with the definition it sits in and how it resolved
(``same-file``, ``import``, ``global``); a qualified NAME (``Class.method``)
keeps the uses that resolve to that definition (``--all`` adds the ``guess``
ones: the name on a receiver whose type the file does not show). A row's line is the line of
the use, import statements included.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cce_core.cli.options import IndexedDirOption, StoreOverridesDirOption
from cce_core.cli.symbol_options import LimitOption, PackageOption, WorkspaceFlag


def register(app: Any) -> None:
    app.command(name="refs")(refs)


def refs(
    name: Annotated[str, typer.Argument(help="Symbol name, bare or qualified (Class.method).")],
    dir_: IndexedDirOption = None,
    store: StoreOverridesDirOption = None,
    workspace: WorkspaceFlag = False,
    package: PackageOption = None,
    limit: LimitOption = None,
    all_uses: Annotated[bool, typer.Option("--all", help="Also uses through a receiver of unknown type that may "
                                                         "mean NAME (confidence guess).")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object: {references: [rows]}.")] = False,
) -> None:
    """Show every use of NAME, grouped by file, with the function each use sits in."""
    from cce_core.agents.symbol_texts import render_json, render_references
    from cce_core.cli.symbol_options import show_symbol_answer, symbol_target
    from cce_core.services.symbols import find_references

    answer = find_references(symbol_target(dir_, store, workspace, package), name, limit=limit,
                             include_uncertain=all_uses)
    show_symbol_answer(answer.notice, bool(answer.rows), lambda: render_json(answer.as_json("references"))
                       if json_out else render_references(answer))

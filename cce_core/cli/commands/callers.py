"""``cce callers NAME [--depth N] [--dir D|--store P|--workspace] [--json]``: who calls NAME, to N hops.

Each row is one call: where it is written, the function on the other end,
and how the name resolved (``same-file``, ``import``, ``global``);
``--depth 2`` adds the callers of those, indented one step further.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cce_core.cli.options import IndexedDirOption, StoreOverridesDirOption
from cce_core.cli.symbol_options import DepthOption, LimitOption, PackageOption, WorkspaceFlag


def register(app: Any) -> None:
    app.command(name="callers")(callers)


def callers(
    name: Annotated[str, typer.Argument(help="Symbol name, bare or qualified (Class.method).")],
    depth: DepthOption = 1,
    dir_: IndexedDirOption = None,
    store: StoreOverridesDirOption = None,
    workspace: WorkspaceFlag = False,
    package: PackageOption = None,
    limit: LimitOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object: {callers: [rows]}.")] = False,
) -> None:
    """Show who calls NAME: one row per call, to --depth hops."""
    from cce_core.cli.symbol_options import show_call_graph

    show_call_graph("callers", name, depth, dir_, store, workspace, package, limit, json_out)

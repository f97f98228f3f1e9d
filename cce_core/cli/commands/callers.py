"""``cce callers NAME [--depth N] [--dir D|--store P|--workspace] [--json]``: who calls NAME, to N hops.

Each row is one call: where it is written, the function on the other end,
and how the name resolved (``same-file``, ``import``, ``global``);
``--depth 2`` adds the callers of those, indented one step further.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cce_core.cli.options import IndexedDirOption, StoreOverridesDirOption
from cce_core.cli.symbol_options import LimitOption, PackageOption, WorkspaceFlag


def register(app: Any) -> None:
    app.command(name="callers")(callers)


def callers(
    name: Annotated[str, typer.Argument(help="Symbol name, bare or qualified (Class.method).")],
    depth: Annotated[int, typer.Option("--depth", help="Hops to follow, 1 to 5 (default 1).")] = 1,
    dir_: IndexedDirOption = None,
    store: StoreOverridesDirOption = None,
    workspace: WorkspaceFlag = False,
    package: PackageOption = None,
    limit: LimitOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object: {callers: [rows]}.")] = False,
) -> None:
    """Show who calls NAME: one row per call, to --depth hops."""
    from cce_core.agents.symbol_texts import render_call_graph, render_json
    from cce_core.cli.commands import write_utf8
    from cce_core.cli.shared import stderr_line
    from cce_core.cli.symbol_options import symbol_target
    from cce_core.foundation.errors import CceError
    from cce_core.services.symbols import call_graph

    target = symbol_target(dir_, store, workspace, package)
    answer = call_graph(target, name, direction="callers", depth=depth, limit=limit)
    if answer.notice and not answer.rows:
        raise CceError(answer.notice)
    if answer.notice:
        stderr_line(f"note: {answer.notice}")
    write_utf8(render_json(answer.as_json("callers")) if json_out else render_call_graph(answer, "callers"))

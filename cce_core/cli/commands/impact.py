"""``cce impact [--diff REV | --staged] [--depth N] [--dir D|--store P|--workspace] [--json]``: what a change touches.

The diff is ``git diff REV`` (default ``HEAD``: the uncommitted changes) or
the staged changes, inside DIR. For each hunk the innermost definition
around it is *touched*; then come the callers of the touched definitions
(``--depth`` hops) and the uses in test files. Line numbers are read against
the index: run ``cce index`` on the working tree first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cce_core.cli.options import IndexedDirOption, StoreOverridesDirOption
from cce_core.cli.symbol_options import LimitOption, PackageOption, WorkspaceFlag


def register(app: Any) -> None:
    app.command(name="impact")(impact)


def impact(
    diff: Annotated[str | None, typer.Option("--diff", help="Compare the working tree with REV (default HEAD).",
                                             metavar="REV")] = None,
    staged: Annotated[bool, typer.Option("--staged", help="Look at the staged changes instead.")] = False,
    depth: Annotated[int, typer.Option("--depth", help="Caller hops to follow, 1 to 5 (default 1).")] = 1,
    dir_: IndexedDirOption = None,
    store: StoreOverridesDirOption = None,
    workspace: WorkspaceFlag = False,
    package: PackageOption = None,
    limit: LimitOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object: {touched, callers, tests: [rows]}.")
                        ] = False,
) -> None:
    """Show the definitions a diff touches, their callers and the tests that use them."""
    from cce_core.agents.symbol_texts import render_impact, render_json
    from cce_core.cli.shared import require_dir
    from cce_core.cli.symbol_options import show_symbol_answer, symbol_target
    from cce_core.services.symbols import change_impact

    root = require_dir(dir_) if dir_ is not None else Path(".")
    target = symbol_target(dir_, store, workspace, package)
    answer = change_impact(root, target, rev=diff, staged=staged, depth=depth, limit=limit)
    show_symbol_answer(answer.notice, True, lambda: render_json(answer.as_json()) if json_out
                       else render_impact(answer), empty_is_error=False)

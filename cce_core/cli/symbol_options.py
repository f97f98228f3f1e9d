"""The options the symbol commands share (``--workspace``, ``--package``, ``--limit``, ``--json``) and their target.

``cce symbols``, ``refs``, ``callers``, ``callees``, ``impact`` and ``map``
read one store (``--dir``/``--store``) or every member of a workspace
(``--workspace``, optionally narrowed by ``--package``); the choice becomes
the one target the symbol service takes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from cce_core.services.symbols import Target

WorkspaceFlag = Annotated[bool, typer.Option("--workspace", help="Ask every member of the workspace at --dir; "
                                                                 "rows name their member.")]
PackageOption = Annotated[str | None, typer.Option("--package", help="With --workspace: only this member "
                                                                     "(name or package).")]
LimitOption = Annotated[int | None, typer.Option("--limit", help="Most rows to print (default 50).")]
DepthOption = Annotated[int, typer.Option("--depth", help="Hops to follow, 1 to 5 (default 1).")]


def symbol_target(dir_: Path | None, store: Path | None, workspace: bool, package: str | None) -> Target:
    """The store of ``--store``/``--dir``, or with ``--workspace`` the workspace at ``--dir`` (default ``.``)."""
    from cce_core.cli.shared import require_dir, store_for_read
    from cce_core.foundation.errors import CceError
    from cce_core.services.symbols import WorkspaceTarget

    if not workspace:
        if package is not None:
            raise CceError("--package needs --workspace")
        return store_for_read(store, dir_)
    if store is not None:
        raise CceError("--store names one store; with --workspace give the workspace root as --dir")
    return WorkspaceTarget(require_dir(dir_) if dir_ is not None else Path("."), package)


def show_symbol_answer(notice: str, found: bool, text: Callable[[], str], *, empty_is_error: bool = True) -> None:
    """Print one symbol answer: its notice as an ``error:`` when nothing was found (else a ``note:``), then the text."""
    from cce_core.cli.commands import write_utf8
    from cce_core.cli.shared import stderr_line
    from cce_core.foundation.errors import CceError

    if notice and not found and empty_is_error:
        raise CceError(notice)
    if notice:
        stderr_line(f"note: {notice}")
    write_utf8(text())


def show_call_graph(direction: str, name: str, depth: int, dir_: Path | None, store: Path | None, workspace: bool,
                    package: str | None, limit: int | None, json_out: bool) -> None:
    """``cce callers`` and ``cce callees``: the same call, the direction aside."""
    from cce_core.agents.symbol_texts import render_call_graph, render_json
    from cce_core.services.symbols import call_graph

    answer = call_graph(symbol_target(dir_, store, workspace, package), name, direction=direction, depth=depth,
                        limit=limit)
    show_symbol_answer(answer.notice, bool(answer.rows), lambda: render_json(answer.as_json(direction)) if json_out
                       else render_call_graph(answer, direction))

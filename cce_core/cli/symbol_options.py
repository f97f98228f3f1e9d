"""The options the symbol commands share (``--workspace``, ``--package``, ``--limit``, ``--json``) and their target.

``cce symbols``, ``refs``, ``callers``, ``callees``, ``impact`` and ``map``
read one store (``--dir``/``--store``) or every member of a workspace
(``--workspace``, optionally narrowed by ``--package``); the choice becomes
the one target the symbol service takes.
"""

from __future__ import annotations

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

"""``cce expand ID [DIR] [--dir D] [--scope body|file|neighbors]``: print a chunk or knowledge section whole.

``cce search`` shows a knowledge hit as its heading and first words, and
``--json`` gives every result's ``chunk_id``; this prints what the id names,
exactly as the MCP tool ``expand_chunk`` serves it to an agent (the same
library call, without the answer cap a terminal does not need).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from cce_core.cli.options import IndexedDirOption


def register(app: typer.Typer) -> None:
    app.command(name="expand")(expand)


def expand(
    chunk_id: Annotated[str, typer.Argument(help="The id a search printed: the #id of a knowledge hit, or a "
                                                 "result's chunk_id in --json.")],
    directory: Annotated[Path | None, typer.Argument(help="Indexed directory (same as --dir).")] = None,
    dir_: IndexedDirOption = None,
    scope: Annotated[
        str, typer.Option("--scope", help="body (the default); file: every chunk of its file, or every section "
                                          "of its document; neighbors: its import-graph neighbours, or the "
                                          "other sections of its document.")
    ] = "body",
) -> None:
    """Print the chunk or knowledge section ID names, whole."""
    from cce_core.agents.mcp_tools import EXPAND_SCOPES, expand_in_project
    from cce_core.cli.shared import require_dir
    from cce_core.foundation.errors import CceError
    from cce_core.foundation.safe_text import echo
    from cce_core.foundation.textrules import UNICODE_WHITESPACE

    picked = dir_ if dir_ is not None else directory
    root = require_dir(picked) if picked is not None else Path(".")
    if scope not in EXPAND_SCOPES:
        raise CceError(f"unknown --scope {echo(scope)!r}: use body, file or neighbors")
    wanted = chunk_id.strip(UNICODE_WHITESPACE)
    answer = expand_in_project(root, wanted, scope)
    text = answer.text
    if not answer.found:
        if answer.nothing_indexed:
            raise CceError(f"nothing is indexed under {root} — run `cce index` (or `cce knowledge index FEED`) first")
        raise CceError(f"no chunk or knowledge section with id {echo(wanted)} under {root} — it may be stale; "
                       "run cce search again")
    sys.stdout.write(text if text.endswith("\n") else text + "\n")

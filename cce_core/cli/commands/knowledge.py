"""``cce knowledge index FEED``: ingest a ``cce.knowledge/v1`` feed (``push``/``pull`` come from the Sync module)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated

import typer

_SYNC_COMMANDS = "cce_core.cli.knowledge_sync_commands"


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Curated documents (runbooks, design notes, tickets) searched beside the code.",
                        no_args_is_help=True)
    group.command("index")(index)
    # `push` and `pull` come from the Knowledge Sync commands when that module is installed.
    if importlib.util.find_spec(_SYNC_COMMANDS) is not None:
        from cce_core.cli import knowledge_sync_commands

        knowledge_sync_commands.register(group)
    app.add_typer(group, name="knowledge")


def index(
    feed: Annotated[Path, typer.Argument(help="The cce.knowledge/v1 feed: NDJSON, one record per line.")],
    dir_: Annotated[Path, typer.Option("--dir", help="Project root whose .cce/knowledge/ receives the snapshot "
                                                     "(default: .).")] = Path("."),
) -> None:
    """Validate, redact, section and embed FEED into the knowledge store; it supersedes the previous snapshot."""
    from cce_core.cli.commands import write_utf8
    from cce_core.knowledge.ingest import ingest_file, summary_text

    write_utf8(summary_text(feed, ingest_file(feed, dir_)))

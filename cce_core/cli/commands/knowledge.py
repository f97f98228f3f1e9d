"""``cce knowledge index FEED [--manifest M]``, ``cce knowledge add DIR...``, ``cce knowledge ask SUITE``.

``index`` ingests a ``cce.knowledge/v1`` feed; ``add`` makes that feed from
documentation folders first; ``ask`` checks the corpus still answers a suite
of questions. ``push``/``pull`` come from the Sync module.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated

import typer

_SYNC_COMMANDS = "cce_core.cli.knowledge_sync_commands"
_DIR_HELP = "Project root whose .cce/knowledge/ receives the snapshot (default: .)."


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Curated documents (runbooks, design notes, tickets) searched beside the code.",
                        no_args_is_help=True)
    group.command("index")(index)
    group.command("add")(add)
    group.command("ask")(ask)
    # `push` and `pull` come from the Knowledge Sync commands when that module is installed.
    if importlib.util.find_spec(_SYNC_COMMANDS) is not None:
        from cce_core.cli import knowledge_sync_commands

        knowledge_sync_commands.register(group)
    app.add_typer(group, name="knowledge")


def index(
    feed: Annotated[Path, typer.Argument(help="The cce.knowledge/v1 feed: NDJSON, one record per line.")],
    dir_: Annotated[Path, typer.Option("--dir", help=_DIR_HELP, show_default=False)] = Path("."),
    manifest: Annotated[Path | None, typer.Option(
        "--manifest", help="A cce.feed-manifest/v1 file (record count and sha256 of FEED); a feed that does not "
                           "match is refused before anything is written.")] = None,
) -> None:
    """Validate, redact, section and embed FEED into the knowledge store; it supersedes the previous snapshot."""
    from cce_core.cli.commands import write_utf8
    from cce_core.knowledge.ingest import ingest_file, summary_text

    write_utf8(summary_text(feed, ingest_file(feed, dir_, manifest=manifest), manifest))


def add(
    folders: Annotated[list[Path], typer.Argument(help="Documentation folders: every matching file becomes a "
                                                       "record.")],
    glob: Annotated[list[str] | None, typer.Option(
        "--glob", help="Which files to take, by name (e.g. '*.rst'; repeat it). Default: the usual documentation "
                       "files (*.md, *.markdown, *.rst, *.txt, *.adoc and any a document chunker declares).",
        show_default=False)] = None,
    dir_: Annotated[Path, typer.Option("--dir", help=_DIR_HELP, show_default=False)] = Path("."),
    source: Annotated[str, typer.Option("--source", help="The records' `source` facet.")] = "docs",
) -> None:
    """Build a cce.knowledge/v1 feed from documentation folders and index it (it supersedes the previous snapshot)."""
    from cce_core.cli.commands import write_utf8
    from cce_core.knowledge.docs_folder import add_folders, add_summary_text

    write_utf8(add_summary_text(add_folders(folders, dir_, globs=glob, source=source)))


def ask(
    suite: Annotated[Path, typer.Argument(help="The cce.knowledge.ask/v1 suite: NDJSON questions with the record "
                                               "ids that answer them.")],
    dir_: Annotated[Path | None, typer.Option(
        "--dir", help="Run against the knowledge store installed in this project instead of the feed the suite's "
                      "header names.")] = None,
    min_score: Annotated[float | None, typer.Option(
        "--min-score", help="The score floor a hit must clear (default: knowledge.min_score, 0.30).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the cce.knowledge.ask.report/v1 JSON.")] = False,
) -> None:
    """Run each question of SUITE through the knowledge search; fail unless every expected record is found."""
    from cce_core.cli.commands import write_utf8
    from cce_core.foundation.errors import CceError
    from cce_core.knowledge.ask import regression_message, render_human, render_json, run_suite_file

    report = run_suite_file(suite, dir_, min_score)
    write_utf8(render_json(report) if as_json else render_human(report))
    if not report.all_proven():
        raise CceError(regression_message(report))

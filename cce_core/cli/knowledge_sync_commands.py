"""``cce knowledge push`` and ``cce knowledge pull``: share a knowledge corpus through the sync remote.

These two subcommands belong to the ``cce knowledge`` group, which its own
command module creates; that module calls :func:`register` to add them, so
Knowledge Sync stays apart from ingest. The work is done by
:mod:`cce_core.sync.knowledge_service`; this module parses flags and prints.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import click
import typer

from cce_core.cli.options import ProjectDirOption

CorpusOption = Annotated[str | None, typer.Option("--corpus", help="The corpus id (default: "
                                                                    "knowledge.sync.corpus_id).")]
RemoteOption = Annotated[str | None, typer.Option("--remote", help="The cache URL (default: knowledge.sync.remote, "
                                                                   "else sync.remote).")]


def register(group: typer.Typer) -> None:
    """Add ``push`` and ``pull`` to the ``cce knowledge`` typer group."""
    group.command("push")(push)
    group.command("pull")(pull)


def _write(text: str) -> None:
    from cce_core.cli.commands import write_utf8

    write_utf8(text)


def push(
    corpus: CorpusOption = None,
    remote: RemoteOption = None,
    force: Annotated[bool, typer.Option("--force", help="Push even if records published on the remote would be "
                                                        "dropped.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what the push would change on the remote; push "
                                                            "nothing.")] = False,
    dir_: ProjectDirOption = Path("."),
) -> None:
    """Publish the current knowledge store to the sync remote as a .cck artifact."""
    from cce_core.sync import knowledge_service

    try:
        text = knowledge_service.push(dir_, corpus=corpus, remote_url=remote, force=force, dry_run=dry_run)
    except knowledge_service.ShrinkRefused as exc:
        # The diff says which records would go; the error line says what to do.
        sys.stderr.write(exc.report)
        sys.stderr.flush()
        raise
    _write(text)


def pull(
    corpus: CorpusOption = None,
    latest: Annotated[bool, typer.Option("--latest", help="Pull the snapshot `current` names (the "
                                                          "default).")] = False,
    snapshot: Annotated[str | None, typer.Option("--snapshot", help="Pull this snapshot instead.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a store pulled from another corpus.")] = False,
    remote: RemoteOption = None,
    dir_: ProjectDirOption = Path("."),
) -> None:
    """Install a knowledge corpus from the sync remote into .cce/knowledge/."""
    from cce_core.sync import knowledge_service

    if latest and snapshot is not None:
        raise click.UsageError("--latest cannot be used with --snapshot")
    _write(knowledge_service.pull(dir_, corpus=corpus, snapshot=snapshot, force=force, remote_url=remote))

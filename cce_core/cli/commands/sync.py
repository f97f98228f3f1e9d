"""``cce sync init|push [--ref R]|pull|list|status|verify``: share prebuilt indexes through a git remote.

``push --workspace`` and ``pull --workspace`` fan out over a workspace's members; ``pull --all --into DIR``
is consumer mode (every repo of the cache as a member of a workspace at DIR).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import click
import typer

from cce_core.cli.options import OptionalProjectDirOption, ProjectDirOption

sync_app = typer.Typer(help="Share prebuilt indexes through a git remote (CCE Sync).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(sync_app, name="sync")


def _write(text: str) -> None:
    from cce_core.cli.commands import write_utf8

    write_utf8(text)


@sync_app.command("init")
def init(
    remote: Annotated[str, typer.Option("--remote", help="The git remote that holds the cache (any git URL).")],
    lfs: Annotated[bool, typer.Option("--lfs", help="Store artifacts through git-LFS (the default).")] = False,
    no_lfs: Annotated[bool, typer.Option("--no-lfs", help="Store artifacts as plain git blobs.")] = False,
    repo_id: Annotated[str | None, typer.Option("--repo-id", help="This repository's id in the cache (default: "
                                                                 "derived from remote.origin.url).")] = None,
    dir_: ProjectDirOption = Path("."),
) -> None:
    """Configure the sync remote in .cce/config and set up the working clone."""
    from cce_core.sync import service

    del lfs  # LFS is on unless --no-lfs; the flag exists so scripts can say so explicitly
    _write(service.init(dir_, remote, lfs=not no_lfs, repo_id=repo_id))


@sync_app.command("push")
def push(
    commit: Annotated[str | None, typer.Option("--commit", help="Assert the sha being published (must be HEAD).")]
    = None,
    workspace: Annotated[bool, typer.Option("--workspace", help="Push every workspace member (each as "
                                                                "<repo_id>__<member>) and publish the workspace "
                                                                "manifest and member graph.")] = False,
    ref: Annotated[str | None, typer.Option("--ref", help="The pointer to advance, refs/<ref> (default: sync.ref, "
                                                         "else the checked-out branch; needed on a detached HEAD)."
                                            )] = None,
    dir_: ProjectDirOption = Path("."),
) -> None:
    """Build the working tree at HEAD and publish its artifact (refuses a dirty tree)."""
    from cce_core.cli.shared import command_host
    from cce_core.services.sync_actions import push_index
    from cce_core.sync.service import progress_to_stderr

    if workspace and commit is not None:
        # A workspace push always publishes HEAD; accepting --commit would suggest otherwise.
        raise click.UsageError("--commit cannot be used with --workspace")
    _write(push_index(dir_, command_host(), workspace=workspace, commit=commit, ref=ref, progress=progress_to_stderr))


# The flags consumer mode cannot combine with: it picks each repo's own latest sha into --into.
_NOT_WITH_ALL = ("--commit", "--latest", "--force", "--workspace", "--dir", "--ref")


@sync_app.command("pull")
def pull(
    commit: Annotated[str | None, typer.Option("--commit", help="Pull the artifact of this sha.")] = None,
    latest: Annotated[bool, typer.Option("--latest", help="Pull what the branch pointer names.")] = False,
    ref: Annotated[str | None, typer.Option("--ref", help="With --latest: the pointer to follow (default: "
                                                         "sync.ref, else main).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a local cache pulled at another sha; install an "
                                                        "artifact whose packs chunk some files differently from "
                                                        "this installation's.")] = False,
    workspace: Annotated[bool, typer.Option("--workspace", help="Pull every workspace member from its own cache "
                                                                "and install the published workspace metadata.")]
    = False,
    all_: Annotated[bool, typer.Option("--all", help="Consumer mode: pull every repo in the cache into a "
                                                     "workspace under --into.")] = False,
    into: Annotated[Path | None, typer.Option("--into", help="With --all: the workspace directory to create or "
                                                             "refresh.")] = None,
    remote: Annotated[str | None, typer.Option("--remote", help="With --all: the cache URL (default: the --into "
                                                               "directory's sync.remote).")] = None,
    corpus: Annotated[str | None, typer.Option("--corpus", help="With --all: the knowledge corpus to install into "
                                                               "--into (default: the cache's only one).")] = None,
    dir_: OptionalProjectDirOption = None,
) -> None:
    """Install a prebuilt index from the remote (default: the artifact of HEAD)."""
    from cce_core.services.sync_actions import pull_index

    if all_:
        given = dict(zip(_NOT_WITH_ALL, (commit is not None, latest, force, workspace, dir_ is not None,
                                         ref is not None), strict=True))
        for flag, present in given.items():
            if present:
                raise click.UsageError(f"--all cannot be used with {flag}")
        if into is None:
            raise click.UsageError("--all requires --into")
        _write(pull_index(Path("."), all_into=into, remote=remote, corpus=corpus))
        return
    for flag, value in (("--into", into), ("--remote", remote), ("--corpus", corpus)):
        if value is not None:
            raise click.UsageError(f"{flag} requires --all")
    if latest and commit is not None:
        raise click.UsageError("--latest cannot be used with --commit")
    if ref is not None and not latest:
        raise click.UsageError("--ref requires --latest")
    _write(pull_index(dir_ if dir_ is not None else Path("."), workspace=workspace, commit=commit, latest=latest,
                      ref=ref, force=force))


@sync_app.command("list")
def list_(
    remote: Annotated[str | None, typer.Option("--remote", help="The cache to list (default: sync.remote).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print cce.synclist/v1 JSON.")] = False,
    dir_: ProjectDirOption = Path("."),
) -> None:
    """List the repos and artifacts in the cache (read-only)."""
    from cce_core.sync import service

    _write(service.list_cache(dir_, remote_url=remote, as_json=as_json))


@sync_app.command("status")
def status(dir_: ProjectDirOption = Path(".")) -> None:
    """Show the remote, the local cache and how they compare."""
    from cce_core.sync import service

    _write(service.status(dir_))


@sync_app.command("verify")
def verify(
    commit: Annotated[str | None, typer.Option("--commit", help="The sha to verify (default: the pulled one, "
                                                               "else HEAD).")] = None,
    checksum_only: Annotated[bool, typer.Option("--checksum-only", help="Only check the installed store against "
                                                                        "its recorded checksum (no network).")]
    = False,
    dir_: ProjectDirOption = Path("."),
) -> None:
    """Rebuild the working tree and check it matches the pulled (or published) artifact."""
    from cce_core.cli.shared import command_host
    from cce_core.foundation.errors import CceError
    from cce_core.services.sync_actions import verify_index

    if checksum_only and commit is not None:
        raise click.UsageError("--checksum-only cannot be used with --commit")
    try:
        text = verify_index(dir_, command_host, checksum_only=checksum_only, commit=commit)
    except CceError as exc:
        if str(exc).startswith("verify FAILED"):
            # The whole report goes to stdout, like a passing one; the exit status says it failed.
            _write(str(exc) + "\n")
            sys.exit(1)
        raise
    _write(text)

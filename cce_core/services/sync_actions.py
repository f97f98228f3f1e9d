"""Push, pull and verify a prebuilt index — a project's or a whole workspace's — and say what happened.

The sync package does the work for one project (``sync.service``) and for a
workspace (``sync.workspaces``); these are the user actions on top, each
choosing between them from what was asked, and each returning the report
the user reads.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cce_core.plugins.host import PluginHost


def push_index(root: Path, host: PluginHost, *, workspace: bool, commit: str | None, ref: str | None,
               progress: Callable[[str], None] | None) -> str:
    """Build HEAD (or ``commit``) and publish it; with ``workspace``, every member and the workspace metadata."""
    if workspace:
        from cce_core.sync.workspaces import push_workspace

        return push_workspace(root, host, ref=ref, progress=progress)
    from cce_core.sync.service import push

    return push(root, host, commit=commit, ref=ref, progress=progress).report()


def pull_index(root: Path, *, workspace: bool = False, commit: str | None = None, latest: bool = False,
               ref: str | None = None, force: bool = False, all_into: Path | None = None,
               remote: str | None = None, corpus: str | None = None) -> str:
    """Install a prebuilt index; ``all_into``: consumer mode, every repository of the cache into that workspace."""
    if all_into is not None:
        from cce_core.sync.workspaces import pull_all

        return pull_all(all_into, remote_url=remote, corpus=corpus)
    if workspace:
        from cce_core.sync.workspaces import pull_workspace

        return pull_workspace(root, commit=commit, latest=latest, ref=ref, force=force)
    from cce_core.sync.service import pull

    return pull(root, commit=commit, latest=latest, ref=ref, force=force).report()


def verify_index(root: Path, open_host: Callable[[], PluginHost], *, checksum_only: bool,
                 commit: str | None) -> str:
    """Rebuild and compare with the artifact, or (``checksum_only``, offline) check the store's recorded checksum.

    A mismatch raises the sync package's ``verify FAILED`` error, whose text is the whole report.
    """
    from cce_core.sync.service import verify, verify_checksum_only

    return verify_checksum_only(root) if checksum_only else verify(root, open_host(), commit=commit)

"""Where a project's served index came from, and whether its sync remote has a newer one.

Best effort and offline-safe: without a sync remote nothing touches the
network, and any failure reading the remote's pointer (offline, a clone
failure, a busy clone, a bad repository id) means "unknown", because a
status answer must always come back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cce_core.sync.settings import SyncSettings


@dataclass(frozen=True)
class IndexFreshness:
    pulled_sha: str | None  # the sha a sync pull installed; None: built locally
    remote_configured: bool
    remote_latest: str | None  # the remote's ``main`` pointer; None: unknown (or no remote)

    @property
    def behind_remote(self) -> bool:
        """Only when both shas are known and differ."""
        return self.pulled_sha is not None and self.remote_latest is not None and self.pulled_sha != self.remote_latest


def index_freshness(root: Path) -> IndexFreshness:
    from cce_core.sync.service import load_marker
    from cce_core.sync.settings import load_sync_settings

    marker = load_marker(root)
    pulled = marker.sha if marker is not None else None
    # A malformed config is reported by the commands that act on it; a status answer stays quiet.
    settings = load_sync_settings(root, warn=lambda _message: None)
    if not settings.remote:
        return IndexFreshness(pulled, False, None)
    return IndexFreshness(pulled, True, _remote_latest(root, settings))


def _remote_latest(root: Path, settings: SyncSettings) -> str | None:
    """The sha the remote's ``main`` pointer names, or None when it cannot be read for any reason."""
    from cce_core.sync.identity import DEFAULT_REF, resolve_repo_id
    from cce_core.sync.service import STATUS_LOCK_TIMEOUT_SECONDS, open_remote, read_pointer

    try:
        repo_id = resolve_repo_id(root, settings)
        # Reads only: no git-LFS set-up, which would commit to the cache.
        sha = read_pointer(open_remote(settings, lfs=False, lock_timeout=STATUS_LOCK_TIMEOUT_SECONDS), repo_id,
                           DEFAULT_REF)
    except Exception:  # offline, clone failure, busy clone, bad id: the answer is "unknown"
        return None
    return sha or None

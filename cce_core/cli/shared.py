"""Small argument-handling helpers the command modules share (no engine logic)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cce_core.foundation.errors import CceError

if TYPE_CHECKING:
    from cce_core.plugins.host import PluginHost
    from cce_core.retrieval.searcher import Searcher


_warned_hosts: set[int] = set()


def warn_about_hooks(host: PluginHost) -> None:
    """Say once per process, on stderr, which installed plugins implement hooks that are never called."""
    if id(host) in _warned_hosts:
        return
    _warned_hosts.add(id(host))
    for problem in host.hook_problems:
        sys.stderr.write(f"warning: {problem} (run `cce packs --validate`)\n")


def command_host() -> PluginHost:
    """Every installed plugin, refused when one failed to load or two packs clash."""
    from cce_core.plugins.host import default_host

    host = default_host()
    host.require_healthy()
    warn_about_hooks(host)
    return host


def require_dir(path: Path) -> Path:
    if not path.exists():
        raise CceError(f"no such directory: {path}")
    if not path.is_dir():
        raise CceError(f"not a directory: {path}")
    return path


def chosen_dir(directory: Path | None, dir_: Path | None) -> Path | None:
    """The project directory given as the DIR argument or ``--dir`` (``--dir`` wins), checked to exist.

    None when neither was given (the caller's default, usually ``.``). A path
    that is not a directory is refused here, so no command goes on to say
    "no index at /typo/.cce/index.cce" or, worse, creates ``/typo/.cce``.
    """
    picked = dir_ if dir_ is not None else directory
    return require_dir(picked) if picked is not None else None


def store_for_read(store: Path | None, dir_: Path | None) -> Path:
    """``--store`` when given, else the store of ``--dir`` (default: the current directory, checked to exist)."""
    from cce_core.indexing.store import default_store_path

    if store is not None:
        return store
    return default_store_path(require_dir(dir_) if dir_ is not None else Path("."))


def open_searcher(store_path: Path, ranking: str | None = None) -> Searcher:
    """A searcher over the store at ``store_path`` with the embedder that built it.

    ``ranking`` is the ``--ranking`` option as typed (None when absent); the profile is
    resolved from it, the environment and the project's config (retrieval.profiles).
    """
    from cce_core.indexing.store import load_store
    from cce_core.plugins.host import host_for_embedder
    from cce_core.retrieval.profiles import resolve_profile, resolve_stages, root_of_store
    from cce_core.retrieval.searcher import Searcher
    from cce_core.retrieval.store_embedder import embedder_for_store, store_embedder_name

    root = root_of_store(store_path)
    profile = resolve_profile(ranking, root)
    disabled = resolve_stages(root)
    data = load_store(store_path)
    # A search needs the embedder that built the store, not the language packs.
    host = host_for_embedder(store_embedder_name(data))
    host.require_healthy()
    warn_about_hooks(host)
    return Searcher(data, embedder_for_store(host, data), profile=profile, disabled_stages=disabled)

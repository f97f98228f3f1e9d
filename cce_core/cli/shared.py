"""Small argument-handling helpers the command modules share (no engine logic)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cce_core.plugins.host import PluginHost
    from cce_core.retrieval.searcher import Searcher


def stderr_line(line: str) -> None:
    """The warning sink the CLI hands to the services: one line on stderr."""
    sys.stderr.write(line + "\n")


def warn_about_hooks(host: PluginHost) -> None:
    """Say once per process, on stderr, which installed plugins implement hooks that are never called."""
    from cce_core.services.plugin_warnings import warn_once_about_hooks

    warn_once_about_hooks(host, stderr_line)


def command_host() -> PluginHost:
    """Every installed plugin, refused when one failed to load or two packs clash."""
    from cce_core.cli.startup_gc import start_work
    from cce_core.services.plugin_warnings import healthy_host

    host = healthy_host(stderr_line)
    # The plugins are the last of a command's start-up (its modules are imported by
    # now): the collector goes back to its usual pace for the work itself.
    start_work()
    return host


def require_dir(path: Path) -> Path:
    from cce_core.services.paths import require_dir as existing_dir

    return existing_dir(path)


def chosen_dir(directory: Path | None, dir_: Path | None) -> Path | None:
    """The project directory given as the DIR argument or ``--dir`` (``--dir`` wins), checked to exist.

    None when neither was given (the caller's default, usually ``.``). A path
    that is not a directory is refused here, so no command goes on to say
    "no index at /typo/.cce/index.cce" or, worse, creates ``/typo/.cce``.
    """
    picked = dir_ if dir_ is not None else directory
    return require_dir(picked) if picked is not None else None


def metrics_log_dir(directory: Path | None, dir_: Path | None, metrics: Path | None,
                    store: Path | None) -> Path | None:
    """The project directory whose ``.cce/metrics.jsonl`` a metrics command uses (``--dir`` wins over DIR).

    Checked to exist only when the log is read from it — ``--metrics`` and
    ``--store`` name the log without it — so a typo is named, never read as
    an empty log or created.
    """
    picked = dir_ if dir_ is not None else directory
    if picked is not None and metrics is None and store is None:
        require_dir(picked)
    return picked


def store_for_read(store: Path | None, dir_: Path | None) -> Path:
    """``--store`` when given, else the store of ``--dir`` (default: the current directory, checked to exist)."""
    from cce_core.indexing.store import default_store_path

    if store is not None:
        return store
    return default_store_path(require_dir(dir_) if dir_ is not None else Path("."))


def write_report(path: Path, text: str) -> None:
    """Write a report the user asked for with ``--output`` (atomically), or one ``could not write`` error."""
    from cce_core.foundation.atomic import atomic_write
    from cce_core.foundation.errors import CceError

    try:
        atomic_write(path, text.encode("utf-8"))
    except OSError as exc:
        raise CceError(f"could not write {path}: {exc.strerror or exc}") from exc


def store_for_write(store: Path | None, directory: Path) -> Path:
    """``--store`` when given, else ``DIR/.cce/index.cce``."""
    from cce_core.indexing.store import default_store_path

    return store if store is not None else default_store_path(directory)


def open_searcher(store_path: Path, ranking: str | None = None) -> Searcher:
    """A searcher over the store at ``store_path`` with the embedder that built it (see the search service)."""
    from cce_core.services.search_project import open_searcher as searcher_for

    return searcher_for(store_path, ranking, stderr_line)

"""The installed plugins' pooled file conventions, remembered between runs.

The default ranking needs every plugin's ``cce_file_conventions`` answer to
tell a test from source, but a one-shot ``cce search`` loads only the plugin
of its store's embedder: importing every pack (and an embedder's numpy) would
cost it more than the query. The pooled answer is plain data that changes
only when a plugin changes, so it is cached in a small JSON file beside the
entry-point cache (:mod:`cce_core.plugins.entry_points`), keyed on the same
environment key plus the modification time of every plugin's module file —
an edit to an editable install's pack is a miss too.
``CCE_NO_PLUGIN_CACHE=1`` turns the cache off; a cache that cannot be read or
written is ignored. A process that has already built the full plugin host
asks that host instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from cce_core.hookspecs import ENTRY_POINT_GROUP, FileConventions

CACHE_FORMAT = "cce-file-conventions/1"


def installed_file_conventions() -> FileConventions:
    """The pooled conventions of every installed plugin (from the cache when it is current)."""
    from cce_core.plugins.host import existing_default_host

    host = existing_default_host()
    if host is not None:
        return host.file_conventions.pooled()
    if os.environ.get("CCE_NO_PLUGIN_CACHE"):
        return _from_full_host()[0]
    from cce_core.plugins.entry_points import _cache_dir, _environment_key

    key = _environment_key(ENTRY_POINT_GROUP)
    digest = hashlib.sha256(json.dumps(key, default=str).encode("utf-8")).hexdigest()[:20]
    path = _cache_dir() / f"file-conventions-{digest}.json"
    cached = _read(path, key)
    if cached is not None:
        return cached
    conventions, files = _from_full_host()
    _write(path, key, conventions, files)
    return conventions


def _from_full_host() -> tuple[FileConventions, list[str]]:
    """The pooled answer of the process-wide host, and the module files of the plugins that gave it."""
    from cce_core.plugins.host import default_host

    host = default_host()
    # Every plugin's file, not only those that answered: a plugin may start answering after an edit.
    modules = {getattr(plugin, "__name__", None) if isinstance(plugin, ModuleType) else type(plugin).__module__
               for plugin in host.pm.get_plugins()}
    files = sorted({file for module in modules
                    if isinstance(file := getattr(sys.modules.get(module or ""), "__file__", None), str)})
    return host.file_conventions.pooled(), files


def _mtime(file: str) -> int | None:
    try:
        return os.stat(file).st_mtime_ns
    except OSError:
        return None


def _read(path: Path, key: list[Any]) -> FileConventions | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != CACHE_FORMAT or data.get("key") != json.loads(json.dumps(key, default=str)):
            return None
        if any(_mtime(file) != mtime for file, mtime in data["files"]):
            return None
        return FileConventions(tests=tuple(str(p) for p in data["tests"]),
                               generated=tuple(str(p) for p in data["generated"]))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _write(path: Path, key: list[Any], conventions: FileConventions, files: list[str]) -> None:
    from cce_core.foundation.atomic import atomic_write

    payload = {"format": CACHE_FORMAT, "key": key, "files": [[file, _mtime(file)] for file in files],
               "tests": list(conventions.tests), "generated": list(conventions.generated)}
    # Like the entry-point cache: a read-only home is not an error, and a cache lost in a crash is rebuilt.
    with contextlib.suppress(OSError):
        atomic_write(path, json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8"), durable=False)

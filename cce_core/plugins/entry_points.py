"""The ``cce`` entry points of this Python environment, remembered between runs.

Asking ``importlib.metadata`` for entry points imports it (and the e-mail
parser it needs) and reads every installed distribution's metadata: 20-40 ms,
more than a one-shot ``cce search`` spends on its query. The answer only
changes when distributions are installed, upgraded or removed, and each of
those adds or deletes a ``*.dist-info`` directory, which changes the
modification time of the directory on ``sys.path`` that holds it. So the
answer is cached in a small JSON file keyed on ``sys.path`` and those
modification times; any change to the environment is a cache miss and a fresh
scan. ``CCE_NO_PLUGIN_CACHE=1`` turns the cache off; ``CCE_CACHE_DIR`` moves it
(default ``$XDG_CACHE_HOME/cce`` or ``~/.cache/cce``). A cache that cannot be
read or written is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

CACHE_FORMAT = "cce-entry-points/1"
# The grammar of an entry point's value: ``module[.sub][:attr[.attr]] [extras]``.
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


@dataclass(frozen=True)
class EntryPointRecord:
    """One advertised plugin: enough to load it and to say where it came from."""

    name: str
    value: str
    distribution: str  # "?" when the metadata does not say
    version: str  # of the distribution, "?" when unknown

    def load(self) -> Any:
        """Import the object the value points at, as ``importlib.metadata.EntryPoint.load`` would."""
        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"malformed entry point value {self.value!r}")
        target: Any = importlib.import_module(match.group("module"))
        for attr in filter(None, (match.group("attr") or "").split(".")):
            target = getattr(target, attr)
        return target


def _cache_dir() -> Path:
    configured = os.environ.get("CCE_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cce"


def _environment_key(group: str) -> list[Any]:
    """What the answer depends on: the group, the interpreter, and each sys.path directory's mtime."""
    key: list[Any] = [CACHE_FORMAT, group, sys.prefix]
    for entry in sys.path:
        try:
            mtime = os.stat(entry or ".").st_mtime_ns
        except OSError:
            mtime = None
        key.append([entry, mtime])
    return key


def _cache_file(key: list[Any]) -> Path:
    digest = hashlib.sha256(json.dumps(key[:3] + [e[0] for e in key[3:]]).encode("utf-8")).hexdigest()[:20]
    return _cache_dir() / f"entry-points-{digest}.json"


def _scan(group: str) -> list[EntryPointRecord]:
    from importlib.metadata import entry_points

    records = []
    for ep in entry_points(group=group):
        dist = ep.dist
        records.append(EntryPointRecord(ep.name, ep.value, dist.name if dist is not None else "?",
                                        (dist.version or "?") if dist is not None else "?"))
    return records


def _read_cache(path: Path, key: list[Any]) -> list[EntryPointRecord] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        return [EntryPointRecord(**r) for r in data["entry_points"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _write_cache(path: Path, key: list[Any], records: list[EntryPointRecord]) -> None:
    from cce_core.foundation.atomic import atomic_write

    payload = {"key": key, "entry_points": [asdict(r) for r in records]}
    # A read-only home is not an error (the next run scans again); nor is skipping fsync,
    # since a cache lost in a crash is simply rebuilt.
    with contextlib.suppress(OSError):
        atomic_write(path, json.dumps(payload, ensure_ascii=False).encode("utf-8"), durable=False)


def entry_points(group: str, *, refresh: bool = False) -> list[EntryPointRecord]:
    """Every entry point of ``group`` in the running environment, from the cache when it is current."""
    if os.environ.get("CCE_NO_PLUGIN_CACHE"):
        return _scan(group)
    key = _environment_key(group)
    path = _cache_file(key)
    if not refresh:
        cached = _read_cache(path, key)
        if cached is not None:
            return cached
    records = _scan(group)
    _write_cache(path, key, records)
    return records

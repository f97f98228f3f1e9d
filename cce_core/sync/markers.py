"""The install markers a pull leaves beside the store it installed.

A pull of a code index writes ``.cce/synced.json``; a pull of a knowledge
corpus writes ``.cce/knowledge/synced.json``. Both say which artifact the
local store came from and the SHA-256 of the exact bytes installed, so that
``cce sync verify --checksum-only`` can check the store offline and a later
pull can refuse to replace it by mistake. Their bytes are the family's:
compact JSON in field order, no trailing newline, ``installed_sha256`` left
out when unknown (markers written before it existed still read).

Reading comes in two strengths: a report may take a damaged marker as "no
marker", but an overwrite guard must not, or a truncated file would disarm
the guard it exists for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Self, TypeVar

from cce_core.foundation.errors import CceError

INSTALLED_FIELD = "installed_sha256"

M = TypeVar("M", bound="InstallMarker")


@dataclass(frozen=True)
class InstallMarker:
    """Base of the markers: subclasses declare their string fields, ending with ``installed_sha256``."""

    def to_bytes(self) -> bytes:
        body = {f.name: getattr(self, f.name) for f in fields(self)}
        if body.get(INSTALLED_FIELD) is None:
            body.pop(INSTALLED_FIELD, None)
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_json(cls, value: Any) -> Self | None:
        """The marker a parsed JSON value describes, or None when it is not one."""
        if not isinstance(value, dict):
            return None
        names = [f.name for f in fields(cls) if f.name != INSTALLED_FIELD]
        known = [value.get(name) for name in names]
        if not all(isinstance(v, str) for v in known):
            return None
        installed = value.get(INSTALLED_FIELD)
        return cls(*known, installed if isinstance(installed, str) else None)


def read_marker(kind: type[M], path: Path) -> M | None:
    """The marker at ``path``, or None when it is absent or unreadable (for reports)."""
    try:
        return kind.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, RecursionError):
        return None


def read_marker_strict(kind: type[M], path: Path, *, name: str, records: str,
                       shown: str | None = None) -> M | None:
    """The marker for an overwrite guard: absent is None, but a damaged one is a :class:`CceError`.

    ``name`` and ``records`` complete the message (``sync marker``, ``which
    sha the local cache is pinned to``); ``shown`` is the path as printed.
    """
    where = shown if shown is not None else str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise CceError(f"could not read the {name} {where}: {exc}") from exc
    try:
        marker = kind.from_json(json.loads(text))
    except (ValueError, RecursionError):
        marker = None
    if marker is None:
        raise CceError(f"the {name} {where} is unreadable/corrupt. It records {records} — pass --force to "
                       "overwrite it.")
    return marker

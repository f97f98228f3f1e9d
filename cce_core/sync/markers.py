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

import hashlib
import json
from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import Any, Generic, Self, TypeVar

from cce_core.foundation.errors import CceError
from cce_core.foundation.optional_file import read_utf8_or_none

INSTALLED_FIELD = "installed_sha256"

M = TypeVar("M", bound="InstallMarker")


@dataclass(frozen=True)
class InstallMarker:
    """Base of the markers: a subclass declares the string fields naming what was pulled; these two follow them.

    Keyword-only, so that in the constructor as in the bytes a subclass's own
    fields come first, then ``checksum``, then ``installed_sha256``.
    """

    checksum: str = field(kw_only=True)
    installed_sha256: str | None = field(default=None, kw_only=True)

    @classmethod
    def _fields_in_order(cls) -> list[Field[Any]]:
        # Dataclasses list a base's fields first; the family's bytes list them last.
        declared = fields(cls)
        return [f for f in declared if not f.kw_only] + [f for f in declared if f.kw_only]

    def to_bytes(self) -> bytes:
        body = {f.name: getattr(self, f.name) for f in self._fields_in_order()}
        if body.get(INSTALLED_FIELD) is None:
            body.pop(INSTALLED_FIELD, None)
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_json(cls, value: Any) -> Self | None:
        """The marker a parsed JSON value describes, or None when it is not one."""
        if not isinstance(value, dict):
            return None
        known: dict[str, str] = {}
        for f in cls._fields_in_order():
            if f.name == INSTALLED_FIELD:
                continue
            field_value = value.get(f.name)
            if not isinstance(field_value, str):
                return None
            known[f.name] = field_value
        installed = value.get(INSTALLED_FIELD)
        return cls(**known, installed_sha256=installed if isinstance(installed, str) else None)


@dataclass(frozen=True)
class MarkerFile(Generic[M]):
    """One kind of marker: its class, where it lives under a project root, and how an overwrite guard names it."""

    kind: type[M]
    relative_path: tuple[str, ...]
    name: str  # "sync marker", as messages name it
    records: str  # what it records ("which corpus is active"), for the guard's refusal

    def path(self, root: Path) -> Path:
        return Path(root).joinpath(*self.relative_path)

    def load(self, root: Path) -> M | None:
        """The marker, or None when it is absent or unreadable (for reports, where "unknown" is fine)."""
        return read_marker(self.kind, self.path(root))

    def load_strict(self, root: Path, *, shown: str | None = None) -> M | None:
        """The marker for an overwrite guard: absent is None, but a damaged one is an error, never "absent".

        Read as "never pulled", a corrupt marker would disarm the guard and let
        a pull replace the local store with another one without ``--force``.
        """
        return read_marker_strict(self.kind, self.path(root), name=self.name, records=self.records, shown=shown)


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

    def unreadable(exc: OSError | UnicodeDecodeError) -> CceError:
        return CceError(f"could not read the {name} {where}: {exc}")

    text = read_utf8_or_none(path, unreadable=unreadable, not_utf8=unreadable)
    if text is None:
        return None
    try:
        marker = kind.from_json(json.loads(text))
    except (ValueError, RecursionError):
        marker = None
    if marker is None:
        raise CceError(f"the {name} {where} is unreadable/corrupt. It records {records} — pass --force to "
                       "overwrite it.")
    return marker


def check_installed_bytes(recorded: str, read: Callable[[], bytes], *, heading: str, store: str, repull: str,
                          damage: str, caveat: str, unreadable: tuple[type[Exception], ...] = (OSError,)) -> str:
    """The SHA-256 of an installed store's bytes (``read()``), which must be ``recorded``, the marker's; the digest.

    Anything else raises the ``verify FAILED (checksum-only)`` report: its
    ``heading`` line, then what failed, how to ``repull`` and the ``caveat`` of
    a checksum-only check (``store`` names the store, ``damage`` what a
    mismatch means).
    """
    try:
        actual = hashlib.sha256(read()).hexdigest()
    except unreadable as exc:
        raise CceError(f"{heading}\n  the pulled {store} could not be read: {exc}\n"
                       f"  Re-pull it with {repull}.") from exc
    if actual != recorded:
        raise CceError(
            f"{heading}\n  expected : {recorded}\n  actual   : {actual}\n  The pulled {store} does not match the bytes "
            f"recorded at pull time — {damage}. Re-pull with {repull}.\n  (Checksum-only detects corruption, not a "
            f"malicious build — {caveat})")
    return actual

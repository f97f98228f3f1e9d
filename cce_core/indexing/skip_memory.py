"""Files a re-index found it cannot index, remembered by metadata so they are not read again.

A file the walk lists is only known to be unindexable once its bytes are
read: it is not UTF-8. A large tree can hold thousands of those (fixtures,
binaries with source-like names), and a re-index that read them all again
would spend most of its time on files it will leave out anyway. Like indexed
files, they are remembered by (size, modification time) and skipped while
that pair holds; a pair taken inside the racy window (see :mod:`.racy`) is
not remembered, since the file could still change without moving it.

The list lives beside the manifest (``.index.cce.skipped``) and is only ever
a hint: a missing, unreadable or foreign list means every file is read.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from cce_core.foundation.atomic import atomic_write
from cce_core.foundation.errors import CceError

SKIP_FORMAT = "cce-python-skipped/1"


def skip_list_path(store_path: Path) -> Path:
    """The skip list of the store whose manifest is ``store_path``."""
    return store_path.with_name(f".{store_path.name}.skipped")


def load_skip_list(store_path: Path) -> dict[str, tuple[int, int]]:
    """path → (size, mtime_ns) of the files remembered as not UTF-8 (empty when there is no usable list)."""
    try:
        body = json.loads(skip_list_path(store_path).read_bytes().decode("utf-8"))
        if not isinstance(body, dict) or body.get("format") != SKIP_FORMAT:
            return {}
        return {str(p): (int(v[0]), int(v[1])) for p, v in body["not_utf8"].items()}
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return {}


def save_skip_list(store_path: Path, not_utf8: dict[str, tuple[int, int]]) -> None:
    """Replace the list beside ``store_path`` (no file when there is nothing to remember)."""
    path = skip_list_path(store_path)
    if not not_utf8:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    body = {"format": SKIP_FORMAT, "not_utf8": {p: list(v) for p, v in sorted(not_utf8.items())}}
    try:
        atomic_write(path, (json.dumps(body, separators=(",", ":")) + "\n").encode("utf-8"), durable=False)
    except OSError as exc:
        raise CceError(f"could not write {path}: {exc.strerror or exc}") from exc

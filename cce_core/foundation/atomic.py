"""Write a file so that readers see either the old bytes or the new ones, never half.

Stores, reports, manifests and caches all go through here: the payload is
written to a temporary file in the same directory, flushed to disk and renamed
over the target, so a killed process leaves the previous file intact.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def atomic_write(path: Path, payload: bytes | Iterable[bytes | memoryview], *, durable: bool = True) -> None:
    """Replace ``path`` with ``payload`` atomically (``durable``: fsync before the rename).

    ``payload`` may be a list of byte strings, written one after another, so a
    large file never has to exist as one joined copy in memory.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(payload, bytes | bytearray | memoryview):
                fh.write(payload)
            else:
                fh.writelines(payload)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

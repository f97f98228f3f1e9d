"""Which recorded (size, modification time) pairs a re-index must not trust: the racily clean files.

Why it exists: a re-index keeps a file without opening it when its size and
modification time equal the store's record. That is unsafe for a file read
within :data:`RACY_WINDOW_NS` of its modification time: a second write in the
same clock tick would leave the very same pair behind (git calls such entries
"racily clean"). The decision is made when a file is read, and it must not
leak into the store, whose bytes would then depend on when the indexer ran
(an incremental store and a fresh build of the same tree would differ). So
the store always records the real pair, and the pairs read inside the window
are listed in a small hidden file beside it (``.<store>.racy``). The next run opens
and hashes those files instead of trusting their metadata; once a file is
read outside its window it is dropped from the list, and an empty list is
not kept at all. A list that cannot be read distrusts every file.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from cce_core.foundation.atomic import atomic_write
from cce_core.foundation.errors import CceError

# A file modified this recently when it is read may still receive another write in the same tick.
RACY_WINDOW_NS = 2_000_000_000
RACY_FORMAT = "cce.racy/v1"


def is_racy(mtime_ns: int, now_ns: int) -> bool:
    """Whether a file modified at ``mtime_ns`` and read at (or after) ``now_ns`` is inside the window."""
    return now_ns - mtime_ns <= RACY_WINDOW_NS


def racy_list_path(store_path: Path) -> Path:
    """The racy list of the store whose manifest is ``store_path``."""
    # Hidden, so a glob for the store (``index.*``) never picks it up.
    return store_path.with_name(f".{store_path.name}.racy")


@dataclass
class RacyList:
    """The (path → (size, mtime_ns)) pairs recorded inside the window, or ``distrust_all`` when unknown."""

    pairs: dict[str, tuple[int, int]] = field(default_factory=dict)
    distrust_all: bool = False

    def distrusts(self, path: str, size: int, mtime_ns: int) -> bool:
        return self.distrust_all or self.pairs.get(path) == (size, mtime_ns)


def load_racy_list(store_path: Path) -> RacyList:
    """The list beside ``store_path``: empty when there is none, distrusting everything when unreadable."""
    path = racy_list_path(store_path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return RacyList()
    except OSError:
        return RacyList(distrust_all=True)
    try:
        body = json.loads(raw.decode("utf-8"))
        if body.get("format") != RACY_FORMAT:
            raise ValueError("unknown format")
        pairs = {str(p): (int(size), int(mtime)) for p, (size, mtime) in body["files"].items()}
    except (ValueError, TypeError, KeyError, AttributeError, UnicodeDecodeError):
        return RacyList(distrust_all=True)
    return RacyList(pairs)


def save_racy_list(store_path: Path, pairs: dict[str, tuple[int, int]]) -> None:
    """Replace the list beside ``store_path`` with ``pairs`` (no file at all when there are none).

    Written before the manifest that records those pairs: a run killed in
    between leaves a list that is at worst too long, which costs a re-read.
    """
    path = racy_list_path(store_path)
    try:
        if not pairs:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            return
        body = {"format": RACY_FORMAT, "files": {p: list(pairs[p]) for p in sorted(pairs)}}
        atomic_write(path, (json.dumps(body, sort_keys=True) + "\n").encode("utf-8"))
    except OSError as exc:
        raise CceError(f"could not write {path}: {exc.strerror or exc}") from exc

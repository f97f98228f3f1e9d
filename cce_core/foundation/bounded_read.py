"""Read a small file a user names (a manifest, a token, a question suite) without trusting its size.

Such files are a few lines long, but the path is user input: reading one
whole could pull gigabytes into memory. :func:`read_small_text` reads at most
one byte past the limit, so an oversized file costs nothing, and turns every
failure — missing, unreadable, too large, not UTF-8 — into one
:class:`~cce_core.foundation.errors.CceError` line that names the file.
"""

from __future__ import annotations

from pathlib import Path

from cce_core.foundation.errors import CceError


def read_small_text(path: Path, what: str, limit: int, limit_label: str) -> tuple[bytes, str]:
    """``(raw bytes, text)`` of ``path``, at most ``limit`` bytes; ``what`` names it in errors (``feed manifest``)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise CceError(f"could not read {what} {path}: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise CceError(f"{what} {path} is larger than {limit_label}")
    try:
        return raw, raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CceError(f"could not read {what} {path}: stream did not contain valid UTF-8") from None

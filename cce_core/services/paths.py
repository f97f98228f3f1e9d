"""The one check every use case makes on a directory the user named: it exists and is a directory."""

from __future__ import annotations

from pathlib import Path

from cce_core.foundation.errors import CceError


def require_dir(path: Path) -> Path:
    """``path`` itself, or one ``error:`` line saying it is missing or not a directory."""
    if not path.exists():
        raise CceError(f"no such directory: {path}")
    if not path.is_dir():
        raise CceError(f"not a directory: {path}")
    return path

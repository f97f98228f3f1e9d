"""Read a file the engine owns that may not exist yet: its bytes (or UTF-8 text), or None when it is absent.

A config file, a fingerprint, a pointer or a file ``cce init`` is about to
rewrite: absence is normal and means "none yet", while a file that exists but
cannot be read (permissions, a directory in its place) or is not text is a
problem the user must hear about, in the words of the feature that reads it.
The two outcomes used to be told apart in a try block at every such read;
here they are told apart once, and the caller only says how to word a failure.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cce_core.foundation.errors import CceError

Unreadable = Callable[[OSError], Exception]
NotUtf8 = Callable[[UnicodeDecodeError], Exception]


def read_bytes_or_none(path: Path, unreadable: Unreadable | None = None) -> bytes | None:
    """The bytes of ``path``; None when there is no such file.

    Any other failure to read raises ``unreadable(exc)`` (default: a
    :class:`CceError` ``could not read PATH: REASON``).
    """
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise (unreadable or _could_not_read(path))(exc) from exc


def read_utf8_or_none(path: Path, *, unreadable: Unreadable | None = None,
                      not_utf8: NotUtf8 | None = None) -> str | None:
    """The UTF-8 text of ``path``; None when there is no such file.

    A file that cannot be read raises as :func:`read_bytes_or_none` does; one
    that is not UTF-8 raises ``not_utf8(exc)`` (default: a :class:`CceError`
    ``PATH is not UTF-8 text``).
    """
    raw = read_bytes_or_none(path, unreadable)
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise (not_utf8 or (lambda _exc: CceError(f"{path} is not UTF-8 text")))(exc) from exc


def _could_not_read(path: Path) -> Unreadable:
    return lambda exc: CceError(f"could not read {path}: {exc.strerror or exc}")

"""The one exception type the CLI turns into an ``error: ...`` line.

Library code raises :class:`CceError` for anything a user can fix (bad input,
missing store, unreachable embedder); the adapters print its message and exit 1.
"""


class CceError(Exception):
    """A user-facing failure with a message fit to print after ``error:``."""

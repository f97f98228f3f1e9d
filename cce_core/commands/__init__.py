"""Extra CLI commands, one module each, registered on the main typer app.

Every module here defines ``register(app)``; :func:`register_all` finds them
with pkgutil, so adding a command never means editing a shared list. Modules
keep their heavy imports inside the command functions so ``cce`` starts fast.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Any


def register_all(app: Any) -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


def write_utf8(text: str) -> None:
    """Print ``text`` as UTF-8 whatever the locale (reports contain `—` and `·`)."""
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        sys.stdout.write(text)
    else:
        out.write(text.encode("utf-8", "replace"))
    sys.stdout.flush()

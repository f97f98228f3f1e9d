"""Every ``cce`` command, one module each, named after the command it adds.

A module here defines ``register(app)``, which adds its command (or command
group) to the typer app. Adding a command means adding a module: nothing else
lists them. ``cce NAME`` imports only ``NAME``'s module; help imports them all.
Modules keep their heavy imports inside the command functions so ``cce``
starts fast.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Any


def command_names() -> list[str]:
    """The command modules of this package, in name order."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__))


def register_one(app: Any, name: str) -> bool:
    """Register command ``name`` alone; False when no module of that name exists."""
    if not name.isidentifier() or name.startswith("_"):
        return False
    try:
        module = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise  # the command exists but something it imports is missing
        return False
    module.register(app)
    return True


def register_all(app: Any) -> None:
    for name in command_names():
        importlib.import_module(f"{__name__}.{name}").register(app)


def write_utf8(text: str) -> None:
    """Print ``text`` as UTF-8 whatever the locale (reports contain `—` and `·`)."""
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        sys.stdout.write(text)
    else:
        out.write(text.encode("utf-8", "replace"))
    sys.stdout.flush()

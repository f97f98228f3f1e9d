"""The command ``.mcp.json`` names to start ``cce mcp``: plain ``cce``, or this cce's absolute path.

Why it exists: the agent (Claude Code) starts the server itself, with the
PATH it was launched with, which is not the shell ``cce init`` ran in. A
``cce`` installed in a virtualenv is on the PATH only while that virtualenv
is activated, so ``"command": "cce"`` written from one never starts for the
agent. The rule: look ``cce`` up on the PATH an agent would have — the
current one without virtualenv directories (the active ``$VIRTUAL_ENV``, and
any directory whose parent holds a ``pyvenv.cfg``). When that finds this very
executable, ``cce`` is written, as the other engines write it, so a committed
``.mcp.json`` stays portable; otherwise the absolute path of the running
``cce`` is written and one ``note:`` line says why. ``CCE_MCP_COMMAND``
overrides both (say ``cce`` for a team file, or a wrapper script).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PLAIN_COMMAND = "cce"
OVERRIDE_ENV = "CCE_MCP_COMMAND"
_NAMES = ("cce", "cce.exe")


@dataclass(frozen=True)
class ServerCommand:
    """What ``.mcp.json`` runs, and the note explaining a command other than plain ``cce`` (or None)."""

    command: str
    note: str | None = None


def running_cce(argv0: str | None = None, executable: str | None = None) -> str | None:
    """The absolute path of the ``cce`` executable running now, or None when it cannot be told.

    The console script is ``argv[0]``; under ``python -m`` (or in a test) the
    script beside the interpreter is taken instead.
    """
    argv0 = sys.argv[0] if argv0 is None else argv0
    if argv0 and Path(argv0).name in _NAMES and os.path.isfile(argv0):
        return os.path.abspath(argv0)
    for name in _NAMES:
        beside = Path(executable or sys.executable).with_name(name)
        if beside.is_file():
            return str(beside)
    return None


def _in_virtualenv(entry: str, active: str | None) -> bool:
    path = Path(entry)
    if active and path.parent == Path(active):
        return True
    return (path.parent / "pyvenv.cfg").is_file()


def agent_search_path(environ: Mapping[str, str]) -> str:
    """The PATH an agent started outside this shell would search: the current one without virtualenv bins."""
    entries = environ.get("PATH", os.defpath).split(os.pathsep)
    active = environ.get("VIRTUAL_ENV") or None
    kept = [e for e in entries if e and not _in_virtualenv(e, active)]
    return os.pathsep.join(kept)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def choose_server_command(environ: Mapping[str, str], running: str | None) -> ServerCommand:
    """Plain ``cce`` when an agent's PATH finds ``running``, else ``running`` itself (see the module docstring)."""
    override = (environ.get(OVERRIDE_ENV) or "").strip()
    if override:
        return ServerCommand(override)
    if running is None:
        return ServerCommand(PLAIN_COMMAND)  # nothing better to offer
    found = shutil.which(PLAIN_COMMAND, path=agent_search_path(environ))
    if found is not None and _same_file(found, running):
        return ServerCommand(PLAIN_COMMAND)
    elsewhere = f"finds another one ({found})" if found else "finds none"
    return ServerCommand(running, f"note: .mcp.json starts the server as {running}: the PATH an agent starts with "
                                  f"{elsewhere} (set {OVERRIDE_ENV}=cce to write plain `cce`)")

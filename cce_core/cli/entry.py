"""The ``cce`` console script's entry point: Ctrl-C during start-up is the same one line as later.

The command line's own module imports click, typer and the engine, which
takes a good part of a second on a slow machine; an interrupt landing in
those imports would print a traceback, since no command has started to turn
it into ``error: interrupted`` (exit status 130, as :mod:`cce_core.cli.app`
does for a running command).
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from cce_core.cli.app import main as run
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        sys.exit(130)
    run()

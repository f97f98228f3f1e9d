"""The ``cce`` console script's entry point: Ctrl-C during start-up is the same one line as later.

The command line's own module imports click, typer and parts of the engine
(a tenth of a second here, more on a slow machine). An interrupt landing in
those imports would print a traceback, since no command has started yet to
turn it into ``error: interrupted`` and exit status 130, as
:mod:`cce_core.cli.app` does for a running command.
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

"""Keep Python's cyclic garbage collector out of a ``cce`` process's start-up and exit.

Why this exists: a one-shot command creates tens of thousands of long-lived
objects while it imports its modules and loads the plugins (classes,
functions, the packs' tables), and none of them ever becomes garbage. The
collector still walks them over and over as they pile up, and once more,
twice, while the interpreter shuts down: together about 30 ms of CPU in a
``cce index`` of a one-file tree that takes 190 ms in all.

So :func:`cce_core.cli.app.main` raises the first-generation threshold while
the command starts up (:func:`defer_collection`): the collector still runs,
just not every 700 allocations, so a command that never says it is ready (a
server, say) is collected as usual, only less often. A command whose start-up
is over (``cce index``, with its modules and plugins loaded) calls
:func:`start_work`: what exists then moves to the collector's permanent
generation (``gc.freeze``), which later collections skip, and the thresholds
go back to what they were, so the work itself is collected exactly as
before, without rescanning the start-up objects. At exit
(:func:`settle_before_exit`) everything left is frozen too, so the
interpreter's final collections have nothing to walk: nothing in the engine
relies on a collection at exit (files are closed and locks released
explicitly), which Python does not promise anyway.
"""

from __future__ import annotations

import gc

STARTUP_THRESHOLD = 100_000
"""First-generation threshold during start-up: well above what any command's start-up allocates (~50,000)."""

_saved_thresholds: tuple[int, int, int] | None = None


def defer_collection() -> None:
    """Collect rarely until :func:`start_work` (a no-op when already deferred)."""
    global _saved_thresholds
    if _saved_thresholds is not None:
        return
    current = gc.get_threshold()
    _saved_thresholds = (current[0], current[1], current[2])
    if current[0] != 0:  # 0 means the user switched automatic collection off: leave that alone
        gc.set_threshold(max(current[0], STARTUP_THRESHOLD), current[1], current[2])


def start_work() -> None:
    """Start-up is over: freeze what exists and collect as usual from here on.

    Only after :func:`defer_collection`; otherwise (the library called from
    another program) the collector is not touched.
    """
    global _saved_thresholds
    if _saved_thresholds is None:
        return
    gc.freeze()
    gc.set_threshold(*_saved_thresholds)
    _saved_thresholds = None


def settle_before_exit() -> None:
    """The process is about to end: freeze everything, so the interpreter's last collections walk nothing."""
    gc.freeze()

"""A forked helper process that never outlives the process that forked it, and ends without exit work.

Why this exists: the indexer's chunking workers and the Sync pull's BM25
helper are forked children doing a part of their parent's job. If the parent
is killed (kill -9 included), nobody wants their result, and a child left
running would hold memory and CPU, or block for ever writing to a pipe or
socket nobody reads. Both call :func:`die_with_parent` first thing, and
:func:`end_child` last. They are forked inside :func:`children_leave_ctrl_c_to_parent`:
a terminal's Ctrl-C reaches the whole process group, and only the parent
should answer it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

# prctl(2): deliver a signal to this process when the thread that forked it dies.
_PR_SET_PDEATHSIG = 1
# Where the kernel cannot be asked, how often a watching thread checks the parent is still there.
_WATCH_SECONDS = 0.2


def die_with_parent(parent: int) -> None:
    """In a forked child: end as soon as ``parent`` (the pid that forked it) does, and at once if it has.

    On Linux the kernel is asked for SIGKILL on the parent's death
    (``prctl(PR_SET_PDEATHSIG)``); elsewhere, or if that call fails, a daemon
    thread polls the parent id. The check after the request catches a parent
    that died before it took effect.
    """
    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError, TypeError):
            armed = False
    if os.getppid() != parent:
        os._exit(1)
    if not armed:
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(_WATCH_SECONDS)
            os._exit(1)

        threading.Thread(target=watch, name="cce-parent-watch", daemon=True).start()


def end_child() -> NoReturn:
    """In a forked child whose result has gone over its channel: end now, without the interpreter's exit work.

    A child forked from a process with other threads (an MCP server, a
    watching index) inherits every lock as it was at the fork, and a lock
    another thread held then stays held in the child for ever: the standard
    streams' buffer locks among them, taken by any thread writing output.
    ``multiprocessing`` ends a child by flushing stdout and stderr, which would
    then wait for ever (the parent kills such a child after a timeout). The
    child writes nothing there, so nothing is lost by skipping that work.
    Its exit status is 0 whatever happened: the parent learns of a failure
    from the channel, never from the status.
    """
    os._exit(0)


@contextmanager
def children_leave_ctrl_c_to_parent() -> Iterator[None]:
    """Fork inside this: the children are born with SIGINT blocked, so Ctrl-C is the parent's alone.

    A terminal's Ctrl-C goes to every process of the foreground group. A
    child that took it would print a ``KeyboardInterrupt`` traceback of its
    own (from ``multiprocessing``'s start-up, when it lands before the
    child's work began) or report itself failed before the parent saw the
    interrupt. Blocked, the signal stays pending in the child, which the
    parent kills when the interrupt unwinds it (a signal mask is inherited
    at fork). The calling thread's own SIGINT is only held meanwhile: it is
    delivered, as a ``KeyboardInterrupt``, when the block is lifted.
    """
    if not hasattr(signal, "pthread_sigmask"):  # no fork there either
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)

"""One writer at a time per store: an advisory lock beside it that the kernel drops when its holder dies.

A store is a manifest naming segment files, and every writer — ``cce index``
(with its compaction and ``--watch`` passes), the install step of
``cce sync pull``, ``cce knowledge index`` for the knowledge store — reads the
current manifest, writes new files, switches the manifest and then deletes
what it no longer names. Two writers interleaving lose work or break the
store: one deletes the segment the other has just written (its manifest then
names a missing file), or a temporary the other is about to rename ("could
not write the store …: No such file or directory").

So writers take :func:`store_lock` first: an exclusive ``flock`` on
``<store>.lock`` (``.cce/index.cce.lock``). The second writer waits — saying
``waiting for another `cce index` on …`` once it has waited a moment — and,
when ``CCE_LOCK_TIMEOUT`` (seconds) is set, gives up after that long with
``another `cce index` is running on …``. Readers never lock: a reader that
finds a segment gone reads the manifest again.

Why ``flock`` and not a lock file that exists or not: the lock belongs to the
open file, so a holder killed with ``kill -9`` (or by a crash, or the OOM
killer) releases it with its last descriptor — there is no stale lock to
detect, guess about or break. The lock file itself is never deleted (deleting
it would let two writers lock two different files). Children forked while the
lock is held (chunking workers, the pull's BM25 decoder) close their copy of
the descriptor at once, so an orphaned child can never keep a dead writer's
lock.

The lock is re-entrant within a process (a compaction inside an index run, an
MCP ``--watch`` pass) and exclusive between threads.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ParamSpec, TypeVar

from cce_core.foundation.errors import CceError

LOCK_SUFFIX = ".lock"
TIMEOUT_ENV = "CCE_LOCK_TIMEOUT"
# A writer that had to wait this long says so (once): a short wait is normal and silent.
WAIT_NOTICE_SECONDS = 1.0
_POLL_FIRST = 0.005
_POLL_MAX = 0.1


P = ParamSpec("P")
R = TypeVar("R")


class StoreBusy(CceError):
    """Another process holds the store's lock for longer than the caller would wait."""


def lock_path(store_path: Path) -> Path:
    """``<store>.lock`` beside the store (``.cce/index.cce.lock``)."""
    return store_path.with_name(store_path.name + LOCK_SUFFIX)


def configured_timeout() -> float | None:
    """``CCE_LOCK_TIMEOUT`` in seconds (None: wait as long as it takes)."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value >= 0 or value == float("inf"):
        raise CceError(f"{TIMEOUT_ENV}={raw!r} is not a number of seconds (0 or more)")
    return value


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


# --------------------------------------------------------------------------- who holds what, in this process


class _Held:
    """This process's hold on one lock file: the descriptor, how deep, and the thread lock guarding it."""

    def __init__(self) -> None:
        self.thread_lock = threading.RLock()
        self.fd: int | None = None
        self.depth = 0


_registry_guard = threading.Lock()
_registry: dict[str, _Held] = {}


def _held_for(path: Path) -> _Held:
    key = os.path.join(os.path.realpath(path.parent), path.name)
    with _registry_guard:
        held = _registry.get(key)
        if held is None:
            held = _registry[key] = _Held()
        return held


def _forget_in_child() -> None:
    """After a fork: the child drops its copies of the held descriptors (the parent keeps the locks)."""
    global _registry_guard
    for held in _registry.values():
        if held.fd is not None:
            with contextlib.suppress(OSError):
                os.close(held.fd)  # closing a duplicate never unlocks: only the last close or LOCK_UN does
    _registry.clear()
    _registry_guard = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


# --------------------------------------------------------------------------- the file lock


def try_exclusive_lock(fd: int) -> bool:
    """Take an exclusive advisory lock on the open file ``fd`` without waiting; False when another holds it."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(path: Path) -> tuple[str, str]:
    """(what the holder is, `` (pid N)`` or ""), as it wrote them; best effort."""
    try:
        with open(path, "rb") as f:
            first = f.read(256).decode("utf-8", "replace").split("\n", 1)[0]
    except OSError:
        first = ""
    pid, _, purpose = first.partition(" ")
    if not pid.isdigit() or not purpose.strip():
        return "cce index", ""
    return purpose.strip(), f" (pid {pid})"


def _record_holder(fd: int, purpose: str) -> None:
    """Write ``<pid> <purpose>`` into the lock file, for the message a waiting writer prints."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {purpose}\n".encode(), 0)
    except OSError:
        pass  # only a message depends on it


def _wait_for(fd: int, path: Path, where: str, timeout: float | None, notify: Callable[[str], None]) -> None:
    started = time.monotonic()
    pause = _POLL_FIRST
    told = False
    while not try_exclusive_lock(fd):
        waited = time.monotonic() - started
        if timeout is not None and waited >= timeout:
            purpose, pid = _holder(path)
            raise StoreBusy(f"another `{purpose}` is running on {where}{pid} — wait for it to finish and run this "
                            f"again (gave up after {timeout:g} s; {TIMEOUT_ENV} sets how long to wait)")
        if not told and waited >= WAIT_NOTICE_SECONDS:
            purpose, pid = _holder(path)
            notify(f"waiting for another `{purpose}` on {where}{pid} to finish …")
            told = True
        nap = pause if timeout is None else max(0.0, min(pause, timeout - waited))
        time.sleep(nap)
        pause = min(pause * 2, _POLL_MAX)


@contextmanager
def store_lock(store_path: Path, *, purpose: str = "cce index", timeout: float | None = None,
               notify: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the exclusive writer lock of ``store_path`` for the ``with`` block.

    ``purpose`` names this writer to the others (``cce index``,
    ``cce sync pull``); ``timeout`` (default: ``CCE_LOCK_TIMEOUT``, else no
    limit) bounds the wait, after which :class:`StoreBusy` is raised;
    ``notify`` receives the one "waiting for …" line (default: stderr).
    """
    store_path = Path(store_path)
    path = lock_path(store_path)
    wait = configured_timeout() if timeout is None else timeout
    say = notify if notify is not None else _say
    where = str(store_path)
    held = _held_for(path)
    if not held.thread_lock.acquire(blocking=False):
        # Another thread of this process writes this store: wait for it like for another process.
        started = time.monotonic()
        told = False
        while not held.thread_lock.acquire(timeout=_POLL_MAX):
            waited = time.monotonic() - started
            if wait is not None and waited >= wait:
                raise StoreBusy(f"another `{purpose}` is running on {where} in this process — wait for it to finish")
            if not told and waited >= WAIT_NOTICE_SECONDS:
                say(f"waiting for another `{purpose}` on {where} to finish …")
                told = True
    try:
        if held.depth:
            held.depth += 1  # re-entered by the thread that holds it
            try:
                yield
            finally:
                held.depth -= 1
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise CceError(f"could not lock the store {where}: cannot open {path}: {exc.strerror or exc}") from exc
        try:
            _wait_for(fd, path, where, wait, say)
        except BaseException:
            os.close(fd)
            raise
        _record_holder(fd, purpose)
        held.fd, held.depth = fd, 1
        try:
            yield
        finally:
            held.fd, held.depth = None, 0
            os.close(fd)  # the last descriptor: the kernel drops the lock
    finally:
        held.thread_lock.release()


def holds_store_lock(purpose: str, store_arg: str = "store_path") -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a store writer so that each call runs under :func:`store_lock` of its ``store_arg`` argument."""

    def decorate(writer: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(writer)

        @functools.wraps(writer)
        def locked(*args: P.args, **kwargs: P.kwargs) -> R:
            store = signature.bind_partial(*args, **kwargs).arguments[store_arg]
            with store_lock(Path(store), purpose=purpose):
                return writer(*args, **kwargs)

        return locked

    return decorate

"""Keep a store fresh while files are saved: the watch loop behind ``cce index --watch`` and ``cce mcp --watch``.

An agent edits a file and searches again a moment later; it should find what
it just wrote. This module watches a directory tree with ``watchdog`` (a
recursive observer: inotify on Linux, FSEvents on macOS, ReadDirectoryChangesW
on Windows), keeps the paths that changed, and calls a re-index function once
a burst of changes is over. What a re-index does is the caller's business (the
CLI and the MCP server each pass their own), so this module builds no plugin
host and writes no store.

The rules, in short:

* **Filter.** Only writes, creations, deletions and moves count (never opens
  or reads: the re-index reads every changed file and must not wake itself
  up). Paths the walker never indexes are ignored: anything under a
  version-control, tool or dot-directory (``.git``, ``.cce``,
  ``node_modules``, ...; :data:`~cce_core.indexing.walker.PRUNED_DIRS`),
  ``*.jsonl`` logs, and the store's own files (with its segment directory).
  Other ignored files (a ``.gitignore`` match) may still trigger a pass that
  finds nothing to do.
* **Debounce.** A pass starts once the tree has been quiet for
  :data:`QUIET_SECONDS`, or, in a stream of changes that never pauses that
  long, once the first change is :data:`MAX_DELAY_SECONDS` old and the stream
  has paused for :data:`SETTLE_SECONDS`; :data:`HARD_DELAY_SECONDS` bounds
  even a stream that never pauses at all.
* **Bursts.** While git holds ``.git/index.lock`` (a checkout, merge, rebase
  or reset is rewriting the work tree) no pass starts, for at most
  :data:`GIT_BUSY_SECONDS`: a branch switch of any size becomes one pass.
* **Death.** An observer that cannot start (the inotify watch limit, an
  unreadable directory) or whose threads end on their own (an error, the
  watched directory removed) raises :class:`WatcherStopped` with the reason;
  the caller decides whether that ends the process.
* **Ctrl-C.** Waiting on the main thread goes through the signal wakeup fd,
  so a SIGINT that CPython 3.11 fails to deliver to a threaded program's main
  thread still ends the wait (as a ``KeyboardInterrupt``).

``watchdog`` is imported only when a watcher starts, so no other command pays for it.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from cce_core.foundation.errors import CceError
from cce_core.indexing.fingerprint import FINGERPRINT_FILE
from cce_core.indexing.walker import PRUNED_DIRS, SKIPPED_EXTENSION

QUIET_SECONDS = 0.25
MAX_DELAY_SECONDS = 1.0
SETTLE_SECONDS = 0.05
HARD_DELAY_SECONDS = 5.0
GIT_BUSY_SECONDS = 30.0
LIVENESS_SECONDS = 0.5  # how often an idle loop checks that the observer still runs
HOOK_GRACE_SECONDS = 0.5  # how long a dead thread's reason may take to arrive through the except hook
FRESH_WAIT_SECONDS = 10.0  # how long a reader waits for a pending pass before serving the store as it is

R = TypeVar("R")


class WatcherStopped(CceError):
    """The file watcher could not start or ended on its own; the message says why."""


@dataclass(frozen=True)
class PassReport(Generic[R]):
    """One re-index pass: its number (from 1), the distinct paths that changed, its duration and result."""

    number: int
    changed: int
    seconds: float
    result: R
    catch_up: bool = False  # the pass ``run(catch_up=True)`` makes before any change was seen


class ObserverLike(Protocol):
    """The part of a ``watchdog`` observer the loop uses (tests pass a fake)."""

    def schedule(self, event_handler: Any, path: str, *, recursive: bool = ..., event_filter: Any = ...) -> Any: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def join(self, timeout: float | None = ...) -> None: ...
    def is_alive(self) -> bool: ...

    @property
    def emitters(self) -> Any: ...


def ignored_path(rel: str, is_dir: bool) -> bool:
    """Whether a change at ``rel`` (relative to the root, ``/``-separated) can never matter to the walker.

    True under a pruned or dot-directory, for such a directory itself, for a
    ``*.jsonl`` log, and for paths outside the root.
    """
    if not rel or rel == "." or rel.startswith("../") or rel == "..":
        return True
    parts = rel.split("/")
    for directory in parts[:-1]:
        if directory in PRUNED_DIRS or directory.startswith("."):
            return True
    name = parts[-1]
    if is_dir:
        return name in PRUNED_DIRS or name.startswith(".")
    return name.endswith("." + SKIPPED_EXTENSION)


class ChangeBatcher:
    """Thread-safe set of changed paths plus the debounce rule that says when a burst is over."""

    def __init__(self, *, quiet: float = QUIET_SECONDS, max_delay: float = MAX_DELAY_SECONDS,
                 settle: float = SETTLE_SECONDS, hard_delay: float = HARD_DELAY_SECONDS,
                 busy_limit: float = GIT_BUSY_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet = quiet
        self.max_delay = max_delay
        self.settle = settle
        self.hard_delay = hard_delay
        self.busy_limit = busy_limit
        self.clock = clock
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._first: float | None = None
        self._last: float | None = None

    def add(self, rel: str) -> bool:
        """Record one changed path; True when it opened a new burst."""
        now = self.clock()
        with self._lock:
            opened = self._first is None
            if opened:
                self._first = now
            self._last = now
            self._paths.add(rel)
            return opened

    @property
    def pending(self) -> bool:
        with self._lock:
            return self._first is not None

    def wait_hint(self, busy: bool) -> float | None:
        """Seconds until the burst may be due (None when nothing is pending)."""
        now = self.clock()
        with self._lock:
            if self._first is None or self._last is None:
                return None
            if busy:
                return max(0.0, min(0.05, self._first + self.busy_limit - now))
            quiet_at = self._last + self.quiet
            capped_at = max(self._first + self.max_delay, self._last + self.settle)
            return max(0.0, min(quiet_at, capped_at, self._first + self.hard_delay) - now)

    def due(self, busy: bool = False) -> bool:
        """Whether the burst is over: quiet long enough, or old enough and settling, and git not busy."""
        now = self.clock()
        with self._lock:
            if self._first is None or self._last is None:
                return False
            age, quiet = now - self._first, now - self._last
            if busy:
                return age >= self.busy_limit
            return quiet >= self.quiet or (age >= self.max_delay and quiet >= self.settle) or age >= self.hard_delay

    def take(self) -> frozenset[str]:
        """The paths of the burst, leaving the batcher empty for the next one."""
        with self._lock:
            paths = frozenset(self._paths)
            self._paths.clear()
            self._first = self._last = None
            return paths


def git_busy(root: Path) -> bool:
    """Whether a git command is rewriting the work tree at ``root`` (it holds ``.git/index.lock``)."""
    return (root / ".git" / "index.lock").exists()


class _Waiter:
    """Sleeps until a change arrives, a timeout, or (on the main thread) a SIGINT.

    A byte on the notify socket wakes the wait when a burst opens. On the main
    thread the signal wakeup fd is read too: CPython 3.11 can leave a SIGINT's
    Python handler unrun in a threaded program, but the C handler always
    writes the signal number there.
    """

    def __init__(self) -> None:
        self._notify_r, self._notify_w = socket.socketpair()
        for s in (self._notify_r, self._notify_w):
            s.setblocking(False)
        self._signal_r: socket.socket | None = None
        self._signal_w: socket.socket | None = None
        self._previous_fd: int | None = None

    def arm_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "set_wakeup_fd"):
            return
        self._signal_r, self._signal_w = socket.socketpair()
        self._signal_r.setblocking(False)
        self._signal_w.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._signal_w.fileno(), warn_on_full_buffer=False)

    def notify(self) -> None:
        with contextlib.suppress(OSError):  # a full buffer already means "wake up"; closed: nobody waits
            self._notify_w.send(b"\0")

    def wait(self, timeout: float) -> None:
        readers = [self._notify_r] + ([self._signal_r] if self._signal_r is not None else [])
        try:
            ready, _, _ = select.select(readers, [], [], max(0.0, timeout))
        except (OSError, ValueError):  # closed by another thread: the loop is stopping
            return
        if self._notify_r in ready:
            _drain(self._notify_r)
        if self._signal_r is not None and self._signal_r in ready:
            received = _drain(self._signal_r)
            if signal.SIGINT in received:
                raise KeyboardInterrupt

    def close(self) -> None:
        if self._signal_w is not None:
            signal.set_wakeup_fd(self._previous_fd if self._previous_fd is not None else -1)
        for s in (self._notify_r, self._notify_w, self._signal_r, self._signal_w):
            if s is not None:
                s.close()


def _drain(sock: socket.socket) -> bytes:
    out = b""
    while True:
        try:
            chunk = sock.recv(256)
        except (BlockingIOError, InterruptedError):
            return out
        if not chunk:
            return out
        out += chunk


def _default_observer() -> ObserverLike:
    from watchdog.observers import Observer

    return Observer()  # type: ignore[no-any-return]


class DirectoryWatcher(Generic[R]):
    """Watch ``root`` and call ``reindex(changed_paths)`` once per burst of changes.

    ``start()`` starts the observer (raising :class:`WatcherStopped` when it
    cannot); ``run()`` then loops on the calling thread until ``stop()`` or a
    dead observer. Each finished pass goes to ``on_pass``; a pass that raises
    goes to ``on_error`` and the loop keeps watching (the next change retries).
    """

    def __init__(self, root: Path, reindex: Callable[[frozenset[str]], R], *,
                 on_pass: Callable[[PassReport[R]], None] | None = None,
                 on_error: Callable[[BaseException], None] | None = None,
                 store_path: Path | None = None,
                 batcher: ChangeBatcher | None = None,
                 observer_factory: Callable[[], ObserverLike] | None = None) -> None:
        self.root = Path(root).resolve()
        self.reindex = reindex
        self.on_pass = on_pass
        self.on_error = on_error
        self.batcher = batcher or ChangeBatcher()
        self.passes = 0
        self._store_dir, self._store_name = _store_side(self.root, store_path)
        self._observer_factory = observer_factory or _default_observer
        self._root_id: tuple[int, int] | None = None
        self._observer: ObserverLike | None = None
        self._stop = threading.Event()
        self._idle = threading.Condition()
        self._running_pass = False
        self._failure: BaseException | None = None
        self._previous_hook: Callable[[threading.ExceptHookArgs], Any] | None = None
        self._waiter = _Waiter()

    # -- events ------------------------------------------------------------

    def note(self, path: str | bytes, is_dir: bool) -> None:
        """Take one changed path from the observer (absolute), keeping it when it can matter."""
        text = os.fsdecode(path)
        try:
            rel = os.path.relpath(text, self.root).replace(os.sep, "/")
        except ValueError:  # another drive (Windows)
            return
        if ignored_path(rel, is_dir) or self._is_store_file(text):
            return
        if self.batcher.add(rel):
            self._waiter.notify()

    def _is_store_file(self, path: str) -> bool:
        if self._store_dir is None:
            return False
        prefix = self._store_dir + os.sep
        if not path.startswith(prefix):
            return False
        first = path[len(prefix):].split(os.sep, 1)[0]  # the store, its temporaries, fingerprint, segment dir
        return self._store_name in first or FINGERPRINT_FILE in first

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> None:
        """Start the recursive observer; :class:`WatcherStopped` when it cannot (e.g. the inotify limit)."""
        self._root_id = _identity(self.root)
        if self._root_id is None:
            raise WatcherStopped(f"the file watcher stopped: no such directory: {self.root}")
        self._previous_hook = threading.excepthook
        threading.excepthook = self._thread_died
        try:
            observer = self._observer = self._observer_factory()
            observer.schedule(_handler(self), str(self.root), recursive=True, event_filter=_event_filter())
            observer.start()
        except Exception as exc:  # OSError: inotify watch or instance limit, permissions
            self._observer = None
            self._restore_hook()
            raise WatcherStopped(f"the file watcher stopped: {_describe(exc)}") from exc

    def _thread_died(self, args: threading.ExceptHookArgs) -> None:
        """An observer or emitter thread raised: keep the reason for one clear line instead of a traceback."""
        if self._observer is not None and args.thread is not None and _owns(self._observer, args.thread):
            self._failure = args.exc_value if args.exc_value is not None else RuntimeError("thread ended")
            self._waiter.notify()
            return
        if self._previous_hook is not None:
            self._previous_hook(args)

    def _restore_hook(self) -> None:
        if self._previous_hook is not None and threading.excepthook == self._thread_died:
            threading.excepthook = self._previous_hook
        self._previous_hook = None

    def problem(self) -> str | None:
        """Why the observer is no longer watching, or None while it is."""
        observer = self._observer
        if observer is None:
            return "the watcher was not started"
        if self._failure is not None:
            return _describe(self._failure)
        if _identity(self.root) != self._root_id:  # gone, or replaced by a new directory no watch covers
            return f"the watched directory was removed: {self.root}"
        if observer.is_alive() and all(e.is_alive() for e in list(observer.emitters)):
            return None
        # A thread that raised can read as ended a moment before the except hook has
        # recorded why (seen on CPython 3.11): give the hook a short while to say it.
        deadline = time.monotonic() + HOOK_GRACE_SECONDS
        while self._failure is None and time.monotonic() < deadline:
            time.sleep(0.01)
        if self._failure is not None:
            return _describe(self._failure)
        return "the watcher thread ended"

    def stop(self) -> None:
        """Ask :meth:`run` to return (from any thread)."""
        self._stop.set()
        self._waiter.notify()

    def close(self) -> None:
        """Stop the observer and release the wakeup sockets (idempotent)."""
        self.stop()
        observer, self._observer = self._observer, None
        if observer is not None:
            try:
                observer.stop()
                observer.join(timeout=5)
            except Exception:  # closing a broken observer must not mask why we are closing
                pass
        self._restore_hook()
        self._waiter.close()
        with self._idle:
            self._idle.notify_all()

    # -- the loop ----------------------------------------------------------

    def run(self, *, catch_up: bool = False) -> None:
        """Re-index after each burst until :meth:`stop`; :class:`WatcherStopped` when the observer dies.

        ``catch_up`` runs one pass at once (changes made before the watch began).
        On the main thread a SIGINT ends the wait as ``KeyboardInterrupt``.
        """
        self._waiter.arm_signals()
        if catch_up:
            self._pass(frozenset(), catch_up=True)
        while not self._stop.is_set():
            reason = self.problem()
            if reason is not None:
                if self._stop.is_set():  # closed meanwhile, from another thread
                    return
                raise WatcherStopped(f"the file watcher stopped: {reason}")
            busy = git_busy(self.root)
            if self.batcher.due(busy):
                self._pass(self.batcher.take())
                continue
            hint = self.batcher.wait_hint(busy)
            self._waiter.wait(LIVENESS_SECONDS if hint is None else min(hint, LIVENESS_SECONDS))
            with self._idle:
                self._idle.notify_all()  # a reader waiting on an empty batcher can go on

    def _pass(self, paths: frozenset[str], catch_up: bool = False) -> None:
        with self._idle:
            self._running_pass = True
        started = time.perf_counter()
        try:
            result = self.reindex(paths)
        except Exception as exc:  # the next change retries; only the observer's death ends the loop
            if self.on_error is not None:
                self.on_error(exc)
        else:
            self.passes += 1
            if self.on_pass is not None:
                self.on_pass(PassReport(self.passes, len(paths), time.perf_counter() - started, result,
                                       catch_up))
        finally:
            with self._idle:
                self._running_pass = False
                self._idle.notify_all()

    def wait_fresh(self, timeout: float = FRESH_WAIT_SECONDS) -> bool:
        """Block until no change is waiting and no pass runs (True), or ``timeout`` passes (False).

        A reader calls this before serving, so a search made right after a save
        sees the save even inside the debounce window. A watcher that stopped is
        never waited for.
        """
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._running_pass or (self.batcher.pending and self._observer is not None
                                         and not self._stop.is_set() and self._failure is None):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(min(left, 0.05))
        return True


def _identity(directory: Path) -> tuple[int, int] | None:
    """(device, inode) of a directory, or None when it is not one (any more)."""
    try:
        st = os.stat(directory)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _store_side(root: Path, store_path: Path | None) -> tuple[str | None, str]:
    """The directory (absolute) and file name of a store kept inside ``root`` outside a dot-directory."""
    if store_path is None:
        return None, ""
    store = Path(os.path.abspath(store_path))
    try:
        store.parent.resolve().relative_to(root)
    except ValueError:
        return None, ""
    return str(store.parent.resolve()), store.name


def _describe(exc: BaseException) -> str:
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    text = (text or type(exc).__name__).strip().splitlines()[0]
    if isinstance(exc, OSError) and exc.errno is not None and "inotify watch limit" in text:
        text += " (raise fs.inotify.max_user_watches, or watch a smaller tree)"
    return text


def _owns(observer: ObserverLike, thread: threading.Thread) -> bool:
    return thread is observer or any(thread is e for e in list(getattr(observer, "emitters", ())))


def _event_filter() -> list[Any]:
    """Writes, creations, deletions and moves only: never opens or reads (the re-index reads files)."""
    from watchdog.events import (
        DirCreatedEvent,
        DirDeletedEvent,
        DirMovedEvent,
        FileClosedEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileModifiedEvent,
        FileMovedEvent,
    )

    return [FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent, FileClosedEvent,
            DirCreatedEvent, DirDeletedEvent, DirMovedEvent]


def _handler(watcher: DirectoryWatcher[Any]) -> Any:
    """A watchdog handler that hands each relevant path (both ends of a move) to ``watcher.note``."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler

    class _Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if event.event_type in ("opened", "closed_no_write") or (event.is_directory and
                                                                   event.event_type == "modified"):
                return
            watcher.note(event.src_path, event.is_directory)
            dest: Any = getattr(event, "dest_path", "")
            if dest:
                watcher.note(dest, event.is_directory)

    return _Handler()


def paths_label(count: int) -> str:
    """``1 changed file`` / ``3 changed files``."""
    return f"{count:,} changed file" + ("" if count == 1 else "s")


def describe_pass(report: PassReport[Any], chunks: int | None) -> str:
    """The one line a pass prints: ``re-indexed 3 changed files in 0.42s (12,345 chunks)``."""
    tail = f" ({chunks:,} chunks)" if chunks is not None else ""
    if report.catch_up:
        return f"caught up with the tree in {report.seconds:.2f}s{tail}"
    return f"re-indexed {paths_label(report.changed)} in {report.seconds:.2f}s{tail}"


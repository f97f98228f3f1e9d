"""``cce index --watch`` and ``cce mcp --watch``: saved edits reach search, bursts become one pass, death is told.

The process-level tests run the installed ``cce`` on a temporary tree and read
its pass lines (``re-indexed N changed files in S s (C chunks)``) as they come.
Latencies are measured and printed (``pytest -s`` shows them) but asserted only
against generous timeouts: the machine is shared, and a timing assert would
flake. The debounce rule itself is tested on a fake clock.
"""

from __future__ import annotations

import errno
import queue
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from helpers import cce_executable, git, hermetic_env

from cce_core.indexing.watch import (
    ChangeBatcher,
    DirectoryWatcher,
    PassReport,
    WatcherStopped,
    describe_pass,
    ignored_path,
)

WAIT = 30.0  # generous upper bound for anything the tests wait on; never a performance target


# --------------------------------------------------------------------------- the rules, in-process


def test_ignored_paths_follow_the_walker() -> None:
    assert ignored_path(".git/index", False)
    assert ignored_path(".git/objects/ab/cdef", False)
    assert ignored_path(".cce/index.cce", False)
    assert ignored_path("pkg/node_modules/x.js", False)
    assert ignored_path("pkg/.venv/lib.py", False)
    assert ignored_path("pkg/__pycache__", True)
    assert ignored_path("logs/run.jsonl", False)
    assert ignored_path("../elsewhere.py", False)
    assert ignored_path(".", True)
    assert not ignored_path("src/app.py", False)
    assert not ignored_path(".gitignore", False)  # a dot-file at a level the walker reads
    assert not ignored_path("src/build.py", False)  # pruned names are directories only
    assert not ignored_path("src/new_dir", True)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_long_burst_with_short_gaps_is_one_batch_once_quiet() -> None:
    clock = FakeClock()
    batcher = ChangeBatcher(quiet=0.25, max_delay=1.0, settle=0.05, hard_delay=5.0, clock=clock)
    assert not batcher.due()
    for i in range(500):  # 500 files, 2 ms apart: a second of changes
        batcher.add(f"f{i}.py")
        clock.now += 0.002
        if clock.now - 100.0 < 1.0:
            assert not batcher.due()
    clock.now += 0.05
    assert batcher.due()
    assert len(batcher.take()) == 500
    assert not batcher.pending and not batcher.due()


def test_quiet_window_and_caps() -> None:
    clock = FakeClock()
    batcher = ChangeBatcher(quiet=0.25, max_delay=1.0, settle=0.05, hard_delay=5.0, busy_limit=30.0, clock=clock)
    batcher.add("a.py")
    clock.now += 0.2
    assert not batcher.due()
    clock.now += 0.06
    assert batcher.due()  # 0.26 s of quiet
    batcher.take()
    # A stream that never pauses 50 ms: the hard cap ends it.
    for _ in range(200):
        batcher.add("b.py")
        clock.now += 0.03
    assert batcher.due()  # 6 s old
    batcher.take()
    # git holds its index lock: nothing is due until the lock goes or the busy limit passes.
    batcher.add("c.py")
    clock.now += 10.0
    assert not batcher.due(busy=True)
    assert batcher.due(busy=False)
    clock.now += 25.0
    assert batcher.due(busy=True)


class FakeEmitter(threading.Thread):
    """A watchdog emitter is a thread; this one runs ``body`` (or counts as running forever without one)."""

    def __init__(self, body: Callable[[], None] | None = None) -> None:
        super().__init__(target=body, name="fake-emitter", daemon=True)
        self.body = body

    def is_alive(self) -> bool:
        return super().is_alive() if self.body is not None else True


class FakeObserver:
    """Enough of a watchdog observer: ``start`` may raise, emitters may die."""

    def __init__(self, start_error: BaseException | None = None, emitter: FakeEmitter | None = None) -> None:
        self.start_error = start_error
        self.emitters = {emitter or FakeEmitter()}
        self.stopped = False

    def schedule(self, event_handler: Any, path: str, *, recursive: bool = False, event_filter: Any = None) -> None:
        self.path = path

    def start(self) -> None:
        if self.start_error is not None:
            raise self.start_error
        for e in self.emitters:
            if e.body is not None:
                e.start()

    def stop(self) -> None:
        self.stopped = True

    def join(self, timeout: float | None = None) -> None:
        pass

    def is_alive(self) -> bool:
        return not self.stopped


def test_an_observer_that_cannot_start_says_why(tmp_path: Path) -> None:
    limit = OSError(errno.ENOSPC, "inotify watch limit reached")
    watcher: DirectoryWatcher[None] = DirectoryWatcher(tmp_path, lambda _p: None,
                                                       observer_factory=lambda: FakeObserver(start_error=limit))
    with pytest.raises(WatcherStopped) as caught:
        watcher.start()
    assert str(caught.value) == ("the file watcher stopped: inotify watch limit reached (raise "
                                 "fs.inotify.max_user_watches, or watch a smaller tree)")


def test_an_observer_thread_that_dies_ends_the_loop_with_its_reason(tmp_path: Path) -> None:
    release = threading.Event()

    def crash() -> None:
        release.wait(5)
        raise RuntimeError("read failed: the event queue overflowed")

    observer = FakeObserver(emitter=FakeEmitter(crash))
    watcher: DirectoryWatcher[None] = DirectoryWatcher(tmp_path, lambda _p: None, observer_factory=lambda: observer)
    watcher.start()
    errors: list[BaseException] = []

    def loop() -> None:
        try:
            watcher.run()
        except WatcherStopped as exc:
            errors.append(exc)

    runner = threading.Thread(target=loop)
    runner.start()
    release.set()
    runner.join(WAIT)
    watcher.close()
    assert not runner.is_alive()
    assert [str(e) for e in errors] == ["the file watcher stopped: read failed: the event queue overflowed"]


def test_a_silent_thread_end_is_reported_too(tmp_path: Path) -> None:
    observer = FakeObserver()
    watcher: DirectoryWatcher[None] = DirectoryWatcher(tmp_path, lambda _p: None, observer_factory=lambda: observer)
    watcher.start()
    observer.stopped = True  # the observer thread is gone, nobody said why
    with pytest.raises(WatcherStopped, match=r"^the file watcher stopped: the watcher thread ended$"):
        watcher.run()
    watcher.close()


def test_a_store_inside_the_tree_never_triggers_a_pass(tmp_path: Path) -> None:
    watcher: DirectoryWatcher[None] = DirectoryWatcher(tmp_path, lambda _p: None,
                                                       store_path=tmp_path / "idx" / "my.cce")
    for name in ("idx/my.cce", "idx/.my.cce.x1y2.tmp", "idx/my.cce.fingerprint.json", "idx/my.cce.d/seg-01",
                 "idx/metrics.jsonl"):
        watcher.note(str(tmp_path / name), False)
    assert not watcher.batcher.pending
    watcher.note(str(tmp_path / "idx" / "notes.py"), False)
    assert watcher.batcher.take() == frozenset({"idx/notes.py"})


def test_a_failing_pass_is_reported_and_watching_goes_on(tmp_path: Path) -> None:
    calls: list[frozenset[str]] = []
    reports: list[PassReport[int]] = []
    errors: list[str] = []

    def reindex(paths: frozenset[str]) -> int:
        calls.append(paths)
        if len(calls) == 1:
            raise OSError("disk full")
        return 7

    watcher: DirectoryWatcher[int] = DirectoryWatcher(
        tmp_path, reindex, on_pass=reports.append, on_error=lambda e: errors.append(str(e)),
        batcher=ChangeBatcher(quiet=0.01, max_delay=0.05), observer_factory=FakeObserver)
    watcher.start()
    runner = threading.Thread(target=watcher.run)
    runner.start()
    watcher.note(str(tmp_path / "a.py"), False)
    watcher.note(str(tmp_path / ".git" / "index"), False)  # ignored
    assert watcher.wait_fresh(WAIT)
    watcher.note(str(tmp_path / "b.py"), False)
    watcher.note(str(tmp_path / "c.py"), False)
    deadline = time.monotonic() + WAIT
    while not reports and time.monotonic() < deadline:
        time.sleep(0.01)
    watcher.stop()
    runner.join(WAIT)
    watcher.close()
    assert errors == ["disk full"]
    assert calls[0] == frozenset({"a.py"})
    assert [(r.number, r.changed, r.result) for r in reports] == [(1, 2, 7)]
    assert describe_pass(PassReport(1, 3, 0.4219, None), 12345) == "re-indexed 3 changed files in 0.42s (12,345 chunks)"
    assert describe_pass(PassReport(1, 1, 0.01, None), 4) == "re-indexed 1 changed file in 0.01s (4 chunks)"


# --------------------------------------------------------------------------- process level


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return hermetic_env(tmp_path)


def small_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    for i in range(4):
        (root / f"mod{i}.py").write_text(f"def helper_{i}(x):\n    return x + {i}\n", encoding="utf-8")
    return root


class Watching:
    """A running ``cce index --watch`` with its stdout lines timestamped as they arrive."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([cce_executable(), "index", "--watch", str(root), "--no-metrics"], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     stdin=subprocess.DEVNULL)
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put((time.monotonic(), line.rstrip("\n")))

    def wait_for(self, prefix: str, timeout: float = WAIT) -> float:
        """Wait for the next stdout line starting with ``prefix``; when it arrived (monotonic)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or (self.proc.poll() is not None and self.lines.empty()):
                raise AssertionError(f"no line starting {prefix!r}; seen {self.seen}; stderr: {self.stderr()}")
            try:
                at, line = self.lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            self.seen.append(line)
            if line.startswith(prefix):
                return at

    def drain(self, seconds: float) -> list[str]:
        """Every line arriving within ``seconds``."""
        deadline = time.monotonic() + seconds
        out: list[str] = []
        while (left := deadline - time.monotonic()) > 0:
            try:
                out.append(self.lines.get(timeout=left)[1])
            except queue.Empty:
                break
        self.seen.extend(out)
        return out

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read()

    def interrupt(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=WAIT)
        return code, self.stderr()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=WAIT)


@pytest.fixture
def watching(env: dict[str, str]) -> Iterator[Callable[[Path], Watching]]:
    started: list[Watching] = []

    def start(root: Path) -> Watching:
        w = Watching(root, env)
        started.append(w)
        return w

    yield start
    for w in started:
        w.kill()


def search(env: dict[str, str], root: Path, query: str) -> str:
    done = subprocess.run([cce_executable(), "search", query, "--dir", str(root), "--top-k", "3"], env=env,
                          capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_saved_edit_reaches_search_and_ctrl_c_ends_cleanly(tmp_path: Path, env: dict[str, str],
                                                            watching: Callable[[Path], Watching]) -> None:
    root = small_repo(tmp_path / "repo")
    w = watching(root)
    w.wait_for("watching ")
    assert "zebra_quokka_marker" not in search(env, root, "zebra_quokka_marker")

    saved = time.monotonic()
    with (root / "mod2.py").open("a", encoding="utf-8") as f:
        f.write("\n\ndef zebra_quokka_marker(y):\n    return y * 2\n")
    indexed = w.wait_for("re-indexed 1 changed file in ")
    found = None
    while time.monotonic() - saved < WAIT:
        if "zebra_quokka_marker" in search(env, root, "zebra_quokka_marker"):
            found = time.monotonic()
            break
    assert found is not None, "the edit never reached search"
    print(f"\nsave -> pass line: {indexed - saved:.3f}s; save -> seen by a fresh `cce search`: {found - saved:.3f}s")
    assert w.seen[-1].endswith("(5 chunks)")

    code, err = w.interrupt()
    assert code == 0, err
    assert "Traceback" not in err and err.strip().splitlines() == ["stopped watching"]


def test_ctrl_c_while_idle_always_stops(tmp_path: Path, env: dict[str, str],
                                        watching: Callable[[Path], Watching]) -> None:
    root = small_repo(tmp_path / "repo")
    for _ in range(3):
        w = watching(root)
        w.wait_for("watching ")
        code, err = w.interrupt()
        assert (code, "Traceback" in err) == (0, False), err


def test_a_branch_switch_of_500_files_is_one_pass(tmp_path: Path, env: dict[str, str],
                                                  watching: Callable[[Path], Watching]) -> None:
    root = small_repo(tmp_path / "repo")
    src = root / "gen"
    src.mkdir()
    for i in range(500):
        (src / f"g{i:03d}.py").write_text(f"def alpha_{i}(v):\n    return v - {i}\n", encoding="utf-8")
    git(env, root, "init", "-q", "-b", "main")
    git(env, root, "add", "-A")
    git(env, root, "commit", "-q", "-m", "alpha")
    git(env, root, "checkout", "-q", "-b", "other")
    for i in range(500):
        (src / f"g{i:03d}.py").write_text(f"def beta_{i}_walrus(v):\n    return v * {i}\n", encoding="utf-8")
    git(env, root, "commit", "-q", "-am", "beta")
    git(env, root, "checkout", "-q", "main")

    w = watching(root)
    w.wait_for("watching ")
    switched = time.monotonic()
    git(env, root, "checkout", "-q", "other")
    indexed = w.wait_for("re-indexed ")
    later = [line for line in w.drain(3.0) if line.startswith("re-indexed")]
    passes = [line for line in w.seen if line.startswith("re-indexed")]
    print(f"\nbranch switch of 500 files -> pass line after {indexed - switched:.3f}s: {passes}")
    assert later == [] and len(passes) == 1, passes
    assert passes[0].startswith("re-indexed 500 changed files in ")
    assert "beta_7_walrus" in search(env, root, "beta_7_walrus")


def test_a_removed_directory_stops_the_watcher_with_one_error_line(tmp_path: Path, env: dict[str, str],
                                                                   watching: Callable[[Path], Watching]) -> None:
    import shutil

    root = small_repo(tmp_path / "repo")
    w = watching(root)
    w.wait_for("watching ")
    shutil.rmtree(root)
    code = w.proc.wait(timeout=WAIT)
    err = w.stderr()
    assert code == 1, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == f"error: the file watcher stopped: the watched directory was removed: {root}"


def test_watch_refuses_plan_and_workspace(tmp_path: Path, env: dict[str, str]) -> None:
    root = small_repo(tmp_path / "repo")
    for extra in (["--plan"], ["--workspace"]):
        done = subprocess.run([cce_executable(), "index", str(root), "--watch", *extra], env=env,
                              capture_output=True, text=True, timeout=WAIT)
        assert done.returncode == 1
        assert done.stderr == ("error: --watch takes one directory to index; it does not go with --plan or "
                               "--workspace\n")


# --------------------------------------------------------------------------- cce mcp --watch


@contextmanager
def mcp_watching(root: Path, env: dict[str, str], errlog_path: Path) -> Iterator[Callable[[str], str]]:
    """`cce mcp --dir ROOT --watch` over the official SDK's stdio client, as its `context_search` (stderr to a file).

    ``root`` is indexed first, so the server starts on a store.
    """
    pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'mcp>=2.3,<3')")
    from anyio.from_thread import start_blocking_portal
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    done = subprocess.run([cce_executable(), "index", str(root), "--no-metrics"], env=env, capture_output=True,
                          text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    params = StdioServerParameters(command=cce_executable(), args=["mcp", "--dir", str(root), "--watch"],
                                   env={k: v for k, v in env.items() if k != "CCE_DEBUG"})
    with ExitStack() as stack:
        errlog = stack.enter_context(errlog_path.open("w", encoding="utf-8"))
        portal = stack.enter_context(start_blocking_portal())
        read, write = stack.enter_context(portal.wrap_async_context_manager(stdio_client(params, errlog=errlog)))
        session = stack.enter_context(portal.wrap_async_context_manager(ClientSession(read, write)))
        portal.call(session.initialize)

        def context_search(query: str) -> str:
            result = portal.call(partial(session.call_tool, "context_search", {"query": query, "top_k": 3}))
            assert not result.is_error, result.content
            return result.content[0].text

        yield context_search


def wait_until_found(context_search: Callable[[str], str], query: str, errlog_path: Path) -> float:
    """Seconds until ``context_search(query)`` names ``query`` (asserts it does within WAIT)."""
    saved = time.monotonic()
    while time.monotonic() - saved < WAIT:
        if query in context_search(query):
            return time.monotonic() - saved
        time.sleep(0.02)
    raise AssertionError(errlog_path.read_text(encoding="utf-8"))


def test_mcp_watch_serves_a_saved_edit_to_context_search(tmp_path: Path, env: dict[str, str]) -> None:
    root = small_repo(tmp_path / "repo")
    errlog_path = tmp_path / "mcp-stderr.txt"
    with mcp_watching(root, env, errlog_path) as context_search:
        assert "otter_lantern_marker" not in context_search("otter_lantern_marker")
        (root / "mod1.py").write_text("def otter_lantern_marker(z):\n    return z\n", encoding="utf-8")
        seconds = wait_until_found(context_search, "otter_lantern_marker", errlog_path)
        print(f"\nmcp --watch: save -> seen by context_search: {seconds:.3f}s")
    log = errlog_path.read_text(encoding="utf-8").splitlines()
    assert any(line.startswith("re-indexed 1 changed file in ") for line in log), log
    assert not any(line.startswith(("error:", "warning:")) for line in log), log


def test_mcp_watch_re_indexes_a_large_burst_on_several_processes(tmp_path: Path, env: dict[str, str]) -> None:
    """A burst big enough for parallel chunking (>= 16 files, >= 256 KiB) forks from the server's watching thread.

    The server answers ``context_search`` on other threads meanwhile, writing to stdout, so the chunking
    children are forked from a process whose other threads hold locks: the pass must still end, and its
    files reach search.
    """
    from cce_core.indexing.parallel_chunking import PARALLEL_MIN_BYTES, PARALLEL_MIN_FILES

    root = tmp_path / "repo"
    root.mkdir()
    files = PARALLEL_MIN_FILES + 4
    functions = PARALLEL_MIN_BYTES // 40 // files * 2  # each about 40 bytes: twice the line, spread over the files
    body = "".join(f"def helper_{k}(x):\n    return x * {k} + {k}\n\n" for k in range(functions))
    for i in range(files):
        (root / f"mod{i}.py").write_text(body, encoding="utf-8")
    assert files * len(body) >= PARALLEL_MIN_BYTES
    errlog_path = tmp_path / "mcp-stderr.txt"
    with mcp_watching(root, env, errlog_path) as context_search:
        started = time.monotonic()  # the first pass (catching up with the tree) is over before the burst
        while not errlog_path.read_text(encoding="utf-8").startswith("caught up") and time.monotonic() - started < WAIT:
            time.sleep(0.02)
        for i in range(files):  # one burst: every file gains a function of its own
            (root / f"mod{i}.py").write_text(body + f"def heron_quill_{i}(y):\n    return y\n", encoding="utf-8")
        wait_until_found(context_search, f"heron_quill_{files - 1}", errlog_path)
        assert "heron_quill_0" in context_search("heron_quill_0")
    log = errlog_path.read_text(encoding="utf-8").splitlines()
    passes = [int(found.group(1)) for line in log if (found := re.match(r"re-indexed (\d+) changed files? in ", line))]
    assert passes and max(passes) >= PARALLEL_MIN_FILES, log  # the burst was one pass, large enough to fork
    assert not any(line.startswith(("error:", "warning:")) for line in log), log

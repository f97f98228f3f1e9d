"""One writer at a time per store (issue #23, item 6): the lock beside the store, through the installed ``cce``.

Two ``cce index`` runs on one directory used to interleave and leave the
manifest naming a segment the other run had deleted (``stats``, ``search``
and ``doctor`` then failed), or fail with "could not write the store …: No
such file or directory". Here pairs of real ``cce index`` processes race on
a small corpus — fresh, after an edit, and with ``--compact`` — and every
store must pass ``cce doctor`` and answer exactly as a serial index of the
same tree. A lock holder shows the waiting message, the ``CCE_LOCK_TIMEOUT``
error line, the release by ``kill -9`` (even with a forked child still
alive), and that ``cce sync pull``'s install and ``cce knowledge index`` take
the same kind of lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import cce_executable, run_cce

from cce_core.foundation.errors import CceError
from cce_core.indexing.store import default_store_path
from cce_core.indexing.store_lock import StoreBusy, lock_path, store_lock

HOLDER = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from cce_core.indexing.store_lock import store_lock

    store, purpose, mode, seconds = Path(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
    with store_lock(store, purpose=purpose):
        child = os.fork() if mode == "fork" else -1
        if child == 0:
            time.sleep(60)  # an orphan that outlives its parent, holding a copy of every fd it had
            os._exit(0)
        print(f"held {child}", flush=True)
        time.sleep(seconds)
""")


def write_corpus(root: Path, files: int = 40) -> Path:
    for i in range(files):
        path = root / f"pkg{i % 4}" / f"mod_{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"def handler_{i}_{k}(request, payload):\n    total = request.size + {k}\n"
                                f"    return payload.process(total, '{i}-{k}')\n\n" for k in range(12)),
                        encoding="utf-8")
    return root


class Holder:
    """A separate process holding a store's lock until it is killed (or ``seconds`` pass)."""

    def __init__(self, store: Path, *, purpose: str = "cce index", fork: bool = False, seconds: float = 600) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(store), purpose, "fork" if fork else "-",
                                      str(seconds)], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().split()
        assert first and first[0] == "held", first
        self.child = int(first[1]) if fork else None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def kill_child(self) -> None:
        if self.child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.child, signal.SIGKILL)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "repo")


@pytest.fixture
def holders() -> Iterator[list[Holder]]:
    started: list[Holder] = []
    yield started
    for holder in started:
        holder.kill_child()
        holder.kill()


def answers(root: Path) -> list[str]:
    """What the store answers, minus per-call ids: the JSON of a few searches and the stats."""
    out = []
    for query in ("handler request payload", "process total", "mod_007 handler_7_3"):
        done = run_cce("search", query, "--dir", root, "--json", "--no-metrics")
        assert done.returncode == 0, done.stderr
        body = json.loads(done.stdout)
        body.pop("query_id", None)
        out.append(json.dumps(body, sort_keys=True))
    done = run_cce("stats", "--dir", root)
    assert done.returncode == 0, done.stderr
    # Where the store is and how many bytes its segments take differ from a serial build's; the counts do not.
    out.append("\n".join(row for row in done.stdout.split("\n")
                         if not row.startswith("Store:") and "store size" not in row))
    return out


def serial_answers(root: Path, scratch: Path) -> list[str]:
    """The answers of one serial index of the same tree, built in a copy."""
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(root, scratch, ignore=shutil.ignore_patterns(".cce"))
    done = run_cce("index", scratch, "--no-metrics")
    assert done.returncode == 0, done.stderr
    return answers(scratch)


def race(root: Path, *extra: str) -> list[subprocess.CompletedProcess[str]]:
    """Two ``cce index`` on ``root`` started together; both results."""
    env = {k: v for k, v in os.environ.items() if k != "CCE_DEBUG"}
    env["CCE_WORKERS"] = "1"
    procs = [subprocess.Popen([cce_executable(), "index", str(root), "--no-metrics", *extra], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


def assert_healthy(root: Path, results: list[subprocess.CompletedProcess[str]]) -> None:
    for done in results:
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    doctor = run_cce("doctor", "--dir", root)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr


# --------------------------------------------------------------------------- racing writers


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fresh", "edit", "compact"])
def test_two_concurrent_index_runs_leave_a_store_that_answers_like_a_serial_index(corpus: Path, tmp_path: Path,
                                                                                   mode: str) -> None:
    rounds = 3
    if mode != "fresh":
        assert run_cce("index", corpus, "--no-metrics").returncode == 0
    for n in range(rounds):
        if mode == "fresh":
            shutil.rmtree(corpus / ".cce", ignore_errors=True)
        else:  # a change for both runs to write, and a file gone
            (corpus / "pkg1" / f"new_{n}.py").write_text(f"def added_{n}(x):\n    return x * {n}\n", encoding="utf-8")
            (corpus / "pkg2" / f"mod_{n * 4 + 2:03d}.py").unlink()
            (corpus / "pkg0" / "mod_000.py").write_text(f"def edited_{n}(y):\n    return y - {n}\n", encoding="utf-8")
        results = race(corpus, *(["--compact"] if mode == "compact" else []))
        assert_healthy(corpus, results)
        assert answers(corpus) == serial_answers(corpus, tmp_path / "serial"), (mode, n)


# --------------------------------------------------------------------------- a holder, waiting, timeouts, kill -9


def test_a_second_writer_waits_and_says_so(corpus: Path, holders: list[Holder]) -> None:
    store = default_store_path(corpus)
    holders.append(Holder(store, seconds=2.5))
    done = run_cce("index", corpus, "--no-metrics")
    assert done.returncode == 0, done.stderr
    assert f"waiting for another `cce index` on {store} (pid {holders[0].proc.pid}) to finish" in done.stderr
    assert holders[0].proc.wait(timeout=30) == 0  # the holder was not disturbed


def test_with_a_timeout_the_second_writer_gives_up_with_one_error_line(corpus: Path, holders: list[Holder]) -> None:
    store = default_store_path(corpus)
    holders.append(Holder(store))
    done = run_cce("index", corpus, "--no-metrics", env={"CCE_LOCK_TIMEOUT": "0.3"})
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: another `cce index` is running on {store} (pid {holders[0].proc.pid})")
    assert done.stderr.count("\n") == 1, done.stderr
    assert not store.exists()  # nothing was written


@pytest.mark.slow
def test_a_holder_killed_with_kill_9_leaves_no_stale_lock(corpus: Path, holders: list[Holder]) -> None:
    store = default_store_path(corpus)
    holder = Holder(store, fork=True)  # its forked child lives on, with a copy of the lock's descriptor
    holders.append(holder)
    os.kill(holder.proc.pid, signal.SIGKILL)
    holder.proc.wait(timeout=30)
    assert holder.child is not None and os.path.exists(f"/proc/{holder.child}")
    done = run_cce("index", corpus, "--no-metrics", env={"CCE_LOCK_TIMEOUT": "10"})
    assert done.returncode == 0, done.stderr
    assert "waiting" not in done.stderr
    assert lock_path(store).exists()  # the lock file stays; only the lock went


def test_a_bad_lock_timeout_is_one_error_line(corpus: Path) -> None:
    done = run_cce("index", corpus, "--no-metrics", env={"CCE_LOCK_TIMEOUT": "soon"})
    assert done.returncode == 1
    assert done.stderr == "error: CCE_LOCK_TIMEOUT='soon' is not a number of seconds (0 or more)\n"


def test_sync_pull_installs_under_the_same_lock(tmp_path: Path, holders: list[Holder]) -> None:
    from cce_core.default_plugins.hash_embedder import HashEmbedder
    from cce_core.indexing.indexer import build_index
    from cce_core.plugins.host import default_host
    from cce_core.sync.artifact import export_artifact, pack_module_suffixes
    from cce_core.sync.service import install_artifact

    host = default_host()
    data, _stats = build_index(write_corpus(tmp_path / "src", files=4), host, HashEmbedder())
    raw = export_artifact(data, "example.com__acme__demo", "1" * 40, pack_module_suffixes(host))
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    holders.append(Holder(default_store_path(consumer)))
    os.environ["CCE_LOCK_TIMEOUT"] = "0.3"
    try:
        with pytest.raises(StoreBusy, match="another `cce index` is running on"):
            install_artifact(consumer, raw, log_metrics=False)
    finally:
        del os.environ["CCE_LOCK_TIMEOUT"]
    assert not default_store_path(consumer).exists()
    holders[0].kill()
    install_artifact(consumer, raw, log_metrics=False)
    assert run_cce("doctor", "--dir", consumer).returncode == 0


def test_knowledge_index_takes_the_knowledge_store_lock(tmp_path: Path, holders: list[Holder]) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    feed = tmp_path / "feed.jsonl"
    feed.write_text(json.dumps({"schema": "cce.knowledge/v1", "id": "r1", "source": "notes", "title": "Runbook",
                                "body": "Restart the payment service when it hangs."}) + "\n", encoding="utf-8")
    holders.append(Holder(root / ".cce" / "knowledge", purpose="cce knowledge index"))
    done = run_cce("knowledge", "index", feed, "--dir", root, env={"CCE_LOCK_TIMEOUT": "0.3"})
    assert done.returncode == 1
    assert done.stderr.startswith("error: another `cce knowledge index` is running on"), done.stderr
    holders[0].kill()
    done = run_cce("knowledge", "index", feed, "--dir", root)
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------- in process


def test_the_lock_is_reentrant_in_a_thread_and_exclusive_between_threads(tmp_path: Path) -> None:
    store = tmp_path / ".cce" / "index.cce"
    order: list[str] = []
    with store_lock(store):
        with store_lock(store):  # a compaction inside an index run
            order.append("inner")

        def other() -> None:
            with store_lock(store, notify=order.append):
                order.append("other")

        thread = threading.Thread(target=other)
        thread.start()
        time.sleep(0.3)
        order.append("outer done")
    thread.join(timeout=30)
    assert order == ["inner", "outer done", "other"]
    with pytest.raises(StoreBusy), store_lock(store), _in_thread(lambda: store_lock(store, timeout=0.2)):
        pass


class _in_thread:
    """Enter the context manager made by ``make`` on another thread; re-raise what it raised."""

    def __init__(self, make: object) -> None:
        self.make = make
        self.error: BaseException | None = None

    def __enter__(self) -> None:
        def run() -> None:
            try:
                with self.make():  # type: ignore[operator]
                    pass
            except BaseException as exc:
                self.error = exc

        thread = threading.Thread(target=run)
        thread.start()
        thread.join(timeout=30)
        if self.error is not None:
            raise self.error

    def __exit__(self, *exc: object) -> None:
        return None


def test_an_unopenable_lock_is_a_cce_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(CceError, match="could not lock the store"), store_lock(blocker / "index.cce"):
        pass

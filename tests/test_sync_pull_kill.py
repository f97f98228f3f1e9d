"""kill -9 of `cce sync pull` leaves no process behind (issue #23 item 9).

A pull of a large artifact forks a child that rebuilds BM25 while the parent
decodes. Killed after that fork, the parent used to leave the child behind,
blocked for ever writing its answer into a pipe nobody would read (it held
the pipe's read end itself). The child must die with its parent.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import cce_executable, git
from test_sync_cli import bare_remote, cce, env, ok, source_repo

from cce_core.sync.pull_decode import PARALLEL_MIN_BYTES

__all__ = ["env"]  # fixtures, imported so that pytest finds them here

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the child")


def _big_tree(root: Path) -> Path:
    # Enough chunks for an artifact over the fork threshold (each chunk line carries a 2.7 KB vector).
    for i in range(340):
        body = "".join(f"def f{i}_{j}(x):\n    return x * {j} + {i}  # step {j} of module {i}\n\n" for j in range(5))
        (root / f"m{i // 50}").mkdir(parents=True, exist_ok=True)
        (root / f"m{i // 50}" / f"mod{i}.py").write_text(body, encoding="utf-8")
    return root


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its new parent to reap it counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _is_cce(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(arg.endswith(b"cce") for arg in argv[:2])


@pytest.mark.slow
def test_kill_9_after_the_fork_leaves_no_child(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    src = source_repo(env, tmp_path / "src", tree=_big_tree(tmp_path / "tree"))
    ok(cce(env, src, "sync", "init", "--remote", url, "--no-lfs"))
    ok(cce(env, src, "sync", "push"))
    sha = git(env, src, "rev-parse", "HEAD")
    check = tmp_path / "check"
    git(env, tmp_path, "clone", "-q", url, str(check))
    size = (check / "hash" / "2.3" / "example.com__acme__demo" / f"{sha}.cce").stat().st_size
    assert size >= PARALLEL_MIN_BYTES, f"the artifact ({size} bytes) is too small to make the pull fork"

    leftovers: list[int] = []
    try:
        for attempt in range(5):
            consumer = tmp_path / f"consumer{attempt}"
            consumer.mkdir()
            ok(cce(env, consumer, "sync", "init", "--remote", url, "--no-lfs", "--repo-id",
                   "example.com__acme__demo"))
            pull = subprocess.Popen([cce_executable(), "sync", "pull", "--commit", sha], cwd=consumer, env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            forked: list[int] = []
            while pull.poll() is None and not forked:
                forked = [c for c in _children(pull.pid) if _is_cce(c)]
            if not forked:
                continue  # the pull finished before the fork was seen: try again
            os.kill(pull.pid, signal.SIGKILL)
            pull.wait()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and any(_alive(c) for c in forked):
                time.sleep(0.05)
            leftovers = [c for c in forked if _alive(c)]
            assert not leftovers, f"the pull's child outlived it: {leftovers}"
            return
        pytest.fail("never caught the pull between its fork and its end in 5 attempts")
    finally:
        for pid in leftovers:  # never leave a stray process behind, even when the test fails
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

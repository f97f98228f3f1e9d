"""Facts about a project's own git checkout, read with the real ``git`` command: one way to ask, one way to fail.

Several features record which commit they looked at (Sync names artifacts
by it, the index event and ``cce bench`` report it) and a few more read other
facts (origin, branch, a clean tree). Each used to start ``git`` its own way,
with its own idea of what a failure is. Here a fact is either git's trimmed
answer or None: outside a checkout, before the first commit, without git on
the machine, or when git does not answer in time.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def run_git(root: Path, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess[bytes] | None:
    """Run ``git -C root ARGS`` (stdin closed, output captured); None when git cannot be started or times out."""
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, stdin=subprocess.DEVNULL,
                              check=False, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None


def git_text(root: Path, *args: str, timeout: float | None = None) -> str | None:
    """Trimmed stdout of a git command that succeeded, else None; empty output counts as None."""
    proc = run_git(root, *args, timeout=timeout)
    if proc is None or proc.returncode != 0:
        return None
    text = proc.stdout.decode("utf-8", errors="replace").strip()
    return text or None


def head_sha(root: Path, timeout: float | None = None) -> str | None:
    """HEAD's commit sha; None outside a git checkout or before the first commit."""
    return git_text(root, "rev-parse", "HEAD", timeout=timeout)

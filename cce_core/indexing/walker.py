"""Find the files of a repository that are worth indexing.

Skips what never belongs in an index: version-control and tool directories,
every dot-directory below the root, paths matched by the ``.gitignore`` files
committed at or below the root (machine-local excludes are ignored so two
machines at one commit see the same files), ``*.jsonl`` logs, files over
2 MiB, files that are not UTF-8, symbolic links, and — unless protection is
switched off — sensitive files such as ``.env`` or private keys, which are
never even opened and are counted on their own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import pathspec

from cce_core.indexing.sensitive import is_sensitive

MAX_FILE_BYTES = 2 * 1024 * 1024
PRUNED_DIRS = frozenset({".git", ".cce", "node_modules", ".venv", "venv", "__pycache__", "dist", "build"})
SKIPPED_EXTENSION = "jsonl"


@dataclass
class WalkedFile:
    path: str  # relative to the root, "/"-separated
    raw: bytes
    text: str


@dataclass
class WalkResult:
    files: list[WalkedFile] = field(default_factory=list)
    skipped: int = 0
    sensitive_skipped: int = 0


class _IgnoreRules:
    """The .gitignore files met so far, each scoped to its own directory."""

    def __init__(self) -> None:
        self._specs: dict[str, pathspec.GitIgnoreSpec] = {}

    def load(self, abs_dir: str, rel_dir: str) -> None:
        try:
            with open(os.path.join(abs_dir, ".gitignore"), encoding="utf-8", errors="replace") as fh:
                lines = fh.read().split("\n")
        except OSError:
            return
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        if spec.patterns:
            self._specs[rel_dir] = spec

    def ignored(self, rel_path: str, is_dir: bool) -> bool:
        if not self._specs:
            return False
        verdict: bool | None = None
        # Deeper .gitignore files override shallower ones; walk root → leaf.
        parts = rel_path.split("/")
        for depth in range(len(parts)):
            base = "/".join(parts[:depth])
            spec = self._specs.get(base)
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            result = spec.check_file(sub)
            if result.include is not None:
                verdict = result.include
        return bool(verdict)


def rust_extension(name: str) -> str | None:
    """The final extension the way the reference engine reads it (none for ``.key``)."""
    dot = name.rfind(".")
    return name[dot + 1 :] if dot > 0 else None


def walk(root: str, protect_secrets: bool = True) -> WalkResult:
    result = WalkResult()
    rules = _IgnoreRules()
    collected: list[WalkedFile] = []
    root = os.path.abspath(root)
    for abs_dir, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(abs_dir, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        if ".gitignore" in filenames:
            rules.load(abs_dir, rel_dir)
        keep_dirs = []
        for d in dirnames:
            if d in PRUNED_DIRS or d.startswith("."):
                continue
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if os.path.islink(os.path.join(abs_dir, d)) or rules.ignored(rel, True):
                continue
            keep_dirs.append(d)
        dirnames[:] = keep_dirs
        for name in filenames:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            full = os.path.join(abs_dir, name)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if not os.path.stat.S_ISREG(st.st_mode) or rules.ignored(rel, False):
                continue
            if protect_secrets and is_sensitive(name):
                result.sensitive_skipped += 1
                continue
            if rust_extension(name) == SKIPPED_EXTENSION or st.st_size > MAX_FILE_BYTES:
                result.skipped += 1
                continue
            try:
                with open(full, "rb") as fh:
                    raw = fh.read()
                text = raw.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                result.skipped += 1
                continue
            collected.append(WalkedFile(rel, raw, text))
    collected.sort(key=lambda f: f.path)
    result.files = collected
    return result

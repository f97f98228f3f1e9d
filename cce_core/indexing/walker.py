"""Find the files of a repository that are worth indexing.

Skips what never belongs in an index: version-control and tool directories,
every dot-directory below the root, paths matched by the ``.gitignore`` files
committed at or below the root (machine-local excludes are ignored so two
machines at one commit see the same files), ``*.jsonl`` logs, files over
2 MiB, files that are not UTF-8, symbolic links, and — unless protection is
switched off — sensitive files such as ``.env`` or private keys, which are
never even opened and are counted on their own.

No single entry can stop the walk: a file whose name is not UTF-8, that cannot
be read, or a directory that cannot be listed (permissions, a path longer than
the system allows) is skipped and recorded with its :class:`SkipReason`. The
traversal keeps its own stack, so a tree thousands of levels deep never
reaches Python's recursion limit.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

import pathspec

from cce_core.secrets.sensitive_paths import is_sensitive

# The verdict depends on the name alone, and a large tree repeats names (every package's
# index.ts, __init__.py, README.md): remembered per name for the life of the process.
_sensitive_name = lru_cache(maxsize=1 << 16)(is_sensitive)

MAX_FILE_BYTES = 2 * 1024 * 1024
PRUNED_DIRS = frozenset({".git", ".cce", "node_modules", ".venv", "venv", "__pycache__", "dist", "build"})
SKIPPED_EXTENSION = "jsonl"


class SkipReason(StrEnum):
    """Why the walker left an entry out; the value is a stable machine name.

    Which total a reason feeds is :attr:`tally`: ``"skipped"`` (the family's
    ``files skipped`` count), ``"sensitive"`` (``sensitive skipped``),
    ``"walk_errors"`` (directories whose contents were never seen), or ``None``
    for exclusions by design that no summary counts (ignored, pruned, links).
    """

    SENSITIVE = "sensitive"
    JSONL = "jsonl"
    TOO_LARGE = "too_large"
    NOT_UTF8 = "not_utf8"
    NAME_NOT_UTF8 = "name_not_utf8"
    UNREADABLE = "unreadable"
    DIR_UNREADABLE = "dir_unreadable"
    GITIGNORED = "gitignored"
    EXCLUDED_DIR = "excluded_dir"
    SYMLINK = "symlink"
    NOT_REGULAR = "not_regular"

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def tally(self) -> str | None:
        return _TALLIES.get(self)


_LABELS = {
    SkipReason.SENSITIVE: "sensitive file",
    SkipReason.JSONL: "*.jsonl log",
    SkipReason.TOO_LARGE: "over 2 MiB",
    SkipReason.NOT_UTF8: "not UTF-8",
    SkipReason.NAME_NOT_UTF8: "name not UTF-8",
    SkipReason.UNREADABLE: "unreadable",
    SkipReason.DIR_UNREADABLE: "directory unreadable",
    SkipReason.GITIGNORED: "gitignored",
    SkipReason.EXCLUDED_DIR: "default-excluded directory",
    SkipReason.SYMLINK: "symbolic link",
    SkipReason.NOT_REGULAR: "not a regular file",
}
_TALLIES = {
    SkipReason.SENSITIVE: "sensitive",
    SkipReason.JSONL: "skipped",
    SkipReason.TOO_LARGE: "skipped",
    SkipReason.NOT_UTF8: "skipped",
    SkipReason.NAME_NOT_UTF8: "skipped",
    SkipReason.UNREADABLE: "skipped",
    SkipReason.DIR_UNREADABLE: "walk_errors",
}


@dataclass
class WalkedFile:
    path: str  # relative to the root, "/"-separated
    raw: bytes
    text: str
    size: int = 0  # bytes read
    mtime_ns: int = 0  # modification time when listed


@dataclass(slots=True)  # one per file of the tree: slots make each smaller and quicker to build
class ListedFile:
    """A file the walk would read, known by its metadata only (see :func:`scan`)."""

    path: str  # relative to the root, "/"-separated
    abs_path: str
    size: int
    mtime_ns: int


@dataclass
class SkippedEntry:
    """One entry the walk left out. ``path`` is shown lossily when the name is not UTF-8."""

    path: str
    reason: SkipReason
    bytes: int
    is_dir: bool = False


@dataclass
class WalkResult:
    files: list[WalkedFile] = field(default_factory=list)
    listed: list[ListedFile] = field(default_factory=list)
    skipped: int = 0
    sensitive_skipped: int = 0
    walk_errors: int = 0
    skip_counts: dict[SkipReason, int] = field(default_factory=dict)
    skip_bytes: dict[SkipReason, int] = field(default_factory=dict)
    skips: list[SkippedEntry] = field(default_factory=list)

    def note(self, path: str, reason: SkipReason, size: int = 0, is_dir: bool = False) -> None:
        """Record one left-out entry under its reason (and the total that reason feeds)."""
        self.skip_counts[reason] = self.skip_counts.get(reason, 0) + 1
        self.skip_bytes[reason] = self.skip_bytes.get(reason, 0) + size
        self.skips.append(SkippedEntry(path, reason, size, is_dir))
        tally = reason.tally
        if is_dir and tally == "skipped":
            tally = "walk_errors"  # a directory left out hides every file beneath it
        if tally == "skipped":
            self.skipped += 1
        elif tally == "sensitive":
            self.sensitive_skipped += 1
        elif tally == "walk_errors":
            self.walk_errors += 1

    def counted_reasons(self) -> list[tuple[SkipReason, int]]:
        """(reason, count) for every reason that feeds a summary total, in declaration order."""
        return [(r, self.skip_counts[r]) for r in SkipReason if r.tally and self.skip_counts.get(r)]


class _IgnoreRules:
    """The .gitignore files met so far, each scoped to its own directory."""

    def __init__(self) -> None:
        self._specs: dict[str, pathspec.GitIgnoreSpec] = {}
        # Per base, one regex that matches when any of its patterns does: most paths match
        # none, and then the pattern-by-pattern check (which decides the verdict) is skipped.
        self._any: dict[str, re.Pattern[str] | None] = {}
        self._order: list[str] = []  # bases, shallow first
        self._bases_of: dict[str, list[str]] = {}  # parent directory -> the bases that apply

    def load(self, abs_dir: str, rel_dir: str) -> None:
        try:
            with open(os.path.join(abs_dir, ".gitignore"), encoding="utf-8", errors="replace") as fh:
                lines = fh.read().split("\n")
        except (OSError, ValueError):
            return
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        if spec.patterns:
            self._specs[rel_dir] = spec
            self._any[rel_dir] = _any_pattern(spec)
            self._order = sorted(self._specs, key=lambda b: (b.count("/") + (b != ""), b))
            # A directory's .gitignore is read on entering it, before anything below it is
            # checked, so only an answer for the directory itself could be cached yet.
            self._bases_of.pop(rel_dir, None)

    def _bases_of_dir(self, directory: str) -> list[str]:
        """The bases whose .gitignore applies to paths in ``directory``, shallow first.

        A directory's list is its parent's plus itself when it has a .gitignore,
        so each directory costs one step however many .gitignore files the tree
        holds (the walk is top-down, so the parent's list is usually cached).
        """
        chain: list[str] = []
        current: str | None = directory
        while current is not None and current not in self._bases_of:
            chain.append(current)
            current = None if current == "" else current.rpartition("/")[0]
        bases = self._bases_of[current] if current is not None else []
        for d in reversed(chain):
            bases = [*bases, d] if d in self._specs else bases
            self._bases_of[d] = bases
        return bases

    def _bases(self, rel_path: str) -> list[str]:
        """The bases whose .gitignore applies to ``rel_path``, shallow first."""
        return self._bases_of_dir(rel_path.rpartition("/")[0])

    def checks_for(self, rel_dir: str) -> list[tuple[str, re.Pattern[str] | None, pathspec.GitIgnoreSpec]]:
        """For entries of ``rel_dir``: (path prefix below the base, quick regex, spec) per applicable base.

        Worked out once per directory, so each entry costs only its pattern checks.
        """
        if not self._specs:
            return []
        above = rel_dir + "/" if rel_dir else ""
        return [(above[len(base) + 1 if base else 0 :], self._any[base], self._specs[base])
                for base in self._bases_of_dir(rel_dir)]

    @staticmethod
    def ignored_by(checks: list[tuple[str, re.Pattern[str] | None, pathspec.GitIgnoreSpec]], name: str,
                   is_dir: bool) -> bool:
        """:meth:`ignored` for an entry called ``name`` of the directory ``checks`` were made for."""
        verdict: bool | None = None
        for prefix, quick, spec in checks:
            sub = prefix + name + ("/" if is_dir else "")
            if quick is not None and quick.match(sub) is None:
                continue
            result = spec.check_file(sub)
            if result.include is not None:
                verdict = result.include
        return bool(verdict)

    def ignored(self, rel_path: str, is_dir: bool) -> bool:
        if not self._specs:
            return False
        verdict: bool | None = None
        # Deeper .gitignore files override shallower ones; only the bases that are
        # ancestors of the path are consulted (cost independent of the path's depth).
        for base in self._bases(rel_path):
            sub = (rel_path[len(base) + 1 :] if base else rel_path) + ("/" if is_dir else "")
            quick = self._any[base]
            if quick is not None and quick.match(sub) is None:
                continue  # no pattern of this file matches: it gives no verdict
            result = self._specs[base].check_file(sub)
            if result.include is not None:
                verdict = result.include
        return bool(verdict)


def _any_pattern(spec: pathspec.GitIgnoreSpec) -> re.Pattern[str] | None:
    """One regex matching exactly the paths some pattern of ``spec`` matches (None: cannot be built)."""
    parts = []
    for pattern in spec.patterns:
        if pattern.include is None:
            continue
        regex = getattr(pattern, "regex", None)
        if not isinstance(regex, re.Pattern):
            return None
        # Named groups would clash across the alternation; none is read here.
        parts.append("(?:" + re.sub(r"\(\?P<[^>]+>", "(?:", regex.pattern) + ")")
    if not parts:
        return None
    try:
        return re.compile("|".join(parts))
    except re.error:
        return None


def rust_extension(name: str) -> str | None:
    """The final extension the way the reference engine reads it (none for ``.key``)."""
    dot = name.rfind(".")
    return name[dot + 1 :] if dot > 0 else None


def nameable(name: str) -> bool:
    """Whether a file name decoded from the OS is valid UTF-8 (no surrogate escapes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(name: str) -> str:
    """A printable form of a name that may hold undecodable bytes (``\\xNN`` escapes)."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _join(rel_dir: str, name: str) -> str:
    return f"{rel_dir}/{name}" if rel_dir else name


def walk(root: str, protect_secrets: bool = True) -> WalkResult:
    """List and read every indexable file of ``root`` (in path order)."""
    result = scan(root, protect_secrets)
    result.files = [wf for listed in result.listed if (wf := read_listed(result, listed)) is not None]
    return result


def scan(root: str, protect_secrets: bool = True) -> WalkResult:
    """List the files a walk would read, by name and metadata alone (``result.listed``, path order).

    Nothing is opened, so a re-index can tell unchanged files by size and
    modification time at the cost of a directory walk; :func:`read_listed`
    reads one and applies the content rules (not UTF-8, grown past the limit).
    """
    result = WalkResult()
    rules = _IgnoreRules()
    collected: list[ListedFile] = []
    root = os.path.abspath(root)
    stack: list[tuple[str, str]] = [(root, "")]  # (absolute dir, "/"-separated path from the root)
    while stack:
        abs_dir, rel_dir = stack.pop()
        try:
            with os.scandir(abs_dir) as it:
                entries = list(it)
        except OSError:
            # Permission denied, a path too long for the system, a directory gone
            # mid-walk: everything beneath is missing, so it is counted, not hidden.
            result.note(rel_dir or ".", SkipReason.DIR_UNREADABLE, 0, True)
            continue
        entries.sort(key=lambda e: e.name)
        if any(e.name == ".gitignore" for e in entries):
            rules.load(abs_dir, rel_dir)
        checks = rules.checks_for(rel_dir)
        subdirs: list[tuple[str, str]] = []
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                rel = _join(rel_dir, name)
                if not nameable(name):
                    result.note(_join(rel_dir, shown_name(name)), SkipReason.NAME_NOT_UTF8, 0, True)
                elif name in PRUNED_DIRS or name.startswith("."):
                    result.note(rel, SkipReason.EXCLUDED_DIR, 0, True)
                elif checks and rules.ignored_by(checks, name, True):
                    result.note(rel, SkipReason.GITIGNORED, 0, True)
                else:
                    subdirs.append((entry.path, rel))
                continue
            _visit_file(result, collected, checks, entry, rel_dir, protect_secrets)
        stack.extend(reversed(subdirs))
    collected.sort(key=lambda f: f.path)
    result.listed = collected
    return result


def _visit_file(result: WalkResult, collected: list[ListedFile],
                checks: list[tuple[str, re.Pattern[str] | None, pathspec.GitIgnoreSpec]], entry: os.DirEntry[str],
                rel_dir: str, protect_secrets: bool) -> None:
    name = entry.name
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        result.note(_join(rel_dir, shown_name(name)), SkipReason.UNREADABLE)
        return
    if not nameable(name):
        if stat.S_ISREG(st.st_mode):
            result.note(_join(rel_dir, shown_name(name)), SkipReason.NAME_NOT_UTF8, st.st_size)
        return
    rel = _join(rel_dir, name)
    if stat.S_ISLNK(st.st_mode):
        result.note(rel, SkipReason.SYMLINK)
        return
    if not stat.S_ISREG(st.st_mode):
        result.note(rel, SkipReason.NOT_REGULAR)
        return
    if checks and _IgnoreRules.ignored_by(checks, name, False):
        result.note(rel, SkipReason.GITIGNORED, st.st_size)
        return
    if protect_secrets and _sensitive_name(name):
        result.note(rel, SkipReason.SENSITIVE, st.st_size)
        return
    if rust_extension(name) == SKIPPED_EXTENSION:
        result.note(rel, SkipReason.JSONL, st.st_size)
        return
    if st.st_size > MAX_FILE_BYTES:
        result.note(rel, SkipReason.TOO_LARGE, st.st_size)
        return
    collected.append(ListedFile(rel, entry.path, st.st_size, st.st_mtime_ns))


def read_listed(result: WalkResult, listed: ListedFile) -> WalkedFile | None:
    """Read one listed file; None (and the reason noted in ``result``) when it cannot be indexed."""
    try:
        with open(listed.abs_path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError:
        result.note(listed.path, SkipReason.UNREADABLE, listed.size)
        return None
    if len(raw) > MAX_FILE_BYTES:  # grew since it was listed
        result.note(listed.path, SkipReason.TOO_LARGE, len(raw))
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        result.note(listed.path, SkipReason.NOT_UTF8, len(raw))
        return None
    return WalkedFile(listed.path, raw, text, len(raw), listed.mtime_ns)

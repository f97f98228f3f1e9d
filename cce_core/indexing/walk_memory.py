"""A re-index's directory walk that re-lists only the directories that changed since the last one.

Why it exists: on a 75,000-file tree the walk of :func:`.walker.scan` costs
about a second, nearly all of it per-entry Python (sorting, the ignore rules,
the sensitive-name and extension checks, the ``DirEntry`` objects), and a
one-file edit pays it in full. A directory's listing only changes when its
modification time does, so the previous run's listing of every directory —
which entries it held, and what the name rules decided for each — is kept
beside the store (``.<store>.walk``) and replayed while the directory's
(mtime, ctime, inode) still match. What can change without touching the
directory is still looked at every run: every file entry is ``lstat``-ed (its
size, time and type feed the listing and the too-large rule), and every
``.gitignore`` the tree holds is ``stat``-ed first — one whose signature moved
invalidates the whole memory, since its rules decide verdicts far below it.

The result is the :class:`.walker.WalkResult` a full :func:`.walker.scan`
returns — same files, same metadata, same notes in the same order
(``tests/test_walk_memory.py`` compares them after adds, deletes, renames,
ignore-rule changes, symlinks and unreadable directories). Like the racy and
skip lists, the memory is only a hint: missing, unreadable, foreign (another
root, another ``protect_secrets``, another format, walk rules from other code:
:func:`rules_fingerprint`) or contradicted (a ``.gitignore`` appears or
vanishes, a listing is malformed) means a full walk. A directory modified
within :data:`.racy.RACY_WINDOW_NS` of the walk is not remembered, since a
second change in the same clock tick would leave its time unchanged.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import time
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter
from pathlib import Path

import pathspec

from cce_core.foundation.atomic import atomic_write
from cce_core.foundation.collector import collector_paused
from cce_core.indexing import walker as walker_module
from cce_core.indexing.racy import is_racy
from cce_core.indexing.walker import (
    MAX_FILE_BYTES,
    PRUNED_DIRS,
    SKIPPED_EXTENSION,
    ListedFile,
    SkipReason,
    WalkResult,
    _IgnoreRules,
    _join,
    _sensitive_name,
    nameable,
    rust_extension,
    scan,
    shown_name,
)
from cce_core.secrets import sensitive_paths

WALK_FORMAT = "cce-python-walk/2"  # 2: names joined by "/", not NUL


@lru_cache(maxsize=1)
def rules_fingerprint() -> str:
    """A hash of the code whose rules the remembered verdicts come from (the walker, the sensitive names, this
    module, the ignore-file matcher's version).

    A memory written by other rules — an upgrade that prunes another directory or
    calls another name sensitive — must not be replayed: a file the new rules
    keep out could otherwise reach the store. Hashing the sources also covers
    an editable install, whose version does not move when its code does.
    """
    digest = hashlib.sha256(f"{WALK_FORMAT} pathspec {getattr(pathspec, '__version__', '?')}".encode())
    for module in (walker_module, sensitive_paths, sys.modules[__name__]):
        try:
            digest.update(Path(module.__file__ or "").read_bytes())
        except OSError:  # sources not on disk: no fingerprint is stable, so no memory is ever replayed
            digest.update(os.urandom(16))
    return digest.hexdigest()[:32]


# What the name rules decided for an entry, one letter each (see :data:`Listing`).
_DESCEND = "d"  # a directory walked into
_DIR_EXCLUDED = "x"  # a pruned or dot directory
_DIR_IGNORED = "i"  # a directory a .gitignore excludes
_FILE_KEPT = "k"  # a file the name rules keep (its size still decides)
_FILE_IGNORED = "g"
_FILE_SENSITIVE = "s"
_FILE_JSONL = "j"
_FILE_VERDICTS = {_FILE_IGNORED: SkipReason.GITIGNORED, _FILE_SENSITIVE: SkipReason.SENSITIVE,
                  _FILE_JSONL: SkipReason.JSONL}
_SEPARATOR = "/"  # never part of a file name, and unlike NUL not escaped in JSON (a smaller, faster file)
_FORMAT_BITS, _REGULAR = stat.S_IFMT(0o177777), stat.S_IFREG  # st_mode & _FORMAT_BITS == _REGULAR: S_ISREG, inlined


def walk_memory_path(store_path: Path) -> Path:
    """The walk memory of the store whose manifest is ``store_path``."""
    return store_path.with_name(f".{store_path.name}.walk")


Signature = tuple[int, int, int]  # (st_mtime_ns, st_ctime_ns, st_ino)


def _signature(st: os.stat_result) -> Signature:
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


# A remembered directory, as JSON keeps it (no conversion on load):
# [mtime_ns, ctime_ns, inode, one verdict letter per entry, the entries' names joined by "/"].
Listing = list[int | str]


@dataclass
class _Memory:
    """Remembered listings by rel dir (:data:`Listing`), and the .gitignore signatures by the dir holding one."""

    dirs: dict[str, Listing] = field(default_factory=dict)
    gitignores: dict[str, Signature] = field(default_factory=dict)


class _MemoryDamaged(Exception):
    """A remembered listing is not shaped as this module writes them: walk in full."""


class _RulesMoved(Exception):
    """A .gitignore appeared or vanished where the memory said otherwise: the remembered verdicts are void."""


def _load(path: Path, root: str, protect_secrets: bool) -> _Memory | None:
    try:
        body = json.loads(path.read_bytes().decode("utf-8"))
        if not isinstance(body, dict) or body.get("format") != WALK_FORMAT or body.get("root") != root \
                or body.get("rules") != rules_fingerprint() \
                or body.get("protect_secrets") is not protect_secrets:
            return None
        dirs = body["dirs"]  # each listing's shape is checked when it is used (a full check costs a walk's worth)
        if not isinstance(dirs, dict):
            return None
        gitignores = {str(d): (int(v[0]), int(v[1]), int(v[2])) for d, v in body["gitignores"].items()}
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
    return _Memory(dirs, gitignores)


def _save(path: Path, root: str, protect_secrets: bool, memory: _Memory) -> None:
    body = {"format": WALK_FORMAT, "root": root, "rules": rules_fingerprint(), "protect_secrets": protect_secrets,
            "gitignores": {d: list(s) for d, s in sorted(memory.gitignores.items())},
            "dirs": dict(sorted(memory.dirs.items()))}
    with contextlib.suppress(OSError):  # only a hint: the next run walks in full
        atomic_write(path, (json.dumps(body, separators=(",", ":")) + "\n").encode("utf-8"), durable=False)


def _gitignores_hold(abs_root: str, memory: _Memory) -> bool:
    """Whether every remembered .gitignore is still there with the same signature."""
    for rel_dir, signature in memory.gitignores.items():
        try:
            st = os.stat(os.path.join(abs_root, rel_dir, ".gitignore") if rel_dir else
                         os.path.join(abs_root, ".gitignore"))
        except OSError:
            return False
        if _signature(st) != signature:
            return False
    return True


def scan_remembered(root: str, protect_secrets: bool, memory_path: Path | None, *, use: bool = True,
                    clock: int | None = None) -> WalkResult:
    """:func:`.walker.scan`, re-listing only the directories changed since the memory at ``memory_path``.

    ``use`` False ignores the memory (a full walk) but still writes a new one;
    ``memory_path`` None is a plain :func:`.walker.scan`. ``clock`` is the
    walk's time in ns (default: now), against which directories are judged racy.
    """
    if memory_path is None:
        return scan(root, protect_secrets)
    abs_root = os.path.abspath(root)
    now_ns = time.time_ns() if clock is None else clock
    previous = _load(memory_path, abs_root, protect_secrets) if use else None
    if previous is not None and not _gitignores_hold(abs_root, previous):
        previous = None
    # The walk makes one object per file of the tree and no reference cycle: the cyclic collector,
    # which would traverse them all again and again as they pile up, is paused meanwhile.
    with collector_paused():
        try:
            walk = _Walk(abs_root, protect_secrets, previous, now_ns)
            result = walk.run()
        except (_RulesMoved, _MemoryDamaged):
            walk = _Walk(abs_root, protect_secrets, None, now_ns)
            result = walk.run()
    if not walk.keep_memory:
        _save(memory_path, abs_root, protect_secrets, _Memory())
    elif previous is None or walk.fresh != previous:  # most re-indexes change no directory: nothing to write
        _save(memory_path, abs_root, protect_secrets, walk.fresh)
    return result


class _Walk:
    """One walk: the traversal of :func:`.walker.scan`, fed by remembered listings where they still hold."""

    def __init__(self, abs_root: str, protect_secrets: bool, previous: _Memory | None, now_ns: int) -> None:
        self.abs_root = abs_root
        self.protect_secrets = protect_secrets
        self.previous = previous
        self.fresh = _Memory()  # what this walk saw, to remember for the next one
        self.now_ns = now_ns
        self.result = WalkResult()
        self.collected: list[ListedFile] = []
        self.rules = _IgnoreRules()
        self.loaded: set[str] = set()  # dirs whose .gitignore the rules hold
        # Dirs known to hold a .gitignore: remembered ones, and those found while listing.
        self.holders: set[str] = set(previous.gitignores) if previous is not None else set()
        self.keep_memory = True  # False when a .gitignore changed too recently to be trusted by its time

    # -- the ignore rules, loaded only for directories that are listed afresh

    def _ensure_rules(self, abs_dir: str, rel_dir: str) -> None:
        """Load, shallow first, every .gitignore that applies in ``rel_dir`` (its own included)."""
        chain = [rel_dir]
        current = rel_dir
        while current:
            current = current.rpartition("/")[0]
            chain.append(current)
        for rel in reversed(chain):
            if rel in self.holders and rel not in self.loaded:
                self.loaded.add(rel)
                self.rules.load(os.path.join(self.abs_root, rel) if rel else self.abs_root, rel)

    # -- one directory

    def _list_afresh(self, abs_dir: str, rel_dir: str, dir_stat: os.stat_result | None) -> list[str] | None:
        """Scan ``abs_dir`` the way :func:`.walker.scan` does; returns its subdirectories to walk (None: unreadable)."""
        try:
            with os.scandir(abs_dir) as it:
                entries = list(it)
        except OSError:
            self.result.note(rel_dir or ".", SkipReason.DIR_UNREADABLE, 0, True)
            return None
        entries.sort(key=lambda e: e.name)
        has_gitignore = any(e.name == ".gitignore" for e in entries)
        if has_gitignore and self.previous is not None and rel_dir not in self.previous.gitignores and \
                self._remembers_below(rel_dir):
            raise _RulesMoved  # a new .gitignore: the remembered verdicts beneath it were made without it
        if has_gitignore:
            self.holders.add(rel_dir)
            try:
                gitignore = os.stat(os.path.join(abs_dir, ".gitignore"))
                self.fresh.gitignores[rel_dir] = _signature(gitignore)
                if is_racy(gitignore.st_mtime_ns, self.now_ns):
                    self.keep_memory = False  # it could change again without moving its time
            except OSError:
                self.keep_memory = False
        self._ensure_rules(abs_dir, rel_dir)
        checks = self.rules.checks_for(rel_dir)
        verdicts: list[tuple[str, str]] = []
        subdirs: list[str] = []
        rememberable = dir_stat is not None and not is_racy(dir_stat.st_mtime_ns, self.now_ns)
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
                rememberable = False  # its kind was not decided: look again next time
            if not nameable(name):
                rememberable = False  # kept out of the (UTF-8) memory; such directories are re-listed
            if is_dir:
                rel = _join(rel_dir, name)
                if not nameable(name):
                    self.result.note(_join(rel_dir, shown_name(name)), SkipReason.NAME_NOT_UTF8, 0, True)
                elif name in PRUNED_DIRS or name.startswith("."):
                    self.result.note(rel, SkipReason.EXCLUDED_DIR, 0, True)
                    verdicts.append((_DIR_EXCLUDED, name))
                elif checks and self.rules.ignored_by(checks, name, True):
                    self.result.note(rel, SkipReason.GITIGNORED, 0, True)
                    verdicts.append((_DIR_IGNORED, name))
                else:
                    subdirs.append(name)
                    verdicts.append((_DESCEND, name))
                continue
            if not nameable(name):
                self._visit_file(abs_dir, rel_dir, name, _FILE_KEPT)  # notes it as a name not UTF-8
                continue
            if checks and _IgnoreRules.ignored_by(checks, name, False):
                verdict = _FILE_IGNORED
            elif self.protect_secrets and _sensitive_name(name):
                verdict = _FILE_SENSITIVE
            elif rust_extension(name) == SKIPPED_EXTENSION:
                verdict = _FILE_JSONL
            else:
                verdict = _FILE_KEPT
            verdicts.append((verdict, name))
            self._visit_file(abs_dir, rel_dir, name, verdict)
        if rememberable and dir_stat is not None:
            self.fresh.dirs[rel_dir] = [*_signature(dir_stat), "".join(letter for letter, _ in verdicts),
                                        _SEPARATOR.join(name for _, name in verdicts)]
        return subdirs

    def _remembers_below(self, rel_dir: str) -> bool:
        """Whether the memory holds a listing of ``rel_dir`` or of a directory beneath it."""
        assert self.previous is not None
        if not rel_dir:
            return bool(self.previous.dirs)
        above = rel_dir + "/"
        return rel_dir in self.previous.dirs or any(d.startswith(above) for d in self.previous.dirs)

    def _replay(self, abs_dir: str, rel_dir: str, letters: str, names: str) -> list[str]:
        """Replay a remembered listing; files are still looked at. Returns the subdirectories to walk.

        The hot loop of a re-index on a large tree (once per file of the tree):
        what :meth:`_visit_file` does for a file whose name (valid UTF-8,
        remembered) is known, inlined, the common verdict (a kept regular file)
        tested first.
        """
        subdirs: list[str] = []
        if not letters:
            return subdirs
        entries = names.split(_SEPARATOR)
        if len(entries) != len(letters):
            raise _MemoryDamaged
        note = self.result.note
        collect = self.collected.append
        lstat = os.lstat
        abs_prefix = abs_dir if abs_dir.endswith(os.sep) else abs_dir + os.sep
        rel_prefix = rel_dir + "/" if rel_dir else ""
        for verdict, name in zip(letters, entries, strict=True):  # lengths checked above
            if verdict == _FILE_KEPT:
                path = abs_prefix + name
                try:
                    st = lstat(path)
                except OSError:
                    note(rel_prefix + name, SkipReason.UNREADABLE)
                    continue
                if st.st_mode & _FORMAT_BITS == _REGULAR and st.st_size <= MAX_FILE_BYTES:
                    collect(ListedFile(rel_prefix + name, path, st.st_size, st.st_mtime_ns))
                    continue
                self._odd_file(rel_prefix + name, st, verdict)
                continue
            if verdict == _DESCEND:
                subdirs.append(name)
                continue
            rel = rel_prefix + name
            if verdict == _DIR_EXCLUDED:
                note(rel, SkipReason.EXCLUDED_DIR, 0, True)
                continue
            if verdict == _DIR_IGNORED:
                note(rel, SkipReason.GITIGNORED, 0, True)
                continue
            if verdict not in _FILE_VERDICTS:
                raise _MemoryDamaged
            try:
                st = lstat(abs_prefix + name)
            except OSError:
                note(rel, SkipReason.UNREADABLE)
                continue
            self._odd_file(rel, st, verdict)
        return subdirs

    def _odd_file(self, rel: str, st: os.stat_result, verdict: str) -> None:
        """Note a replayed entry that is not a kept regular file of a keepable size (see :meth:`_visit_file`)."""
        mode = st.st_mode
        if not stat.S_ISREG(mode):
            self.result.note(rel, SkipReason.SYMLINK if stat.S_ISLNK(mode) else SkipReason.NOT_REGULAR)
        elif verdict != _FILE_KEPT:
            self.result.note(rel, _FILE_VERDICTS[verdict], st.st_size)
        else:
            self.result.note(rel, SkipReason.TOO_LARGE, st.st_size)

    def _visit_file(self, abs_dir: str, rel_dir: str, name: str, verdict: str) -> None:
        """:func:`.walker._visit_file` with the name rules' verdict already known."""
        path = os.path.join(abs_dir, name)
        try:
            st = os.lstat(path)
        except OSError:
            self.result.note(_join(rel_dir, shown_name(name)), SkipReason.UNREADABLE)
            return
        mode = st.st_mode
        if not nameable(name):
            if stat.S_ISREG(mode):
                self.result.note(_join(rel_dir, shown_name(name)), SkipReason.NAME_NOT_UTF8, st.st_size)
            return
        rel = _join(rel_dir, name)
        if stat.S_ISLNK(mode):
            self.result.note(rel, SkipReason.SYMLINK)
            return
        if not stat.S_ISREG(mode):
            self.result.note(rel, SkipReason.NOT_REGULAR)
            return
        if verdict != _FILE_KEPT:
            self.result.note(rel, _FILE_VERDICTS[verdict], st.st_size)
            return
        if st.st_size > MAX_FILE_BYTES:
            self.result.note(rel, SkipReason.TOO_LARGE, st.st_size)
            return
        self.collected.append(ListedFile(rel, path, st.st_size, st.st_mtime_ns))

    # -- the traversal

    def _holds(self, remembered: Listing, dir_stat: os.stat_result) -> bool:
        """Whether a remembered listing still describes the directory (and is shaped as written)."""
        if type(remembered) is not list or len(remembered) != 5 or type(remembered[3]) is not str \
                or type(remembered[4]) is not str:
            raise _MemoryDamaged
        return (remembered[0] == dir_stat.st_mtime_ns and remembered[1] == dir_stat.st_ctime_ns
                and remembered[2] == dir_stat.st_ino and not is_racy(dir_stat.st_mtime_ns, self.now_ns))

    def run(self) -> WalkResult:
        previous_dirs = self.previous.dirs if self.previous is not None else {}
        stack: list[tuple[str, str]] = [(self.abs_root, "")]
        while stack:
            abs_dir, rel_dir = stack.pop()
            try:
                dir_stat: os.stat_result | None = os.stat(abs_dir)
            except OSError:
                dir_stat = None
            remembered = previous_dirs.get(rel_dir)
            if remembered is not None and dir_stat is not None and self._holds(remembered, dir_stat):
                if rel_dir in self.previous.gitignores:  # type: ignore[union-attr]  # remembered implies previous
                    self.fresh.gitignores[rel_dir] = self.previous.gitignores[rel_dir]  # type: ignore[union-attr]
                self.fresh.dirs[rel_dir] = remembered
                subdirs = self._replay(abs_dir, rel_dir, remembered[3], remembered[4])  # type: ignore[arg-type]
            else:
                listed = self._list_afresh(abs_dir, rel_dir, dir_stat)
                if listed is None:
                    continue
                subdirs = listed
            abs_prefix = abs_dir if abs_dir.endswith(os.sep) else abs_dir + os.sep
            rel_prefix = rel_dir + "/" if rel_dir else ""
            stack.extend((abs_prefix + name, rel_prefix + name) for name in reversed(subdirs))
        self.collected.sort(key=attrgetter("path"))
        self.result.listed = self.collected
        return self.result


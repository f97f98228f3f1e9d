"""The git working clone that carries a sync cache to and from its remote.

Why it exists: a sync cache is an ordinary git repository, so teams share
prebuilt indexes with the hosting, access control and transport they already
have. Everything else in ``cce_core.sync`` talks about keys and bytes; this
module is the only place that knows how a key becomes a commit on the remote's
branch and how it is read back.

What it does: :meth:`GitRemote.open` clones the remote into a private
working clone (or heals the one a previous run left behind), then reads go
straight to the fetched ``origin/<branch>`` and writes become one commit
pushed with ``git push``. The real ``git`` command is used on purpose: it
brings the user's credentials and transports, git-LFS, and the remote's hooks,
and it behaves exactly like the other engines of the family over the same
cache. Arguments are always passed as a list, never through a shell.

The rules it keeps:

* A lost push race is retried by resetting onto the new remote state and
  writing the entries again (whole-file, last writer wins). Never a rebase:
  the fixed-path keys (``refs/<ref>``, ``current``) genuinely conflict, and a
  rebase that stops half way is how earlier clones got stuck.
* Every push is checked afterwards: the remote branch must carry what was
  pushed, or carry a later commit built on top of ours (superseded is fine);
  anything else is an error, never a silent success.
* One process at a time uses a clone. Several cce processes on one machine
  share one clone per remote, so every operation holds an advisory lock on
  ``<clone>.lock``; git children inherit the lock, so a killed cce keeps the
  clone locked until its orphaned git commands have finished.
* A kill at any moment leaves something the next :meth:`GitRemote.open`
  repairs: stale git lock files, an interrupted rebase, a half-written tree,
  a half-made clone (clones are made beside the target and renamed into
  place), and, as a last resort, a clone git cannot repair is cloned afresh.
  The remote itself is only ever changed by a push, which git applies
  atomically.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from cce_core.foundation.atomic import atomic_write
from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import UNICODE_WHITESPACE

DEFAULT_BRANCH = "main"
PUSH_ATTEMPTS = 5
CODE_LFS_PATTERN = "*.cce"
KNOWLEDGE_LFS_PATTERN = "*.cck"
# Blobs this small are sniffed for a git-LFS pointer stanza; real pointers are
# about 130 bytes, real artifacts far larger.
LFS_POINTER_MAX_BYTES = 512
LFS_POINTER_PREFIX = b"version https://git-lfs"
# How long an operation waits for another process to release the clone.
LOCK_TIMEOUT_SECONDS = 600.0
# How much of a blob a checked read takes from git at a time.
READ_BLOCK_BYTES = 1 << 20

# Commits in the cache carry a fixed identity, so they work on a CI runner or
# a fresh machine with no git identity configured.
SYNC_IDENTITY = ("-c", "user.name=cce-sync", "-c", "user.email=cce-sync@localhost")

# Settings applied to every git call in the clone:
# - an automatic gc runs in the foreground, so it finishes while the clone lock
#   is held instead of lingering in a detached child;
# - cache commits are machine writes: a user's commit.gpgSign must not make
#   them wait for a passphrase prompt that a CI job or an agent cannot answer.
_GIT_SETTINGS = ("-c", "gc.autoDetach=false", "-c", "commit.gpgSign=false")

# Variables that point git at some other repository. They are set when cce runs
# inside a git hook of the user's project; inherited as is, `git -C <clone>
# reset --hard` would act on the user's repository instead of the clone.
_REPOSITORY_ENV = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_SHALLOW_FILE", "GIT_GRAFT_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE",
    "GIT_QUARANTINE_PATH",
)

_CREDENTIALS_IN_URL = re.compile(r"(://[^/@:\s]*):[^/@\s]*@")


def lfs_attribute_line(pattern: str) -> str:
    """The ``.gitattributes`` line that routes ``pattern`` through git-LFS."""
    return f"{pattern} filter=lfs diff=lfs merge=lfs -text\n"


class RemoteError(CceError):
    """A sync remote operation failed; the message is one line, fit for ``error:``."""


class GitCommandError(RemoteError):
    """A git command exited non-zero; the message carries its stderr."""


class CloneError(RemoteError):
    """The remote could not be cloned."""


class CacheMiss(RemoteError):
    """The requested key is not on the remote."""


class LfsUnavailable(RemoteError):
    """git-LFS is needed but the ``git lfs`` command is not installed."""


class PushFailed(RemoteError):
    """Every push attempt was refused."""


class PushVerificationFailed(RemoteError):
    """git accepted a push, but the remote branch does not carry it."""


class CloneBusy(RemoteError):
    """Another process held the working clone for longer than the lock timeout."""


class InvalidKey(RemoteError):
    """A key that is not a plain relative path inside the cache."""


class BlobTooLarge(RemoteError):
    """A key read with a size limit holds more bytes than that limit."""

    def __init__(self, key: str, limit: int) -> None:
        super().__init__(f"{key} on the remote is over {limit} bytes")
        self.key = key
        self.limit = limit


class BlobCheck(Protocol):
    """Fed a blob's bytes block by block as git writes them; raises to stop the read (git is then killed)."""

    def feed(self, block: bytes) -> None: ...


class _SizeLimit:
    def __init__(self, key: str, limit: int) -> None:
        self.key, self.limit, self.seen = key, limit, 0

    def feed(self, block: bytes) -> None:
        self.seen += len(block)
        if self.seen > self.limit:
            raise BlobTooLarge(self.key, self.limit)


def display_url(text: str) -> str:
    """``text`` with the password of any URL in it replaced by ``***``, for messages and logs."""
    return _CREDENTIALS_IN_URL.sub(r"\1:***@", text)


def _one_line(raw: bytes | str) -> str:
    """git's stderr joined into one line (messages stay single-line), URL passwords masked."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    lines = (line.strip(UNICODE_WHITESPACE) for line in re.split(r"[\r\n]+", text))
    return display_url(" | ".join(line for line in lines if line))


def _text(raw: bytes) -> str:
    """A git command's output as text, trimmed the way the family trims it."""
    return raw.decode("utf-8", errors="replace").strip(UNICODE_WHITESPACE)


def _check_key(key: str, *, allow_root: bool = False) -> str:
    """Refuse keys that could escape the clone or name git's own files."""
    stripped = key.rstrip("/") if allow_root else key
    if allow_root and stripped == "":
        return ""
    parts = stripped.split("/")
    problem = None
    if not stripped:
        problem = "it is empty"
    elif stripped.startswith("/") or "\\" in stripped or "\0" in stripped:
        problem = "it must be a relative path with '/' separators"
    elif any(part in ("", ".", "..") for part in parts):
        problem = "it has an empty, '.' or '..' segment"
    elif parts[0].lower() == ".git":
        problem = "it names git's own directory"
    if problem:
        raise InvalidKey(f"invalid remote key {key!r}: {problem}")
    return stripped


def _looks_like_lfs_pointer(data: bytes) -> bool:
    return len(data) <= LFS_POINTER_MAX_BYTES and data.startswith(LFS_POINTER_PREFIX)


def _lfs_pointer_size(data: bytes) -> int | None:
    if not _looks_like_lfs_pointer(data):
        return None
    for line in data.decode("utf-8", errors="replace").split("\n"):
        if line.startswith("size "):
            with contextlib.suppress(ValueError):
                return int(line[5:].strip(UNICODE_WHITESPACE))
    return None


def _git_env(*, skip_smudge: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _REPOSITORY_ENV}
    if skip_smudge:
        # The clone's own tree never needs real LFS content: writes add fresh
        # bytes and reads smudge just the one key they want. Without this a
        # checkout would download every artifact in the cache.
        env["GIT_LFS_SKIP_SMUDGE"] = "1"
    else:
        env.pop("GIT_LFS_SKIP_SMUDGE", None)
    return env


def _run_git(args: Sequence[str], *, cwd: Path | None = None, data: bytes | None = None,
             skip_smudge: bool = True, keep_fds: tuple[int, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    command = ["git", *_GIT_SETTINGS]
    if cwd is not None:
        command += ["-C", str(cwd)]
    command += list(args)
    try:
        return subprocess.run(
            command, input=data, capture_output=True, env=_git_env(skip_smudge=skip_smudge),
            # Never let git read our stdin: under `cce mcp` it is the protocol stream.
            stdin=None if data is not None else subprocess.DEVNULL,
            pass_fds=keep_fds, check=False)
    except OSError as exc:
        raise RemoteError(f"failed to run git: {exc} — is git installed and on PATH?") from exc


def _run_git_checked(args: Sequence[str], check: BlobCheck, *, cwd: Path, data: bytes | None = None,
                     skip_smudge: bool = True, keep_fds: tuple[int, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    """:func:`_run_git`, with stdout handed to ``check`` as it arrives.

    A blob is then never held whole before it has been judged: when ``check``
    refuses a block, git is killed and the refusal raised, so a blob that is
    small on the remote but huge once inflated costs at most what was read.
    stderr goes to a file: git must never block on a full pipe nobody reads.
    """
    command = ["git", *_GIT_SETTINGS, "-C", str(cwd), *args]
    with tempfile.TemporaryFile() as errors:
        try:
            proc = subprocess.Popen(command, stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=errors, env=_git_env(skip_smudge=skip_smudge),
                                    pass_fds=keep_fds)
        except OSError as exc:
            raise RemoteError(f"failed to run git: {exc} — is git installed and on PATH?") from exc
        blocks: list[bytes] = []
        try:
            assert proc.stdout is not None
            if data is not None:
                assert proc.stdin is not None
                # Only small inputs are sent (an LFS pointer): they fit the pipe before git answers.
                proc.stdin.write(data)
                proc.stdin.close()
            while block := proc.stdout.read(READ_BLOCK_BYTES):
                check.feed(block)
                blocks.append(block)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        proc.stdout.close()
        returncode = proc.wait()
        errors.seek(0)
        return subprocess.CompletedProcess(command, returncode, b"".join(blocks), errors.read())


def _describe(args: Sequence[str]) -> str:
    return "git " + " ".join(args)


class _CloneLock:
    """An exclusive advisory lock on ``<clone>.lock``, held across processes.

    POSIX ``flock`` belongs to the open file, not the process: git commands
    started while it is held receive the descriptor (``pass_fds``), so the
    lock outlives a killed cce until its last git child exits.
    """

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self.fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        pause = 0.005
        try:
            while not self._try_lock(fd):
                if time.monotonic() >= deadline:
                    raise CloneBusy(
                        f"the sync clone lock {self.path} has been held by another process for over "
                        f"{self.timeout:g} s — wait for that cce to finish (or stop it) and retry")
                time.sleep(pause)
                pause = min(pause * 2, 0.1)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            # Closing drops our hold; git children that inherited it keep it until they exit.
            os.close(self.fd)
            self.fd = None

    @staticmethod
    def _try_lock(fd: int) -> bool:
        from cce_core.indexing.store_lock import try_exclusive_lock  # the same flock as a store's writer lock

        return try_exclusive_lock(fd)


class GitRemote:
    """A sync cache reached through a local working clone of its git remote.

    Create one with :meth:`open`. Keys are ``/``-separated paths in the cache
    repository. Reads see ``origin/<branch>`` as of this object's first read
    or its last write or :meth:`fetch`; call :meth:`fetch` to look again.
    """

    def __init__(self, url: str, clone_dir: Path, *, lfs: bool, lock_timeout: float | None = None) -> None:
        self.url = url
        # Absolute: git runs with -C here and with the parent as cwd for the clone.
        self.clone_dir = Path(clone_dir).absolute()
        self.lfs = lfs
        self.branch = DEFAULT_BRANCH
        # Read at call time, not bound as a default: the module's wait applies unless a caller asks otherwise.
        wait = LOCK_TIMEOUT_SECONDS if lock_timeout is None else lock_timeout
        self._lock = _CloneLock(self.clone_dir.with_name(self.clone_dir.name + ".lock"), wait)
        self._guard = threading.RLock()
        self._depth = 0
        self._fetched = False
        self._lfs_checked: bool | None = None

    # ----------------------------------------------------------------- opening

    @classmethod
    def open(cls, url: str, clone_dir: Path | str, *, lfs: bool, lock_timeout: float | None = None) -> GitRemote:
        """Clone ``url`` into ``clone_dir`` (or heal the clone already there).

        With ``lfs`` the cache's ``.gitattributes`` is made to route ``*.cce``
        through git-LFS; that needs the ``git lfs`` command. ``lock_timeout``
        is how long to wait for another process using the clone (a status
        lookup that must answer quickly passes a few seconds).
        """
        remote = cls(url, Path(clone_dir), lfs=lfs, lock_timeout=lock_timeout)
        with remote._exclusive():
            remote._prepare_clone()
            remote.branch = remote._current_branch() or DEFAULT_BRANCH
            if lfs:
                remote._ensure_lfs_locked(CODE_LFS_PATTERN)
        return remote

    def _prepare_clone(self) -> None:
        self.clone_dir.parent.mkdir(parents=True, exist_ok=True)
        self._sweep_leftovers()
        if not (self.clone_dir / ".git").is_dir():
            if self.clone_dir.exists():
                with contextlib.suppress(OSError):
                    self.clone_dir.rmdir()  # an empty directory is no obstacle
            if self.clone_dir.exists():
                raise CloneError(
                    f"could not clone remote {display_url(self.url)}: {self.clone_dir} exists and is not "
                    "a git clone — move it away and retry")
            self._clone_into_place()
            return
        try:
            self._heal()
        except RemoteError as damage:
            self._replace_damaged_clone(damage)

    def _sweep_leftovers(self) -> None:
        """Remove half-made and discarded clones of earlier runs (we hold the lock)."""
        for pattern in (f".{self.clone_dir.name}.clone-*", f".{self.clone_dir.name}.old-*"):
            for leftover in self.clone_dir.parent.glob(pattern):
                shutil.rmtree(leftover, ignore_errors=True)

    def _fresh_clone(self) -> Path:
        """Clone into a hidden sibling; a kill mid-clone leaves only that sibling behind."""
        staging = self.clone_dir.with_name(f".{self.clone_dir.name}.clone-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        done = _run_git(["clone", "--quiet", "--", self.url, str(staging)], cwd=self.clone_dir.parent,
                        keep_fds=self._keep_fds())
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise CloneError(display_url(f"could not clone remote {self.url}: git clone --quiet {self.url} "
                                         f"{self.clone_dir} failed: {_one_line(done.stderr)}"))
        return staging

    def _clone_into_place(self) -> None:
        staging = self._fresh_clone()
        os.replace(staging, self.clone_dir)

    def _replace_damaged_clone(self, damage: RemoteError) -> None:
        """A clone git cannot repair is only a cache: clone afresh and swap it in."""
        try:
            staging = self._fresh_clone()
        except CloneError as exc:
            raise RemoteError(f"the sync clone at {self.clone_dir} is damaged ({damage}) and a fresh clone "
                              f"failed too ({exc}) — delete the directory and retry") from exc
        discarded = self.clone_dir.with_name(f".{self.clone_dir.name}.old-{uuid.uuid4().hex[:8]}")
        os.replace(self.clone_dir, discarded)
        os.replace(staging, self.clone_dir)
        shutil.rmtree(discarded, ignore_errors=True)

    def _heal(self) -> None:
        """Bring a reused clone back to a clean state, whatever stopped the last run."""
        git_dir = self.clone_dir / ".git"
        self._remove_stale_git_locks(git_dir)
        mid_rebase = (git_dir / "rebase-merge").exists() or (git_dir / "rebase-apply").exists()
        # A rebase is left by an interrupted run of an older engine, whose retry
        # rebased. `--abort` restores the pre-rebase HEAD; when it cannot run,
        # `--quit` drops the rebase state and leaves HEAD detached (fixed below).
        if mid_rebase and not self._git_ok(["rebase", "--abort"]):
            quit_ = self._git(["rebase", "--quit"], check=False)
            if quit_.returncode != 0:
                raise RemoteError(f"the sync clone at {self.clone_dir} was left mid-rebase and could not "
                                  f"recover: {_one_line(quit_.stderr)}")
        if self._current_branch() is None:
            # `rebase --quit` (or anything else) left HEAD detached: re-attach it to
            # the cache's real branch, or the next push would fork a new branch.
            self._reattach_head()
        # Drop half-written files, staged leftovers and in-progress merge state.
        self._git(["reset", "--hard", "--quiet"], failure=f"could not restore a clean sync clone at {self.clone_dir}")
        self._git(["clean", "-ffdxq"], failure=f"could not restore a clean sync clone at {self.clone_dir}")

    @staticmethod
    def _remove_stale_git_locks(git_dir: Path) -> None:
        """Delete git lock files a killed git left behind.

        Safe because we hold the clone lock and every cce process takes it
        before running git here, and git children keep it while they live: a
        ``*.lock`` seen now belongs to nobody. (The clone is cce's private
        cache; nobody else should run git in it.)
        """
        for root, dirs, files in os.walk(git_dir):
            if Path(root) == git_dir:
                dirs[:] = [d for d in dirs if d not in ("objects", "lfs", "hooks")]
            for name in files:
                if name.endswith(".lock"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(os.path.join(root, name))
        for name in ("info/commit-graph.lock", "info/commit-graphs/commit-graph-chain.lock"):
            with contextlib.suppress(FileNotFoundError):
                (git_dir / "objects" / name).unlink()

    def _reattach_head(self) -> None:
        branch = self._default_remote_branch()
        args = ["checkout", "--quiet", "--force", "-B", branch]
        if self._git_ok(["rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{branch}^{{commit}}"]):
            args.append(f"refs/remotes/origin/{branch}")
        self._git(args, failure=f"could not re-attach the sync clone at {self.clone_dir}")

    def _default_remote_branch(self) -> str:
        """The remote's recorded default branch, else the clone's only branch, else ``main``."""
        recorded = self._git(["symbolic-ref", "--short", "refs/remotes/origin/HEAD"], check=False)
        name = _text(recorded.stdout)
        if recorded.returncode == 0 and name.startswith("origin/") and len(name) > len("origin/"):
            return name[len("origin/"):]
        listed = self._git(["for-each-ref", "--format=%(refname:short)", "refs/heads/"], check=False)
        branches = [b for b in _text(listed.stdout).split("\n") if b.strip(UNICODE_WHITESPACE)]
        if listed.returncode == 0 and len(branches) == 1:
            return branches[0].strip(UNICODE_WHITESPACE)
        return DEFAULT_BRANCH

    def _current_branch(self) -> str | None:
        # Works on an unborn branch too (a clone of an empty remote).
        done = self._git(["symbolic-ref", "--short", "HEAD"], check=False)
        name = _text(done.stdout)
        return name if done.returncode == 0 and name else None

    # --------------------------------------------------------------------- LFS

    def ensure_lfs(self, pattern: str = CODE_LFS_PATTERN) -> None:
        """Make the cache route ``pattern`` (``*.cce``, ``*.cck``) through git-LFS.

        Adds the ``.gitattributes`` line with its own commit and push when the
        remote lacks it; a line for the pattern that is already there is kept
        as the cache's owner wrote it.
        """
        with self._exclusive():
            self._ensure_lfs_locked(pattern)

    def _lfs_available(self) -> bool:
        if self._lfs_checked is None:
            self._lfs_checked = _run_git(["lfs", "version"], keep_fds=self._keep_fds()).returncode == 0
        return self._lfs_checked

    def _ensure_lfs_locked(self, pattern: str) -> None:
        if not self._lfs_available():
            raise LfsUnavailable(
                "git-LFS is enabled for this remote (sync.lfs) but `git lfs` is not installed — install "
                f"git-lfs or run `cce sync init --remote {display_url(self.url)} --no-lfs`")
        # Every clone needs the filters and the pre-push hook that uploads the
        # objects, not just the one that first wrote the attribute.
        if not self._git_ok(["config", "--local", "--get", "filter.lfs.process"]):
            self._git(["lfs", "install", "--local"])
        self._fetch()
        if self._attributes_have(self._read_origin(".gitattributes") or b"", pattern):
            return
        self._start_from_origin()
        line = lfs_attribute_line(pattern).encode()
        attributes = self.clone_dir / ".gitattributes"

        def apply() -> dict[str, bytes | None]:
            # Re-checked on every attempt: a retry starts from the new remote state.
            content = attributes.read_bytes() if attributes.is_file() else b""
            if not self._attributes_have(content, pattern):
                if content and not content.endswith(b"\n"):
                    content += b"\n"
                content += line
                self._write_file(".gitattributes", content)
            self._git(["add", "--", ".gitattributes"])
            self._commit_staged(f"cce sync: enable git-LFS for {pattern}")
            return {".gitattributes": content}

        self._publish(apply)

    @staticmethod
    def _attributes_have(content: bytes, pattern: str) -> bool:
        return any(line.split()[:1] == [pattern]
                   for line in content.decode("utf-8", errors="replace").split("\n"))

    # ------------------------------------------------------------------- reads

    def fetch(self) -> None:
        """Refresh ``origin/<branch>``. Failures are ignored: offline, reads are stale
        and pushes fail loudly instead."""
        with self._exclusive():
            self._fetch()

    def has(self, key: str) -> bool:
        """Is ``key`` on the remote branch?"""
        key = _check_key(key)
        with self._exclusive():
            self._ensure_fetched()
            return self._git_ok(["cat-file", "-e", f"{self._tip}:{key}"])

    def read_text(self, key: str, *, max_bytes: int | None = None) -> str | None:
        """A small text key (a ref pointer, ``current``), trimmed; ``None`` when absent.

        Read straight from the fetched branch, no LFS involved. A key that
        exists but cannot be read is an error, never mistaken for absence.
        With ``max_bytes``, a key holding more raises :class:`BlobTooLarge`
        once that much has been read.
        """
        key = _check_key(key)
        with self._exclusive():
            self._ensure_fetched()
            data = self._read_origin(key, check=None if max_bytes is None else _SizeLimit(key, max_bytes))
        return None if data is None else _text(data)

    def get(self, key: str, *, guard: Callable[[], BlobCheck] | None = None) -> bytes:
        """The bytes of ``key`` as pushed, downloading them from git-LFS if needed.

        ``guard`` makes a :class:`BlobCheck` for each read (the blob, then
        the LFS object it points at): it sees the bytes as they arrive and
        can refuse them before the whole blob is read.
        """
        key = _check_key(key)
        with self._exclusive():
            self._ensure_fetched()
            data = self._read_origin(key, check=guard() if guard is not None else None)
            if data is None:
                raise CacheMiss(f"cache miss: {key} not found on the remote")
            if _looks_like_lfs_pointer(data):
                data = self._smudge(key, data, check=guard() if guard is not None else None)
        return data

    def _smudge(self, key: str, pointer: bytes, *, check: BlobCheck | None = None) -> bytes:
        # The blob is read raw and only the LFS filter is applied, so no local
        # setting (core.autocrlf, stale attributes in the tree) can alter the bytes.
        if not self._lfs_available():
            raise LfsUnavailable(f"{key} is stored in git-LFS on the remote but `git lfs` is not installed — "
                                 "install git-lfs to download it")
        args = ["lfs", "smudge", "--", key]
        if check is None:
            done = self._git(args, data=pointer, check=False, skip_smudge=False)
        else:
            done = _run_git_checked(args, check, cwd=self.clone_dir, data=pointer, skip_smudge=False,
                                    keep_fds=self._keep_fds())
        if done.returncode != 0:
            raise RemoteError(f"could not download {key} from git-LFS: {_one_line(done.stderr)}")
        if _looks_like_lfs_pointer(done.stdout):
            raise RemoteError(f"git-LFS returned only the pointer for {key} — check the remote's LFS storage")
        return done.stdout

    def list_dirs(self, prefix: str) -> list[str]:
        """The names of the directories directly under ``prefix``, sorted."""
        prefix = _check_key(prefix, allow_root=True)
        with self._exclusive():
            self._ensure_fetched()
            names = self._ls_tree(["-d", "--name-only"], f"{prefix}/" if prefix else "")
        return sorted({name.rsplit("/", 1)[-1] for name in names if name})

    def list_keys(self, prefix: str, suffix: str = "") -> list[str]:
        """Every key under ``prefix`` (recursively) that ends with ``suffix``, sorted."""
        prefix = _check_key(prefix, allow_root=True)
        with self._exclusive():
            self._ensure_fetched()
            names = self._ls_tree(["-r", "--name-only"], prefix)
        return sorted({name for name in names if name and name.endswith(suffix)})

    def list_shas(self, prefix: str) -> list[str]:
        """The shas of the ``<sha>.cce`` artifacts under ``prefix`` (nested ones too), sorted."""
        shas = {key.rsplit("/", 1)[-1][: -len(".cce")] for key in self.list_keys(prefix, ".cce")}
        return sorted(sha for sha in shas if sha)

    def list_sizes(self, prefix: str, suffix: str = ".cce") -> list[tuple[str, int]]:
        """``(key, bytes)`` for the blobs under ``prefix`` ending with ``suffix``, sorted.

        A blob that is a git-LFS pointer reports the size it records, so the
        numbers are the artifacts' real sizes on an LFS cache too.
        """
        prefix = _check_key(prefix, allow_root=True)
        with self._exclusive():
            self._ensure_fetched()
            rows: list[tuple[str, str, int]] = []
            for entry in self._ls_tree(["-r", "-l"], prefix):
                meta, _, path = entry.partition("\t")
                fields = meta.split()
                if not path.endswith(suffix) or len(fields) != 4 or fields[1] != "blob":
                    continue  # a tree, a submodule or a junk line: not an artifact
                with contextlib.suppress(ValueError):
                    rows.append((path, fields[2], int(fields[3])))
            small = {oid for _path, oid, size in rows if size <= LFS_POINTER_MAX_BYTES}
            recorded = self._pointer_sizes(small)
        return sorted((path, recorded.get(oid, size)) for path, oid, size in rows)

    def _pointer_sizes(self, oids: set[str]) -> dict[str, int]:
        """The sizes recorded by those of ``oids`` that are LFS pointers, in one git call."""
        if not oids:
            return {}
        ordered = sorted(oids)
        done = self._git(["cat-file", "--batch"], data="".join(f"{oid}\n" for oid in ordered).encode(), check=False)
        out: dict[str, int] = {}
        stream, pos = done.stdout, 0
        for oid in ordered:
            end = stream.find(b"\n", pos)
            if end < 0:
                break
            header = stream[pos:end].split()
            pos = end + 1
            if len(header) != 3 or header[1] != b"blob":
                continue
            size = int(header[2])
            body = stream[pos:pos + size]
            pos += size + 1
            recorded = _lfs_pointer_size(body)
            if recorded is not None:
                out[oid] = recorded
        return out

    def first_added_order(self, prefix: str) -> list[str]:
        """Keys under ``prefix`` in the order commits first added them, oldest first.

        Commit order, not timestamps or names: two pushes in one second still
        have a well-defined ancestry.
        """
        prefix = _check_key(prefix, allow_root=True)
        with self._exclusive():
            self._ensure_fetched()
            done = self._git(["log", "--reverse", "--format=", "--name-only", "--diff-filter=A", "-z",
                              self._tip, "--", prefix or "."], check=False)
        if done.returncode != 0:
            return []  # unborn branch: nothing was ever added
        seen: dict[str, None] = {}
        for name in done.stdout.decode("utf-8", errors="replace").split("\0"):
            name = name.strip("\n")
            if name:
                seen.setdefault(name, None)
        return list(seen)

    # ------------------------------------------------------------------ writes

    def put(self, key: str, data: bytes) -> None:
        """Publish one key; see :meth:`put_many`."""
        self.put_many([(key, data)])

    def put_many(self, entries: Sequence[tuple[str, bytes]]) -> None:
        """Publish all ``entries`` in one commit pushed to the remote branch.

        A lost push race is retried on top of the new remote state, up to
        :data:`PUSH_ATTEMPTS` pushes; afterwards the remote is checked to
        carry the entries (or a later commit built on ours).
        """
        if not entries:
            return
        wanted: dict[str, bytes] = {}
        for key, data in entries:
            wanted[_check_key(key)] = bytes(data)  # a repeated key: the last one wins
        message = f"cce sync: {entries[0][0]}" if len(entries) == 1 else f"cce sync: {len(entries)} artifacts"

        def apply() -> dict[str, bytes | None]:
            for key, data in wanted.items():
                self._write_file(key, data)
            self._git(["add", "--", *wanted])
            self._commit_staged(message)
            return dict(wanted)

        with self._exclusive():
            self._fetch()
            self._start_from_origin()
            self._publish(apply)

    def remove_many(self, keys: Sequence[str], message: str) -> None:
        """Delete ``keys`` from the remote branch in one commit (absent keys are fine)."""
        if not keys:
            return
        doomed = list(dict.fromkeys(_check_key(key) for key in keys))

        def apply() -> dict[str, bytes | None]:
            # --ignore-unmatch: on a retry another writer may have removed some already.
            self._git(["rm", "-q", "--ignore-unmatch", "--", *doomed])
            self._commit_staged(message)
            return dict.fromkeys(doomed)

        with self._exclusive():
            self._fetch()
            self._start_from_origin()
            self._publish(apply)

    def _write_file(self, key: str, data: bytes) -> None:
        try:
            atomic_write(self.clone_dir / key, data, durable=False)
        except OSError as exc:
            raise RemoteError(f"cannot write {key} in the sync clone {self.clone_dir}: {exc}") from exc

    def _start_from_origin(self) -> None:
        """Put the clone exactly at ``origin/<branch>``, discarding anything unpublished."""
        if self._origin_exists():
            self._git(["checkout", "--quiet", "--force", "-B", self.branch, self._tip],
                      failure=f"could not reset the sync clone onto origin/{self.branch}")
            return
        # The remote branch is unborn. Make ours unborn too, so that commits of an
        # earlier push that never landed are not published along with this one.
        if self._git_ok(["rev-parse", "--verify", "--quiet", "HEAD"]):
            self._git(["update-ref", "-d", f"refs/heads/{self.branch}"])
        self._git(["read-tree", "--empty"])
        self._git(["clean", "-ffdxq"])

    def _commit_staged(self, message: str) -> None:
        """Commit what is staged. Nothing staged means the branch already carries it."""
        staged = self._git(["diff", "--cached", "--quiet"], check=False)
        if staged.returncode == 0:
            return
        if staged.returncode != 1:
            raise GitCommandError(f"git diff --cached --quiet failed: {_one_line(staged.stderr)}")
        # Errors propagate: a commit that did not happen must never look published.
        self._git([*SYNC_IDENTITY, "commit", "-q", "-m", message])

    def _publish(self, apply: Callable[[], Mapping[str, bytes | None]]) -> None:
        """Apply the change, push it (retrying lost races), then verify what landed."""
        expected = apply()
        if not self._git_ok(["rev-parse", "--verify", "--quiet", "HEAD"]):
            return  # nothing was ever committed (e.g. removing from an empty cache)
        if not (self._origin_exists() and self._rev("HEAD") == self._rev(self._tip)):
            expected = self._push_with_retry(apply, expected)
        # HEAD is now the exact commit that landed: verification must tell "a
        # competitor built on top of it" apart from "it never got there".
        self._verify_published(expected, self._rev("HEAD"))

    def _push_with_retry(self, apply: Callable[[], Mapping[str, bytes | None]],
                         expected: Mapping[str, bytes | None]) -> Mapping[str, bytes | None]:
        """Push HEAD; on refusal reset onto the new remote state and apply again.

        Re-applying rather than rebasing: the cache's fixed-path keys are
        rewritten by every push, so racing commits conflict, and the agreed
        semantic is whole-file last-writer-wins. Returns what the pushed commit
        was built to carry.
        """
        refspec = f"HEAD:refs/heads/{self.branch}"
        last_error = ""
        for attempt in range(1, PUSH_ATTEMPTS + 1):
            pushed = self._git(["push", "--quiet", "origin", refspec], check=False)
            if pushed.returncode == 0:
                return expected
            last_error = _one_line(pushed.stderr)
            if attempt == PUSH_ATTEMPTS:
                break
            self._fetch()
            # A refusal while the remote branch is still unborn is not a race
            # (a hook, auth, the network): there is nothing to rebuild on.
            if self._origin_exists():
                self._start_from_origin()
                expected = apply()
        raise PushFailed(f"push to origin/{self.branch} failed after {PUSH_ATTEMPTS} attempts (lost a push race "
                         f"{PUSH_ATTEMPTS} times or the remote kept refusing): {last_error}")

    def _verify_published(self, expected: Mapping[str, bytes | None], pushed: str) -> None:
        """Check the remote branch really carries the push.

        The tip must hold each key as pushed (``None``: removed). If it does
        not, a competitor may have built on top of us, which is success: our
        commit must hold the key and be an ancestor of the tip.
        """
        self._fetch()
        tip = self._tip
        next_step = f"fetch and inspect origin/{self.branch}; local stores are unaffected; re-run the push to retry"
        landed: bool | None = None
        for key, data in expected.items():
            # The blob git stores for these bytes at this path: for an LFS path
            # that is the pointer, so LFS artifacts are compared exactly too.
            want = None if data is None else _text(self._git(
                ["hash-object", f"--path={key}", "--stdin"], data=data).stdout)
            if self._blob_id(tip, key) == want:
                continue
            what = f"carries {key} with the just-pushed content" if data is not None else f"has {key} removed"
            verb = "carrying" if data is not None else "removing"
            if self._blob_id(pushed, key) != want:
                raise PushVerificationFailed(
                    f"push verification failed: neither origin/{self.branch} nor the pushed commit {pushed} "
                    f"{what} — {next_step}")
            if landed is None:
                landed = self._git_ok(["merge-base", "--is-ancestor", pushed, tip])
            if not landed:
                raise PushVerificationFailed(
                    f"push verification failed: the pushed commit {pushed} {verb} {key} never landed on "
                    f"origin/{self.branch} — nothing was published; {next_step}")

    # ----------------------------------------------------------------- plumbing

    @property
    def _tip(self) -> str:
        return f"refs/remotes/origin/{self.branch}"

    def _fetch(self) -> None:
        # Errors are ignored by design: offline, reads see the last fetched state.
        self._git(["fetch", "--quiet", "origin"], check=False)
        self._fetched = True

    def _ensure_fetched(self) -> None:
        if not self._fetched:
            self._fetch()

    def _origin_exists(self) -> bool:
        return self._git_ok(["rev-parse", "--verify", "--quiet", f"{self._tip}^{{commit}}"])

    def _rev(self, rev: str) -> str:
        return _text(self._git(["rev-parse", "--verify", rev]).stdout)

    def _blob_id(self, treeish: str, key: str) -> str | None:
        done = self._git(["rev-parse", "--verify", "--quiet", f"{treeish}:{key}"], check=False)
        return _text(done.stdout) if done.returncode == 0 else None

    def _read_origin(self, key: str, *, check: BlobCheck | None = None) -> bytes | None:
        """The raw blob at ``key`` on the fetched branch (seen by ``check`` as it arrives); ``None`` when absent."""
        args = ["cat-file", "blob", f"{self._tip}:{key}"]
        if check is None:
            done = self._git(args, check=False)
        else:
            done = _run_git_checked(args, check, cwd=self.clone_dir, keep_fds=self._keep_fds())
        if done.returncode == 0:
            return done.stdout
        # Only a failed read pays for telling "absent" from "unreadable" (one git process per read).
        if not self._git_ok(["cat-file", "-e", f"{self._tip}:{key}"]):
            return None
        raise RemoteError(f"could not read {key} from origin/{self.branch}: {_one_line(done.stderr)}")

    def _ls_tree(self, options: list[str], path: str) -> list[str]:
        args = ["ls-tree", "-z", *options, self._tip]
        if path:
            args += ["--", path]
        done = self._git(args, check=False)
        if done.returncode != 0:
            return []  # unborn branch: nothing cached
        return done.stdout.decode("utf-8", errors="replace").split("\0")

    def _keep_fds(self) -> tuple[int, ...]:
        if self._lock.fd is None or sys.platform == "win32":
            return ()
        return (self._lock.fd,)

    def _git(self, args: Sequence[str], *, data: bytes | None = None, check: bool = True,
             skip_smudge: bool = True, failure: str | None = None) -> subprocess.CompletedProcess[bytes]:
        done = _run_git(args, cwd=self.clone_dir, data=data, skip_smudge=skip_smudge, keep_fds=self._keep_fds())
        if check and done.returncode != 0:
            detail = f"{_describe(args)} failed: {_one_line(done.stderr)}"
            raise GitCommandError(f"{failure}: {detail}" if failure else detail)
        return done

    def _git_ok(self, args: Sequence[str]) -> bool:
        return self._git(args, check=False).returncode == 0

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """Hold the clone lock (re-entrant within this object)."""
        with self._guard:
            if self._depth == 0:
                self._lock.acquire()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._lock.release()


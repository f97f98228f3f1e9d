"""Who a cache entry belongs to and where it lives: repo ids, remote keys, and the git facts behind them.

Every engine of the family reads and writes the same remote, so the names
built here are a wire format: a repo id, a key such as
``hash/2.3/<repo_id>/<sha>.cce`` or the working-clone directory must come out
byte-identical in every engine, or one engine's push is invisible to another's
pull. The few facts about the project's own checkout that decide those names
(origin URL, branch, HEAD, whether the tree is clean) are read here too, with
the real ``git`` command, so the sync commands hold no naming rules of their own.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from cce_core.foundation.errors import CceError
from cce_core.foundation.git_facts import git_text, run_git
from cce_core.foundation.textrules import UNICODE_WHITESPACE
from cce_core.sync.settings import KnowledgeSyncSettings, SyncSettings, cce_home

# The artifact format version in every code key. It names the artifact's shape,
# not the release, so an engine release that leaves the bytes alone never moves it.
SYNC_FORMAT_VERSION = "2.3"
# The only shareable embedder: its vectors are the same on every machine.
HASH_EMBEDDER = "hash"
# The ref a `--latest` pull follows when nothing else is named.
DEFAULT_REF = "main"
# Knowledge keys version on the knowledge contract, never on SYNC_FORMAT_VERSION.
KNOWLEDGE_CONTRACT = "cce.knowledge/v1"
KNOWLEDGE_KEY_VERSION = KNOWLEDGE_CONTRACT.rsplit("/", 1)[-1]
CODE_KEY_ROOT = f"{HASH_EMBEDDER}/{SYNC_FORMAT_VERSION}"
KNOWLEDGE_KEY_ROOT = f"knowledge/{KNOWLEDGE_KEY_VERSION}"
STORE_DIR_NAME = ".cce"

_ID_PUNCTUATION = frozenset("._-")
# A commit sha as a key may name one: lowercase hex, from git's shortest abbreviation to a SHA-256 id.
_SHA = re.compile(r"[0-9a-f]{4,64}")
SHA_RULE = "4 to 64 lowercase hex digits"


# --------------------------------------------------------------------------- ids


def sanitize_id(text: str) -> str:
    """``text`` with every character outside ``[A-Za-z0-9._-]`` replaced by ``_``.

    One ``_`` per Unicode code point, not per UTF-8 byte, as in every engine.
    """
    return "".join(c if (c.isascii() and c.isalnum()) or c in _ID_PUNCTUATION else "_" for c in text)


def normalize_repo_id(origin: str) -> str:
    """A git origin URL (or an id that is already normal) as a ``host__org__repo`` repo id.

    Takes ``scheme://[user@]host/path``, scp-style ``[user@]host:path`` and bare
    paths; one trailing ``.git`` goes. A left part with a ``/`` and no ``@``
    (``dir/x:y``) is a path, not a host, and so is ``x:/abs``.
    """
    text = origin.strip(UNICODE_WHITESPACE)
    text = text.removesuffix(".git")
    host, path = "", text
    if "://" in text:
        rest = text.split("://", 1)[1]
        authority, _, path = rest.partition("/")
        host = authority.rsplit("@", 1)[-1]
    elif ":" in text:
        left, right = text.split(":", 1)
        if "@" in left or ("/" not in left and not right.startswith("/")):
            host, path = left.rsplit("@", 1)[-1], right
    parts = ([host] if host else []) + [segment for segment in path.split("/") if segment]
    return sanitize_id("__".join(parts))


def _is_single_segment(value: str) -> bool:
    # Sanitize-stable ids hold no separator, so only the two traversal tokens
    # can resolve to anything but one ordinary path segment.
    return bool(value) and sanitize_id(value) == value and value not in (".", "..")


def valid_repo_id(repo_id: str) -> bool:
    """Whether ``repo_id`` can be one path segment of a key: non-empty, sanitize-stable, not ``.``/``..``."""
    return _is_single_segment(repo_id)


def is_sha(text: str) -> bool:
    """Whether ``text`` can be the sha of an artifact key (:data:`SHA_RULE`): no separator, bounded length."""
    return _SHA.fullmatch(text) is not None


def valid_corpus_id(corpus_id: str) -> bool:
    """Whether ``corpus_id`` can be one path segment of a key (the repo-id rule).

    ``..`` would otherwise make ``knowledge/v1/..`` and let a retention prune
    reach every corpus.
    """
    return _is_single_segment(corpus_id)


def resolve_repo_id(root: Path, settings: SyncSettings) -> str:
    """The repo id of the project at ``root``: ``sync.repo_id``, else its normalized git origin.

    Raises :class:`CceError` when there is neither, or when the result is not a
    single key segment (it would escape the repo's namespace on the remote).
    """
    repo_id = settings.repo_id
    if repo_id is None:
        url = origin_url(root)
        if url is None:
            raise CceError("cannot determine repo_id: no `sync.repo_id` configured and no git origin remote. "
                           "Set one with `cce sync init --repo-id <id>`.")
        repo_id = normalize_repo_id(url)
    if not valid_repo_id(repo_id):
        raise CceError(f"invalid repo_id `{repo_id}`: must be non-empty, charset [A-Za-z0-9._-], and a single path "
                       "segment — `.` and `..` are rejected (it is a path segment on the cache, so a traversal "
                       "token would escape the repo namespace)")
    return repo_id


def resolve_corpus_id(requested: str | None, settings: KnowledgeSyncSettings) -> str:
    """The corpus to push or pull: ``--corpus``, else ``knowledge.sync.corpus_id`` (never derived)."""
    corpus_id = requested if requested is not None else settings.corpus_id
    if corpus_id is None:
        raise CceError("cannot determine corpus_id: pass --corpus <id> or set `knowledge.sync.corpus_id` in "
                       ".cce/config (a corpus identity is never derived)")
    if not valid_corpus_id(corpus_id):
        raise CceError(f"invalid corpus_id `{corpus_id}`: must be non-empty, charset [A-Za-z0-9._-], and a single "
                       "path segment — `.` and `..` are rejected (it is a path segment on the cache, so a "
                       "traversal token would escape the corpus namespace)")
    return corpus_id


def member_repo_id(base_repo_id: str, member_name: str) -> str:
    """The repo id a workspace member is cached under."""
    return f"{base_repo_id}__{member_name}"


# --------------------------------------------------------------------------- remote keys


@dataclass(frozen=True)
class KeySpace:
    """One namespace of the remote, ``<root>/<owner>/…``, the owner a repo id or a corpus id.

    Code and knowledge are laid out alike: an owner's prefix holds its
    artifacts, each at its content address ``<version><suffix>`` (a commit sha,
    a snapshot), beside a few small named files (pointers, manifests).
    """

    root: str
    artifact_suffix: str

    def prefix(self, owner: str) -> str:
        return f"{self.root}/{owner}"

    def artifact(self, owner: str, version: str) -> str:
        """Where the artifact of ``owner`` at ``version`` lives."""
        return f"{self.prefix(owner)}/{version}{self.artifact_suffix}"

    def file(self, owner: str, *names: str) -> str:
        """A named file (or directory) under ``owner``'s prefix, such as ``file(owner, CURRENT_FILE)``."""
        return "/".join((self.prefix(owner), *names))


CODE_KEYS = KeySpace(CODE_KEY_ROOT, ".cce")
KNOWLEDGE_KEYS = KeySpace(KNOWLEDGE_KEY_ROOT, ".cck")
# The named files beside the artifacts.
REFS_DIR = "refs"  # refs/<branch>: the pointer naming the latest sha pushed from that branch (see ref_key)
WORKSPACE_MANIFEST_FILE = "workspace.yml"  # what `push --workspace` publishes, beside its members' prefixes
WORKSPACE_GRAPH_FILE = "workspace-graph.json"
CURRENT_FILE = "current"  # the pointer naming a corpus's active snapshot
# The small file that carries what the reproducible knowledge artifact must not (``pushed_at``).
CORPUS_META_FILE = "corpus.json"


def ref_key(repo_id: str, branch: str) -> str:
    """The pointer file naming the latest sha pushed from ``branch`` (sanitized: a branch may hold a ``/``)."""
    return CODE_KEYS.file(repo_id, REFS_DIR, sanitize_id(branch))


# --------------------------------------------------------------------------- working clone


def sync_home() -> Path:
    """The directory holding every remote's working clone: ``$CCE_HOME/sync``, ``~/.cce/sync``, or ``./.cce/sync``."""
    home = cce_home()
    return (home if home is not None else Path(STORE_DIR_NAME)) / "sync"


def remote_slug(url: str) -> str:
    """The first 16 hex digits of SHA-256 over the remote URL exactly as given."""
    # surrogateescape: an argument that was not UTF-8 still names one stable directory.
    return hashlib.sha256(url.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def working_clone_dir(url: str) -> Path:
    return sync_home() / remote_slug(url)


# --------------------------------------------------------------------------- git facts


def origin_url(root: Path) -> str | None:
    return git_text(root, "config", "--get", "remote.origin.url")


def current_branch(root: Path) -> str | None:
    """The checked-out branch (also before the first commit); None when HEAD is detached."""
    return git_text(root, "symbolic-ref", "--short", "HEAD")


def branch_or_default(root: Path) -> str:
    """The checked-out branch, else ``main``."""
    return current_branch(root) or DEFAULT_REF


def push_branch(root: Path, settings: SyncSettings, ref: str | None = None) -> str:
    """The branch whose ``refs/<branch>`` pointer a push advances: ``--ref``, ``sync.ref``, else the checked-out one.

    A detached HEAD with neither is refused rather than read as ``main``:
    pushing an old checkout would move ``refs/main`` back and every consumer's
    ``--latest`` with it.
    """
    if ref is not None:
        return ref
    if settings.ref is not None:
        return settings.ref
    branch = current_branch(root)
    if branch is None:
        raise CceError("cannot determine which ref to advance: HEAD is detached and no `sync.ref` is set. A "
                       "detached push would rewind the default ref (`main`) to this commit and silently rewind "
                       "every consumer's `--latest`. Name the ref: pass --ref <branch> (CI can pass its branch "
                       "env), set `sync.ref` in .cce/config, or check out the branch before pushing.")
    return branch


def resolve_commit(root: Path, rev: str) -> str | None:
    """The full sha of the commit ``rev`` names, or None (also for anything shaped like an option)."""
    if rev.startswith("-"):
        return None
    return git_text(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")


def _is_store_path(path: bytes) -> bool:
    # The walker prunes every `.cce` directory, so nothing under one can change
    # an artifact: the project's own store, and a workspace member's.
    return STORE_DIR_NAME.encode() in path.rstrip(b"/").split(b"/")


def is_dirty(root: Path) -> bool:
    """Whether the checkout at ``root`` differs from HEAD anywhere but in a ``.cce`` store directory.

    Untracked files count. Anything that is not a readable git checkout counts
    as dirty, so a push refuses rather than publish an unknown tree. The NUL-
    separated status is parsed, so a path with spaces, quotes or ``->`` in it,
    or a rename, is read exactly; a rename is dirty when either side is outside
    a store.
    """
    proc = run_git(root, "status", "--porcelain", "-z", "--untracked-files=all")
    if proc is None or proc.returncode != 0:
        return True
    fields = proc.stdout.split(b"\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if not entry:
            continue
        status, paths = entry[:2], [entry[3:]]
        if b"R" in status or b"C" in status:
            # The source path follows as its own field. A copy leaves its source
            # untouched, so only a rename's source is a change.
            if i < len(fields) and b"R" in status:
                paths.append(fields[i])
            i += 1
        if any(not _is_store_path(path) for path in paths):
            return True
    return False

"""What each `cce sync` command does: init, push, pull, status, list and verify, as library calls.

The CLI only parses arguments and prints the text these functions return, so
the same behaviour serves `cce init --remote` and the MCP server's auto-pull.
The report texts are the engine family's, byte for byte where the other
engines pin them. A pull installs our own store (`.cce/index.cce`) built from
the artifact, records what it installed in `.cce/synced.json`, and activates
the store last, so a failure at any step leaves the previous store in use.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cce_core.foundation.atomic import atomic_write
from cce_core.foundation.errors import CceError
from cce_core.foundation.git_facts import head_sha
from cce_core.indexing.fingerprint import file_sha256, record_fingerprint
from cce_core.indexing.store import STORE_DIR, collect_garbage, default_store_path, load_store, save_store
from cce_core.indexing.store_lock import store_lock
from cce_core.sync import SYNC_MARKER_FILE
from cce_core.sync.artifact import (
    HASH_EMBEDDER,
    Artifact,
    ArtifactRequest,
    build_artifact,
    import_artifact,
    pack_module_suffixes,
)
from cce_core.sync.artifact_limits import MAX_POINTER_BYTES, LineGuard, shown
from cce_core.sync.identity import (
    CODE_KEY_ROOT,
    CODE_KEYS,
    DEFAULT_REF,
    REFS_DIR,
    SHA_RULE,
    is_dirty,
    is_sha,
    normalize_repo_id,
    origin_url,
    push_branch,
    ref_key,
    resolve_commit,
    resolve_repo_id,
    valid_repo_id,
    working_clone_dir,
)
from cce_core.sync.knowledge_service import CorpusRow, list_corpora, render_corpora
from cce_core.sync.knowledge_service import verify_checksum as verify_knowledge_checksum
from cce_core.sync.markers import InstallMarker, MarkerFile, check_installed_bytes
from cce_core.sync.pull_decode import decode_to_store
from cce_core.sync.remote import BlobTooLarge, GitRemote
from cce_core.sync.settings import SyncSettings, load_sync_settings, save_sync_settings

if TYPE_CHECKING:
    from cce_core.indexing.pack_drift import PackDrift
    from cce_core.indexing.store import StoreData
    from cce_core.plugins.host import PluginHost

MARKER_FILE = SYNC_MARKER_FILE
NO_REMOTE = "no sync remote configured — run `cce sync init --remote <git-url>`"
DIRTY = ("refusing to push: the working tree is dirty. Commit your changes and push a clean sha (a cache is "
         "content-addressed by commit).")
NO_RECORD_NOTICE = ("no install checksum recorded (pulled by an older cce) — re-pull with `cce sync pull --force` "
                    "to enable checksum verification")


def short_checksum(checksum: str) -> str:
    return checksum[:12]


# --------------------------------------------------------------------------- the local marker


@dataclass(frozen=True)
class SyncMarker(InstallMarker):
    """`.cce/synced.json`: which artifact the local store was pulled from, and the bytes installed."""

    repo_id: str
    sha: str


# The overwrite guard refuses to replace a store pinned to another sha without --force.
SYNC_MARKER = MarkerFile(SyncMarker, (STORE_DIR, MARKER_FILE), name="sync marker",
                         records="which sha the local cache is pinned to")


def load_marker(root: Path) -> SyncMarker | None:
    """The marker, or None when it is absent or unreadable (for reports, where "unknown" is fine)."""
    return SYNC_MARKER.load(root)


def forget_pull(root: Path) -> None:
    """Drop ``.cce/synced.json`` once a local build has replaced the store it described.

    Left behind, it would make ``index_status`` report the local build as
    pulled at the old sha, and arm the pull's overwrite guard for a store that
    is no longer the pulled one.
    """
    path = SYNC_MARKER.path(root)
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise CceError(f"could not remove the stale sync marker {path}: {exc.strerror or exc}") from exc


# --------------------------------------------------------------------------- the remote


# A status lookup answers "unknown" rather than wait long for another process using the clone.
STATUS_LOCK_TIMEOUT_SECONDS = 5.0


def open_remote(settings: SyncSettings, *, lfs: bool | None = None, lock_timeout: float | None = None) -> GitRemote:
    if not settings.remote:
        raise CceError(NO_REMOTE)
    return GitRemote.open(settings.remote, working_clone_dir(settings.remote),
                          lfs=settings.lfs if lfs is None else lfs, lock_timeout=lock_timeout)


def read_pointer(remote: GitRemote, repo_id: str, name: str, *, strict: bool = False) -> str | None:
    """The sha a `refs/<name>` pointer names, or None when there is no such pointer.

    A pointer is read only up to :data:`MAX_POINTER_BYTES`. For a pull
    (``strict``) it must name a sha (:func:`is_sha`), or the pull is refused
    here, before the sha can become part of a key or a git argument; for a
    listing, an oversized pointer is no pointer and the text is shown as is.
    """
    key = ref_key(repo_id, name)
    try:
        text = remote.read_text(key, max_bytes=MAX_POINTER_BYTES)
    except BlobTooLarge:
        if strict:
            raise CceError(f"the pointer {key} is over {MAX_POINTER_BYTES} bytes — not a sha") from None
        return None
    if text is None:
        return None
    if strict and not is_sha(text):
        raise CceError(f"the pointer {key} does not name a sha (it holds {shown(text)})")
    return text


def _no_pointer(remote: GitRemote, repo_id: str) -> str:
    """Why `--latest` found nothing; when the cache holds nothing at all under ``repo_id``, the ids it does hold."""
    message = f"no `--latest` pointer for {repo_id} on `{DEFAULT_REF}`"
    held = [r for r in remote.list_dirs(CODE_KEY_ROOT) if valid_repo_id(r)]
    if repo_id in held or not held:
        return message
    listed = ", ".join(held[:_IDS_LISTED]) + (f" and {len(held) - _IDS_LISTED} more" if len(held) > _IDS_LISTED
                                               else "")
    return (f"{message} — the cache holds nothing under that repo id; it holds: {listed} (pick one with "
            "`cce sync init --remote <url> --repo-id <id>`)")


_IDS_LISTED = 10


def ref_names(remote: GitRemote, repo_id: str) -> list[str]:
    prefix = CODE_KEYS.file(repo_id, REFS_DIR)
    return sorted(key[len(prefix) + 1:] for key in remote.list_keys(prefix) if "/" not in key[len(prefix) + 1:])


def resolve_latest(remote: GitRemote, repo_id: str, settings: SyncSettings,
                   ref: str | None) -> tuple[str, str | None]:
    """(sha, the ref to name in the report or None) for `--latest`.

    An explicit ref (``--ref``, else ``sync.ref``) wins; then ``refs/main``;
    then the only other ref, if there is exactly one.
    """
    explicit = ref or settings.ref
    if explicit:
        sha = read_pointer(remote, repo_id, explicit, strict=True)
        if sha is None:
            raise CceError(f"no `--latest` pointer for {repo_id} on `{explicit}`")
        return sha, (explicit if explicit != DEFAULT_REF else None)
    sha = read_pointer(remote, repo_id, DEFAULT_REF, strict=True)
    if sha is not None:
        return sha, None
    names = ref_names(remote, repo_id)
    if len(names) == 1:
        only = read_pointer(remote, repo_id, names[0], strict=True)
        if only is not None:
            return only, names[0]
    if not names:
        raise CceError(_no_pointer(remote, repo_id))
    raise CceError(f"no `--latest` pointer for {repo_id} on `{DEFAULT_REF}`; available refs: {', '.join(names)} — "
                   "pass --ref <name> (or set `sync.ref` in .cce/config)")


# --------------------------------------------------------------------------- init


def init(root: Path, remote_url: str, *, lfs: bool = True, repo_id: str | None = None) -> str:
    """Record the remote in `.cce/config` (other settings kept), then set up the working clone."""
    root = Path(root)
    if not root.is_dir():
        raise CceError(f"not a directory: {root}")
    settings = load_sync_settings(root, warn=lambda _message: None)
    chosen = repo_id or settings.repo_id
    if chosen is None:
        origin = origin_url(root)
        chosen = normalize_repo_id(origin) if origin else None
    settings = SyncSettings(remote=remote_url, lfs=lfs, repo_id=chosen, ref=settings.ref,
                            auto_pull=settings.auto_pull, retention=settings.retention)
    save_sync_settings(root, settings)  # first, so the choice persists even if the clone fails
    config = os.path.join(str(root), STORE_DIR, "config")  # as given: `./.cce/config` for `--dir .`
    remote = open_remote(settings)
    return (f"Configured sync remote: {remote_url}\n"
            f"  git-LFS       : {'enabled (*.cce)' if lfs else 'disabled'}\n"
            f"  repo_id       : {chosen if chosen else '(resolved from git origin at push time)'}\n"
            f"  working clone : {remote.clone_dir}\n"
            f"  config        : {config}\n")


# --------------------------------------------------------------------------- push


def build_for_push(root: Path, host: PluginHost) -> StoreData:
    """A fresh protected hash build of the working tree: what a push publishes, never an existing store."""
    from cce_core.indexing.indexer import build_index

    data, _stats = build_index(root, host, host.embedder(HASH_EMBEDDER), protect_secrets=True)
    return data


def _refuse_foreign_store(root: Path) -> None:
    store = default_store_path(root)
    if not store.is_file():
        return
    try:
        embedder = load_store(store).embedder or HASH_EMBEDDER
    except CceError:
        return  # a damaged local store is rebuilt by the push anyway
    if embedder != HASH_EMBEDDER:
        raise CceError(f"refusing to push a non-hash index (embedder = `{embedder}`). Only the deterministic hash "
                       "embedder produces shareable caches; re-index with `cce index <dir>`.")


def push_sha(root: Path, commit: str | None) -> str:
    """HEAD, after refusing a dirty tree; ``--commit`` only as an assertion that it is HEAD.

    The artifact is always built from the working tree, so publishing it under
    any sha but HEAD's would put the wrong content at that sha's address.
    """
    if is_dirty(root):
        raise CceError(DIRTY)
    head = head_sha(root)
    if head is None:
        raise CceError("cannot determine HEAD sha — is this a git repository with a commit?")
    if commit is None:
        return head
    resolved = resolve_commit(root, commit)
    if resolved is None:
        raise CceError(f"--commit {commit} is not a valid commit in this repository")
    if resolved != head:
        raise CceError(f"--commit {commit} does not match HEAD {head}; push builds the artifact from the working "
                       "tree, so it can only publish HEAD. (To publish an old commit you must check it out first.)")
    return head


@dataclass(frozen=True)
class Pushed:
    repo_id: str
    sha: str
    key: str
    checksum: str

    def report(self) -> str:
        return f"Pushed {self.repo_id}@{self.sha}\n  key      : {self.key}\n  checksum : {self.checksum}\n"


def push(root: Path, host: PluginHost, *, commit: str | None = None, ref: str | None = None,
         progress: Callable[[str], None] | None = None) -> Pushed:
    root = Path(root)
    settings = load_sync_settings(root)
    remote = open_remote(settings)
    sha = push_sha(root, commit)
    repo_id = resolve_repo_id(root, settings)
    branch = push_branch(root, settings, ref)
    return publish_artifact(remote, root, host, repo_id, sha, branch, progress=progress)


# --------------------------------------------------------------------------- pull


@dataclass(frozen=True)
class Installed:
    """What a pull installed, and how its pack set compares with this installation's (None: the same)."""

    artifact: Artifact
    drift: PackDrift | None


def pack_drift_refusal(drift: PackDrift) -> str:
    return (f"{drift.sets('the artifact was')} — {drift.files()}. Install the same packs and pull again, build "
            "locally with `cce index`, or pass --force to install it anyway.")


def install_artifact(root: Path, raw: bytes, *, request: ArtifactRequest | None = None, allow_drift: bool = False,
                     log_metrics: bool = True) -> Installed:
    """Install an artifact as this root's store: verify, stage, write the marker, then activate the store.

    ``request`` is the ``repo_id@sha`` the pull asked for: an artifact that
    says it is anything else is refused before its chunks are read, so the
    marker can only ever record what was asked for. An artifact built with
    other language packs than this installation's, where that changes how
    some of its files are chunked, is refused unless ``allow_drift``.

    The store is activated last: if the marker cannot be written, the previous
    store stays in use with its own marker. A crash between the marker and the
    rename leaves marker=new / store=old, which `verify --checksum-only`
    detects and the next pull of the same sha repairs.
    """
    from cce_core.indexing.pack_drift import PULL_PLUGINS_KEY, installed_plugins, pack_drift
    from cce_core.plugins.host import default_host

    artifact, data = decode_to_store(raw, default_host().embedder(HASH_EMBEDDER), request)
    drift = pack_drift(artifact.manifest.pack_set_id, default_host().packs, data)
    if drift is not None and drift.affected and not allow_drift:
        raise CceError(pack_drift_refusal(drift))
    if drift is None:
        # The same pack set as this installation's: while its plugins stay as they are, a search need not
        # load them all to know it (`pack_drift.search_warning`).
        data.meta[PULL_PLUGINS_KEY] = installed_plugins()
    store = default_store_path(root)
    with store_lock(store, purpose="cce sync pull"):  # one writer per store, as for `cce index`
        store.parent.mkdir(parents=True, exist_ok=True)
        staged = store.with_name(store.name + ".incoming")
        try:
            save_store(data, staged, home=store)  # its segment lands in the store's own segment directory
            if store.exists():
                os.chmod(staged, store.stat().st_mode & 0o7777)  # a tightened store keeps its mode
            installed = file_sha256(staged)  # the fingerprint below reuses this digest (same file after the rename)
            marker = SyncMarker(artifact.manifest.repo_id, artifact.manifest.sha,
                                checksum=artifact.manifest.checksum, installed_sha256=installed)
            try:
                atomic_write(SYNC_MARKER.path(root), marker.to_bytes())
            except OSError as exc:
                raise CceError(f"could not write sync marker: {exc}") from exc
            os.replace(staged, store)
        finally:
            staged.unlink(missing_ok=True)
        collect_garbage(store)  # the segments of the store it replaced
        record_fingerprint(store, data.meta)  # after the store, like every store write
    if log_metrics:
        _log_pull_event(store, data, artifact, len(raw))
    return Installed(artifact, drift)


def fetch_and_install(root: Path, remote: GitRemote, repo_id: str, sha: str, *, allow_drift: bool = False,
                      log_metrics: bool = True) -> Installed:
    """Download ``repo_id@sha`` (each line checked while it arrives) and install it as ``root``'s store."""
    if not is_sha(sha):
        raise CceError(f"refusing to pull {repo_id}@{shown(sha)}: that is not a commit sha ({SHA_RULE})")
    raw = remote.get(CODE_KEYS.artifact(repo_id, sha), guard=LineGuard)
    return install_artifact(root, raw, request=ArtifactRequest(repo_id, sha), allow_drift=allow_drift,
                            log_metrics=log_metrics)


def packs_line(drift: PackDrift | None) -> str:
    """The pull report's ``packs`` line: only when the artifact's pack set is not this installation's."""
    if drift is None:
        return ""
    if not drift.affected:
        return (f"  packs    : note — built with `{drift.built}`, this installation has `{drift.installed}`; no file "
                "of this tree is chunked differently\n")
    return f"  packs    : built with `{drift.built}`, this installation has `{drift.installed}` — {drift.files()}\n"


def _log_pull_event(store: Path, data: StoreData, artifact: Artifact, size: int) -> None:
    """A `sync-pull` index event, so the dashboard's freshness card says where the index came from."""
    from cce_core.observability.metrics import IndexRecord, MetricsWriter, metrics_beside

    MetricsWriter(metrics_beside(store)).log_index(IndexRecord(
        files_indexed=len(data.files), chunks=len(data.chunks), index_bytes=size, duration_ms=0.0,
        embedder=HASH_EMBEDDER, full=True, sha=artifact.manifest.sha, source="sync-pull"))


@dataclass(frozen=True)
class Pulled:
    repo_id: str
    sha: str
    ref: str | None
    chunks: int
    checksum: str
    store: str  # as the user named the root, e.g. ./.cce/index.cce
    tree: str
    packs: str = ""  # the `packs` line, only when the artifact's pack set is not this installation's

    def report(self) -> str:
        ref = f"  ref      : {self.ref}\n" if self.ref else ""
        return (f"Pulled {self.repo_id}@{self.sha}\n{ref}  chunks   : {self.chunks}\n  checksum : {self.checksum}\n"
                f"  store    : {self.store}\n{self.packs}  tree     : {self.tree}\n")


def _commit_arg(commit: str) -> str:
    """``--commit`` when it can name an artifact (:func:`is_sha`); else the one-line refusal."""
    if not is_sha(commit):
        cut = commit if len(commit) <= 80 else commit[:64] + "…"
        raise CceError(f"--commit {shown(cut)[1:-1]} is not a commit sha ({SHA_RULE})")
    return commit


def pull_target(root: Path, remote: GitRemote, repo_id: str, settings: SyncSettings, *, commit: str | None,
                latest: bool, ref: str | None) -> tuple[str, str | None]:
    """(the sha to pull, the ref to name in the report): ``--commit``, else ``--latest``, else HEAD."""
    if commit is not None:
        return _commit_arg(commit), None
    if latest:
        return resolve_latest(remote, repo_id, settings, ref)
    head = head_sha(root)
    if head is None:
        raise CceError("cannot determine HEAD sha — pass --commit <sha> or --latest")
    return head, None


def guard_overwrite(root: Path, sha: str, what: str) -> None:
    """Refuse to replace a store pulled at another sha (``--force`` skips this); ``what`` names it in the error."""
    marker = SYNC_MARKER.load_strict(root)
    if marker is not None and marker.sha != sha:
        raise CceError(f"{what} is at {marker.sha} but you are pulling {sha}. Pass --force to overwrite.")


def pull(root: Path, *, commit: str | None = None, latest: bool = False, ref: str | None = None,
         force: bool = False) -> Pulled:
    root = Path(root)
    settings = load_sync_settings(root)
    remote = open_remote(settings)
    repo_id = resolve_repo_id(root, settings)
    sha, noted = pull_target(root, remote, repo_id, settings, commit=commit, latest=latest, ref=ref)
    if not force:
        guard_overwrite(root, sha, "local cache")
    installed = fetch_and_install(root, remote, repo_id, sha, allow_drift=force)
    artifact, drift = installed.artifact, installed.drift
    head = head_sha(root)
    if head is None:
        tree = "(no source checkout — consumer mode; the pulled index is the corpus)"
    elif head == sha and not is_dirty(root):
        tree = ("matches, but this installation's packs chunk it differently — `cce index` for an index of its own"
                if drift is not None and drift.affected else "matches — pulled index used as-is")
    else:
        tree = "differs from the pulled sha — `cce index` locally for a WIP index"
    # The store as the user named the root: `./.cce/index.cce` for `--dir .`, like the other engines print it.
    store = os.path.join(str(root), STORE_DIR, default_store_path(root).name)
    return Pulled(repo_id, sha, noted, artifact.manifest.chunk_count, artifact.manifest.checksum, store, tree,
                  packs_line(drift))


# --------------------------------------------------------------------------- status


def status(root: Path) -> str:
    """Where this root stands; never an error for remote trouble (the line says so instead)."""
    root = Path(root)
    settings = load_sync_settings(root)
    if not settings.remote:
        return "remote        : (none — pure local CCE)\n"
    lines = [f"remote        : {settings.remote}", f"git-LFS       : {'on' if settings.lfs else 'off'}"]
    try:
        repo_id = resolve_repo_id(root, settings)
    except CceError as exc:
        lines.append(f"repo_id       : (unresolved: {exc})")
        return "\n".join(lines) + "\n"
    lines.append(f"repo_id       : {repo_id}")
    marker = load_marker(root)
    lines.append(f"local cache   : {marker.sha} ({short_checksum(marker.checksum)})" if marker
                 else "local cache   : (none pulled yet)")
    try:
        sha = read_pointer(open_remote(settings, lfs=False, lock_timeout=STATUS_LOCK_TIMEOUT_SECONDS), repo_id,
                           DEFAULT_REF)
        lines.append(f"remote latest : {sha} (ref {DEFAULT_REF})" if sha else "remote latest : (no pointer yet)")
    except CceError as exc:
        lines.append(f"remote latest : (unreachable: {exc})")
    head = head_sha(root)
    if head is None:
        lines.append("working tree  : (not a git checkout)")
    else:
        lines.append(f"working tree  : {head}{' (dirty)' if is_dirty(root) else ''}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- list


@dataclass(frozen=True)
class RepoRow:
    repo_id: str
    latest_sha: str | None
    ref: str | None  # named only when latest comes from a ref other than main
    artifacts: int
    bytes: int

    def as_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"artifacts": self.artifacts, "bytes": self.bytes, "latest_sha": self.latest_sha}
        if self.ref is not None:
            row["ref"] = self.ref
        row["repo_id"] = self.repo_id
        return row


def list_repos(remote: GitRemote) -> list[RepoRow]:
    """One row per repo in the cache; a workspace base carrying only metadata is not a repo."""
    rows: list[RepoRow] = []
    for repo_id in sorted(remote.list_dirs(CODE_KEY_ROOT)):
        sizes = remote.list_sizes(CODE_KEYS.prefix(repo_id), CODE_KEYS.artifact_suffix)
        latest = read_pointer(remote, repo_id, DEFAULT_REF)
        ref: str | None = None
        if latest is None:
            names = ref_names(remote, repo_id)
            if len(names) == 1:
                latest, ref = read_pointer(remote, repo_id, names[0]), names[0]
        if not sizes and latest is None:
            continue  # a workspace base: manifest and graph only
        rows.append(RepoRow(repo_id, latest, ref, len(sizes), sum(size for _key, size in sizes)))
    return rows


def render_list(url: str, rows: list[RepoRow], corpora: Sequence[CorpusRow] = ()) -> str:
    """The human listing; the ``knowledge:`` section follows only when the cache holds a corpus."""
    out = f"remote        : {url}\n\n"
    if not rows:
        if corpora:
            return out + "No code repos cached — the cache carries only knowledge corpora.\n" + render_corpora(
                list(corpora))
        return out + "The cache is empty — nothing has been pushed yet.\n"
    latest = [(r.latest_sha + (f" ({r.ref})" if r.ref else "")) if r.latest_sha else "-" for r in rows]
    w1 = max(len("repo_id"), *(len(r.repo_id) for r in rows))
    w2 = max(len("latest"), *(len(x) for x in latest))
    w3 = max(len("bytes"), *(len(str(r.bytes)) for r in rows))
    out += f"{'repo_id':<{w1}}  {'latest':<{w2}}  {'artifacts':>9}  {'bytes':>{w3}}\n"
    for r, latest_shown in zip(rows, latest, strict=True):
        out += f"{r.repo_id:<{w1}}  {latest_shown:<{w2}}  {r.artifacts:>9}  {r.bytes:>{w3}}\n"
    total_artifacts = sum(r.artifacts for r in rows)
    total_bytes = sum(r.bytes for r in rows)
    out += (f"\ntotal         : {len(rows)} repo{'' if len(rows) == 1 else 's'}, {total_artifacts} "
            f"artifact{'' if total_artifacts == 1 else 's'}, {total_bytes} bytes\n")
    return out + render_corpora(list(corpora))


def render_list_json(url: str, rows: list[RepoRow], corpora: Sequence[CorpusRow] = ()) -> str:
    body: dict[str, Any] = {"remote": url, "repos": [r.as_json() for r in rows], "schema": "cce.synclist/v1"}
    if corpora:  # only then: a knowledge-free listing keeps its exact bytes
        body["knowledge"] = [c.as_json() for c in corpora]
    return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def list_cache(root: Path, *, remote_url: str | None = None, as_json: bool = False) -> str:
    """The cache's contents, read-only: no commit to the cache, nothing written under the root."""
    settings = load_sync_settings(Path(root)) if remote_url is None else SyncSettings(remote=remote_url)
    url = remote_url or settings.remote
    if not url:
        raise CceError(NO_REMOTE)
    remote = open_remote(SyncSettings(remote=url), lfs=False)
    rows = list_repos(remote)
    corpora = list_corpora(remote)
    return render_list_json(url, rows, corpora) if as_json else render_list(url, rows, corpora)


# --------------------------------------------------------------------------- verify


def verify(root: Path, host: PluginHost, *, commit: str | None = None) -> str:
    """Rebuild the working tree and compare its artifact checksum with what was pulled (or published)."""
    root = Path(root)
    settings = load_sync_settings(root)
    repo_id = resolve_repo_id(root, settings)
    marker = load_marker(root)
    sha = (_commit_arg(commit) if commit is not None else None) or (marker.sha if marker else None) or head_sha(root)
    if sha is None:
        raise CceError("nothing to verify: no pulled cache and no HEAD sha")
    if marker is not None and marker.sha == sha:
        expected = marker.checksum
    else:
        published = open_remote(settings).get(CODE_KEYS.artifact(repo_id, sha), guard=LineGuard)
        expected = import_artifact(published, ArtifactRequest(repo_id, sha)).manifest.checksum
    rebuilt = build_artifact(build_for_push(root, host), repo_id, sha, pack_module_suffixes(host)).manifest.checksum
    if rebuilt != expected:
        raise CceError(f"verify FAILED for {repo_id}@{sha}\n  expected : {expected}\n  rebuilt  : {rebuilt}\n"
                       "The pulled cache does not match a local rebuild (working tree differs from the sha, or the "
                       "cache is not trustworthy).")
    return f"verify OK: {repo_id}@{sha}\n  checksum : {rebuilt}\n"


def _checksum_verdict(root: Path, label: str) -> tuple[SyncMarker, str | None]:
    """(marker, the installed store's SHA-256) or (marker, None) when no install checksum was recorded.

    Raises the `verify FAILED (checksum-only)` report when the bytes differ.
    """
    marker = load_marker(root)
    if marker is None:
        raise CceError(f"nothing to verify for {label}: no `.cce/synced.json` marker (not a pulled store)")
    if marker.installed_sha256 is None:
        return marker, None
    actual = check_installed_bytes(
        marker.installed_sha256, default_store_path(root).read_bytes,
        heading=f"verify FAILED (checksum-only) for {label} ({marker.repo_id}@{marker.sha})", store="store",
        repull="`cce sync pull --force`", damage="corruption or local modification of the store",
        caveat="true `artifact == build(sha)` verification needs the source and stays with the source-holders/CI: "
               "`cce sync verify`.")
    return marker, actual


def installed_checksum_verdict(root: Path, label: str) -> tuple[SyncMarker, str | None]:
    """The checksum-only verdict on one pulled store, for reports that embed it (`cce doctor`)."""
    return _checksum_verdict(root, label)


def verify_checksum_only(root: Path) -> str:
    """No network: each installed store's bytes against the SHA-256 recorded when it was pulled.

    At a workspace root (a consumer-mode directory, say) every member is
    checked; elsewhere the root's own store. A pulled knowledge store at the
    root adds a ``knowledge`` row (it is checked first: a mismatch fails the
    whole verify, naming the corpus).
    """
    from cce_core.workspace.manifest import load_manifest, manifest_path

    root = Path(root)
    knowledge = verify_knowledge_checksum(root)
    knowledge_row = knowledge.row() if knowledge is not None else ""
    if not Path(manifest_path(root)).is_file():
        if knowledge is not None and load_marker(root) is None:
            return knowledge.report()  # a root whose only pulled store is knowledge
        marker, actual = _checksum_verdict(root, "this store")
        if actual is None:
            return f"verify (checksum-only): {marker.repo_id}@{marker.sha}: {NO_RECORD_NOTICE}\n" + knowledge_row
        # `checksum` is the artifact's, as in every other report; `store` the SHA-256 of the installed bytes.
        return (f"verify OK (checksum-only): {marker.repo_id}@{marker.sha}\n  checksum : {marker.checksum}\n"
                f"  store    : {actual}\n" + knowledge_row)
    rows: list[str] = []
    verified = unrecorded = 0
    for member in load_manifest(root).members:
        marker, actual = _checksum_verdict(root / member.path, f"member `{member.name}`")
        if actual is None:
            rows.append(f"  {member.name:<16} {NO_RECORD_NOTICE}\n")
            unrecorded += 1
        else:
            rows.append(f"  {member.name:<16} {marker.repo_id}@{marker.sha}  ({short_checksum(actual)})\n")
            verified += 1
    if knowledge is not None:
        rows.append(knowledge_row)
        unrecorded += knowledge.checksum is None
    plural = "" if verified == 1 else "s"
    header = (f"verify OK (checksum-only): {verified} member{plural}" if not unrecorded else
              f"verify OK (checksum-only): {verified} member{plural} verified · {unrecorded} without a recorded "
              "install checksum (re-pull to enable)")
    return header + "\n" + "".join(rows)


def progress_to_stderr(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


# --------------------------------------------------------------------------- pieces for workspaces


def publish_artifact(remote: GitRemote, root: Path, host: PluginHost, repo_id: str, sha: str, branch: str, *,
                     progress: Callable[[str], None] | None = None) -> Pushed:
    """Rebuild ``root``, publish its artifact as ``repo_id@sha`` and advance ``refs/<branch>``, in one commit.

    These are the steps of :func:`push` that follow the checks about the
    checkout as a whole (clean tree, HEAD, branch): a workspace push makes
    those checks once at its root and then runs this once per member.
    """
    _refuse_foreign_store(root)
    if progress is not None:
        progress(f"rebuilding index for {sha}")
    artifact = build_artifact(build_for_push(root, host), repo_id, sha, pack_module_suffixes(host))
    key = CODE_KEYS.artifact(repo_id, sha)
    # The artifact and the branch pointer travel in one commit, so nobody sees one without the other.
    remote.put_many([(key, artifact.to_bytes()), (ref_key(repo_id, branch), f"{sha}\n".encode())])
    return Pushed(repo_id, sha, key, artifact.manifest.checksum)

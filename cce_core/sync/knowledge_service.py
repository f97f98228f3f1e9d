"""What Knowledge Sync does: `cce knowledge push` and `pull`, and the knowledge parts of `cce sync`.

A knowledge corpus is shared the way a code index is: the built store goes
to the same git cache as a `.cck` artifact under ``knowledge/v1/<corpus_id>/``,
beside a ``current`` pointer and a small ``corpus.json``, and consumers pull
it instead of ingesting the feed (which they usually do not have). The CLI
only parses arguments and prints what these functions return.

The rules kept here:

* A corpus id is never derived (there is no origin to normalize); it is
  ``--corpus`` or ``knowledge.sync.corpus_id``, and one path segment.
* A push never silently drops published records: unless ``--force``, it diffs
  the outgoing store against the remote's current snapshot and refuses to
  remove records (``--dry-run`` prints the diff and touches nothing). The
  same snapshot id with different bytes is refused too.
* Retention (``knowledge.sync.retention: keep-last-<n>``) prunes the oldest
  snapshots after a push, never the current one, never outside the corpus.
* A pull installs exactly the bytes a local ingest writes, records them in
  ``.cce/knowledge/synced.json`` and moves ``current`` last, so a failure at
  any step leaves the previous store active. One corpus is active per root:
  replacing it with another corpus needs ``--force``.

This module does not import :mod:`cce_core.sync.service`: the code commands
call into it for their listing, consumer-mode and verify knowledge rows.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cce_core.foundation.atomic import atomic_write
from cce_core.foundation.errors import CceError
from cce_core.knowledge.store import (
    KNOWLEDGE_DIR_NAME,
    STORE_DIR,
    KnowledgeStore,
    KnowledgeStoreMissing,
    install_store,
    knowledge_dir,
    load_store,
    store_path,
    validate_snapshot,
)
from cce_core.sync.artifact import ArtifactError
from cce_core.sync.artifact_limits import MAX_POINTER_BYTES, LineGuard
from cce_core.sync.identity import (
    CORPUS_META_FILE,
    CURRENT_FILE,
    KNOWLEDGE_KEY_ROOT,
    KNOWLEDGE_KEYS,
    resolve_corpus_id,
    working_clone_dir,
)
from cce_core.sync.knowledge_artifact import KnowledgeArtifact, data_as_of, export_knowledge, import_knowledge
from cce_core.sync.markers import InstallMarker, MarkerFile, check_installed_bytes
from cce_core.sync.remote import KNOWLEDGE_LFS_PATTERN, BlobTooLarge, GitRemote
from cce_core.sync.settings import (
    KnowledgeSyncSettings,
    Retention,
    SyncSettings,
    load_knowledge_sync_settings,
    load_sync_settings,
)

MARKER_FILE = "synced.json"
META_SCHEMA = "cce.knowledgemeta/v1"
# The row label of a knowledge store in consumer-mode and verify reports.
ROW_LABEL = "knowledge"
NO_REMOTE = ("no sync remote configured — run `cce sync init --remote <git-url>`, set `knowledge.sync.remote` in "
             ".cce/config, or pass --remote <url>")
NO_RECORD_NOTICE = ("no install checksum recorded (pulled by an older cce) — re-pull with `cce knowledge pull` to "
                    "enable checksum verification")
# Record ids listed per line of the push-guard diff before "… and N more".
DIFF_IDS_LISTED = 20


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


# --------------------------------------------------------------------------- the local marker


@dataclass(frozen=True)
class KnowledgeMarker(InstallMarker):
    """`.cce/knowledge/synced.json`: which corpus snapshot the local store was pulled from, and its bytes."""

    corpus_id: str
    snapshot: str


# The pull guard (reference #123) refuses to replace the active corpus with another one without --force.
KNOWLEDGE_MARKER = MarkerFile(KnowledgeMarker, (STORE_DIR, KNOWLEDGE_DIR_NAME, MARKER_FILE),
                              name="knowledge sync marker", records="which corpus is active")


def shown(root: Path, path: Path) -> str:
    """``path`` (under ``root``) as the user named the root: ``./.cce/knowledge/…`` for ``--dir .``."""
    return os.path.join(str(root), os.path.relpath(path, root))


# --------------------------------------------------------------------------- the remote


def knowledge_remote_url(requested: str | None, settings: KnowledgeSyncSettings, sync: SyncSettings) -> str:
    """``--remote``, else ``knowledge.sync.remote``, else the project's ``sync.remote``."""
    url = requested or settings.remote or sync.remote
    if not url:
        raise CceError(NO_REMOTE)
    return url


def open_cache(url: str) -> GitRemote:
    """The cache at ``url``, opened read-mostly: LFS attributes are written only by a push that needs them."""
    return GitRemote.open(url, working_clone_dir(url), lfs=False)


def fetch_artifact(remote: GitRemote, corpus_id: str, snapshot: str) -> KnowledgeArtifact:
    """The verified artifact of ``corpus_id@snapshot``; problems with its bytes name its key.

    Beyond the checksum, the artifact must be the one its key names: a `.cck`
    filed under another corpus or snapshot would otherwise install under the
    wrong name.
    """
    key = KNOWLEDGE_KEYS.artifact(corpus_id, snapshot)
    raw = remote.get(key, guard=LineGuard)
    try:
        artifact = import_knowledge(raw)
    except ArtifactError as exc:
        raise ArtifactError(f"{key}: {exc}") from None
    m = artifact.manifest
    if (m.corpus_id, m.snapshot) != (corpus_id, snapshot):
        raise ArtifactError(f"{key}: the artifact is for {m.corpus_id}@{m.snapshot}, not {corpus_id}@{snapshot}")
    return artifact


def read_current(remote: GitRemote, corpus_id: str) -> str | None:
    """The snapshot the corpus's ``current`` pointer names; None when there is none (or it is blank).

    Read only up to :data:`MAX_POINTER_BYTES`: a pointer holds one snapshot id.
    """
    key = KNOWLEDGE_KEYS.file(corpus_id, CURRENT_FILE)
    try:
        return remote.read_text(key, max_bytes=MAX_POINTER_BYTES) or None
    except BlobTooLarge:
        raise CceError(f"the pointer {key} is over {MAX_POINTER_BYTES} bytes — not a snapshot id") from None


# --------------------------------------------------------------------------- push


class ShrinkRefused(CceError):
    """A push that would drop published records; ``report`` is the diff that says which."""

    def __init__(self, report: str, message: str) -> None:
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class RecordDiff:
    added: list[str]
    removed: list[str]
    changed: list[str]


def record_digests(sections: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Per record id, SHA-256 over its chunks' full contents in store order, each length-prefixed.

    ``sections`` are the chunks' ``(record_id, content)`` in store order.
    Every byte counts (a chunk id hashes only a prefix of the content); facet
    edits that do not render into the content (state, labels) do not.
    """
    digests: dict[str, Any] = {}
    for record, content in sections:
        data = content.encode("utf-8")
        h = digests.setdefault(record, hashlib.sha256())
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return {record: h.hexdigest() for record, h in digests.items()}


def diff_records(local: dict[str, str], remote: dict[str, str]) -> RecordDiff:
    return RecordDiff(added=sorted(r for r in local if r not in remote),
                      removed=sorted(r for r in remote if r not in local),
                      changed=sorted(r for r in local if r in remote and local[r] != remote[r]))


def format_ids(ids: list[str]) -> str:
    """``0``, or ``<n> — id1, id2`` with at most twenty ids and ``… and K more``."""
    if not ids:
        return "0"
    listed = ", ".join(ids[:DIFF_IDS_LISTED])
    more = f" … and {len(ids) - DIFF_IDS_LISTED} more" if len(ids) > DIFF_IDS_LISTED else ""
    return f"{len(ids)} — {listed}{more}"


def diff_report(corpus_id: str, local_snapshot: str, local_records: int, remote_snapshot: str,
                remote_records: int, diff: RecordDiff) -> str:
    return (f"Corpus {corpus_id} — outgoing {local_snapshot} vs remote current {remote_snapshot}\n"
            f"  records : {local_records} local · {remote_records} remote\n"
            f"  added   : {format_ids(diff.added)}\n"
            f"  removed : {format_ids(diff.removed)}\n"
            f"  changed : {format_ids(diff.changed)}\n")


_DRY_RUN_TAIL = "Nothing pushed (--dry-run).\n"


def _unverifiable(corpus_id: str, snapshot: str, exc: CceError, dry_run: bool) -> CceError:
    hint = ("There is no diff to report (--dry-run). A real `--force` push (without --dry-run) would bypass the "
            "guard." if dry_run else
            "Refusing to replace a corpus the guard cannot read. Pass --force to push without the guard.")
    return CceError(f"push guard: could not verify the remote's current snapshot ({corpus_id}@{snapshot}) — "
                    f"{exc} {hint}")


def push_guard(remote: GitRemote, corpus_id: str, store: KnowledgeStore, outgoing: KnowledgeArtifact,
               dry_run: bool) -> str | None:
    """The shrink guard: the dry-run report to print, None when the push may go ahead, or a refusal.

    No remote pointer is a first publish. A pointer naming the outgoing
    snapshot is a re-publish, fine when the bytes are the same (reference
    #113: the snapshot id hashes the feed only, so another section budget or
    redactor gives other bytes under the same id). Otherwise the remote's
    current snapshot is fetched, verified and diffed by record.
    """
    snapshot = store.snapshot
    published = read_current(remote, corpus_id)
    if published is None:
        if not dry_run:
            return None
        return (f"Dry-run: corpus {corpus_id}@{snapshot} — no remote `current` pointer; this would be the first "
                f"publish ({store.records} records · {len(store.chunks)} chunks).\n"  # always plural, as pinned
                + _DRY_RUN_TAIL)
    try:
        current = fetch_artifact(remote, corpus_id, published)
    except CceError as exc:
        raise _unverifiable(corpus_id, published, exc, dry_run) from None
    if published == snapshot:
        if current.manifest.checksum == outgoing.manifest.checksum:
            return (f"Dry-run: corpus {corpus_id}@{snapshot} — the remote `current` already names this snapshot; "
                    f"a push would re-publish it unchanged.\n{_DRY_RUN_TAIL}") if dry_run else None
        what = (f"corpus {corpus_id}@{snapshot} is already published with DIFFERENT content (remote checksum "
                f"{current.manifest.checksum}, outgoing {outgoing.manifest.checksum}). The snapshot id hashes only "
                "the feed bytes, so a different `markdown.max_section_tokens` or redactor version produced "
                "divergent `.cck` bytes at the same content-addressed key")
        if dry_run:
            return f"Dry-run: {what}.\nA real `--force` push would overwrite it.\n{_DRY_RUN_TAIL}"
        raise CceError(f"push guard: {what}. Pass --force to overwrite the published snapshot.")
    diff = diff_records(record_digests((c.record_id, c.content) for c in store.chunks),
                        record_digests((c["record_id"], c["content"]) for c in current.chunks))
    report = diff_report(corpus_id, snapshot, store.records, published, current.manifest.records, diff)
    if dry_run:
        return report + _DRY_RUN_TAIL
    if diff.removed:
        raise ShrinkRefused(report, f"refusing to push: {_plural(len(diff.removed), 'record')} live on the remote "
                                    "would be dropped (the `removed` list above). Pass --force to shrink corpus "
                                    f"{corpus_id}, or --dry-run to inspect without pushing.")
    return None


def corpus_meta_json(artifact: KnowledgeArtifact, pushed_at: str) -> str:
    """``corpus.json``: what the reproducible artifact must not carry (``pushed_at``), pretty and sorted."""
    m = artifact.manifest
    body = {"schema": META_SCHEMA, "corpus_id": m.corpus_id, "current": m.snapshot, "records": m.records,
            "chunk_count": m.chunk_count, "data_as_of": m.data_as_of, "pushed_at": pushed_at}
    return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def confine_to_corpus(keys: Sequence[str], corpus_id: str) -> None:
    """Refuse to delete any key that is not inside ``knowledge/v1/<corpus_id>/`` (reference #121).

    Checked at the delete itself, whatever resolved the id: the last line of
    defence against one corpus's prune reaching another's snapshots.
    """
    root = KNOWLEDGE_KEY_ROOT.split("/")
    for key in keys:
        parts = key.split("/")
        if parts[: len(root) + 1] != [*root, corpus_id] or len(parts) < len(root) + 2:
            raise CceError(f"retention refused: key `{key}` is not confined to `{KNOWLEDGE_KEYS.prefix(corpus_id)}/` — "
                           "refusing to prune outside the corpus namespace")


def apply_retention(remote: GitRemote, corpus_id: str, current: str, retention: Retention) -> list[str]:
    """With ``keep-last-<n>``, delete the oldest snapshots beyond ``n`` (never ``current``); the keys deleted.

    Oldest by the commit that first added each key: two pushes in one second
    still have an order. A key the history does not show counts as newest.
    """
    if retention.keep_last is None:
        return []
    prefix = KNOWLEDGE_KEYS.prefix(corpus_id)
    keys = remote.list_keys(prefix, ".cck")
    position = {key: i for i, key in enumerate(remote.first_added_order(prefix))}
    ordered = sorted(keys, key=lambda k: (position.get(k, len(position)), k))
    current_key = KNOWLEDGE_KEYS.artifact(corpus_id, current)
    doomed = [k for k in ordered[: max(0, len(ordered) - retention.keep_last)] if k != current_key]
    confine_to_corpus(doomed, corpus_id)
    remote.remove_many(doomed, f"cce knowledge sync: retention prune ({corpus_id})")
    return doomed


def _load_local_store(root: Path) -> KnowledgeStore:
    try:
        return load_store(root)
    except KnowledgeStoreMissing:
        raise CceError(f"no local knowledge store under {shown(root, knowledge_dir(root))} (`current` missing) — run "
                       "`cce knowledge index <feed.jsonl>` first") from None


def push(root: Path, *, corpus: str | None = None, remote_url: str | None = None, force: bool = False,
         dry_run: bool = False, clock: Callable[[], str] = utc_now) -> str:
    """Publish the current local store as ``corpus@snapshot``, advance ``current``, then apply retention.

    ``--dry-run`` prints what the guard sees and changes nothing (the remote's
    LFS attributes included); ``--force`` without it skips the guard.
    """
    root = Path(root)
    store = _load_local_store(root)
    settings = load_knowledge_sync_settings(root)
    corpus_id = resolve_corpus_id(corpus, settings)
    artifact = export_knowledge(store, corpus_id)
    sync = load_sync_settings(root)
    remote = open_cache(knowledge_remote_url(remote_url, settings, sync))
    if dry_run or not force:
        report = push_guard(remote, corpus_id, store, artifact, dry_run)
        if report is not None:
            return report
    if sync.lfs:
        remote.ensure_lfs(KNOWLEDGE_LFS_PATTERN)
    key = KNOWLEDGE_KEYS.artifact(corpus_id, store.snapshot)
    pushed_at = clock()
    # Artifact, pointer and metadata in one commit: nobody sees a pointer without its snapshot.
    remote.put_many([(key, artifact.to_bytes()),
                     (KNOWLEDGE_KEYS.file(corpus_id, CURRENT_FILE), f"{store.snapshot}\n".encode()),
                     (KNOWLEDGE_KEYS.file(corpus_id, CORPUS_META_FILE),
                      corpus_meta_json(artifact, pushed_at).encode("utf-8"))])
    m = artifact.manifest
    out = (f"Pushed corpus {corpus_id}@{store.snapshot}\n  key        : {key}\n  checksum   : {m.checksum}\n"
           f"  records    : {m.records} · chunks : {m.chunk_count}\n  data as-of : {m.data_as_of or '-'}\n"
           f"  pushed at  : {pushed_at}\n")
    try:
        pruned = apply_retention(remote, corpus_id, store.snapshot, settings.retention)
    except CceError as exc:  # the push itself landed; retention is best effort
        return out + f"  warning: retention prune failed — {exc}\n"
    if pruned:
        out += f"  retention  : pruned {_plural(len(pruned), 'snapshot')} ({settings.retention.text})\n"
    return out


# --------------------------------------------------------------------------- pull


def install(root: Path, artifact: KnowledgeArtifact) -> Path:
    """Install ``artifact`` as ``root``'s knowledge store: snapshot file, then marker, then ``current``.

    The store bytes are exactly what a local ingest writes. ``current`` moves
    last (reference #122): if the marker cannot be written the previous store
    stays active with its own marker. Returns the snapshot file's path.
    """
    m = artifact.manifest
    data = artifact.to_store().to_bytes()
    path = store_path(root, m.snapshot)
    try:
        atomic_write(path, data)
        installed = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise CceError(f"could not write the knowledge store under {root}: {exc}") from exc
    try:
        marker = KnowledgeMarker(m.corpus_id, m.snapshot, checksum=m.checksum, installed_sha256=installed)
        atomic_write(KNOWLEDGE_MARKER.path(root), marker.to_bytes())
    except OSError as exc:
        raise CceError(f"could not write the knowledge sync marker: {exc}") from exc
    try:
        return install_store(root, data, m.snapshot)
    except OSError as exc:
        raise CceError(f"could not advance the knowledge `current` pointer under {root}: {exc}") from exc


def pull(root: Path, *, corpus: str | None = None, snapshot: str | None = None, force: bool = False,
         remote_url: str | None = None) -> str:
    """Install the corpus's current snapshot (or ``snapshot``) from the remote; the report."""
    root = Path(root)
    settings = load_knowledge_sync_settings(root)
    corpus_id = resolve_corpus_id(corpus, settings)
    remote = open_cache(knowledge_remote_url(remote_url, settings, load_sync_settings(root)))
    if snapshot is None:
        snapshot = read_current(remote, corpus_id)
        if snapshot is None:
            raise CceError(f"no `current` pointer for corpus {corpus_id} on the remote — has anything been pushed? "
                           f"(`cce knowledge push --corpus {corpus_id}`)")
    validate_snapshot(snapshot)  # it names a key and a file: never a path
    if not force:
        marker = KNOWLEDGE_MARKER.load_strict(root, shown=shown(root, KNOWLEDGE_MARKER.path(root)))
        if marker is not None and marker.corpus_id != corpus_id:
            raise CceError(f"the local knowledge store came from corpus `{marker.corpus_id}` but you are pulling "
                           f"`{corpus_id}`. Pass --force to replace it (one active corpus per root).")
    artifact = fetch_artifact(remote, corpus_id, snapshot)
    install(root, artifact)
    m = artifact.manifest
    return (f"Pulled corpus {corpus_id}@{snapshot}\n  records  : {m.records} · chunks : {m.chunk_count}\n"
            f"  checksum : {m.checksum}\n  store    : {shown(root, store_path(root, snapshot))}\n")


# --------------------------------------------------------------------------- `cce sync list`


@dataclass(frozen=True)
class CorpusRow:
    """One corpus of the cache, as `cce sync list` shows it."""

    corpus_id: str
    current: str | None
    snapshots: int
    bytes: int
    data_as_of: str | None
    pushed_at: str | None

    def as_json(self) -> dict[str, Any]:
        return {"bytes": self.bytes, "corpus_id": self.corpus_id, "current": self.current,
                "data_as_of": self.data_as_of, "pushed_at": self.pushed_at, "snapshots": self.snapshots}


def _meta_text(meta: Any, key: str) -> str | None:
    value = meta.get(key) if isinstance(meta, dict) else None
    return value if isinstance(value, str) else None


def list_corpora(remote: GitRemote) -> list[CorpusRow]:
    """Every corpus in the cache, sorted; ``corpus.json`` is display metadata, so a bad one reads as absent."""
    rows = []
    for corpus_id in remote.list_dirs(KNOWLEDGE_KEY_ROOT):
        sizes = remote.list_sizes(KNOWLEDGE_KEYS.prefix(corpus_id), KNOWLEDGE_KEYS.artifact_suffix)
        try:
            current = read_current(remote, corpus_id)
        except CceError:
            current = None
        try:
            meta = json.loads(remote.read_text(KNOWLEDGE_KEYS.file(corpus_id, CORPUS_META_FILE)) or "null")
        except (CceError, ValueError, RecursionError):
            meta = None
        rows.append(CorpusRow(corpus_id, current, len(sizes), sum(size for _key, size in sizes),
                              _meta_text(meta, "data_as_of"), _meta_text(meta, "pushed_at")))
    return rows


def render_corpora(rows: list[CorpusRow]) -> str:
    """The ``knowledge:`` section of the human listing; empty when the cache holds no corpus."""
    if not rows:
        return ""
    current = [r.current or "-" for r in rows]
    w1 = max(len("corpus_id"), *(len(r.corpus_id) for r in rows))
    w2 = max(len("current"), *(len(c) for c in current))
    w3 = max(len("bytes"), *(len(str(r.bytes)) for r in rows))
    out = f"\nknowledge:\n{'corpus_id':<{w1}}  {'current':<{w2}}  {'snapshots':>9}  {'bytes':>{w3}}  data as-of\n"
    for r, shown in zip(rows, current, strict=True):
        out += f"{r.corpus_id:<{w1}}  {shown:<{w2}}  {r.snapshots:>9}  {r.bytes:>{w3}}  {r.data_as_of or '-'}\n"
    return out


# --------------------------------------------------------------------------- `cce sync pull --all`


def pull_all_step(into: Path, url: str, rows: list[CorpusRow], corpus: str | None) -> str:
    """Consumer mode's knowledge rows: install the cache's corpus into ``into``'s own store.

    ``--corpus`` picks one; a cache with exactly one corpus installs it; with
    several and no choice the step is skipped with a warning (one active
    corpus per root). Every problem is a warning: knowledge never fails the
    member pulls. A corpus whose ``current`` has not moved is up to date and
    is not fetched again.
    """
    if not rows and corpus is None:
        return ""
    ids = ", ".join(r.corpus_id for r in rows)
    if corpus is not None:
        selected = next((r for r in rows if r.corpus_id == corpus), None)
        if selected is None:
            carried = f"it carries: {ids}" if rows else "it carries none"
            return f"  warning: skipped knowledge — corpus `{corpus}` is not in the cache ({carried})\n"
    elif len(rows) == 1:
        selected = rows[0]
    else:
        return (f"  warning: skipped knowledge — the cache carries {len(rows)} corpora ({ids}); one active corpus per "
                "root — pass --corpus <id> to install one\n")
    if selected.current is None:
        return f"  warning: skipped knowledge corpus {selected.corpus_id} — no `current` pointer on the remote\n"
    marker = KNOWLEDGE_MARKER.load(into)
    if marker is not None and (marker.corpus_id, marker.snapshot) == (selected.corpus_id, selected.current):
        return f"  {ROW_LABEL:<16} up-to-date  {selected.corpus_id}@{selected.current}\n"
    try:
        pull(into, corpus=selected.corpus_id, remote_url=url)
    except (CceError, OSError) as exc:
        return f"  warning: skipped knowledge corpus {selected.corpus_id} — {exc}\n"
    installed = KNOWLEDGE_MARKER.load(into)
    snapshot = installed.snapshot if installed is not None else selected.current
    return f"  {ROW_LABEL:<16} pulled      {selected.corpus_id}@{snapshot}  → .cce/knowledge/\n"


# --------------------------------------------------------------------------- `cce sync verify --checksum-only`


@dataclass(frozen=True)
class KnowledgeVerdict:
    """A pulled knowledge store's checksum-only outcome; ``checksum`` is None when none was recorded."""

    marker: KnowledgeMarker
    checksum: str | None

    def row(self) -> str:
        if self.checksum is None:
            return f"  {ROW_LABEL:<16} {NO_RECORD_NOTICE}\n"
        return f"  {ROW_LABEL:<16} {self.marker.corpus_id}@{self.marker.snapshot}  ({self.checksum[:12]})\n"

    def report(self) -> str:
        """The whole report for a root whose only pulled store is knowledge."""
        m = self.marker
        if self.checksum is None:
            return f"verify (checksum-only): knowledge corpus {m.corpus_id}@{m.snapshot}: {NO_RECORD_NOTICE}\n"
        # `checksum` is the artifact's (as the pull reported it); `store` the SHA-256 of the installed bytes.
        return (f"verify OK (checksum-only): knowledge corpus {m.corpus_id}@{m.snapshot}\n  checksum : {m.checksum}\n"
                f"  store    : {self.checksum}\n")


def verify_checksum(root: Path) -> KnowledgeVerdict | None:
    """The installed knowledge store's bytes against the SHA-256 recorded at pull time; None without a marker.

    A mismatch raises the ``verify FAILED (checksum-only)`` report. A knowledge
    corpus has no rebuild check to escalate to: the consumer lacks the feed.
    """
    marker = KNOWLEDGE_MARKER.load(root)
    if marker is None:
        return None
    if marker.installed_sha256 is None:
        return KnowledgeVerdict(marker, None)
    snapshot = marker.snapshot
    actual = check_installed_bytes(
        marker.installed_sha256, lambda: store_path(root, snapshot).read_bytes(),
        heading=f"verify FAILED (checksum-only) for knowledge corpus `{marker.corpus_id}` (@{marker.snapshot})",
        store="knowledge store", repull=f"`cce knowledge pull --corpus {marker.corpus_id}`",
        damage="corruption or local modification", unreadable=(OSError, CceError),
        caveat="and a knowledge corpus has NO rebuild-verify escalation path at all: the puller lacks the source "
               "feed. Trust stays with the pusher and the git host's access control.")
    return KnowledgeVerdict(marker, actual)


# --------------------------------------------------------------------------- freshness (MCP `index_status`)


@dataclass(frozen=True)
class KnowledgeFreshness:
    """Where the local knowledge store stands; ``corpus`` is None for a local ingest."""

    corpus: str | None
    snapshot: str
    records: int
    chunks: int
    data_as_of: str | None
    remote_current: str | None
    behind_remote: bool


def freshness(root: Path, *, lock_timeout: float = 5.0) -> KnowledgeFreshness | None:
    """The local store's freshness, None without a store; the remote lookup is best effort, never an error.

    A store that is present but unreadable raises ``KnowledgeStoreCorrupt``
    (reference #143: reported, never mistaken for no store). The remote is
    asked only when one is configured and a corpus id is known (the marker's,
    else ``knowledge.sync.corpus_id``).
    """
    root = Path(root)
    try:
        store = load_store(root)
    except KnowledgeStoreMissing:
        return None
    marker = KNOWLEDGE_MARKER.load(root)
    corpus = marker.corpus_id if marker is not None and marker.snapshot == store.snapshot else None
    settings = load_knowledge_sync_settings(root)
    wanted = marker.corpus_id if marker is not None else settings.corpus_id
    remote_current = None
    url = settings.remote or load_sync_settings(root, warn=lambda _m: None).remote
    if url and wanted:
        try:
            remote = GitRemote.open(url, working_clone_dir(url), lfs=False, lock_timeout=lock_timeout)
            remote_current = read_current(remote, wanted)
        except CceError:
            remote_current = None
    return KnowledgeFreshness(corpus, store.snapshot, store.records, len(store.chunks),
                              data_as_of(c.updated_at for c in store.chunks), remote_current,
                              remote_current is not None and remote_current != store.snapshot)

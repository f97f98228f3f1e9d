"""``cce doctor``: is this index healthy, and was it built the way this engine would build it?

A store can be damaged (a flipped byte, a truncated copy), modified behind
the engine's back, or built under another configuration (another embedder,
another pack set, another token rule) — and search keeps answering, only
worse. The doctor reads a store, its fingerprint (``indexing.fingerprint``),
the sync marker of a pulled store and the knowledge store, compares them with
this installation, and explains every finding:

- ``ok``: checked and fine;
- ``advisory``: worth knowing, nothing wrong (an old store without a
  fingerprint, secret protection off, a store built with a model server);
- ``FAIL``: definite corruption or drift; the command exits 1.

It never writes anything and never touches the network.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import TOKEN_ESTIMATOR_ID
from cce_core.indexing.fingerprint import (
    BLOCK_NESTING_LIMIT,
    HASH_EMBEDDER,
    MARKDOWN_SECTION_TOKENS,
    Fingerprint,
    file_sha256,
    load_fingerprint,
)
from cce_core.indexing.pack_drift import pack_drift
from cce_core.indexing.store import SegmentedStore, StoreData, default_store_path, load_store
from cce_core.plugins.host import embedder_dim

if TYPE_CHECKING:  # pragma: no cover - typing only
    from cce_core.knowledge.store import KnowledgeStore
    from cce_core.plugins.host import PackRegistry

NO_FINGERPRINT_NOTICE = ("no fingerprint recorded (store built before fingerprints existed) — re-index to enable "
                         "drift detection")
FAILED_MESSAGE = "doctor found definite corruption or config drift (see above)"
KNOWLEDGE_SCHEMA = "cce.knowledge/v1"
_LABEL_WIDTH = 10


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


@dataclass
class DoctorReport:
    """The rendered report and the counts that decide the exit code."""

    lines: list[str] = field(default_factory=list)
    failures: int = 0
    advisories: int = 0
    stores: int = 0

    @property
    def healthy(self) -> bool:
        return self.failures == 0

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)

    def line(self, text: str) -> None:
        self.lines.append(text)

    def _finding(self, label: str, message: str) -> None:
        first, *rest = message.split("\n")
        self.lines.append(f"  {label:<{_LABEL_WIDTH}}{first}")
        self.lines.extend(" " * (2 + _LABEL_WIDTH) + more.strip() for more in rest)

    def ok(self, message: str) -> None:
        self._finding("ok", message)

    def advisory(self, message: str) -> None:
        self.advisories += 1
        self._finding("advisory", message)

    def fail(self, message: str) -> None:
        self.failures += 1
        self._finding("FAIL", message)

    def summary(self) -> None:
        self.line(f"summary: {_plural(self.stores, 'store')} checked · {_plural(self.failures, 'failure')} · "
                  f"{_plural(self.advisories, 'advisory', 'advisories')}")


@dataclass(frozen=True)
class Installation:
    """What this installation would build with now: the fingerprint fields drift is judged against."""

    pack_set: str
    tokenizer: str = TOKEN_ESTIMATOR_ID
    block_nesting_limit: int = BLOCK_NESTING_LIMIT
    markdown_section_tokens: int = MARKDOWN_SECTION_TOKENS
    hash_dim: int = field(default_factory=lambda: embedder_dim(HASH_EMBEDDER))  # asked of the plugin
    # The installed packs themselves: which files another pack set re-chunks (None: any difference counts).
    packs: PackRegistry | None = None


def current_installation() -> Installation:
    """The installed plugins' pack set and the engine's pinned identities."""
    from cce_core.plugins.host import default_host

    packs = default_host().packs
    return Installation(pack_set=packs.pack_set_id, packs=packs)


def run_doctor(*, directory: Path | None = None, store: Path | None = None,
               installation: Installation | None = None) -> DoctorReport:
    """Check one store (``store``), or a project root or workspace (``directory``, default ``.``).

    Usage errors (no such directory, nothing to check) raise ``CceError``;
    every finding, failures included, is part of the returned report.
    """
    report = DoctorReport()
    if store is not None:
        report.line(f"cce doctor — store {store}")
        if not store.is_file():
            raise CceError(f"no store at {store} — index first (`cce index <dir>`)")
        _check_store(store, report, installation or current_installation())
        report.stores = 1
        report.summary()
        return report
    root = directory if directory is not None else Path(".")
    if not root.is_dir():
        raise CceError(f"not a directory: {root}")
    from cce_core.workspace.manifest import load_manifest, manifest_path

    if Path(manifest_path(root)).exists():
        try:
            manifest = load_manifest(root)
        except CceError as exc:
            report.line(f"cce doctor — {root}")
            report.fail(f"the workspace manifest is present but unreadable: {exc}\nfix or remove "
                        f"{manifest_path(root)} — the doctor does not fall back to checking a single directory "
                        "past a broken manifest")
            report.summary()
            return report
        members = manifest.members
        report.line(f"cce doctor — workspace {manifest.name} ({_plural(len(members), 'member')})")
        installed = installation or current_installation()
        for member in members:
            report.line(f"{member.name}:")
            member_dir = root / member.path
            _check_store(default_store_path(member_dir), report, installed)
            _check_sync_marker(member_dir, report)
        _check_knowledge(root, report)
        report.stores = len(members)
        report.summary()
        return report
    store_path = default_store_path(root)
    has_knowledge = _has_knowledge(root)
    report.line(f"cce doctor — {root}")
    if not store_path.exists() and not has_knowledge:
        raise CceError(f"no store at {store_path} — index first (`cce index {root}`)")
    if store_path.exists():
        _check_store(store_path, report, installation or current_installation())
        _check_sync_marker(root, report)
        report.stores = 1
    _check_knowledge(root, report)
    report.summary()
    return report


# --------------------------------------------------------------------------- the store


def _check_store(store_path: Path, report: DoctorReport, installed: Installation) -> None:
    """Does the store parse and hold usable vectors, and does its fingerprint match it and us?"""
    try:
        store_sha = file_sha256(store_path)
    except OSError as exc:
        report.fail(f"store could not be read ({store_path}): {exc.strerror or exc} — index it first "
                    "(`cce index <dir>`)")
        return
    data = _parse_store(store_path, report)
    try:
        recorded = load_fingerprint(store_path)
    except CceError as exc:
        report.fail(f"{exc} — corruption; re-index to rewrite the fingerprint")
        return
    if recorded is None:
        report.advisory(NO_FINGERPRINT_NOTICE)
        return
    _check_fingerprint(recorded, store_sha, data, report, installed)


def _parse_store(store_path: Path, report: DoctorReport) -> StoreData | None:
    """Load the store and touch every section a search reads; report what it holds."""
    try:
        data = load_store(store_path)
        _ = data.bm25_source, data.chunk_ids  # what a search reads (not the merged postings)
        rows, dim = data.embedding_rows()
        finite = bool(rows == 0 or _all_finite(data))
    except (CceError, ValueError) as exc:
        report.fail(f"store cannot be parsed: {exc} — corruption; re-index (or `cce sync pull --force`)")
        return None
    report.ok(f"store parses: {_plural(len(data.chunk_ids), 'chunk')} across {_plural(len(data.files), 'file')} "
              f"(embedder {data.embedder or HASH_EMBEDDER})")
    _check_segments(data, report)
    if rows and not dim:
        report.fail(f"{_plural(rows, 'chunk')} carr{'ies' if rows == 1 else 'y'} EMPTY embeddings — no vector "
                    "signal at all; re-index")
    elif data.embedder == HASH_EMBEDDER and rows and dim != (hash_dim := embedder_dim(HASH_EMBEDDER)):
        report.fail(f"hash-embedder store has {dim}-dim vectors but this engine embeds queries at {hash_dim} — "
                    "cosine scores would be meaningless; re-index")
    if not finite:
        report.fail("the embedding matrix holds NaN or infinite values — the store is damaged; re-index")
    return data


def _all_finite(data: StoreData) -> bool:
    import numpy as np

    if isinstance(data, SegmentedStore):  # segment by segment, without building the whole matrix
        return all(bool(np.isfinite(seg.array("csc_val" if seg.sparse else "vectors")).all())
                   for seg in data.segments)
    return bool(np.isfinite(data.embeddings).all())


def _check_segments(data: StoreData, report: DoctorReport) -> None:
    """Every segment's bytes against the checksum the manifest recorded when it was written.

    Silent when they match: the healthy report keeps the family's lines.
    """
    if not isinstance(data, SegmentedStore):
        return
    damaged = data.damaged_segments(thorough=True)
    if damaged:
        report.fail(f"segment {damaged[0]} does not match its recorded checksum"
                    f"{f' (and {len(damaged) - 1} more)' if len(damaged) > 1 else ''} — corruption; re-index "
                    "(`cce index` rebuilds a store whose segment changed)")


def _check_fingerprint(fp: Fingerprint, store_sha: str, data: StoreData | None, report: DoctorReport,
                       installed: Installation) -> None:
    """The recorded build configuration against the store's bytes and this installation, field by field."""
    if not fp.intact:
        report.fail("fingerprint self-checksum mismatch — the fingerprint file was edited or damaged, so none of "
                    "its fields can be trusted; re-index to rewrite it")
        return
    if fp.store_sha256 != store_sha:
        report.fail("store bytes do not match the fingerprint — the store was modified or rebuilt without updating "
                    "it (by hand, by another tool, or a run killed between the two writes); re-index to realign")
    drift = 0
    harmless_packs = False
    if data is not None and fp.embedder != (data.embedder or HASH_EMBEDDER):
        drift += 1
        report.fail(f"embedder drift: the fingerprint records `{fp.embedder}` but the store declares "
                    f"`{data.embedder}` — its vectors may come from another embedding space, which makes cosine "
                    "scores meaningless; re-index")
    if fp.embedder == HASH_EMBEDDER and fp.embed_dim != installed.hash_dim:
        drift += 1
        report.fail(f"embedding dimensions changed: built at {fp.embed_dim}, this engine embeds at "
                    f"{installed.hash_dim} — vector scores would compare different spaces; re-index")
    if fp.pack_set != installed.pack_set:
        # Only the files the difference re-chunks matter: a pack for a language the store has no file of
        # changes nothing this installation would build.
        packs = (pack_drift(fp.pack_set, installed.packs, data)
                 if installed.packs is not None and data is not None else None)
        if packs is not None and not packs.affected:
            harmless_packs = True
            report.advisory(f"packs differ from the build (`{fp.pack_set}` → `{installed.pack_set}`), but no file of "
                            "this store is chunked differently — nothing to re-index")
        else:
            drift += 1
            what = packs.files() if packs is not None else "chunk ids may not be reproducible"
            report.fail(f"chunker changed: the store was built with packs `{fp.pack_set}`, this installation has "
                        f"`{installed.pack_set}` — {what}; re-index to realign")
    if fp.tokenizer != installed.tokenizer:
        drift += 1
        report.fail(f"tokenizer rule changed (`{fp.tokenizer}` vs `{installed.tokenizer}`) — token counts, chunk "
                    "budgets and savings figures drift; re-index to realign")
    if fp.block_nesting_limit != installed.block_nesting_limit:
        drift += 1
        report.fail(f"document nesting limit changed ({fp.block_nesting_limit} vs {installed.block_nesting_limit})"
                    " — deeply nested documents would chunk differently; re-index to realign")
    if fp.markdown_section_tokens != installed.markdown_section_tokens:
        report.advisory(f"document section budget differs ({fp.markdown_section_tokens} vs the default "
                        f"{installed.markdown_section_tokens}) — knowledge sections may split elsewhere")
    if not fp.redaction:
        report.advisory("built with --allow-secrets (secret protection OFF) — sensitive files and raw secrets may "
                        "be stored verbatim")
    if fp.embedder != HASH_EMBEDDER:
        report.advisory(f"built with the `{fp.embedder}` embedder: searching needs it installed (and its server "
                        "reachable, if it has one), and the store cannot be shared through `cce sync`")
    if drift == 0:
        from cce_core import __version__

        note = "" if fp.engine_version == __version__ else f" — built by cce {fp.engine_version}, config unchanged"
        matches = "otherwise matches" if harmless_packs else "matches"
        report.ok(f"fingerprint {matches} this installation ({fp.embedder}/{fp.embed_dim} · packs `{fp.pack_set}` · "
                  f"{fp.tokenizer}{note})")


# --------------------------------------------------------------------------- provenance


def _check_sync_marker(directory: Path, report: DoctorReport) -> None:
    """A pulled store's bytes against the checksum its pull recorded; a local build has no marker."""
    from cce_core.sync.service import NO_RECORD_NOTICE, installed_checksum_verdict, load_marker, short_checksum

    if load_marker(directory) is None:
        report.ok("provenance: local build (no sync marker)")
        return
    try:
        marker, actual = installed_checksum_verdict(directory, "this store")
    except CceError as exc:
        report.fail(str(exc))
        return
    if actual is None:
        report.advisory(NO_RECORD_NOTICE)
    else:
        report.ok(f"pulled store bytes match the install record ({marker.repo_id}@{marker.sha} · "
                  f"{short_checksum(actual)})")


# --------------------------------------------------------------------------- knowledge


def _has_knowledge(root: Path) -> bool:
    """Whether ``root`` has a knowledge store (a damaged pointer counts: it is something to report)."""
    from cce_core.knowledge.store import current_snapshot

    try:
        return current_snapshot(root) is not None
    except CceError:
        return True


def _check_knowledge(root: Path, report: DoctorReport) -> None:
    """The knowledge store's contract and integrity; silent when the root has none."""
    from cce_core.knowledge.store import current_snapshot
    from cce_core.knowledge.store import load_store as load_knowledge_store

    try:
        snapshot = current_snapshot(root)
    except CceError as exc:
        report.line("knowledge:")
        report.fail(f"knowledge store cannot be loaded: {exc} — re-ingest or re-pull")
        return
    if snapshot is None:
        return
    report.line("knowledge:")
    try:
        store = load_knowledge_store(root)
    except CceError as exc:
        report.fail(f"knowledge store cannot be loaded: {exc} — re-ingest or re-pull")
        return
    if store.schema != KNOWLEDGE_SCHEMA:
        report.fail(f"knowledge contract mismatch: the store says `{store.schema}`, this engine reads "
                    f"`{KNOWLEDGE_SCHEMA}` — re-ingest the feed (or re-pull the corpus)")
        return
    report.ok(f"contract {store.schema} · snapshot {store.snapshot} · {_plural(int(store.records), 'record')} · "
              f"{_plural(len(store.chunks), 'chunk')}")
    _check_knowledge_secrets(root, store, report)


# Every stored text facet of a knowledge chunk; the record id is an address and is judged apart.
_KNOWLEDGE_FACETS = ("content", "kind", "name", "source", "title", "url", "state", "state_reason", "updated_at",
                     "group")
_KNOWLEDGE_LISTS = ("labels", "links")


def _printable(text: str) -> str:
    """``text`` with anything that would not print as part of one line escaped."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _check_knowledge_secrets(root: Path, store: KnowledgeStore, report: DoctorReport) -> None:
    """Stored text the redactor would still change: ingested before that redaction existed, or edited since.

    The redactor is the identity on clean text, so ``redact(value) != value``
    means a secret-shaped value is on disk (and, if the corpus was pushed, on
    the remote: re-ingesting here does not clean that copy). Findings name
    the facet, never the value. A record id cannot be redacted at rest (chunk
    ids derive from it), so it gets its own advisory, shown redacted. The
    profile is the one the project's ingest uses.
    """
    from cce_core.foundation.config import load_config
    from cce_core.secrets.redactor import redact_with

    profile = load_config(root).secrets_profile

    def dirty(value: str) -> bool:
        return redact_with(value, profile) != value

    facets: set[str] = set()
    ids: dict[str, None] = {}
    for chunk in store.chunks:
        if dirty(chunk.record_id):
            ids.setdefault(redact_with(chunk.record_id, profile), None)
        facets.update(name for name in _KNOWLEDGE_FACETS
                      if isinstance(getattr(chunk, name), str) and dirty(getattr(chunk, name)))
        facets.update(name for name in _KNOWLEDGE_LISTS if any(dirty(item) for item in getattr(chunk, name)))
    if facets:
        report.advisory(f"the knowledge store holds text the redactor would remove, in: {', '.join(sorted(facets))} — "
                        "it was ingested before that redaction (or edited since); re-ingest the feed, and if it was "
                        "pushed, push again (a local re-ingest does not clean the copy on the remote)")
    for shown_id in ids:
        report.advisory(f"knowledge record id `{_printable(shown_id)}` holds something secret-shaped; a record id is "
                        "an address, re-ingesting keeps it — fix the source that mints the ids")

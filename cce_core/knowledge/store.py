"""The knowledge store: one JSON file per ingested snapshot, and a ``current`` pointer naming the live one.

Documents change, so they never enter the code index (whose Sync cache is
keyed by commit). Each ingest writes ``<root>/.cce/knowledge/<snapshot>.json``
— pretty JSON in declaration order with a trailing newline, byte-identical to
what the other engines write for the same feed — and then rewrites
``<root>/.cce/knowledge/current`` to name it, so a newer ingest supersedes the
old one. Both writes are atomic: a killed ingest leaves the previous snapshot
and pointer in force. A store that is present but unreadable is reported as
corrupt (:class:`KnowledgeStoreCorrupt`), never treated as absent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from cce_core.foundation.atomic import atomic_write
from cce_core.foundation.errors import CceError
from cce_core.foundation.optional_file import read_bytes_or_none
from cce_core.knowledge.feed import SCHEMA_ID

KNOWLEDGE_DIR_NAME = "knowledge"
CURRENT_POINTER = "current"
STORE_DIR = ".cce"
REINDEX_HINT = "re-run `cce knowledge index <feed.jsonl>` to rebuild it"
# A snapshot names a file: a content hash in practice, never a path.
_SNAPSHOT_RE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


class KnowledgeStoreMissing(CceError):
    """No knowledge store was ever installed here (no ``current`` pointer)."""


class KnowledgeStoreCorrupt(CceError):
    """A knowledge store is present but cannot be read: a bad pointer, a missing or malformed snapshot."""


@dataclass
class KnowledgeChunk:
    """One document section with its record's facets; the field order is the persisted order."""

    chunk_id: str
    record_id: str
    kind: str
    name: str
    start_line: int  # this and end_line: the section's lines (1-based) in the record's rendered document
    end_line: int
    token_count: int
    content: str
    source: str
    url: str | None
    state: str | None
    state_reason: str | None
    updated_at: str | None
    group: str | None
    labels: list[str]
    title: str = ""
    links: list[str] = field(default_factory=list)
    embedding: list[float] = field(default_factory=list)


@dataclass
class KnowledgeStore:
    schema: str
    snapshot: str
    records: int
    chunks: list[KnowledgeChunk]

    def to_bytes(self) -> bytes:
        """The persisted bytes: 2-space pretty JSON in declaration order, UTF-8, one trailing newline."""
        return b"".join(store_chunks(self.schema, self.snapshot, self.records, self.chunks))


# How deep a chunk object sits in the pretty store document (inside the top object and the chunks array).
_CHUNK_INDENT = "\n    "


def store_chunks(schema: str, snapshot: str, records: int, chunks: Iterable[KnowledgeChunk]) -> Iterator[bytes]:
    """A store's bytes in pieces, one per chunk, as ``chunks`` is consumed.

    Joined, the pieces are exactly ``json.dumps(store, indent=2, ensure_ascii=False) + "\\n"``,
    but no more than one chunk is ever serialized at a time, so ingest can
    stream a large store to disk.
    """
    head = json.dumps({"schema": schema, "snapshot": snapshot, "records": records, "chunks": []}, indent=2,
                      ensure_ascii=False)
    before, _, after = head.rpartition("[]")  # the chunks array is the last field
    yield before.encode("utf-8")
    separator = "["
    for chunk in chunks:
        # json.dumps escapes every newline inside strings, so each raw newline is a line of the layout.
        body = json.dumps(asdict(chunk), indent=2, ensure_ascii=False).replace("\n", _CHUNK_INDENT)
        yield f"{separator}{_CHUNK_INDENT}{body}".encode()
        separator = ","
    yield ("[]" if separator == "[" else "\n  ]").encode("utf-8") + f"{after}\n".encode()


# --------------------------------------------------------------------------- paths


def validate_snapshot(snapshot: str) -> str:
    """``snapshot`` when it can name a file in the store directory, else :class:`CceError`."""
    if not _SNAPSHOT_RE.fullmatch(snapshot) or snapshot in (".", ".."):
        raise CceError(f"invalid knowledge snapshot id {snapshot!r}: use letters, digits, '.', '_' or '-'")
    return snapshot


def knowledge_dir(root: Path) -> Path:
    return Path(root) / STORE_DIR / KNOWLEDGE_DIR_NAME


def pointer_path(root: Path) -> Path:
    return knowledge_dir(root) / CURRENT_POINTER


def store_path(root: Path, snapshot: str) -> Path:
    return knowledge_dir(root) / f"{validate_snapshot(snapshot)}.json"


def current_snapshot(root: Path) -> str | None:
    """The snapshot the ``current`` pointer names; None when there is no pointer.

    A pointer that exists but cannot name a snapshot raises :class:`KnowledgeStoreCorrupt`.
    """
    path = pointer_path(root)
    raw = read_bytes_or_none(path, lambda exc: KnowledgeStoreCorrupt(
        f"the knowledge store pointer {path} cannot be read ({exc}) — {REINDEX_HINT}"))
    if raw is None:
        return None
    try:
        snapshot = raw.decode("utf-8").strip()
        return validate_snapshot(snapshot)
    except (UnicodeDecodeError, CceError):
        raise KnowledgeStoreCorrupt(f"the knowledge store pointer {path} does not name a snapshot — "
                                    f"{REINDEX_HINT}") from None


# --------------------------------------------------------------------------- reading

_STR = (str,)
_OPT_STR = (str, type(None))
_CHUNK_TYPES: dict[str, tuple[type, ...]] = {
    "chunk_id": _STR, "record_id": _STR, "kind": _STR, "name": _STR, "content": _STR, "source": _STR,
    "url": _OPT_STR, "state": _OPT_STR, "state_reason": _OPT_STR, "updated_at": _OPT_STR, "group": _OPT_STR,
    "title": _STR,
}
_CHUNK_INTS = ("start_line", "end_line", "token_count")
_CHUNK_STR_LISTS = ("labels", "links")
# Stores written before the retrieval facets existed lack these; they read as empty.
_CHUNK_DEFAULTS: dict[str, Any] = {"title": "", "links": [], "embedding": []}
_CHUNK_FIELDS = tuple(f.name for f in fields(KnowledgeChunk))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _chunk_from(obj: Any, index: int) -> KnowledgeChunk:
    where = f"chunk {index}"
    if not isinstance(obj, dict):
        raise ValueError(f"{where} is not an object")
    values: dict[str, Any] = {}
    for name in _CHUNK_FIELDS:
        if name not in obj:
            if name not in _CHUNK_DEFAULTS:
                raise ValueError(f"{where}: missing field `{name}`")
            default = _CHUNK_DEFAULTS[name]
            values[name] = list(default) if isinstance(default, list) else default
            continue
        value = obj[name]
        if name in _CHUNK_INTS:
            ok = _is_int(value)
        elif name in _CHUNK_STR_LISTS:
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        elif name == "embedding":
            ok = isinstance(value, list) and all(isinstance(v, int | float) and not isinstance(v, bool)
                                                 for v in value)
            if ok:
                value = [float(v) for v in value]
        else:
            ok = isinstance(value, _CHUNK_TYPES[name])
        if not ok:
            raise ValueError(f"{where}: field `{name}` has the wrong type")
        values[name] = value
    return KnowledgeChunk(**values)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"`{name}` is not JSON")


def store_from_bytes(data: bytes) -> KnowledgeStore:
    """Parse and check a store file's bytes; ``ValueError`` says what is wrong."""
    try:
        obj = json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    for name in ("schema", "snapshot", "records", "chunks"):
        if name not in obj:
            raise ValueError(f"missing field `{name}`")
    if obj["schema"] != SCHEMA_ID:
        raise ValueError(f"schema is {obj['schema']!r}, expected {SCHEMA_ID!r}")
    if not isinstance(obj["snapshot"], str):
        raise ValueError("field `snapshot` has the wrong type")
    if not _is_int(obj["records"]):
        raise ValueError("field `records` has the wrong type")
    if not isinstance(obj["chunks"], list):
        raise ValueError("field `chunks` has the wrong type")
    chunks = [_chunk_from(c, i) for i, c in enumerate(obj["chunks"])]
    return KnowledgeStore(obj["schema"], obj["snapshot"], obj["records"], chunks)


def load_store(root: Path, snapshot: str | None = None) -> KnowledgeStore:
    """The store of ``snapshot`` (default: the one ``current`` names).

    Raises :class:`KnowledgeStoreMissing` when no store was ever installed and
    :class:`KnowledgeStoreCorrupt` when one is present but unreadable (a
    dangling pointer included): a broken store is reported, never mistaken
    for no store.
    """
    if snapshot is None:
        snapshot = current_snapshot(root)
        if snapshot is None:
            raise KnowledgeStoreMissing(f"no knowledge store under {root} (`.cce/knowledge/current` missing) — "
                                        "run `cce knowledge index <feed.jsonl>` first")
        dangling = "the `current` pointer names it but "
    else:
        dangling = ""
    path = store_path(root, snapshot)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if not dangling:
            raise KnowledgeStoreMissing(f"no knowledge snapshot {snapshot} under {root}") from None
        raise KnowledgeStoreCorrupt(f"the knowledge store is corrupt: {dangling}{path} is missing — "
                                    f"{REINDEX_HINT}") from None
    except OSError as exc:
        raise KnowledgeStoreCorrupt(f"the knowledge store {path} cannot be read ({exc}) — {REINDEX_HINT}") from None
    try:
        store = store_from_bytes(data)
    except ValueError as exc:
        raise KnowledgeStoreCorrupt(f"the knowledge store {path} is corrupt ({exc}) — {REINDEX_HINT}") from None
    if store.snapshot != snapshot:
        raise KnowledgeStoreCorrupt(f"the knowledge store {path} is corrupt (it holds snapshot {store.snapshot}) — "
                                    f"{REINDEX_HINT}")
    return store


# --------------------------------------------------------------------------- writing


def install_store(root: Path, data: bytes, snapshot: str) -> Path:
    """Make ``data`` (a store's bytes) the current knowledge store of ``root``; returns its path.

    The bytes are checked first (a store for another snapshot is refused), then
    written atomically as ``<snapshot>.json``, and only then does the
    ``current`` pointer move — so a reader sees the old store or the new one,
    and a kill between the two writes leaves the old one current. Older
    snapshot files stay on disk.
    """
    try:
        store = store_from_bytes(data)
    except ValueError as exc:
        raise CceError(f"refusing to install a malformed knowledge store ({exc})") from None
    if store.snapshot != snapshot:
        raise CceError(f"refusing to install a knowledge store for snapshot {store.snapshot} as {snapshot}")
    path = store_path(root, snapshot)
    atomic_write(path, data)
    atomic_write(pointer_path(root), f"{snapshot}\n".encode())
    return path


def install_stream(root: Path, snapshot: str, pieces: Iterable[bytes]) -> Path:
    """Make the store ``pieces`` spell (see :func:`store_chunks`) the current one; returns its path.

    The pieces are written to a temporary file as they come; if producing them
    raises (a limit, a kill), the temporary file is removed and nothing moves.
    Only after the snapshot file is complete does the ``current`` pointer move.
    """
    path = store_path(root, snapshot)
    atomic_write(path, pieces)
    atomic_write(pointer_path(root), f"{snapshot}\n".encode())
    return path


def save_store(root: Path, store: KnowledgeStore) -> Path:
    """Install ``store`` under ``root`` (its own bytes, its own snapshot id)."""
    return install_store(root, store.to_bytes(), store.snapshot)

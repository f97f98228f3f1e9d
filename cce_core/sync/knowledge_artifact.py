"""The `.cck` knowledge artifact: the one file a sync remote stores per ``corpus@snapshot``.

A knowledge corpus travels through the same git cache as code indexes and is
shared across the engines of the family, so it needs the same discipline as
the `.cce` code artifact: an engine-neutral stream that every engine writes
byte for byte identically for the same store. What travels is the built
store, never the feed: secrets are redacted at ingest, so the feed is the one
thing that must not leave the machine.

The stream is UTF-8 with an LF after every line:

* line 1 — the manifest (``checksum``, ``chunk_count``, ``contract``,
  ``corpus_id``, ``data_as_of``, ``records``, ``snapshot``);
* one line per chunk, in the store's own order (record order, then section
  order: document order means something, so it is never re-sorted), with
  every field present (``null`` for an absent value, ``[]`` for an empty
  list) and the vector as base64 little-endian float64 bytes, as in `.cce`.

No graph line, no build time or builder: the artifact is a function of the
store and the corpus id alone. ``checksum`` is the SHA-256 of the stream
rendered with ``"checksum":""``; reading re-renders what it parsed and checks
it, so a flipped byte, a truncation or an edit is refused with the reason.

This module converts between a knowledge store and the artifact; it knows
nothing about git, remotes, store files on disk or the CLI.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from typing import Any

from cce_core.knowledge.store import KnowledgeChunk, KnowledgeStore
from cce_core.sync import artifact_limits as limits
from cce_core.sync.artifact_limits import ArtifactError
from cce_core.sync.codec import (
    as_unsigned,
    check_checksum,
    dumps_canonical,
    embedding_bytes,
    encode_embedding_bytes,
    float64_bytes,
    float64s,
    joined_lines,
    manifest_line,
    parse_json_line,
    stream_checksum,
    stream_lines,
    utf8_text,
)

# A chunk's fields in the store's declaration order (the order a store file
# lists them in); the artifact line sorts them, the store document keeps this.
CHUNK_FIELDS = ("chunk_id", "record_id", "kind", "name", "start_line", "end_line", "token_count", "content",
                "source", "url", "state", "state_reason", "updated_at", "group", "labels", "title", "links",
                "embedding")
_TEXT = ("chunk_id", "record_id", "kind", "name", "content", "source", "title")
_COUNTS = ("start_line", "end_line", "token_count")
_NULLABLE = ("url", "state", "state_reason", "updated_at", "group")
_LISTS = ("labels", "links")

PHASE_A_REFUSAL = ("refusing to export a knowledge store without persisted embeddings (a Phase-A snapshot). "
                   "Re-ingest the feed with this version: `cce knowledge index <feed>`.")


@dataclass(frozen=True)
class KnowledgeManifest:
    """Line 1: which corpus and snapshot the artifact carries, and how much."""

    contract: str
    corpus_id: str
    snapshot: str
    records: int
    chunk_count: int
    data_as_of: str | None
    checksum: str = ""

    def as_json(self, checksum: str) -> dict[str, Any]:
        return {
            "checksum": checksum,
            "chunk_count": self.chunk_count,
            "contract": self.contract,
            "corpus_id": self.corpus_id,
            "data_as_of": self.data_as_of,
            "records": self.records,
            "snapshot": self.snapshot,
        }


@dataclass(frozen=True)
class KnowledgeArtifact:
    """A parsed or freshly exported `.cck` artifact.

    ``chunks[i]`` holds every field of a chunk but its vector, in the store's
    declaration order; ``embeddings[i]`` holds that vector's raw little-endian
    float64 bytes (kept as bytes so a round trip cannot touch a bit).
    """

    manifest: KnowledgeManifest
    chunks: list[dict[str, Any]]
    embeddings: list[bytes]

    @cached_property
    def _body(self) -> bytes:
        return joined_lines(dumps_canonical({**c, "embedding": encode_embedding_bytes(e)})
                            for c, e in zip(self.chunks, self.embeddings, strict=True))

    def render(self, checksum: str | None = None) -> bytes:
        """The stream with ``checksum`` on line 1 (default: the manifest's own)."""
        stamp = self.manifest.checksum if checksum is None else checksum
        return manifest_line(self.manifest.as_json(stamp)) + self._body

    def computed_checksum(self) -> str:
        """SHA-256 (lowercase hex) of the stream rendered with an empty ``checksum``."""
        return stream_checksum(self.manifest.as_json(""), self._body)

    def to_bytes(self) -> bytes:
        return self.render()

    def to_store(self) -> KnowledgeStore:
        """The store this artifact carries: the inverse of :func:`export_knowledge`.

        Its bytes are identical to those of the store that was exported.
        """
        chunks = [KnowledgeChunk(**c, embedding=float64s(raw))
                  for c, raw in zip(self.chunks, self.embeddings, strict=True)]
        return KnowledgeStore(self.manifest.contract, self.manifest.snapshot, self.manifest.records, chunks)


def data_as_of(stamps: Iterable[str | None]) -> str | None:
    """The newest of the chunks' ``updated_at`` values (ISO-8601 text compares in time order), or None."""
    present = [s for s in stamps if isinstance(s, str)]
    return max(present) if present else None


# -- export ------------------------------------------------------------------


def _store_problem(what: str) -> ArtifactError:
    return ArtifactError(f"the knowledge store is not exportable: {what}")


def _store_chunk(index: int, value: Any) -> tuple[dict[str, Any], list[float]]:
    """One store chunk as (fields in declaration order, vector), checked enough to render faithfully."""
    if not isinstance(value, Mapping):
        raise _store_problem(f"chunk {index} is not an object")
    missing = [name for name in CHUNK_FIELDS if name not in value]
    if missing:
        raise _store_problem(f"chunk {index} has no `{missing[0]}`")
    vector = value["embedding"]
    if not isinstance(vector, list) or not all(type(x) in (int, float) for x in vector):
        raise _store_problem(f"chunk {index} has an `embedding` that is not a list of numbers")
    return {name: value[name] for name in CHUNK_FIELDS if name != "embedding"}, vector


def export_knowledge(store: KnowledgeStore | Mapping[str, Any], corpus_id: str) -> KnowledgeArtifact:
    """The artifact of a knowledge store (or of the JSON object a store file holds).

    Refuses a store whose chunks carry no vectors (a snapshot from before
    embeddings were persisted): its consumers would have to recompute them,
    and the result would no longer be the store that was published.
    """
    if isinstance(store, KnowledgeStore):
        store = asdict(store)
    schema, snapshot, records = store.get("schema"), store.get("snapshot"), store.get("records")
    raw_chunks = store.get("chunks")
    if not isinstance(schema, str) or not isinstance(snapshot, str):
        raise _store_problem("`schema` and `snapshot` must be strings")
    record_count = as_unsigned(records)
    if record_count is None:
        raise _store_problem("`records` must be a non-negative integer")
    if not isinstance(raw_chunks, list):
        raise _store_problem("`chunks` must be a list")
    parsed = [_store_chunk(i, c) for i, c in enumerate(raw_chunks)]
    if any(not vector for _fields, vector in parsed):
        raise ArtifactError(PHASE_A_REFUSAL)
    # What the import refuses is never exported: a push must publish only what a pull can install.
    for index, (_fields, vector) in enumerate(parsed):
        if not all(math.isfinite(x) for x in vector):
            raise _store_problem(f"chunk {index} has a non-finite embedding value")
    chunks = [fields for fields, _vector in parsed]
    try:
        embeddings = [float64_bytes(v) for _fields, v in parsed]
    except (struct.error, OverflowError) as exc:
        raise _store_problem(f"an embedding value is out of range ({exc})") from None
    manifest = KnowledgeManifest(contract=schema, corpus_id=corpus_id, snapshot=snapshot, records=record_count,
                                 chunk_count=len(chunks), data_as_of=data_as_of(c["updated_at"] for c in chunks))
    artifact = KnowledgeArtifact(manifest, chunks, embeddings)
    try:
        limits.check_line_lengths([0, *map(len, artifact._body.split(b"\n")[:-1])], graph=False)
    except ArtifactError as exc:
        raise _store_problem(str(exc)) from None
    return _stamped(artifact, artifact.computed_checksum())


def _stamped(artifact: KnowledgeArtifact, checksum: str) -> KnowledgeArtifact:
    stamped = replace(artifact, manifest=replace(artifact.manifest, checksum=checksum))
    if "_body" in artifact.__dict__:  # only line 1 differs: keep the rendered chunk lines
        stamped.__dict__["_body"] = artifact.__dict__["_body"]
    return stamped


# -- import ------------------------------------------------------------------


# What each kind of field accepts; a field that is absent is missing whatever its kind.
_ACCEPTS: dict[str, Callable[[Any], bool]] = {
    "string": lambda x: isinstance(x, str),
    "integer": lambda x: as_unsigned(x) is not None,
    "nullable string": lambda x: x is None or isinstance(x, str),
    "array": lambda x: isinstance(x, list),
}
_CHUNK_KINDS = {**dict.fromkeys(_TEXT, "string"), **dict.fromkeys(_COUNTS, "integer"),
                **dict.fromkeys(_NULLABLE, "nullable string"), **dict.fromkeys(_LISTS, "array")}


def _required(v: Any, key: str, where: str, kind: str) -> Any:
    """``v[key]`` when present and of ``kind``, else the reference's ``<where> missing <kind> field`` error."""
    if not (isinstance(v, dict) and key in v and _ACCEPTS[kind](v[key])):
        raise ArtifactError(f"{where} missing {kind} field `{key}`")
    return v[key]


def _parse_manifest(line: str) -> KnowledgeManifest:
    v = parse_json_line(line, "manifest")
    # Checked in the reference's order, so the first problem named is the same.
    as_of = _required(v, "data_as_of", "manifest", "nullable string")
    found = {key: _required(v, key, "manifest", kind) for key, kind in (
        ("contract", "string"), ("corpus_id", "string"), ("snapshot", "string"), ("records", "integer"),
        ("chunk_count", "integer"), ("checksum", "string"))}
    return KnowledgeManifest(data_as_of=as_of, **found)


def _chunk_from(v: Any) -> tuple[dict[str, Any], bytes]:
    """A chunk line's fields, checked in the reference's order (the vector first)."""
    raw = embedding_bytes(_required(v, "embedding", "chunk", "string"))
    if any(not math.isfinite(x) for x in float64s(raw)):
        raise ArtifactError("chunk embedding holds a non-finite value")
    fields = {name: _required(v, name, "chunk", _CHUNK_KINDS[name]) for name in CHUNK_FIELDS[:-1]}
    for name in _LISTS:
        # As the reference reads a list: its strings (anything else then fails the checksum).
        fields[name] = [s for s in fields[name] if isinstance(s, str)]
    return fields, raw


def import_knowledge(raw: bytes) -> KnowledgeArtifact:
    """Parse and validate `.cck` bytes; the checksum is recomputed from what was parsed.

    Raises :class:`ArtifactError` naming the first problem: not UTF-8, empty,
    a line count that disagrees with ``chunk_count``, a line that is not JSON
    or lacks a field, a bad embedding, or a checksum mismatch.
    """
    # A line longer than any field can make is refused by its length, before it is decoded or parsed
    # (the chunk lines' limits are the code artifact's; there is no graph line).
    raw_lines = stream_lines(raw)
    limits.check_line_lengths([len(line) for line in raw_lines], graph=False)
    lines = [utf8_text(raw, line) for line in raw_lines]
    if not lines:
        raise ArtifactError("artifact too short: need at least a manifest line")
    manifest = _parse_manifest(lines[0])
    n = manifest.chunk_count
    if len(lines) != n + 1:
        raise ArtifactError(f"artifact line count {len(lines)} does not match chunk_count {n} (expected {n + 1})")
    parsed = [_chunk_from(parse_json_line(line, "chunk")) for line in lines[1:]]
    artifact = KnowledgeArtifact(manifest, [f for f, _ in parsed], [e for _, e in parsed])
    check_checksum(manifest.checksum, artifact.computed_checksum())
    return artifact

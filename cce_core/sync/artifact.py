"""The `.cce` code artifact: the one file a sync remote stores per ``repo@sha``.

Every engine of the family keeps its index in its own native store, so the
shared cache cannot be any of them. It is instead this interchange stream,
which each engine writes byte for byte identically for the same tree: that
identity is what makes a cache content-addressable across engines and what
``cce sync verify`` checks. Format 2.3, UTF-8, an LF after every line:

* line 1 — the manifest (``cce_version``, ``checksum``, ``chunk_count``,
  ``embedder``, ``file_tokens``, ``pack_set_id``, ``repo_id``, ``sha``);
* one line per chunk, ordered by (file_path, start_line, id), with its vector
  as standard base64 of little-endian float64 bytes (never decimal text, so no
  float formatting is involved);
* the graph line: resolved file → file import edges and one node per file.

Every object is compact JSON with sorted keys, as the reference's writer lays
it out. ``checksum`` is the SHA-256 of the stream rendered with
``"checksum":""``. Reading recomputes it by re-rendering the parsed artifact,
so anything that would not survive a round trip is refused; the graph line is
re-rendered from its edges exactly as published (resolving them again from
file names would lose what the publisher's packs resolved, the reference's
#115). Before that, every field is checked against the format and, for a
pull, against what the pull asked for (``artifact_limits``): a valid checksum
says only that the bytes arrived as written.

This module knows nothing about git, remotes or the CLI; it converts a store
to an artifact and an artifact back to a store that searches exactly as a
local build of the same tree does.
"""

from __future__ import annotations

import binascii
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import orjson

from cce_core.foundation.textrules import tokenize_bytes
from cce_core.indexing.bm25 import build_bm25
from cce_core.indexing.chunk import Chunk
from cce_core.indexing.graph import build_edges
from cce_core.indexing.store import Bm25Arrays, FileEntry, StoreData
from cce_core.sync import artifact_limits as limits
from cce_core.sync.artifact_limits import ArtifactError, shown
from cce_core.sync.codec import (
    U64_LIMIT,
    as_unsigned,
    check_checksum,
    dumps_canonical,
    embedding_bytes,
    encode_embedding_bytes,
    joined_lines,
    manifest_line,
    may_hold_surrogate_escape,
    not_utf8_error,
    parse_json_line,
    stream_checksum,
    stream_lines,
    utf8_text,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from cce_core.hookspecs import Embedder
    from cce_core.plugins.host import PluginHost

# The artifact format, decoupled from the application version: only a change of
# these bytes moves it (it is also a path segment of every remote key).
SYNC_FORMAT_VERSION = "2.3"
# Shared artifacts carry only vectors every engine can reproduce bit for bit.
HASH_EMBEDDER = "hash"
EDGE_TYPE = "import"
# What a pulled store records as a file's content hash. A real digest is 64 hex
# characters, so this never matches one: the next `cce index` re-chunks every
# file instead of trusting chunks it did not build (the artifact does not say
# which bytes each file had, only what came out of them).
PULLED_FILE_SHA256 = ""
PULLED_SOURCE = "sync-pull"

__all__ = ["ArtifactError", "ArtifactRequest", "artifact_to_store", "build_artifact", "check_head", "export_artifact",
           "import_artifact"]


@dataclass(frozen=True)
class ArtifactRequest:
    """What a pull asked for: the artifact must say it is exactly this ``repo_id@sha``."""

    repo_id: str
    sha: str


def plain(text: str) -> str:
    """``text`` as it is when it prints as one short line, else quoted and escaped (:func:`shown`)."""
    return text if len(text) <= 200 and text.isprintable() else shown(text)


# -- the artifact ------------------------------------------------------------


@dataclass(frozen=True)
class Manifest:
    """Line 1: who the artifact is for and what it holds (no build time or builder: it is reproducible)."""

    repo_id: str
    sha: str
    chunk_count: int
    file_tokens: dict[str, int]  # whole-file token counts, by path
    pack_set_id: str
    checksum: str = ""
    cce_version: str = SYNC_FORMAT_VERSION
    embedder: str = HASH_EMBEDDER

    def as_json(self, checksum: str) -> dict[str, Any]:
        return {
            "cce_version": self.cce_version,
            "checksum": checksum,
            "chunk_count": self.chunk_count,
            "embedder": self.embedder,
            "file_tokens": self.file_tokens,
            "pack_set_id": self.pack_set_id,
            "repo_id": self.repo_id,
            "sha": self.sha,
        }


@dataclass(frozen=True)
class Artifact:
    """A parsed or freshly built artifact.

    ``embeddings[i]`` holds the raw little-endian float64 bytes of
    ``chunks[i]``'s vector (kept as bytes so a round trip cannot touch a bit).
    ``file_imports`` is what each file imports, as module names; ``edges`` are
    those names resolved to files — the graph line is rendered from ``edges``.
    """

    manifest: Manifest
    chunks: list[Chunk]
    embeddings: list[bytes]
    file_imports: dict[str, list[str]]
    edges: list[tuple[str, str]] = field(default_factory=list)

    @cached_property
    def _body(self) -> bytes:
        """Every line after the manifest: the chunks, then the graph."""
        lines = [_chunk_line(c, e) for c, e in zip(self.chunks, self.embeddings, strict=True)]
        return joined_lines(lines) + self.graph_line() + b"\n"

    def graph_line(self) -> bytes:
        """The graph line (without its LF): resolved edges, then one node per manifest file."""
        graph = {
            "edges": [{"source": s, "target": t, "type": EDGE_TYPE} for s, t in self.edges],
            "nodes": [{"id": path} for path in sorted(self.manifest.file_tokens)],
        }
        return dumps_canonical(graph).encode("utf-8")

    def computed_checksum(self) -> str:
        """SHA-256 (lowercase hex) of the stream rendered with an empty ``checksum``."""
        return stream_checksum(self.manifest.as_json(""), self._body)

    def to_bytes(self) -> bytes:
        """The artifact's bytes, with the manifest's checksum on line 1."""
        return manifest_line(self.manifest.as_json(self.manifest.checksum)) + self._body


def _chunk_line(c: Chunk, embedding: bytes) -> str:
    return dumps_canonical({
        "chunk_type": c.chunk_type,
        "content": c.content,
        "embedding": encode_embedding_bytes(embedding),
        "end_line": c.end_line,
        "file_path": c.file_path,
        "id": c.chunk_id,
        "kind": c.kind,
        "language": c.language,
        "start_line": c.start_line,
        "token_count": c.token_count,
    })


def _chunk_order(c: Chunk) -> tuple[str, int, str]:
    # Python compares str by code point, which for valid text is the UTF-8 byte order
    # the reference sorts by. end_line is deliberately not part of the key.
    return (c.file_path, c.start_line, c.chunk_id)


def pack_module_suffixes(host: PluginHost) -> list[str]:
    """The suffixes the installed packs let an import name resolve by (the indexer uses the same)."""
    return [s for p in host.packs.packs for s in p.module_suffixes]


# -- export ------------------------------------------------------------------


def build_artifact(data: StoreData, repo_id: str, sha: str, module_suffixes: Iterable[str]) -> Artifact:
    """The artifact of a store built with the hash embedder, identified as ``repo_id@sha``.

    ``module_suffixes`` are the installed packs' (``pack_module_suffixes``):
    edges are resolved again here, over the files in path order, rather than
    copied from the store, so they follow the family's rule whatever order the
    store was assembled in.
    """
    if data.embedder != HASH_EMBEDDER:
        raise ArtifactError(f"refusing to export a non-hash index (embedder = `{data.embedder}`): "
                            "a shared artifact carries only hash-embedder vectors")
    pack_set = data.meta.get("pack_set")
    if not isinstance(pack_set, str):
        raise ArtifactError("the index records no pack set; re-run `cce index` to rebuild it")
    chunks = list(data.chunks)
    rows, _dim = data.embedding_rows()
    if rows != len(chunks):
        raise ArtifactError(f"the index has {len(chunks)} chunks but {rows} embedding rows")
    order = sorted(range(len(chunks)), key=lambda i: _chunk_order(chunks[i]))
    import numpy as np

    matrix = np.ascontiguousarray(data.embeddings, dtype="<f8")
    file_tokens = {f.path: f.tokens for f in sorted(data.files, key=lambda f: f.path)}
    file_imports = {f.path: list(f.imports) for f in data.files}
    manifest = Manifest(repo_id=repo_id, sha=sha, chunk_count=len(chunks), file_tokens=file_tokens,
                        pack_set_id=pack_set)
    artifact = Artifact(
        manifest=manifest,
        chunks=[chunks[i] for i in order],
        embeddings=[matrix[i].tobytes() for i in order],
        file_imports=file_imports,
        edges=build_edges(file_imports, list(file_tokens), module_suffixes),
    )
    # What a pull would refuse is never published: the same checks, on the way out.
    try:
        _check_manifest(manifest, None, where="in the index")
        _check_chunks(manifest, artifact.chunks, artifact.embeddings)
    except ArtifactError as exc:
        raise ArtifactError(f"cannot build a shareable artifact of this index: {exc}") from None
    return _with_checksum(artifact, artifact.computed_checksum())


def export_artifact(data: StoreData, repo_id: str, sha: str, module_suffixes: Iterable[str]) -> bytes:
    """The `.cce` bytes of ``data`` for ``repo_id@sha`` (see :func:`build_artifact`)."""
    return build_artifact(data, repo_id, sha, module_suffixes).to_bytes()


def _with_checksum(artifact: Artifact, checksum: str) -> Artifact:
    stamped = replace(artifact, manifest=replace(artifact.manifest, checksum=checksum))
    # Only line 1 differs, so the rendered chunk and graph lines carry over instead of being redone.
    if "_body" in artifact.__dict__:
        stamped.__dict__["_body"] = artifact.__dict__["_body"]
    return stamped


# -- import ------------------------------------------------------------------

def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _parse_manifest(line: str) -> Manifest:
    v = parse_json_line(line, "manifest")
    chunk_count = as_unsigned(_get(v, "chunk_count"))
    if chunk_count is None:
        raise ArtifactError("manifest missing integer field `chunk_count`")
    tokens_obj = _get(v, "file_tokens")
    if not isinstance(tokens_obj, dict):
        raise ArtifactError("manifest missing object `file_tokens`")
    file_tokens: dict[str, int] = {}
    for path in sorted(tokens_obj):
        count = as_unsigned(tokens_obj[path])
        if count is None:
            raise ArtifactError(f"file_tokens[{plain(path)}] is not an integer")
        file_tokens[path] = count

    def text(key: str) -> str:
        found = _get(v, key)
        if not isinstance(found, str):
            raise ArtifactError(f"manifest missing string field `{key}`")
        return found

    return Manifest(repo_id=text("repo_id"), sha=text("sha"), cce_version=text("cce_version"),
                    embedder=text("embedder"), pack_set_id=text("pack_set_id"), chunk_count=chunk_count,
                    checksum=text("checksum"), file_tokens=file_tokens)


def _check_manifest(m: Manifest, request: ArtifactRequest | None, *, where: str = "in the manifest") -> None:
    """The manifest against the format and the pull's request: cheap, and done before any chunk is read."""
    if request is not None and (m.repo_id, m.sha) != (request.repo_id, request.sha):
        raise ArtifactError(f"the artifact is for {plain(m.repo_id)}@{plain(m.sha)}, but the pull asked for "
                            f"{request.repo_id}@{request.sha}")
    if m.cce_version != SYNC_FORMAT_VERSION:
        raise ArtifactError(f"the artifact's format is `{plain(m.cce_version)}`, this engine reads format "
                            f"{SYNC_FORMAT_VERSION}")
    if m.embedder != HASH_EMBEDDER:
        raise ArtifactError(f"the artifact was embedded with `{plain(m.embedder)}`; only `{HASH_EMBEDDER}` "
                            "artifacts can be installed")
    if not limits.is_pack_set_id(m.pack_set_id):
        raise ArtifactError(f"manifest pack_set_id {shown(m.pack_set_id)} is not a sorted list of pack names")
    if m.checksum:  # a freshly built manifest is checked before it is stamped
        limits.check_checksum_field(m.checksum)
    for path, count in m.file_tokens.items():
        limits.check_path(path, where)
        limits.check_count(count, f"file_tokens[{path}]")


def _parse_chunk(line: str) -> tuple[Chunk, bytes]:
    return _chunk_from(parse_json_line(line, "chunk"))


def _chunk_from(v: Any) -> tuple[Chunk, bytes]:
    """A parsed chunk line's fields, checked in the reference's order so the first problem reported is the same."""
    if not isinstance(v, dict):
        v = {}

    def text(key: str) -> str:
        found = v.get(key)
        if not isinstance(found, str):
            raise ArtifactError(f"chunk missing string field `{key}`")
        return found

    def number(key: str) -> int:
        found = as_unsigned(v.get(key))
        if found is None:
            raise ArtifactError(f"chunk missing integer field `{key}`")
        return found

    encoded = text("embedding")
    named = v.get("id")
    limits.check_embedding_text(encoded, plain(named) if isinstance(named, str) else "?")
    embedding = embedding_bytes(encoded)
    chunk = Chunk(chunk_id=text("id"), file_path=text("file_path"), start_line=number("start_line"),
                  end_line=number("end_line"), chunk_type=text("chunk_type"), kind=text("kind"),
                  language=text("language"), content=text("content"), token_count=number("token_count"))
    return chunk, embedding


_CHUNK_TEXT_FIELDS = ("embedding", "id", "file_path", "chunk_type", "kind", "language", "content")
_CHUNK_INT_FIELDS = ("start_line", "end_line", "token_count")
_CHUNK_FIELD_COUNT = len(_CHUNK_TEXT_FIELDS) + len(_CHUNK_INT_FIELDS)


def _quick_chunk(v: Any) -> tuple[Chunk, bytes] | None:
    """The chunk of a well-formed parsed line, or None to let :func:`_chunk_from` name the problem."""
    try:
        if not all(type(v[k]) is str for k in _CHUNK_TEXT_FIELDS):
            return None
        start, end, tokens = v["start_line"], v["end_line"], v["token_count"]
    except (KeyError, TypeError):
        return None
    if not (type(start) is int and type(end) is int and type(tokens) is int
            and 0 <= start < U64_LIMIT and 0 <= end < U64_LIMIT and 0 <= tokens < U64_LIMIT):
        return None
    text = v["embedding"]
    if len(text) > limits.MAX_EMBEDDING_CHARS:
        return None  # never decoded here: the line-by-line parse refuses it by its length
    try:
        # Lenient decoding is a third faster than strict_mode, and no less strict here:
        # only text that re-encodes to itself (canonical base64) is accepted.
        raw = binascii.a2b_base64(text)
        canonical = binascii.b2a_base64(raw, newline=False) == text.encode("ascii")
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return None
    if len(raw) % 8 or not canonical:
        return None  # not whole float64s, or not the canonical spelling
    return Chunk(chunk_id=v["id"], file_path=v["file_path"], start_line=start, end_line=end,
                 chunk_type=v["chunk_type"], kind=v["kind"], language=v["language"], content=v["content"],
                 token_count=tokens), raw


def _parse_chunks(lines: list[bytes], *, hashed: bool, body: bytes = b"",
                  whole: bytes = b"") -> tuple[list[tuple[Chunk, bytes]], bool]:
    """Every chunk line (UTF-8 bytes), parsed, and whether every line is its own canonical rendering.

    When the stream hashes to its manifest's checksum as sent (``hashed``),
    as every engine writes it, the lines (``body``: the same lines joined by
    newlines) are parsed as one JSON array by orjson, straight from the bytes:
    decoding 20-odd MB of mostly-ASCII text into a Python string first costs
    more than the parse itself. Each value is then rendered again by orjson
    (which renders strings and integers byte for byte as :func:`_dumps` does;
    a test holds every code point to it) and compared with its line, which
    proves the line canonical without the slower standard renderer. Anything
    the fast path does not take whole (a value orjson refuses, a field of an
    unexpected type) goes line by line through the standard parser, which
    names the first bad line exactly, and is reported as not proven canonical.
    """
    if hashed and lines and not may_hold_surrogate_escape(body):
        try:
            values = orjson.loads(b"[" + body.replace(b"\n", b",") + b"]")
        except orjson.JSONDecodeError:
            values = None
        if isinstance(values, list) and len(values) == len(lines):
            out = [_quick_chunk(v) for v in values]
            if None not in out:
                # Exactly the chunk fields (no unknown key, which the canonical writer would drop),
                # rendered back to the very bytes of the line.
                canonical = all(len(v) == _CHUNK_FIELD_COUNT and orjson.dumps(v, option=orjson.OPT_SORT_KEYS) == line
                                for v, line in zip(values, lines, strict=True))
                return out, canonical  # type: ignore[return-value]  # no None, checked above
    return [_parse_chunk(utf8_text(whole or line, line)) for line in lines], False


def _check_chunks(m: Manifest, chunks: Sequence[Chunk], embeddings: Sequence[bytes]) -> None:
    """Every chunk against the format: listed file, printable labels, bounded numbers and text, one id each,
    finite vectors of the hash embedder's width."""
    # One id, one chunk: an id may repeat only for the very same chunk and vector, which `cce index`
    # builds when two identical nodes share a line (two `struct s` specifiers); a repeated id with
    # other text or another vector is a forgery.
    seen: dict[str, tuple[Chunk, bytes]] = {}
    for c, vector in zip(chunks, embeddings, strict=True):
        for name, value in (("id", c.chunk_id), ("kind", c.kind), ("language", c.language),
                            ("chunk_type", c.chunk_type)):
            limits.check_label(name, value)
        first = seen.get(c.chunk_id)
        if first is not None and first != (c, vector):
            raise ArtifactError(f"duplicate chunk id {c.chunk_id}")
        seen.setdefault(c.chunk_id, (c, vector))
        if c.file_path not in m.file_tokens:
            raise ArtifactError(f"chunk {c.chunk_id} belongs to {plain(c.file_path)}, which the manifest does not list")
        for name, number in (("start_line", c.start_line), ("end_line", c.end_line), ("token_count", c.token_count)):
            limits.check_count(number, f"chunk {c.chunk_id}: {name}")
        limits.check_content(c.content, c.chunk_id)
    widths = {len(e) for e in embeddings}
    if len(widths) > 1:
        raise ArtifactError(f"the artifact's embeddings have different lengths ({sorted(w // 8 for w in widths)})")
    from cce_core.plugins.host import embedder_dim

    hash_dim = embedder_dim(HASH_EMBEDDER) if widths else 0
    if widths and widths != {8 * hash_dim}:
        raise ArtifactError(f"the artifact's vectors have {widths.pop() // 8} dimensions; the hash embedder's have "
                            f"{hash_dim}")
    import numpy as np

    # One pass over every component: a NaN or an infinity would make every later search fail.
    finite = np.isfinite(np.frombuffer(b"".join(embeddings), dtype="<f8").reshape(len(embeddings), -1)).all(axis=1) \
        if embeddings else np.ones(0, dtype=bool)
    if not finite.all():
        raise ArtifactError(f"chunk {chunks[int(np.argmin(finite))].chunk_id} has a NaN or infinite vector component")


def _stem(path: str) -> str:
    """A file's basename without its last extension (the whole basename when that would be empty)."""
    base = path.rsplit("/", 1)[-1]
    stem, dot, _ext = base.rpartition(".")
    return stem if dot and stem else base


def _parse_graph(line: str, files: dict[str, int]) -> list[tuple[str, str]]:
    """The published edges, exactly as published: each between two listed files, sorted, once.

    They are kept as they are, never resolved again: the publisher's packs
    resolved them (a module may reach its file only through a pack's suffix
    rule), and re-resolving a target's file name here could pick another
    file of the same name. The ``nodes`` list is not read: nodes are the
    manifest's files.
    """
    edges = _get(parse_json_line(line, "graph"), "edges")
    if not isinstance(edges, list):
        raise ArtifactError("graph missing array `edges`")
    out: list[tuple[str, str]] = []
    for edge in edges:
        source = _get(edge, "source")
        if not isinstance(source, str):
            raise ArtifactError("edge missing string `source`")
        target = _get(edge, "target")
        if not isinstance(target, str):
            raise ArtifactError("edge missing string `target`")
        out.append((source, target))
        named = f"graph edge {plain(source)} → {plain(target)}"
        if source not in files or target not in files:
            raise ArtifactError(f"{named} names a file the manifest does not list")
        if source == target:
            raise ArtifactError(f"{named} points at itself")
        kind = _get(edge, "type")
        if kind != EDGE_TYPE:
            raise ArtifactError(f"{named} has type `{plain(kind) if isinstance(kind, str) else dumps_canonical(kind)}`")
    if any(a >= b for a, b in itertools.pairwise(out)):
        raise ArtifactError("graph edges are not sorted and unique")
    return out


def _imports_of(edges: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """What each file imports, as the stems of the files its edges point at (the module names are not published)."""
    imports: dict[str, list[str]] = {}
    for source, target in edges:
        imports.setdefault(source, []).append(_stem(target))
    return imports


def import_artifact(raw: bytes, request: ArtifactRequest | None = None) -> Artifact:
    """Parse and validate `.cce` bytes; the checksum is recomputed from what was parsed.

    Raises :class:`ArtifactError` naming the first problem: not UTF-8, too
    short, a line longer than the format allows, a line count that disagrees
    with ``chunk_count``, a manifest that is not this format's or not the
    ``request``'s ``repo_id@sha`` (checked before any chunk is parsed), a
    line that is not JSON or lacks a field, a field outside the format
    (``artifact_limits``), a bad embedding, or a checksum mismatch.
    """
    with _utf8_named_first(raw):
        return _import(raw, request)


@contextmanager
def _utf8_named_first(raw: bytes) -> Iterator[None]:
    """Not being UTF-8 is the first problem to name, wherever in the stream it is."""
    try:
        yield
    except ArtifactError:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise not_utf8_error(exc) from None
        raise


def check_head(raw: bytes, request: ArtifactRequest | None = None) -> None:
    """The checks :func:`import_artifact` makes before it parses any chunk: line lengths, manifest, request.

    Cheap next to decoding: a caller about to spend more on an artifact (a
    child process decoding it in parallel) runs them first.
    """
    with _utf8_named_first(raw):
        _head(raw, request)


def _head(raw: bytes, request: ArtifactRequest | None) -> tuple[list[bytes], Manifest]:
    # Every part is decoded strictly as it is used, so the whole stream is checked to be UTF-8 once.
    lines = stream_lines(raw)
    if len(lines) < 2:
        raise ArtifactError("artifact too short: need at least a manifest and a graph line")
    # A line longer than any field of its kind can make is refused by its length, before it is parsed.
    limits.check_line_lengths([len(line) for line in lines])
    manifest = _parse_manifest(utf8_text(raw, lines[0]))
    n = manifest.chunk_count
    if len(lines) != n + 2:
        raise ArtifactError(f"artifact line count {len(lines)} does not match chunk_count {n} (expected {n + 2})")
    _check_manifest(manifest, request)
    return lines, manifest


def _import(raw: bytes, request: ArtifactRequest | None) -> Artifact:
    lines, manifest = _head(raw, request)
    n = manifest.chunk_count
    # An artifact as the engines write it is already the canonical rendering of what it parses
    # to. When its bytes hash to the manifest's checksum as sent, and every line is shown to be
    # its own canonical rendering, the recomputed checksum is that same hash: nothing needs
    # rendering again. Anything else (other spacing, CRLF, extra keys) is rendered again below,
    # as the reference does; both paths give exactly the same verdicts.
    first = len(lines[0]) + 1
    hashed = stream_checksum(manifest.as_json(""), raw[first:]) == manifest.checksum
    chunk_lines = lines[1 : n + 1]
    # The chunk lines as one slice: from after line 1 to before the graph line.
    body = raw[first : first + sum(map(len, chunk_lines)) + len(chunk_lines) - 1] if chunk_lines else b""
    graph_line = utf8_text(raw, lines[n + 1])
    parsed, lines_canonical = _parse_chunks(chunk_lines, hashed=hashed, body=body, whole=raw)
    chunks, embeddings = [c for c, _ in parsed], [e for _, e in parsed]
    _check_chunks(manifest, chunks, embeddings)
    edges = _parse_graph(graph_line, manifest.file_tokens)
    artifact = Artifact(manifest, chunks, embeddings, _imports_of(edges), edges)
    if hashed and lines_canonical and artifact.graph_line() == lines[n + 1]:
        return artifact
    check_checksum(manifest.checksum, artifact.computed_checksum())
    return artifact


# -- artifact → store ----------------------------------------------------------


def pulled_store_meta(artifact: Artifact, embedder: Embedder, dim: int) -> dict[str, object]:
    """The ``meta`` of a store made from an artifact.

    It has what search reads (``embedder``, ``embed_model``, ``embed_dim``) and
    what describes the content (``pack_set``, ``redaction``: artifacts are always
    built with secret protection on), plus where it came from. It leaves out
    the local build's identity (``engine_version``, ``pack_versions``,
    ``plugins``): the indexer reuses a previous store's chunks only when those
    match, so a later ``cce index`` rebuilds everything it did not chunk itself.
    """
    m = artifact.manifest
    return {
        "embedder": m.embedder,
        "embed_model": str(embedder.model or ""),
        "embed_dim": dim,
        "pack_set": m.pack_set_id,
        "redaction": True,
        "source": PULLED_SOURCE,
        "sync": {"format": m.cce_version, "repo_id": m.repo_id, "sha": m.sha, "checksum": m.checksum},
    }


def bm25_of(chunks: Sequence[Chunk]) -> Bm25Arrays:
    """BM25 over ``chunks`` in the order given, tokenized exactly as the indexer tokenizes."""
    return build_bm25([tokenize_bytes(c.content.encode("utf-8")) for c in chunks])


def artifact_to_store(artifact: Artifact, embedder: Embedder,
                      bm25_for: Callable[[Sequence[Chunk]], Bm25Arrays] = bm25_of) -> StoreData:
    """An in-memory store (``save_store`` it) that searches exactly as a local build of the tree does.

    ``embedder`` is the installed hash embedder (its ``model`` goes into the
    meta, as a local build records it). BM25 is rebuilt from the chunk texts by
    the indexer's own tokenization (``bm25_for`` gets the chunks in store
    order; a caller may hand in one computed elsewhere from the same chunks);
    the vectors, token counts and ids are the artifact's; the edges are the
    artifact's (already checked by its checksum).
    """
    m = artifact.manifest
    if m.embedder != HASH_EMBEDDER or embedder.name != HASH_EMBEDDER:
        raise ArtifactError(f"the artifact was embedded with `{m.embedder}`; only `{HASH_EMBEDDER}` "
                            f"artifacts can be installed (embedder given: `{embedder.name}`)")
    import numpy as np

    # A store keeps each file's chunks together, in file order: the canonical order already does.
    order = sorted(range(len(artifact.chunks)), key=lambda i: _chunk_order(artifact.chunks[i]))
    chunks = [artifact.chunks[i] for i in order]
    vectors = [artifact.embeddings[i] for i in order]
    widths = {len(v) for v in vectors}
    if len(widths) > 1:
        raise ArtifactError(f"the artifact's embeddings have different lengths ({sorted(w // 8 for w in widths)})")
    dim = widths.pop() // 8 if widths else int(embedder.dim or 0)
    embeddings = np.frombuffer(b"".join(vectors), dtype="<f8").astype(np.float64).reshape(len(chunks), dim)

    counts: dict[str, int] = {}
    for c in chunks:
        if c.file_path not in m.file_tokens:
            raise ArtifactError(f"chunk {c.chunk_id} belongs to {c.file_path}, which the manifest does not list")
        counts[c.file_path] = counts.get(c.file_path, 0) + 1
    files: list[FileEntry] = []
    first = 0
    for path in sorted(m.file_tokens):  # the chunks are sorted by path too, so each file's are contiguous
        count = counts.get(path, 0)
        files.append(FileEntry(path, PULLED_FILE_SHA256, m.file_tokens[path], first, count,
                               list(artifact.file_imports.get(path, []))))
        first += count
    bm25 = bm25_for(chunks)
    meta = pulled_store_meta(artifact, embedder, dim)
    return StoreData(meta, chunks, embeddings, files, list(artifact.edges), bm25)

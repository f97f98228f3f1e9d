"""The build fingerprint written beside every store (``cce.fingerprint/v1``).

A store says which embedder built it, but not the rest of the configuration
its bytes depend on: the language-pack set that chose the chunk boundaries,
the token-count rule, the document-chunking limits, the secret policy. When
any of those changes, or the store file is modified behind the engine's
back, retrieval degrades without an error. The fingerprint records that
configuration and the SHA-256 of the exact store bytes in a small JSON file
beside the store, sealed by a checksum over its own canonical bytes, so
``cce doctor`` can tell drift and corruption apart from a healthy store.

The file is the family's: fields in alphabetical order (which is the
canonical order), compact JSON on one line, ``sha256`` computed over that
JSON with ``sha256`` set to the empty string. ``engine_version`` is this
engine's own version; every other value comes from the store's metadata or a
pinned constant, so the same store always gets the same fingerprint.

It is written after the store, never before and never inside it: a run
killed between the two leaves the previous fingerprint, which no longer
matches the new bytes — a mismatch ``cce doctor`` reports and the next
``cce index`` repairs — and a store that is intact either way.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from cce_core import __version__
from cce_core.foundation.atomic import atomic_write
from cce_core.foundation.errors import CceError
from cce_core.foundation.optional_file import read_bytes_or_none
from cce_core.foundation.textrules import TOKEN_ESTIMATOR_ID

SCHEMA = "cce.fingerprint/v1"
FINGERPRINT_FILE = "fingerprint.json"
DEFAULT_STORE_FILE = "index.cce"  # the store name whose fingerprint keeps the plain file name
HASH_EMBEDDER = "hash"
# The family's document-chunker identity: the nesting guard and the default section budget.
BLOCK_NESTING_LIMIT = 192
MARKDOWN_SECTION_TOKENS = 400
SPEC_VERSION = "1.0"


@dataclass(frozen=True)
class Fingerprint:
    """One ``fingerprint.json``; the field order is the canonical (alphabetical) order."""

    block_nesting_limit: int
    embed_dim: int
    embedder: str
    engine_version: str
    markdown_section_tokens: int
    pack_set: str
    redaction: bool
    schema: str
    sha256: str
    spec_version: str
    store_sha256: str
    tokenizer: str

    def canonical_bytes(self) -> bytes:
        """The one-line compact JSON the file holds (and the checksum is computed over)."""
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def computed_sha256(self) -> str:
        """SHA-256 of the canonical bytes with ``sha256`` emptied: what ``sha256`` must say."""
        return hashlib.sha256(replace(self, sha256="").canonical_bytes()).hexdigest()

    def sealed(self) -> Fingerprint:
        """This fingerprint with its self-checksum filled in."""
        return replace(self, sha256=self.computed_sha256())

    @property
    def intact(self) -> bool:
        return self.sha256 == self.computed_sha256()


_TYPES: dict[str, type] = {f.name: (int if f.type == "int" else bool if f.type == "bool" else str)
                           for f in fields(Fingerprint)}


def fingerprint_path(store_path: Path) -> Path:
    """Where the fingerprint of ``store_path`` lives.

    The default store (``index.cce``) has ``fingerprint.json`` beside it;
    any other store file gets ``<file name>.fingerprint.json``, so two named
    stores in one directory never share (and overwrite) one fingerprint.
    """
    name = FINGERPRINT_FILE if store_path.name == DEFAULT_STORE_FILE else f"{store_path.name}.{FINGERPRINT_FILE}"
    return store_path.with_name(name)


# Digests of files already hashed by this process, by file identity and version. An index
# run asks twice about the same store (is it still ours? then, what do we record?), and a
# pull hashes the staged store before renaming it into place: one read of a large store
# each time instead of two. A rename keeps the inode; any rewrite makes a new one (every
# store write is temp file + rename) or moves mtime/size.
_DIGESTS: dict[tuple[int, int, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """SHA-256 (lowercase hex) of a file's bytes, read in blocks (once per file version per process)."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        key = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
        digest = _DIGESTS.get(key)
        if digest is None:
            digest = _DIGESTS[key] = hashlib.file_digest(fh, "sha256").hexdigest()
    return digest


def fingerprint_for(meta: dict[str, Any], store_sha256: str) -> Fingerprint:
    """The sealed fingerprint of a store with metadata ``meta`` whose bytes hash to ``store_sha256``."""
    from cce_core.plugins.host import embedder_dim

    embedder = str(meta.get("embedder", ""))
    dim = embedder_dim(HASH_EMBEDDER) if embedder == HASH_EMBEDDER else int(meta.get("embed_dim") or 0)
    return Fingerprint(
        block_nesting_limit=BLOCK_NESTING_LIMIT,
        embed_dim=dim,
        embedder=embedder,
        engine_version=__version__,
        markdown_section_tokens=MARKDOWN_SECTION_TOKENS,
        pack_set=str(meta.get("pack_set", "")),
        redaction=bool(meta.get("redaction", True)),
        schema=SCHEMA,
        sha256="",
        spec_version=str(meta.get("spec_version") or SPEC_VERSION),
        store_sha256=store_sha256,
        tokenizer=TOKEN_ESTIMATOR_ID,
    ).sealed()


def write_fingerprint(store_path: Path, meta: dict[str, Any]) -> Path:
    """Hash the store as it is on disk and write its fingerprint beside it (atomically).

    Raises ``OSError`` when the store cannot be read or the file not written.
    An unchanged fingerprint is not rewritten.
    """
    target = fingerprint_path(store_path)
    payload = fingerprint_for(meta, file_sha256(store_path)).canonical_bytes()
    try:
        if target.read_bytes() == payload:
            return target
    except OSError:
        pass
    atomic_write(target, payload)
    return target


def record_fingerprint(store_path: Path, meta: dict[str, Any]) -> None:
    """:func:`write_fingerprint`, best effort: a failure is one warning line, never a failed command.

    A missing fingerprint only blinds drift detection; the store itself is fine.
    """
    try:
        write_fingerprint(store_path, meta)
    except OSError as exc:
        sys.stderr.write(f"warning: could not write the fingerprint {fingerprint_path(store_path)}: "
                         f"{exc.strerror or exc}\n")


def parse_fingerprint(raw: bytes) -> Fingerprint:
    """A fingerprint from its file bytes; ``ValueError`` when it is not one."""
    value = json.loads(raw.decode("utf-8"))
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    missing = [name for name in _TYPES if name not in value]
    if missing:
        raise ValueError(f"missing field {missing[0]!r}")
    for name, kind in _TYPES.items():
        item = value[name]
        if kind is int and (isinstance(item, bool) or not isinstance(item, int)):
            raise ValueError(f"field {name!r} is not an integer")
        if kind is not int and not isinstance(item, kind):
            raise ValueError(f"field {name!r} is not a {'boolean' if kind is bool else 'string'}")
    return Fingerprint(**{name: value[name] for name in _TYPES})


def load_fingerprint(store_path: Path) -> Fingerprint | None:
    """The fingerprint recorded for ``store_path``; None when there is none (a store built before them).

    Raises ``CceError`` when the file exists but cannot be read or parsed.
    """
    path = fingerprint_path(store_path)
    raw = read_bytes_or_none(path)
    try:
        return None if raw is None else parse_fingerprint(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise CceError(f"could not parse {path}: {exc}") from exc


def disowns(store_path: Path) -> bool:
    """True when an intact fingerprint records other bytes than the store now holds.

    The store was then changed by something other than this engine (a flipped
    byte, a hand edit, an older cce): its reuse must not be trusted. No
    fingerprint, or an unreadable one, disowns nothing.
    """
    try:
        recorded = load_fingerprint(store_path)
        if recorded is None or not recorded.intact:
            return False
        return recorded.store_sha256 != file_sha256(store_path)
    except (CceError, OSError):
        return False

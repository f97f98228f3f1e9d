"""``cce.feed-manifest/v1``: a producer's statement of what a knowledge feed must be, checked before ingest.

Without it, a feed cut short in transit or the wrong feed pointed at the
wrong project indexes without complaint. A producer that writes a small JSON
sidecar — how many records the feed holds and the SHA-256 of its raw bytes
(what ``sha256sum`` prints) — lets ``cce knowledge index --manifest`` refuse
anything else, before a byte of the store is written.

Only ``records`` and ``sha256`` are read. Every other key, ``schema``
included, is ignored, so a producer's own richer manifest fits as long as it
carries those two fields; the digest compares case-insensitively.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_core.foundation.bounded_read import read_small_text
from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import UNICODE_WHITESPACE, fields_once_hook
from cce_core.knowledge.feed import FeedError, json_kind, strict_json

FEED_MANIFEST_SCHEMA = "cce.feed-manifest/v1"
# A manifest holds two fields; a larger file is not one.
MAX_MANIFEST_BYTES = 1024 * 1024
_HEX = frozenset("0123456789abcdef")
_ONCE = fields_once_hook(frozenset(("records", "sha256", "schema")))


@dataclass(frozen=True)
class FeedManifest:
    records: int
    sha256: str
    schema: str | None = None


def feed_sha256(data: bytes) -> str:
    """The full lowercase hex SHA-256 of a feed's raw bytes."""
    return hashlib.sha256(data).hexdigest()


def _invalid(reason: str) -> CceError:
    return CceError(f"invalid {FEED_MANIFEST_SCHEMA} manifest: {reason}")


def parse_manifest(text: str) -> FeedManifest:
    """The manifest in ``text``; :class:`CceError` saying what is wrong otherwise."""
    try:
        obj = strict_json(text, _ONCE)
    except FeedError as exc:
        raise _invalid(str(exc)) from None
    if not isinstance(obj, dict):
        raise _invalid(f"invalid type: {json_kind(obj)}, expected an object with `records` and `sha256`")
    for name in ("records", "sha256"):
        if name not in obj:
            raise _invalid(f"missing field `{name}`")
    records: Any = obj["records"]
    if not isinstance(records, int) or isinstance(records, bool):
        raise _invalid(f"field `records`: invalid type: {json_kind(records)}, expected a record count")
    if records < 0:
        raise _invalid(f"field `records`: invalid value: {json_kind(records)}, expected a record count")
    for name in ("sha256", "schema"):
        value = obj.get(name)
        if not isinstance(value, str) and not (name == "schema" and value is None):
            raise _invalid(f"field `{name}`: invalid type: {json_kind(value)}, expected a string")
    return FeedManifest(records, obj["sha256"], obj.get("schema"))


def read_manifest(path: Path) -> FeedManifest:
    """Read and parse the manifest file at ``path`` (bounded: a manifest is two fields)."""
    _raw, text = read_small_text(path, "feed manifest", MAX_MANIFEST_BYTES, "1 MiB — a manifest holds a record "
                                                                             "count and a digest")
    return parse_manifest(text)


def verify(manifest: FeedManifest, sha256: str, records: int) -> None:
    """Refuse a feed (its digest and record count) that is not what ``manifest`` declares.

    The digest's form is checked first, then the count (the plainest sign of a
    truncated feed), then the bytes (a corrupt feed, or another feed of the
    same size).
    """
    declared = manifest.sha256.strip(UNICODE_WHITESPACE).lower()
    if len(declared) != 64 or not set(declared) <= _HEX:
        raise CceError("the feed manifest's sha256 is not a 64-character hex digest: "
                       f"{json.dumps(manifest.sha256, ensure_ascii=False)}")
    if records != manifest.records:
        raise CceError(f"the feed does not match its manifest: the manifest declares {manifest.records} record(s), "
                       f"the feed has {records} — the feed is truncated or incomplete")
    if sha256 != declared:
        raise CceError("the feed does not match its manifest checksum (a truncated, corrupt or misdirected feed): "
                       f"manifest sha256 {declared}, feed sha256 {sha256}")

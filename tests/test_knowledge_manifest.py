"""``cce knowledge index --manifest``: a ``cce.feed-manifest/v1`` sidecar checked before anything is written.

The format is the reference's (v2.9+): ``records`` and ``sha256`` (the full
lowercase hex SHA-256 of the feed's raw bytes, what ``sha256sum`` prints) are
required, every other key is ignored, the digest compares case-insensitively;
a wrong count or digest fails the command and leaves no store.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from helpers import run_cce

from cce_core.foundation.errors import CceError
from cce_core.knowledge import store as kstore
from cce_core.knowledge.feed_manifest import (
    FEED_MANIFEST_SCHEMA,
    FeedManifest,
    feed_sha256,
    parse_manifest,
    read_manifest,
    verify,
)

FEED = ('{"id":"gh:o/r#1","title":"One","body":"alpha","source":"github-issues"}\n'
        '{"id":"gh:o/r#2","title":"Two","body":"beta","source":"github-issues"}\n')
OTHER = ('{"id":"gh:o/r#9","title":"Nine","body":"nine","source":"github-issues"}\n'
         '{"id":"gh:o/r#8","title":"Eight","body":"eight","source":"github-issues"}\n')


def manifest_text(records: int, sha256: str, **extra: object) -> str:
    return json.dumps({"schema": FEED_MANIFEST_SCHEMA, "records": records, "sha256": sha256, **extra}) + "\n"


def project(tmp_path: Path, feed: str, manifest: str) -> tuple[Path, Path, Path]:
    root = tmp_path / "proj"
    root.mkdir()
    feed_path, manifest_path = tmp_path / "feed.jsonl", tmp_path / "MANIFEST.json"
    feed_path.write_text(feed, encoding="utf-8")
    manifest_path.write_text(manifest, encoding="utf-8")
    return root, feed_path, manifest_path


def index(feed: Path, root: Path, manifest: Path | None = None):
    extra = ["--manifest", manifest] if manifest is not None else []
    return run_cce("knowledge", "index", feed, "--dir", root, *extra)


def installed(root: Path) -> bool:
    return (root / ".cce" / "knowledge" / "current").is_file()


# --------------------------------------------------------------------------- the format


def test_the_digest_is_the_full_sha256_of_the_raw_bytes() -> None:
    assert FEED_MANIFEST_SCHEMA == "cce.feed-manifest/v1"
    assert feed_sha256(b"hello") == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"


def test_only_records_and_sha256_are_read_and_a_foreign_schema_fits() -> None:
    doc = ('{"schema":"thresh.cce_stage/v1","records":2,"sha256":"AB","instance_path":"/x",'
           '"staged":["a.cce.ndjson"],"created_at":"t"}')
    assert parse_manifest(doc) == FeedManifest(2, "AB", "thresh.cce_stage/v1")
    assert parse_manifest('{"records":0,"sha256":"x"}') == FeedManifest(0, "x", None)


@pytest.mark.parametrize(("text", "reason"), [
    ('{"records":2}', "missing field `sha256`"),
    ('{"sha256":"ab"}', "missing field `records`"),
    ("not json", "Expecting value at line 1 column 1"),
    ("[1]", "invalid type: sequence, expected an object with `records` and `sha256`"),
    ('{"records":"2","sha256":"ab"}', 'field `records`: invalid type: string "2", expected a record count'),
    ('{"records":-1,"sha256":"ab"}', "field `records`: invalid value: integer `-1`, expected a record count"),
    ('{"records":2.0,"sha256":"ab"}', "field `records`: invalid type: floating point `2.0`, expected a record count"),
    ('{"records":true,"sha256":"ab"}', "field `records`: invalid type: boolean `true`, expected a record count"),
    ('{"records":2,"sha256":5}', "field `sha256`: invalid type: integer `5`, expected a string"),
    ('{"records":2,"records":3,"sha256":"ab"}', "duplicate field `records`"),
])
def test_a_malformed_manifest_is_one_clear_error(text: str, reason: str) -> None:
    with pytest.raises(CceError) as caught:
        parse_manifest(text)
    assert str(caught.value) == f"invalid cce.feed-manifest/v1 manifest: {reason}"


def test_verify_checks_the_digest_form_then_the_count_then_the_bytes() -> None:
    good = feed_sha256(FEED.encode())
    verify(FeedManifest(2, good), good, 2)
    verify(FeedManifest(2, f"  {good.upper()}\n"), good, 2)  # case and surrounding space do not matter
    with pytest.raises(CceError, match="is not a 64-character hex digest"):
        verify(FeedManifest(1, "not-a-digest"), good, 2)  # the form first, even with a wrong count
    with pytest.raises(CceError) as count:
        verify(FeedManifest(2, good), feed_sha256(b"x"), 1)
    assert str(count.value) == ("the feed does not match its manifest: the manifest declares 2 record(s), "
                                "the feed has 1 — the feed is truncated or incomplete")
    other = feed_sha256(OTHER.encode())
    with pytest.raises(CceError) as checksum:
        verify(FeedManifest(2, good), other, 2)
    assert str(checksum.value) == ("the feed does not match its manifest checksum (a truncated, corrupt or "
                                   f"misdirected feed): manifest sha256 {good}, feed sha256 {other}")


def test_an_unreadable_or_huge_manifest_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CceError, match=r"^could not read feed manifest .*nope.json: No such file or directory$"):
        read_manifest(tmp_path / "nope.json")
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * (1024 * 1024 + 1))
    with pytest.raises(CceError, match="is larger than 1 MiB"):
        read_manifest(huge)


# --------------------------------------------------------------------------- through the CLI


def test_a_matching_manifest_indexes_and_says_verified(tmp_path: Path) -> None:
    root, feed, manifest = project(tmp_path, FEED, manifest_text(2, hashlib.sha256(FEED.encode()).hexdigest()))
    done = index(feed, root, manifest)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[1:4] == ["  schema    : cce.knowledge/v1", f"  manifest  : verified ({manifest}) — 2 records",
                          "  records   : 2"]
    assert installed(root)


def test_a_truncated_feed_fails_and_writes_nothing(tmp_path: Path) -> None:
    truncated = FEED.split("\n")[0] + "\n"
    root, feed, manifest = project(tmp_path, truncated, manifest_text(2, feed_sha256(FEED.encode())))
    done = index(feed, root, manifest)
    assert done.returncode == 1
    assert done.stderr == ("error: the feed does not match its manifest: the manifest declares 2 record(s), the feed "
                           "has 1 — the feed is truncated or incomplete\n")
    assert not installed(root) and not (root / ".cce").exists()


def test_a_misdirected_feed_of_the_same_size_fails_on_the_checksum(tmp_path: Path) -> None:
    root, feed, manifest = project(tmp_path, OTHER, manifest_text(2, feed_sha256(FEED.encode())))
    done = index(feed, root, manifest)
    assert done.returncode == 1 and "checksum" in done.stderr and "misdirected" in done.stderr
    assert not installed(root)


def test_a_manifest_mismatch_leaves_the_previous_store_current(tmp_path: Path) -> None:
    root, feed, manifest = project(tmp_path, FEED, manifest_text(3, feed_sha256(FEED.encode())))
    assert index(feed, root).returncode == 0
    before = kstore.current_snapshot(root)
    assert index(feed, root, manifest).returncode == 1
    assert kstore.current_snapshot(root) == before


def test_without_a_manifest_nothing_changes(tmp_path: Path) -> None:
    root, feed, _manifest = project(tmp_path, FEED, "")
    done = index(feed, root)
    assert done.returncode == 0 and "  manifest  :" not in done.stdout and installed(root)


def test_a_missing_manifest_file_is_one_line(tmp_path: Path) -> None:
    root, feed, _manifest = project(tmp_path, FEED, "")
    done = index(feed, root, tmp_path / "absent.json")
    assert done.returncode == 1
    assert done.stderr == f"error: could not read feed manifest {tmp_path / 'absent.json'}: No such file or directory\n"
    assert not installed(root)

"""The rough edges of first use of CCE Sync (issue #19, first-use papercuts).

- a push from a detached HEAD says which flag picks the ref, not only which config key;
- `cce init --remote` against a cache that holds nothing under this repo's id lists the ids it does hold;
- `cce sync verify --checksum-only` labels the artifact's checksum and the installed store's SHA-256 apart.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from helpers import git
from test_sync_cli import cce, env, ok, one_error, published, source_repo

__all__ = ["env", "published"]  # fixtures, imported so that pytest finds them here

REPO_ID = "example.com__acme__demo"


def test_a_detached_push_names_the_flag_and_the_flag_works(env: dict[str, str], tmp_path: Path, published) -> None:
    url, src, sha = published
    git(env, src, "checkout", "-q", "--detach", "HEAD")
    error = one_error(cce(env, src, "sync", "push"))
    assert "pass --ref <branch>" in error and "`sync.ref`" in error
    pushed = ok(cce(env, src, "sync", "push", "--ref", "release"))
    assert pushed.startswith(f"Pushed {REPO_ID}@{sha}\n")
    check = tmp_path / "check"
    git(env, tmp_path, "clone", "-q", url, str(check))
    assert (check / "hash" / "2.3" / REPO_ID / "refs" / "release").read_text() == f"{sha}\n"


def test_init_remote_lists_the_repo_ids_the_cache_holds(env: dict[str, str], tmp_path: Path, published) -> None:
    url, _src, _sha = published
    stranger = source_repo(env, tmp_path / "stranger", origin="https://example.com/acme/other.git")
    error = one_error(cce(env, stranger, "init", "--remote", url))
    assert error == ("error: sync pull failed: no `--latest` pointer for example.com__acme__other on `main` — the "
                     f"cache holds nothing under that repo id; it holds: {REPO_ID} (pick one with `cce sync init "
                     "--remote <url> --repo-id <id>`)")


def test_verify_labels_the_two_checksums_apart(env: dict[str, str], tmp_path: Path, published) -> None:
    url, _src, sha = published
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    ok(cce(env, consumer, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", REPO_ID))
    ok(cce(env, consumer, "sync", "pull", "--latest"))
    marker = json.loads((consumer / ".cce" / "synced.json").read_text(encoding="utf-8"))
    installed = hashlib.sha256((consumer / ".cce" / "index.cce").read_bytes()).hexdigest()
    assert marker["installed_sha256"] == installed and marker["checksum"] != installed
    # `checksum` means the artifact's, in every report; the store's bytes have their own label.
    assert ok(cce(env, consumer, "sync", "verify", "--checksum-only")) == (
        f"verify OK (checksum-only): {REPO_ID}@{sha}\n  checksum : {marker['checksum']}\n  store    : {installed}\n")

"""Repo ids, remote keys, the working-clone directory, and the git facts behind them (real git, hermetic)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from cce_core.foundation.errors import CceError
from cce_core.foundation.git_facts import head_sha
from cce_core.sync.identity import (
    CODE_KEYS,
    CORPUS_META_FILE,
    CURRENT_FILE,
    DEFAULT_REF,
    HASH_EMBEDDER,
    KNOWLEDGE_KEY_VERSION,
    KNOWLEDGE_KEYS,
    SYNC_FORMAT_VERSION,
    WORKSPACE_GRAPH_FILE,
    WORKSPACE_MANIFEST_FILE,
    branch_or_default,
    current_branch,
    is_dirty,
    member_repo_id,
    normalize_repo_id,
    origin_url,
    push_branch,
    ref_key,
    remote_slug,
    resolve_commit,
    resolve_corpus_id,
    resolve_repo_id,
    sanitize_id,
    sync_home,
    valid_corpus_id,
    valid_repo_id,
    working_clone_dir,
)
from cce_core.sync.settings import KnowledgeSyncSettings, SyncSettings


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user or system git config, and no stray repository variables, reach the git under test."""
    global_config = tmp_path / "gitconfig"
    global_config.write_text("", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CCE_HOME", str(tmp_path / "cce-home"))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)
    # tmp_path is never inside a checkout, but stop the upward search there anyway.
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))


def git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@x", *args],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("hello\n", encoding="utf-8")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "init")
    return root


# --------------------------------------------------------------------------- ids


def test_constants():
    assert (SYNC_FORMAT_VERSION, HASH_EMBEDDER, DEFAULT_REF, KNOWLEDGE_KEY_VERSION) == ("2.3", "hash", "main", "v1")


@pytest.mark.parametrize(("text", "expected"), [
    ("github.com__acme__billing", "github.com__acme__billing"),
    ("a b/c:d@e", "a_b_c_d_e"),
    ("emoji✨", "emoji_"),
    ("é", "_"),  # one underscore per character, not per UTF-8 byte
    ("𝔘", "_"),
    ("", ""),
])
def test_sanitize_id(text: str, expected: str):
    assert sanitize_id(text) == expected


@pytest.mark.parametrize(("origin", "expected"), [
    ("https://github.com/acme/billing.git", "github.com__acme__billing"),
    ("git@github.com:acme/billing.git", "github.com__acme__billing"),
    ("ssh://git@github.com/acme/billing", "github.com__acme__billing"),
    ("acme/bill ing", "acme__bill_ing"),
    ("  https://github.com/acme/billing.git\n", "github.com__acme__billing"),
    ("\u3000github.com:acme/x\u2003", "github.com__acme__x"),  # Unicode whitespace is trimmed too
    ("https://user:pw@host.example/a//b/", "host.example__a__b"),
    ("ssh://git@host:2222/acme/x.git", "host_2222__acme__x"),
    ("host:org/repo", "host__org__repo"),
    ("x.git.git", "x.git"),  # only one `.git` goes
    ("x.GIT", "x.GIT"),
    ("dir/x:y", "dir__x_y"),  # a left part with a slash is a path, not a host
    ("x:/abs", "x___abs"),  # so is a right part starting with a slash
    ("a@b/c:/d", "b_c__d"),  # ... unless the left part names a user
    ("file:///srv/cache.git", "srv__cache"),
    ("/srv/repos/billing.git", "srv__repos__billing"),
    ("github.com__acme__billing", "github.com__acme__billing"),
    ("", ""),
])
def test_normalize_repo_id(origin: str, expected: str):
    assert normalize_repo_id(origin) == expected


@pytest.mark.parametrize(("value", "ok"), [
    ("internal-tickets", True), ("runbooks_v2.1", True), ("my.corpus.v1", True), (".hidden", True),
    ("v1.", True), ("...", True), ("example.com__acme__demo", True),
    ("", False), ("has space", False), ("has/slash", False), ("emoji✨", False), (".", False), ("..", False),
])
def test_id_validation(value: str, ok: bool):
    assert valid_corpus_id(value) is ok
    assert valid_repo_id(value) is ok


def test_resolve_repo_id_prefers_the_configured_id(repo: Path):
    git(repo, "remote", "add", "origin", "https://github.com/acme/demo.git")
    assert resolve_repo_id(repo, SyncSettings(repo_id="example.com__acme__mine")) == "example.com__acme__mine"
    assert resolve_repo_id(repo, SyncSettings()) == "github.com__acme__demo"


def test_resolve_repo_id_without_origin_is_the_reference_error(repo: Path, tmp_path: Path):
    message = ("cannot determine repo_id: no `sync.repo_id` configured and no git origin remote. "
               "Set one with `cce sync init --repo-id <id>`.")
    for root in (repo, tmp_path / "not-a-repo"):
        with pytest.raises(CceError) as caught:
            resolve_repo_id(root, SyncSettings())
        assert str(caught.value) == message


@pytest.mark.parametrize("bad", ["..", ".", "a/b", "has space"])
def test_resolve_repo_id_rejects_ids_that_escape_the_namespace(repo: Path, bad: str):
    with pytest.raises(CceError, match=r"^invalid repo_id `"):
        resolve_repo_id(repo, SyncSettings(repo_id=bad))


def test_an_origin_that_normalizes_to_a_traversal_token_is_rejected(repo: Path):
    git(repo, "remote", "add", "origin", "..")
    assert origin_url(repo) == ".."
    with pytest.raises(CceError, match=r"^invalid repo_id `\.\.`"):
        resolve_repo_id(repo, SyncSettings())


def test_resolve_corpus_id():
    assert resolve_corpus_id("c1", KnowledgeSyncSettings(corpus_id="c2")) == "c1"
    assert resolve_corpus_id(None, KnowledgeSyncSettings(corpus_id="c2")) == "c2"
    with pytest.raises(CceError, match=r"^cannot determine corpus_id: pass --corpus <id>"):
        resolve_corpus_id(None, KnowledgeSyncSettings())
    for bad in ("..", ".", "", "a/b"):
        with pytest.raises(CceError, match=r"^invalid corpus_id `"):
            resolve_corpus_id(bad, KnowledgeSyncSettings())


# --------------------------------------------------------------------------- keys


def test_code_keys():
    assert CODE_KEYS.artifact("github.com__acme__billing", "9f1c2a") == "hash/2.3/github.com__acme__billing/9f1c2a.cce"
    assert ref_key("github.com__acme__billing", "main") == "hash/2.3/github.com__acme__billing/refs/main"
    assert ref_key("r", "feature/x y") == "hash/2.3/r/refs/feature_x_y"
    mono = "example.com__acme__mono"
    assert CODE_KEYS.file(mono, WORKSPACE_MANIFEST_FILE) == "hash/2.3/example.com__acme__mono/workspace.yml"
    assert CODE_KEYS.file(mono, WORKSPACE_GRAPH_FILE) == "hash/2.3/example.com__acme__mono/workspace-graph.json"
    assert member_repo_id("example.com__acme__mono", "web") == "example.com__acme__mono__web"


def test_knowledge_keys():
    assert KNOWLEDGE_KEYS.artifact("internal-tickets", "9f1c2a3b4c5d6e7f") == \
        "knowledge/v1/internal-tickets/9f1c2a3b4c5d6e7f.cck"
    assert KNOWLEDGE_KEYS.file("internal-tickets", CURRENT_FILE) == "knowledge/v1/internal-tickets/current"
    assert KNOWLEDGE_KEYS.file("internal-tickets", CORPUS_META_FILE) == "knowledge/v1/internal-tickets/corpus.json"
    assert not KNOWLEDGE_KEYS.artifact("x", "y").startswith(HASH_EMBEDDER)


# --------------------------------------------------------------------------- working clone


def test_remote_slug_is_the_first_16_hex_of_sha256():
    url = "file:///tmp/remote.git"
    assert remote_slug(url) == hashlib.sha256(url.encode()).hexdigest()[:16]
    assert len(remote_slug(url)) == 16
    assert remote_slug(url + "/") != remote_slug(url)  # the URL exactly as given


def test_sync_home_and_clone_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert sync_home() == tmp_path / "cce-home" / "sync"
    assert working_clone_dir("file:///r.git") == tmp_path / "cce-home" / "sync" / remote_slug("file:///r.git")
    monkeypatch.delenv("CCE_HOME")
    assert sync_home() == tmp_path / "home" / ".cce" / "sync"
    monkeypatch.delenv("HOME")
    assert sync_home() == Path(".cce") / "sync"


# --------------------------------------------------------------------------- git facts


def test_head_branch_and_origin(repo: Path, tmp_path: Path):
    sha = head_sha(repo)
    assert sha is not None and len(sha) == 40 and all(c in "0123456789abcdef" for c in sha)
    assert current_branch(repo) == "main"
    assert branch_or_default(repo) == "main"
    assert origin_url(repo) is None
    git(repo, "remote", "add", "origin", "git@github.com:acme/billing.git")
    assert origin_url(repo) == "git@github.com:acme/billing.git"
    outside = tmp_path / "plain"
    outside.mkdir()
    assert (head_sha(outside), current_branch(outside), origin_url(outside)) == (None, None, None)
    assert branch_or_default(outside) == "main"


def test_an_unborn_branch_has_a_name_but_no_head(tmp_path: Path):
    root = tmp_path / "unborn"
    root.mkdir()
    git(root, "init", "-q", "-b", "trunk")
    assert current_branch(root) == "trunk"
    assert head_sha(root) is None


def test_detached_head(repo: Path):
    git(repo, "checkout", "-q", "--detach")
    assert current_branch(repo) is None
    assert branch_or_default(repo) == "main"
    with pytest.raises(CceError, match=r"^cannot determine which ref to advance: HEAD is detached"):
        push_branch(repo, SyncSettings())
    assert push_branch(repo, SyncSettings(ref="release")) == "release"


def test_push_branch_on_a_branch(repo: Path):
    git(repo, "checkout", "-q", "-b", "feature/x")
    assert push_branch(repo, SyncSettings()) == "feature/x"


def test_resolve_commit(repo: Path):
    head = head_sha(repo)
    assert head is not None
    assert resolve_commit(repo, head) == head
    assert resolve_commit(repo, "HEAD") == head
    assert resolve_commit(repo, head[:8]) == head
    assert resolve_commit(repo, "0" * 40) is None
    assert resolve_commit(repo, "not-a-sha") is None
    assert resolve_commit(repo, "--output=x") is None
    assert resolve_commit(repo, "HEAD^{tree}") is None


# --------------------------------------------------------------------------- dirty


def test_a_fresh_commit_is_clean(repo: Path):
    assert is_dirty(repo) is False


def test_a_modified_file_is_dirty(repo: Path):
    (repo / "a.txt").write_text("changed\n", encoding="utf-8")
    assert is_dirty(repo) is True


def test_a_staged_change_is_dirty(repo: Path):
    (repo / "b.txt").write_text("b\n", encoding="utf-8")
    git(repo, "add", "b.txt")
    assert is_dirty(repo) is True


def test_an_untracked_file_is_dirty_even_when_config_hides_untracked_files(repo: Path):
    (repo / "new.txt").write_text("n\n", encoding="utf-8")
    assert is_dirty(repo) is True
    git(repo, "config", "status.showUntrackedFiles", "no")
    assert is_dirty(repo) is True


def test_store_churn_alone_is_clean(repo: Path):
    (repo / ".cce").mkdir()
    (repo / ".cce" / "index.cce").write_text("{}", encoding="utf-8")
    assert is_dirty(repo) is False
    # A workspace member's store is store churn too.
    (repo / "pkg" / ".cce").mkdir(parents=True)
    (repo / "pkg" / ".cce" / "index.cce").write_text("{}", encoding="utf-8")
    assert is_dirty(repo) is False


def test_a_tracked_store_file_modified_first_in_the_listing_is_clean(repo: Path):
    # Porcelain's first line starts with a space here (" M .cce/index.cce"); a
    # parser that trims the output misreads that line's path.
    (repo / ".cce").mkdir()
    (repo / ".cce" / "index.cce").write_text("{}", encoding="utf-8")
    git(repo, "add", "-f", ".cce/index.cce")
    git(repo, "commit", "-q", "-m", "store")
    (repo / ".cce" / "index.cce").write_text('{"x":1}', encoding="utf-8")
    assert is_dirty(repo) is False


def test_a_dotdot_cce_directory_is_source_not_store(repo: Path):
    (repo / "..cce").mkdir()
    (repo / "..cce" / "logic.txt").write_text("x = 1\n", encoding="utf-8")
    git(repo, "add", "..cce/logic.txt")
    git(repo, "commit", "-q", "-m", "dotdot")
    (repo / "..cce" / "logic.txt").write_text("x = 2\n", encoding="utf-8")
    assert is_dirty(repo) is True


@pytest.mark.parametrize("name", ["a b.txt", 'q"uote.txt', "arrow -> .cce", "tab\there.txt", "ü.txt", ".cce x"])
def test_odd_path_names_are_read_exactly(repo: Path, name: str):
    (repo / name).write_text("x\n", encoding="utf-8")
    assert is_dirty(repo) is True


def test_renames(repo: Path):
    git(repo, "mv", "a.txt", "b c.txt")
    assert is_dirty(repo) is True
    git(repo, "commit", "-q", "-m", "rename")
    assert is_dirty(repo) is False
    # Moving a source file into the store still removes it from the source tree.
    (repo / ".cce").mkdir()
    git(repo, "mv", "b c.txt", ".cce/b c.txt")
    assert is_dirty(repo) is True


def test_a_rename_inside_the_store_is_clean(repo: Path):
    (repo / ".cce").mkdir()
    (repo / ".cce" / "one").write_text("1\n" * 20, encoding="utf-8")
    git(repo, "add", "-f", ".cce/one")
    git(repo, "commit", "-q", "-m", "store")
    git(repo, "mv", "-f", ".cce/one", ".cce/two")
    assert "R" in git(repo, "status", "--porcelain")[:2]
    assert is_dirty(repo) is False


def test_a_directory_that_is_not_a_checkout_is_dirty(tmp_path: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert is_dirty(plain) is True
    assert is_dirty(tmp_path / "missing") is True

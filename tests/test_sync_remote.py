"""The git working-clone layer of CCE Sync, against real `git` and `file://` bare remotes.

Hermetic: every test gets its own HOME / CCE_HOME, an empty global git config
and no system config, so neither the developer's git settings nor the
network take part. Races, refusals, superseding and lost pushes are staged
with hooks on the bare remote; crashes with real processes killed by SIGKILL.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from cce_core.foundation.errors import CceError
from cce_core.sync import remote as remote_module
from cce_core.sync.remote import (
    CacheMiss,
    CloneError,
    GitCommandError,
    GitRemote,
    InvalidKey,
    LfsUnavailable,
    PushFailed,
    PushVerificationFailed,
    display_url,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
posix_only = pytest.mark.skipif(os.name != "posix", reason="git hooks and SIGKILL are exercised on POSIX only")
TEST_IDENTITY = ["-c", "user.name=tester", "-c", "user.email=tester@localhost"]
# The variables that would point a test's own git calls at another repository.
_REPOSITORY_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")


def _lfs_installed() -> bool:
    try:
        return subprocess.run(["git", "lfs", "version"], capture_output=True, check=False).returncode == 0
    except OSError:
        return False


HAVE_LFS = _lfs_installed()

# The artifact bytes the crash and concurrency pushers write: derived from the
# key, so the remote's content can be checked without knowing which push won.
PAYLOAD_SOURCE = "def payload(key):\n    return (key + '\\n').encode() * 3000\n"
_namespace: dict[str, object] = {}
exec(PAYLOAD_SOURCE, _namespace)
payload = _namespace["payload"]


class Bare(NamedTuple):
    path: Path
    url: str


def git(cwd: Path, *args: str, check: bool = True, data: bytes | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in _REPOSITORY_ENV}
    done = subprocess.run(["git", *TEST_IDENTITY, "-C", str(cwd), *args], input=data, capture_output=True,
                          env=env, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr.decode(errors='replace')}")
    return done.stdout.decode("utf-8", errors="replace").strip()


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = tmp_path / "gitconfig"
    config.write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CCE_HOME", str(home / ".cce"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    for name in (*_REPOSITORY_ENV, "GIT_LFS_SKIP_SMUDGE", "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.delenv(name, raising=False)


def make_bare(tmp_path: Path, name: str = "remote.git", branch: str = "main") -> Bare:
    path = tmp_path / name
    subprocess.run(["git", "init", "--bare", "-q", "-b", branch, str(path)], check=True)
    return Bare(path, f"file://{path}")


@pytest.fixture
def bare(tmp_path: Path) -> Bare:
    return make_bare(tmp_path)


def clone_path(tmp_path: Path, name: str = "a") -> Path:
    return tmp_path / "home" / ".cce" / "sync" / name


def open_remote(bare: Bare, tmp_path: Path, name: str = "a", *, lfs: bool = False) -> GitRemote:
    return GitRemote.open(bare.url, clone_path(tmp_path, name), lfs=lfs)


def remote_show(bare: Bare, key: str, branch: str = "main") -> str:
    return git(bare.path, "show", f"{branch}:{key}")


def install_hook(git_dir: Path, name: str, script: str) -> Path:
    hook = git_dir / "hooks" / name
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(script)
    hook.chmod(0o755)
    return hook


def racer_clone(tmp_path: Path, bare: Bare, key: str, content: str) -> Path:
    """A separate clone with a commit of ``key`` that is not pushed yet."""
    racer = tmp_path / "racer"
    git(tmp_path, "clone", "--quiet", bare.url, str(racer))
    (racer / key).parent.mkdir(parents=True, exist_ok=True)
    (racer / key).write_text(content)
    git(racer, "add", "--", key)
    git(racer, "commit", "-q", "-m", "racer")
    return racer


def arm_race_hook(bare: Bare, racer: Path | None) -> None:
    """The first push publishes the racer's commit mid-flight and is refused; later ones pass.

    With no racer every push is refused. ``env -i`` keeps the hook's own
    GIT_DIR and quarantine settings away from the racer's push.
    """
    if racer is None:
        script = "#!/bin/sh\necho 'rejected by test hook' >&2\nexit 1\n"
    else:
        script = (
            "#!/bin/sh\n"
            '[ -f "$GIT_DIR/race-done" ] && exit 0\n'
            'touch "$GIT_DIR/race-done"\n'
            f'env -i PATH="$PATH" git -C "{racer}" push --quiet origin HEAD:refs/heads/main >&2\n'
            "echo 'simulated ref race' >&2\n"
            "exit 1\n"
        )
    install_hook(bare.path, "pre-receive", script)


def no_rebase_in_progress(clone: GitRemote | Path) -> bool:
    git_dir = (clone.clone_dir if isinstance(clone, GitRemote) else clone) / ".git"
    return not (git_dir / "rebase-merge").exists() and not (git_dir / "rebase-apply").exists()


def poison_with_a_stopped_rebase(tmp_path: Path, bare: Bare, remote: GitRemote, key: str) -> None:
    """Leave ``remote``'s clone mid-rebase: a local commit that conflicts with a newer remote one."""
    clone = remote.clone_dir
    (clone / key).write_text("local5555\n")
    git(clone, "add", "--", key)
    git(clone, "commit", "-q", "-m", "doomed local commit")
    open_remote(bare, tmp_path, "other").put(key, b"remote7777\n")
    git(clone, "fetch", "--quiet", "origin")
    git(clone, "rebase", "--quiet", f"origin/{remote.branch}", check=False)  # stops on the conflict
    assert not no_rebase_in_progress(remote), "test setup failed to leave a rebase in progress"


# ----------------------------------------------------------------- basics


def test_put_get_has_list_over_plain_git(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    assert remote.branch == "main"
    key = "hash/2.3/example.com__acme__demo/abc123.cce"
    assert not remote.has(key)
    remote.put(key, b"artifact-bytes\n")
    assert remote.has(key)
    assert remote.get(key) == b"artifact-bytes\n"
    assert remote.list_shas("hash/2.3/example.com__acme__demo") == ["abc123"]
    assert remote.list_keys("hash/2.3", ".cce") == [key]
    assert remote_show(bare, key) == "artifact-bytes"
    # The commit carries the fixed identity and the one-key message.
    assert git(bare.path, "log", "-1", "--format=%an <%ae>|%s", "main") == (
        f"cce-sync <cce-sync@localhost>|cce sync: {key}")


def test_put_many_is_one_commit_and_read_text_distinguishes_absence(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    remote.put_many([("hash/2.3/x/abc.cce", b"A\n"), ("hash/2.3/x/refs/main", b"abc\n")])
    assert git(bare.path, "rev-list", "--count", "main") == "1"
    assert git(bare.path, "log", "-1", "--format=%s", "main") == "cce sync: 2 artifacts"
    assert remote.read_text("hash/2.3/x/refs/main") == "abc"
    assert remote.read_text("hash/2.3/x/refs/nope") is None
    # An identical re-push publishes nothing new and still succeeds.
    remote.put_many([("hash/2.3/x/abc.cce", b"A\n"), ("hash/2.3/x/refs/main", b"abc\n")])
    assert git(bare.path, "rev-list", "--count", "main") == "1"
    remote.put_many([])


def test_get_reports_cache_miss(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    with pytest.raises(CacheMiss) as caught:
        remote.get("hash/2.3/x/nope.cce")
    assert str(caught.value) == "cache miss: hash/2.3/x/nope.cce not found on the remote"
    assert isinstance(caught.value, CceError)


def test_second_open_reuses_the_existing_clone(bare: Bare, tmp_path: Path):
    first = open_remote(bare, tmp_path)
    first.put("hash/2.3/x/a.cce", b"one\n")
    marker = first.clone_dir / ".git" / "cce-test-marker"
    marker.write_text("same clone")
    second = open_remote(bare, tmp_path)
    assert second.clone_dir == first.clone_dir
    assert marker.exists(), "the clone was replaced instead of reused"
    assert second.has("hash/2.3/x/a.cce")
    assert second.get("hash/2.3/x/a.cce") == b"one\n"


def test_a_relative_clone_dir_works(bare: Bare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    remote = GitRemote.open(bare.url, Path("relative") / "clone", lfs=False)
    remote.put("hash/2.3/x/a.cce", b"A\n")
    assert remote.clone_dir == tmp_path / "relative" / "clone"
    assert (tmp_path / "relative" / "clone" / ".git").is_dir()


def test_a_second_clone_sees_the_first_ones_pushes_and_both_land(bare: Bare, tmp_path: Path):
    a = open_remote(bare, tmp_path, "a")
    b = open_remote(bare, tmp_path, "b")
    a.put("hash/2.3/x/sha_a.cce", b"A\n")
    b.put("hash/2.3/x/sha_b.cce", b"B\n")  # b's view is stale: its first push must rebuild
    assert open_remote(bare, tmp_path, "c").list_shas("hash/2.3/x") == ["sha_a", "sha_b"]


def test_reads_on_an_unborn_remote_are_empty(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    assert not remote.has("hash/2.3/x/a.cce")
    assert remote.read_text("hash/2.3/x/refs/main") is None
    assert remote.list_dirs("hash/2.3") == []
    assert remote.list_keys("hash/2.3") == []
    assert remote.list_sizes("hash/2.3") == []
    assert remote.first_added_order("knowledge/v1/c") == []
    remote.remove_many(["hash/2.3/x/a.cce"], "nothing to prune")  # no-op, not an error
    assert git(bare.path, "rev-parse", "--verify", "--quiet", "main", check=False) == ""


def test_listings_skip_junk_entries(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    remote.put_many([
        ("hash/2.3/x/abc123.cce", b"A\n"),
        ("hash/2.3/x/README.md", b"not an artifact\n"),
        ("hash/2.3/x/no-extension", b"junk\n"),
        ("hash/2.3/x/nested/deadbeef.cce", b"BBBB\n"),
        ("hash/2.3/zzz__last/a.cce", b"Z\n"),
        ("hash/2.3/README.md", b"junk\n"),
        ("hash/2.3/x y/é.cce", b"odd name\n"),
    ])
    assert remote.list_shas("hash/2.3/x") == ["abc123", "deadbeef"]
    assert remote.list_sizes("hash/2.3/x") == [("hash/2.3/x/abc123.cce", 2), ("hash/2.3/x/nested/deadbeef.cce", 5)]
    assert remote.list_dirs("hash/2.3") == ["x", "x y", "zzz__last"]
    assert remote.list_keys("hash/2.3/x y") == ["hash/2.3/x y/é.cce"]
    assert remote.list_keys("hash/2.3/x", "") == sorted([
        "hash/2.3/x/README.md", "hash/2.3/x/abc123.cce", "hash/2.3/x/nested/deadbeef.cce", "hash/2.3/x/no-extension"])
    # A missing prefix lists as empty; a prefix is a whole path component.
    assert remote.list_dirs("hash/9.9") == []
    assert remote.list_shas("hash/2.3/zzz") == []


def test_list_sizes_reports_the_size_an_lfs_pointer_records(bare: Bare, tmp_path: Path):
    # Hermetic: the pointer stanza is committed as a plain blob, no git-lfs needed.
    remote = open_remote(bare, tmp_path)
    pointer = (b"version https://git-lfs.github.com/spec/v1\n"
               b"oid sha256:" + b"0" * 64 + b"\nsize 123456\n")
    remote.put_many([("hash/2.3/x/abc123.cce", pointer), ("hash/2.3/x/plain.cce", b"x" * 600)])
    assert remote.list_sizes("hash/2.3/x") == [("hash/2.3/x/abc123.cce", 123456), ("hash/2.3/x/plain.cce", 600)]


@pytest.mark.skipif(not HAVE_LFS, reason="`git lfs` is not installed")
def test_real_git_lfs_round_trip(bare: Bare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pusher = open_remote(bare, tmp_path, "pusher", lfs=True)
    assert remote_show(bare, ".gitattributes") == "*.cce filter=lfs diff=lfs merge=lfs -text"
    assert git(bare.path, "log", "-1", "--format=%s", "main") == "cce sync: enable git-LFS for *.cce"
    artifact = b"{\"manifest\":true}\n" + b"chunk line\n" * 400
    key = "hash/2.3/x/abc123.cce"
    pusher.put_many([(key, artifact), ("hash/2.3/x/refs/main", b"abc123\n")])
    stored = remote_show(bare, key)
    assert stored.startswith("version https://git-lfs"), "the remote must hold an LFS pointer"
    assert f"size {len(artifact)}" in stored
    assert remote_show(bare, "hash/2.3/x/refs/main") == "abc123"  # not LFS-routed
    # A consumer that never enables LFS still gets the real bytes, even when the
    # user's environment asks git-LFS to skip downloads.
    monkeypatch.setenv("GIT_LFS_SKIP_SMUDGE", "1")
    consumer = open_remote(bare, tmp_path, "consumer", lfs=False)
    assert consumer.get(key) == artifact
    assert consumer.list_sizes("hash/2.3/x") == [(key, len(artifact))]
    # Re-opening keeps the attribute line single; the knowledge pattern is appended.
    again = open_remote(bare, tmp_path, "pusher", lfs=True)
    again.ensure_lfs("*.cck")
    assert remote_show(bare, ".gitattributes").split("\n") == [
        "*.cce filter=lfs diff=lfs merge=lfs -text", "*.cck filter=lfs diff=lfs merge=lfs -text"]


def test_lfs_enabled_without_git_lfs_is_a_clear_error(bare: Bare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    real_git = shutil.which("git")
    assert real_git
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(real_git)
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(LfsUnavailable) as caught:
        open_remote(bare, tmp_path, lfs=True)
    message = str(caught.value)
    assert message == ("git-LFS is enabled for this remote (sync.lfs) but `git lfs` is not installed — install "
                       f"git-lfs or run `cce sync init --remote {bare.url} --no-lfs`")
    assert "\n" not in message


def test_first_added_order_walks_history_oldest_first(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    # Pushed out of name order, back to back: commit order must win.
    remote.put("knowledge/v1/c/zzz.cck", b"Z\n")
    remote.put("knowledge/v1/c/aaa.cck", b"A\n")
    remote.put("knowledge/v1/c/mmm.cck", b"M\n")
    remote.put("knowledge/v1/c/zzz.cck", b"Z2\n")  # a rewrite is not a new addition
    assert remote.first_added_order("knowledge/v1/c") == [
        "knowledge/v1/c/zzz.cck", "knowledge/v1/c/aaa.cck", "knowledge/v1/c/mmm.cck"]
    assert remote.first_added_order("knowledge/v1/nope") == []


def test_remove_many_prunes_keys_in_one_commit(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    remote.put_many([("knowledge/v1/c/aaa.cck", b"A\n"), ("knowledge/v1/c/bbb.cck", b"B\n"),
                     ("knowledge/v1/c/current", b"bbb\n")])
    remote.remove_many(["knowledge/v1/c/aaa.cck"], "cce knowledge sync: retention prune (c)")
    assert git(bare.path, "log", "-1", "--format=%s", "main") == "cce knowledge sync: retention prune (c)"
    assert not remote.has("knowledge/v1/c/aaa.cck")
    assert remote.has("knowledge/v1/c/bbb.cck")
    assert remote.has("knowledge/v1/c/current")
    commits = git(bare.path, "rev-list", "--count", "main")
    remote.remove_many([], "noop")
    remote.remove_many(["knowledge/v1/c/aaa.cck"], "again")
    assert git(bare.path, "rev-list", "--count", "main") == commits


def test_open_fails_on_an_unreachable_remote(tmp_path: Path):
    url = "file:///definitely/not/a/repo/here.git"
    with pytest.raises(CloneError) as caught:
        GitRemote.open(url, clone_path(tmp_path), lfs=False)
    message = str(caught.value)
    assert message.startswith(f"could not clone remote {url}: git clone --quiet {url} ")
    assert "\n" not in message
    # Nothing half-made is left where the clone, or its staging copy, would be.
    assert sorted(p.name for p in clone_path(tmp_path).parent.iterdir()) == ["a.lock"]


def test_clone_errors_mask_url_passwords(tmp_path: Path):
    url = "https://someone:s3cret-token@127.0.0.1:9/cache.git"
    with pytest.raises(CloneError) as caught:
        GitRemote.open(url, clone_path(tmp_path), lfs=False)
    assert "s3cret-token" not in str(caught.value)
    assert "https://someone:***@127.0.0.1:9/cache.git" in str(caught.value)
    assert display_url("see https://u:p@h/x and ssh://git@h/y") == "see https://u:***@h/x and ssh://git@h/y"


def test_keys_that_could_escape_the_clone_are_refused(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    for bad in ("../outside.cce", "/abs/key.cce", ".git/config", "a//b.cce", "a/./b", "", "a\\b"):
        with pytest.raises(InvalidKey):
            remote.put(bad, b"x")
    with pytest.raises(InvalidKey):
        remote.list_keys("../up")
    assert not (tmp_path / "home" / ".cce" / "outside.cce").exists()


def test_git_variables_from_a_surrounding_hook_never_redirect_the_clone(bare: Bare, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    # cce run from inside a hook of the user's project inherits GIT_DIR and friends.
    project = tmp_path / "project"
    git(tmp_path, "init", "-q", "-b", "main", str(project))
    (project / "tracked.txt").write_text("mine\n")
    git(project, "add", "tracked.txt")
    git(project, "commit", "-q", "-m", "user work")
    (project / "untracked.txt").write_text("precious\n")
    head = git(project, "rev-parse", "HEAD")
    monkeypatch.setenv("GIT_DIR", str(project / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(project))
    monkeypatch.setenv("GIT_INDEX_FILE", str(project / ".git" / "index"))
    remote = open_remote(bare, tmp_path)
    remote.put("hash/2.3/x/a.cce", b"A\n")
    open_remote(bare, tmp_path)  # heals: reset --hard + clean, which must hit the clone only
    assert (project / "untracked.txt").read_text() == "precious\n"
    assert git(project, "rev-parse", "HEAD") == head
    assert remote_show(bare, "hash/2.3/x/a.cce") == "A"


# ------------------------------------------------------- races and refusals


@posix_only
def test_conflicting_fixed_path_race_republishes_last_writer_wins(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    current, meta = "knowledge/v1/corpus/current", "knowledge/v1/corpus/corpus.json"
    remote.put_many([(current, b"aaaa1111\n"), (meta, b'{"current":"aaaa1111"}\n')])
    racer = racer_clone(tmp_path, bare, current, "raced9999\n")
    arm_race_hook(bare, racer)
    remote.put_many([(current, b"bbbb2222\n"), (meta, b'{"current":"bbbb2222"}\n')])
    assert (bare.path / "race-done").exists(), "the race hook never fired"
    assert remote_show(bare, current) == "bbbb2222"
    assert remote_show(bare, meta) == '{"current":"bbbb2222"}'
    assert "racer" in git(bare.path, "log", "--format=%s", "main"), "the racer's commit must stay in history"
    assert no_rebase_in_progress(remote)
    assert no_rebase_in_progress(racer)
    remote.put(current, b"cccc3333\n")
    assert remote_show(bare, current) == "cccc3333"


@posix_only
def test_raced_push_with_different_keys_lands_both(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    remote.put("hash/2.3/x/sha_a.cce", b"A\n")
    racer = racer_clone(tmp_path, bare, "hash/2.3/x/sha_r.cce", "R\n")
    arm_race_hook(bare, racer)
    remote.put("hash/2.3/x/sha_b.cce", b"B\n")
    assert remote.list_shas("hash/2.3/x") == ["sha_a", "sha_b", "sha_r"]
    assert no_rebase_in_progress(remote)


@posix_only
def test_an_always_refusing_remote_fails_loudly_and_leaves_a_usable_clone(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    key = "knowledge/v1/corpus/current"
    remote.put(key, b"aaaa1111\n")
    arm_race_hook(bare, None)
    with pytest.raises(PushFailed) as caught:
        remote.put(key, b"bbbb2222\n")
    message = str(caught.value)
    assert message.startswith("push to origin/main failed after 5 attempts (lost a push race 5 times or the "
                              "remote kept refusing): ")
    assert "rejected by test hook" in message
    assert "\n" not in message
    assert remote_show(bare, key) == "aaaa1111"
    assert no_rebase_in_progress(remote)
    (bare.path / "hooks" / "pre-receive").unlink()
    remote.put(key, b"cccc3333\n")
    assert remote_show(bare, key) == "cccc3333"


@posix_only
def test_a_refused_first_push_is_not_published_by_the_next_one(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    arm_race_hook(bare, None)
    with pytest.raises(PushFailed):
        remote.put("hash/2.3/x/never.cce", b"N\n")
    (bare.path / "hooks" / "pre-receive").unlink()
    remote.put("hash/2.3/x/later.cce", b"L\n")
    assert git(bare.path, "ls-tree", "-r", "--name-only", "main") == "hash/2.3/x/later.cce"


@posix_only
def test_a_competitor_superseding_our_push_is_not_a_lost_publish(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    key = "knowledge/v1/corpus/current"
    remote.put(key, b"aaaa1111\n")
    install_hook(bare.path, "post-receive", (
        "#!/bin/sh\n"
        '[ -f "$GIT_DIR/superseded" ] && exit 0\n'
        'touch "$GIT_DIR/superseded"\n'
        "blob=$(printf 'competitor\\n' | git hash-object -w --stdin)\n"
        'export GIT_INDEX_FILE="$GIT_DIR/tmp-index"\n'
        "git read-tree main\n"
        f'git update-index --add --cacheinfo "100644,$blob,{key}"\n'
        "tree=$(git write-tree)\n"
        "commit=$(GIT_AUTHOR_NAME=r GIT_AUTHOR_EMAIL=r@e GIT_COMMITTER_NAME=r GIT_COMMITTER_EMAIL=r@e "
        'git commit-tree "$tree" -p main -m supersede)\n'
        'git update-ref refs/heads/main "$commit"\n'
        "exit 0\n"))
    remote.put(key, b"bbbb2222\n")
    assert remote_show(bare, key) == "competitor"
    assert git(bare.path, "show", f"main~1:{key}") == "bbbb2222"


@posix_only
def test_a_push_that_never_lands_on_the_branch_is_a_loud_error(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    key = "knowledge/v1/corpus/current"
    remote.put(key, b"aaaa1111\n")
    install_hook(bare.path, "post-receive",
                 '#!/bin/sh\nwhile read old new ref; do git update-ref "$ref" "$old"; done\nexit 0\n')
    with pytest.raises(PushVerificationFailed) as caught:
        remote.put(key, b"bbbb2222\n")
    message = str(caught.value)
    assert message.startswith("push verification failed: the pushed commit ")
    assert f"carrying {key} never landed on origin/main — nothing was published; " in message
    assert message.endswith("fetch and inspect origin/main; local stores are unaffected; re-run the push to retry")
    assert remote_show(bare, key) == "aaaa1111"
    assert no_rebase_in_progress(remote)


def test_a_swallowed_commit_can_never_pass_for_a_publish(bare: Bare, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    # Mutation pin for the verification: if committing ever silently did
    # nothing, HEAD would stay on the remote's commit and "push" trivially.
    remote = open_remote(bare, tmp_path)
    key = "knowledge/v1/corpus/current"
    remote.put(key, b"aaaa1111\n")
    monkeypatch.setattr(GitRemote, "_commit_staged", lambda self, message: None)
    with pytest.raises(PushVerificationFailed) as caught:
        remote.put(key, b"bbbb2222\n")
    assert str(caught.value).startswith("push verification failed: neither origin/main nor the pushed commit ")
    assert f"carries {key} with the just-pushed content — fetch and inspect origin/main" in str(caught.value)


@posix_only
def test_a_commit_failure_propagates_instead_of_pushing_stale_head(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    key = "knowledge/v1/corpus/current"
    remote.put(key, b"aaaa1111\n")
    install_hook(remote.clone_dir / ".git", "pre-commit", "#!/bin/sh\necho 'pre-commit veto' >&2\nexit 1\n")
    with pytest.raises(GitCommandError) as caught:
        remote.put(key, b"bbbb2222\n")
    assert "pre-commit veto" in str(caught.value)
    assert remote_show(bare, key) == "aaaa1111"


# ------------------------------------------------------------------ healing


def test_a_clone_left_mid_rebase_heals_on_open(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    key = "knowledge/v1/corpus/current"
    remote.put(key, b"aaaa1111\n")
    poison_with_a_stopped_rebase(tmp_path, bare, remote, key)
    healed = open_remote(bare, tmp_path)
    assert no_rebase_in_progress(healed)
    healed.put(key, b"bbbb2222\n")
    assert remote_show(bare, key) == "bbbb2222"


def test_heal_reattaches_a_detached_head_on_a_non_default_branch(tmp_path: Path):
    bare = make_bare(tmp_path, "trunk.git", branch="trunk")
    remote = open_remote(bare, tmp_path)
    assert remote.branch == "trunk"
    key = "knowledge/v1/corpus/current"
    remote.put(key, b"aaaa1111\n")
    poison_with_a_stopped_rebase(tmp_path, bare, remote, key)
    # Break `rebase --abort` so that the `--quit` path, which leaves HEAD detached, runs.
    state = remote.clone_dir / ".git" / "rebase-merge"
    for name in ("orig-head", "head"):
        (state / name).unlink(missing_ok=True)
    git(remote.clone_dir, "rebase", "--abort", check=False)
    assert state.exists(), "test setup: --abort should have been unable to run"
    healed = open_remote(bare, tmp_path)
    assert no_rebase_in_progress(healed)
    assert healed.branch == "trunk"
    assert git(healed.clone_dir, "symbolic-ref", "--short", "HEAD") == "trunk"
    healed.put(key, b"bbbb2222\n")
    assert remote_show(bare, key, "trunk") == "bbbb2222"
    assert "refs/heads/main" not in git(bare.path, "show-ref"), "the cache was forked onto a default branch"


def test_stale_git_lock_files_and_leftovers_are_cleared_on_open(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    remote.put("hash/2.3/x/a.cce", b"A\n")
    git_dir = remote.clone_dir / ".git"
    for lock in (git_dir / "index.lock", git_dir / "HEAD.lock", git_dir / "refs" / "heads" / "main.lock",
                 git_dir / "refs" / "remotes" / "origin" / "main.lock"):
        lock.write_text("left by a killed git")
    (remote.clone_dir / "hash" / "2.3" / "x" / "a.cce").write_text("half writ")
    (remote.clone_dir / "hash" / "2.3" / "x" / ".b.cce.123.tmp").write_text("temp")
    staging = remote.clone_dir.with_name(".a.clone-1-deadbeef")
    staging.mkdir()
    healed = open_remote(bare, tmp_path)
    assert not list(git_dir.rglob("*.lock"))
    assert not staging.exists()
    assert git(healed.clone_dir, "status", "--porcelain") == ""
    healed.put("hash/2.3/x/b.cce", b"B\n")
    assert healed.list_shas("hash/2.3/x") == ["a", "b"]


def test_a_clone_git_cannot_repair_is_cloned_afresh(bare: Bare, tmp_path: Path):
    remote = open_remote(bare, tmp_path)
    remote.put("hash/2.3/x/a.cce", b"A\n")
    (remote.clone_dir / ".git" / "HEAD").write_text("garbage\n")
    healed = open_remote(bare, tmp_path)
    assert healed.get("hash/2.3/x/a.cce") == b"A\n"
    healed.put("hash/2.3/x/b.cce", b"B\n")
    assert sorted(p.name for p in healed.clone_dir.parent.iterdir()) == ["a", "a.lock"]


# ------------------------------------------------------ processes and kills

PUSHER = PAYLOAD_SOURCE + r"""
import sys, time
from pathlib import Path
from cce_core.sync.remote import GitRemote
url, clone, tag, go = sys.argv[1], Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
first, count = int(sys.argv[5]), int(sys.argv[6])
while not go.exists():
    time.sleep(0.005)
remote = GitRemote.open(url, clone, lfs=False)
for i in range(first, first + count):
    key = f"hash/2.3/{tag}/{i:04d}.cce"
    # The artifact and its pointer in one commit: a pointer never names a missing artifact.
    remote.put_many([(key, payload(key)), (f"hash/2.3/{tag}/refs/main", f"{i:04d}\n".encode())])
"""


def start_pusher(bare: Bare, clone: Path, tag: str, go: Path, first: int, count: int) -> subprocess.Popen[bytes]:
    """A process that opens ``clone`` once ``go`` exists, then pushes keys ``first``… one commit each."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.Popen([sys.executable, "-c", PUSHER, bare.url, str(clone), tag, str(go), str(first), str(count)],
                            env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def live_members_of_process_group(pgid: int) -> list[int]:
    """Pids in ``pgid`` that are still running (zombies excluded: nobody may reap them here)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # The command name is in parentheses and may hold spaces; fields follow the last ')'.
            state, _ppid, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, IndexError, ValueError):
            continue  # the process ended while we looked
        if int(pgrp) == pgid and state != "Z":
            members.append(int(stat.parent.name))
    return members


def wait_for_process_group_to_exit(pgid: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while live_members_of_process_group(pgid):
        assert time.monotonic() < deadline, f"process group {pgid} still running after {timeout} s"
        time.sleep(0.05)


def assert_remote_consistent(bare: Bare) -> list[str]:
    """fsck-clean, every artifact holds its key's bytes, every pointer names a present artifact."""
    fsck = subprocess.run(["git", "-C", str(bare.path), "fsck", "--no-progress", "--no-dangling"],
                          capture_output=True, text=True, check=False)
    assert fsck.returncode == 0 and "error" not in fsck.stderr + fsck.stdout, fsck.stderr + fsck.stdout
    keys = git(bare.path, "ls-tree", "-r", "--name-only", "main").split("\n")
    for key in keys:
        blob = subprocess.run(["git", "-C", str(bare.path), "cat-file", "blob", f"main:{key}"],
                              capture_output=True, check=True).stdout
        if key.endswith(".cce"):
            assert blob == payload(key), f"{key} holds torn or foreign bytes"
        else:
            assert key.rsplit("/", 2)[-2:][0] == "refs", key
            artifact = f"{key.rsplit('/refs/', 1)[0]}/{blob.decode().strip()}.cce"
            assert artifact in keys, f"{key} names {artifact}, which is not on the remote"
    return keys


@posix_only
@pytest.mark.parametrize("shared_clone", [True, False], ids=["one-shared-clone", "a-clone-each"])
def test_four_processes_pushing_at_once_all_land(bare: Bare, tmp_path: Path, shared_clone: bool):
    # Sharing one clone (one machine, one CCE_HOME) is serialized by the clone
    # lock; separate clones race at the remote and win by retrying.
    go = tmp_path / "go"
    count = 2 if shared_clone else 1  # a-clone-each: 3 rivals can beat a pusher at most 3 times
    pushers = [start_pusher(bare, clone_path(tmp_path, "shared" if shared_clone else f"p{n}"), f"p{n}", go, 0, count)
               for n in range(4)]
    time.sleep(0.3)  # let the interpreters start, then release them together
    go.touch()
    for proc in pushers:
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode(errors="replace")
    keys = assert_remote_consistent(bare)
    for n in range(4):
        for i in range(count):
            assert f"hash/2.3/p{n}/{i:04d}.cce" in keys


@pytest.mark.slow
@posix_only
def test_kill_9_at_random_moments_leaves_a_healable_clone_and_a_consistent_remote(bare: Bare, tmp_path: Path):
    clone = clone_path(tmp_path, "shared")
    go = tmp_path / "go"
    go.touch()
    delays = random.Random(20260711).sample([0.05 * n for n in range(2, 20)], 10)
    groups: list[int] = []
    for round_, delay in enumerate(delays):
        proc = start_pusher(bare, clone, "killed", go, round_ * 1000, 1000)  # fresh keys every round
        groups.append(proc.pid)  # start_new_session: the pusher leads its own process group
        time.sleep(delay)
        if round_ % 2:
            # Everything dies at once: git's own lock files stay behind.
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            # Only cce dies: its git children run on, holding the clone lock until they exit.
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        assert proc.returncode == -signal.SIGKILL, f"round {round_}: the pusher ended before the kill"
    # Rounds that killed only cce left git children running; let them finish
    # before judging what is on disk, or a live lock looks like a stale one.
    for pgid in groups:
        wait_for_process_group_to_exit(pgid)
    # A killed local receive-pack can leave lock files (a ref's, HEAD's,
    # packed-refs') in the bare repository itself; a real server runs its own
    # receive-pack and is never killed with us, so clear them as its admin would.
    for stale in bare.path.rglob("*.lock"):
        stale.unlink()
    survivor = GitRemote.open(bare.url, clone, lfs=False)
    assert git(clone, "status", "--porcelain") == ""
    survivor.put_many([("hash/2.3/killed/9999.cce", payload("hash/2.3/killed/9999.cce")),
                       ("hash/2.3/killed/refs/main", b"9999\n")])
    keys = assert_remote_consistent(bare)
    assert "hash/2.3/killed/9999.cce" in keys
    fsck = subprocess.run(["git", "-C", str(clone), "fsck", "--no-progress", "--no-dangling"],
                          capture_output=True, text=True, check=False)
    assert fsck.returncode == 0, fsck.stderr
    assert sorted(p.name for p in clone.parent.iterdir()) == ["shared", "shared.lock"]


def test_lock_timeout_reports_a_busy_clone(bare: Bare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    holder = open_remote(bare, tmp_path)
    monkeypatch.setattr(remote_module, "LOCK_TIMEOUT_SECONDS", 0.2)
    with holder._exclusive(), pytest.raises(remote_module.CloneBusy) as caught:
        open_remote(bare, tmp_path)
    assert "has been held by another process for over 0.2 s" in str(caught.value)

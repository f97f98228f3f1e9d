"""CCE Sync end to end: the installed `cce`, real git, `file://` bare remotes, no network.

Each test gets its own CCE_HOME (so its own working clones), its own git
config, and bare remotes in tmp_path. Sources are real git repositories.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers import REPO_ROOT, cce_executable, copy_tree, git, hermetic_env

from cce_core.default_plugins.hash_embedder import HashEmbedder
from cce_core.indexing.indexer import build_index
from cce_core.indexing.store import load_store
from cce_core.plugins.host import default_host
from cce_core.sync.artifact import export_artifact, import_artifact, pack_module_suffixes

SAMPLES = REPO_ROOT / "samples"
QUERIES = ["Loader load", "hash password", "parse config file", "class", "render template", "import os"]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return hermetic_env(tmp_path)


def cce(env: dict[str, str], cwd: Path, *args: str | os.PathLike[str], timeout: float = 180):
    return subprocess.run([cce_executable(), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def bare_remote(env: dict[str, str], path: Path) -> str:
    subprocess.run(["git", "init", "--bare", "-q", "-b", "main", str(path)], env=env, check=True)
    return f"file://{path}"


def source_repo(env: dict[str, str], path: Path, tree: Path = SAMPLES, origin: str = "https://example.com/acme/demo.git",
                branch: str = "main") -> Path:
    copy_tree(tree, path)
    git(env, path, "init", "-q", "-b", branch)
    git(env, path, "add", "-A")
    git(env, path, "commit", "-q", "-m", "init")
    git(env, path, "remote", "add", "origin", origin)
    return path


def search_rows(env: dict[str, str], root: Path) -> list[list[tuple[str, str, str]]]:
    out = []
    for query in QUERIES:
        body = json.loads(ok(cce(env, root, "search", query, "--json", "--no-metrics", "--top-k", "5")))
        out.append([(r["chunk_id"], r["file_path"], r["score"]) for r in body["results"]])
    return out


@pytest.fixture
def published(env: dict[str, str], tmp_path: Path) -> tuple[str, Path, str]:
    """A bare remote with the samples pushed from a source repo: (url, source, sha)."""
    url = bare_remote(env, tmp_path / "cache.git")
    src = source_repo(env, tmp_path / "src")
    ok(cce(env, src, "sync", "init", "--remote", url, "--no-lfs"))
    ok(cce(env, src, "sync", "push"))
    return url, src, git(env, src, "rev-parse", "HEAD")


# --------------------------------------------------------------------------- the main job


def test_init_push_pull_search_verify(env: dict[str, str], tmp_path: Path, published) -> None:
    url, src, sha = published
    consumer = tmp_path / "consumer"
    git(env, tmp_path, "clone", "-q", str(src), str(consumer))
    git(env, consumer, "remote", "set-url", "origin", "https://example.com/acme/demo.git")
    init = ok(cce(env, consumer, "sync", "init", "--remote", url, "--no-lfs"))
    assert init.split("\n")[:3] == [f"Configured sync remote: {url}", "  git-LFS       : disabled",
                                    "  repo_id       : example.com__acme__demo"]
    pulled = ok(cce(env, consumer, "sync", "pull"))
    assert pulled.split("\n")[0] == f"Pulled example.com__acme__demo@{sha}"
    assert "  chunks   : 21\n" in pulled and "  store    : ./.cce/index.cce\n" in pulled
    assert pulled.endswith("  tree     : matches — pulled index used as-is\n")

    # A pulled store answers exactly as a local build does: ids, paths, scores, order.
    local = tmp_path / "local"
    git(env, tmp_path, "clone", "-q", str(src), str(local))
    ok(cce(env, local, "index", "."))
    assert search_rows(env, consumer) == search_rows(env, local)

    marker = json.loads((consumer / ".cce" / "synced.json").read_text(encoding="utf-8"))
    assert list(marker) == ["repo_id", "sha", "checksum", "installed_sha256"] and marker["sha"] == sha
    events = [json.loads(line) for line in (consumer / ".cce" / "metrics.jsonl").read_text().splitlines()]
    assert [(e["event"], e["source"], e["sha"]) for e in events] == [("index", "sync-pull", sha)]

    assert ok(cce(env, consumer, "sync", "verify")) == (f"verify OK: example.com__acme__demo@{sha}\n"
                                                       f"  checksum : {marker['checksum']}\n")
    quick = ok(cce(env, consumer, "sync", "verify", "--checksum-only"))
    assert quick.startswith(f"verify OK (checksum-only): example.com__acme__demo@{sha}\n")

    # Flip one byte of the installed store: the checksum-only verify fails, naming both hashes.
    store = consumer / ".cce" / "index.cce"
    raw = bytearray(store.read_bytes())
    raw[-1] ^= 1
    store.write_bytes(bytes(raw))
    failed = cce(env, consumer, "sync", "verify", "--checksum-only")
    assert failed.returncode == 1 and "verify FAILED (checksum-only)" in failed.stdout
    assert f"expected : {marker['installed_sha256']}" in failed.stdout


def test_the_pushed_artifact_is_the_family_algorithm_for_that_sha(env: dict[str, str], tmp_path: Path,
                                                                 reference: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    src = source_repo(env, tmp_path / "src", tree=reference / "test" / "fixture" / "samples")
    # A repo id is one path segment on the cache (the codec's golden id `cce/demo` is refused here).
    ok(cce(env, src, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "cce/demo"))
    refused = one_error(cce(env, src, "sync", "push"))
    assert refused.startswith("error: invalid repo_id `cce/demo`")
    ok(cce(env, src, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "cce__demo"))
    ok(cce(env, src, "sync", "push"))
    sha = git(env, src, "rev-parse", "HEAD")
    check = tmp_path / "check"
    git(env, tmp_path, "clone", "-q", url, str(check))
    pushed = (check / "hash" / "2.3" / "cce__demo" / f"{sha}.cce").read_bytes()
    assert (check / "hash" / "2.3" / "cce__demo" / "refs" / "main").read_text() == f"{sha}\n"

    host = default_host()
    data, _ = build_index(reference / "test" / "fixture" / "samples", host, HashEmbedder(), protect_secrets=True)
    assert pushed == export_artifact(data, "cce__demo", sha, pack_module_suffixes(host))
    # The same build at the shared golden's identity gives the family's checksum.
    golden = import_artifact(export_artifact(data, "cce/demo", "0" * 40, pack_module_suffixes(host)))
    assert golden.manifest.checksum == "581cbd0ff682a38d7d1250f3eec44f4ce456bdd660d4cb29aaaadd9e95072f48"


# --------------------------------------------------------------------------- pull --latest and refs


def test_pull_latest_follows_main_and_named_refs(env: dict[str, str], tmp_path: Path, published) -> None:
    url, src, sha = published
    (src / "extra.py").write_text("def extra():\n    return 2\n", encoding="utf-8")
    git(env, src, "add", "-A")
    git(env, src, "commit", "-q", "-m", "v2")
    git(env, src, "checkout", "-q", "-b", "release")
    ok(cce(env, src, "sync", "push"))
    v2 = git(env, src, "rev-parse", "HEAD")

    consumer = tmp_path / "consumer"
    consumer.mkdir()
    ok(cce(env, consumer, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "example.com__acme__demo"))
    latest = ok(cce(env, consumer, "sync", "pull", "--latest"))
    assert latest.startswith(f"Pulled example.com__acme__demo@{sha}\n  chunks   : 21\n")
    assert latest.endswith("  tree     : (no source checkout — consumer mode; the pulled index is the corpus)\n")
    # Another sha while a pulled cache is pinned: refused without --force.
    refused = one_error(cce(env, consumer, "sync", "pull", "--latest", "--ref", "release"))
    assert refused == f"error: local cache is at {sha} but you are pulling {v2}. Pass --force to overwrite."
    forced = ok(cce(env, consumer, "sync", "pull", "--latest", "--ref", "release", "--force"))
    assert forced.startswith(f"Pulled example.com__acme__demo@{v2}\n  ref      : release\n  chunks   : 22\n")

    assert one_error(cce(env, consumer, "sync", "pull", "--latest", "--ref", "nope", "--force")) == (
        "error: no `--latest` pointer for example.com__acme__demo on `nope`")
    usage = cce(env, consumer, "sync", "pull", "--ref", "release")
    assert usage.returncode == 2 and usage.stderr == "error: --ref requires --latest\n"


def test_a_corrupt_marker_arms_the_overwrite_guard(env: dict[str, str], tmp_path: Path, published) -> None:
    url, _src, _sha = published
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    ok(cce(env, consumer, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "example.com__acme__demo"))
    ok(cce(env, consumer, "sync", "pull", "--latest"))
    before = (consumer / ".cce" / "index.cce").read_bytes()
    (consumer / ".cce" / "synced.json").write_text("{trunc", encoding="utf-8")
    error = one_error(cce(env, consumer, "sync", "pull", "--commit", "f" * 40))
    assert "is unreadable/corrupt" in error and "pass --force" in error
    assert (consumer / ".cce" / "index.cce").read_bytes() == before


# --------------------------------------------------------------------------- refusals


def test_push_refuses_a_dirty_tree_and_a_commit_that_is_not_head(env: dict[str, str], tmp_path: Path,
                                                                published) -> None:
    _url, src, sha = published
    (src / "python.py").write_text("# changed\n", encoding="utf-8")
    assert one_error(cce(env, src, "sync", "push")) == (
        "error: refusing to push: the working tree is dirty. Commit your changes and push a clean sha (a cache is "
        "content-addressed by commit).")
    git(env, src, "add", "-A")
    git(env, src, "commit", "-q", "-m", "v2")
    error = one_error(cce(env, src, "sync", "push", "--commit", sha))
    assert error.startswith(f"error: --commit {sha} does not match HEAD ")


def test_without_a_remote_sync_fails_in_one_line_and_the_rest_works(env: dict[str, str], tmp_path: Path) -> None:
    src = source_repo(env, tmp_path / "src")
    for args in (("push",), ("pull",), ("list",)):
        assert one_error(cce(env, src, "sync", *args)) == (
            "error: no sync remote configured — run `cce sync init --remote <git-url>`")
    assert ok(cce(env, src, "sync", "status")) == "remote        : (none — pure local CCE)\n"
    ok(cce(env, src, "index", "."))
    assert search_rows(env, src)


def test_cache_miss_unreachable_and_tampered_artifacts(env: dict[str, str], tmp_path: Path, published) -> None:
    url, _src, sha = published
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    ok(cce(env, consumer, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "example.com__acme__demo"))
    miss = one_error(cce(env, consumer, "sync", "pull", "--commit", "0" * 40))
    assert miss == (f"error: cache miss: hash/2.3/example.com__acme__demo/{'0' * 40}.cce not found on the remote")

    # Tamper with the published artifact (one content byte), then a truncated copy at another sha.
    work = tmp_path / "tamper"
    git(env, tmp_path, "clone", "-q", url, str(work))
    key = Path("hash/2.3/example.com__acme__demo") / f"{sha}.cce"
    raw = (work / key).read_bytes()
    (work / key).write_bytes(raw.replace(b"Loader", b"Loadex", 1))
    (work / key.with_name("1" * 40 + ".cce")).write_bytes(raw[: len(raw) // 2])
    git(env, work, "add", "-A")
    git(env, work, "commit", "-q", "-m", "tamper")
    git(env, work, "push", "-q", "origin", "HEAD:main")
    tampered = one_error(cce(env, consumer, "sync", "pull", "--commit", sha))
    assert tampered.startswith("error: checksum mismatch: manifest says ")
    truncated = one_error(cce(env, consumer, "sync", "pull", "--commit", "1" * 40))
    assert "artifact" in truncated
    assert not (consumer / ".cce" / "index.cce").exists()

    unreachable = tmp_path / "elsewhere"
    unreachable.mkdir()
    ok(cce(env, unreachable, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "x"))
    cfg = unreachable / ".cce" / "config"
    cfg.write_text(cfg.read_text().replace(url, f"file://{tmp_path}/missing.git"), encoding="utf-8")
    assert one_error(cce(env, unreachable, "sync", "pull", "--latest")).startswith("error: could not clone remote ")


# --------------------------------------------------------------------------- list


def seed(env: dict[str, str], url: str, tmp_path: Path, files: dict[str, bytes]) -> None:
    work = tmp_path / "seed"
    git(env, tmp_path, "clone", "-q", url, str(work))
    for rel, data in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_bytes(data)
    git(env, work, "add", "-A")
    git(env, work, "commit", "-q", "-m", "seed")
    git(env, work, "push", "-q", "origin", "HEAD:main")
    shutil.rmtree(work)


def test_list_goldens(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    anywhere = tmp_path / "anywhere"
    anywhere.mkdir()
    assert ok(cce(env, anywhere, "sync", "list", "--remote", url)) == (
        f"remote        : {url}\n\nThe cache is empty — nothing has been pushed yet.\n")
    seed(env, url, tmp_path, {
        "hash/2.3/aaa__one/1111111.cce": b"AA\n", "hash/2.3/aaa__one/2222222.cce": b"BBBB\n",
        "hash/2.3/aaa__one/refs/main": b"2222222\n", "hash/2.3/aaa__one/README.md": b"junk\n",
        "hash/2.3/aaa__one/no-extension": b"junk", "hash/2.3/aaa__one/nested/deadbee.cce": b"CCCCC\n",
        "hash/2.3/bbb__two/3333333.cce": b"D\n",
    })
    assert ok(cce(env, anywhere, "sync", "list", "--remote", url)) == (
        f"remote        : {url}\n\n"
        "repo_id   latest   artifacts  bytes\n"
        "aaa__one  2222222          3     14\n"
        "bbb__two  -                1      2\n"
        "\ntotal         : 2 repos, 4 artifacts, 16 bytes\n")
    body = json.loads(ok(cce(env, anywhere, "sync", "list", "--remote", url, "--json")))
    assert body == {"remote": url, "schema": "cce.synclist/v1", "repos": [
        {"artifacts": 3, "bytes": 14, "latest_sha": "2222222", "repo_id": "aaa__one"},
        {"artifacts": 1, "bytes": 2, "latest_sha": None, "repo_id": "bbb__two"}]}
    assert not (anywhere / ".cce").exists()  # read-only: nothing written under the root


def test_list_names_the_ref_of_a_single_non_main_pointer(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    seed(env, url, tmp_path, {
        "hash/2.3/aaa__one/1111111.cce": b"AAA", "hash/2.3/aaa__one/refs/main": b"1111111\n",
        "hash/2.3/aaa__one/refs/master": b"1111111\n",
        "hash/2.3/mmm__solo/2222222.cce": b"BBB", "hash/2.3/mmm__solo/refs/master": b"2222222\n",
        "hash/2.3/xxx__multi/3333333.cce": b"CCC", "hash/2.3/xxx__multi/refs/develop": b"3333333\n",
        "hash/2.3/xxx__multi/refs/master": b"3333333\n",
    })
    assert ok(cce(env, tmp_path, "sync", "list", "--remote", url)).split("\n", 2)[2] == (
        "repo_id     latest            artifacts  bytes\n"
        "aaa__one    1111111                   1      3\n"
        "mmm__solo   2222222 (master)          1      3\n"
        "xxx__multi  -                         1      3\n"
        "\ntotal         : 3 repos, 3 artifacts, 9 bytes\n")
    rows = json.loads(ok(cce(env, tmp_path, "sync", "list", "--remote", url, "--json")))["repos"]
    assert list(rows[1]) == ["artifacts", "bytes", "latest_sha", "ref", "repo_id"] and rows[1]["ref"] == "master"
    assert "ref" not in rows[0] and "ref" not in rows[2]


# --------------------------------------------------------------------------- concurrency and kills


def test_four_pushes_at_once_all_land(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    sources = []
    for n in range(4):
        src = source_repo(env, tmp_path / f"src{n}", origin=f"https://example.com/acme/repo{n}.git")
        (src / "own.py").write_text(f"def own_{n}():\n    return {n}\n", encoding="utf-8")
        git(env, src, "add", "-A")
        git(env, src, "commit", "-q", "-m", f"own {n}")
        ok(cce(env, src, "sync", "init", "--remote", url, "--no-lfs"))
        sources.append(src)
    procs = [subprocess.Popen([cce_executable(), "sync", "push"], cwd=src, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for src in sources]
    for proc in procs:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    check = tmp_path / "check"
    git(env, tmp_path, "clone", "-q", url, str(check))
    for n, src in enumerate(sources):
        sha = git(env, src, "rev-parse", "HEAD")
        base = check / "hash" / "2.3" / f"example.com__acme__repo{n}"
        assert (base / f"{sha}.cce").is_file() and (base / "refs" / "main").read_text() == f"{sha}\n"


@pytest.mark.slow
def test_kill_during_push_and_pull_never_corrupts(env: dict[str, str], tmp_path: Path, published) -> None:
    url, src, _sha = published
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    ok(cce(env, consumer, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "example.com__acme__demo"))
    ok(cce(env, consumer, "sync", "pull", "--latest"))
    good = search_rows(env, consumer)
    rng = random.Random(7)
    for round_ in range(6):
        (src / f"r{round_}.py").write_text(f"def r{round_}():\n    return {round_}\n", encoding="utf-8")
        git(env, src, "add", "-A")
        git(env, src, "commit", "-q", "-m", f"r{round_}")
        for cwd, args in ((src, ["sync", "push"]), (consumer, ["sync", "pull", "--latest", "--force"])):
            proc = subprocess.Popen([cce_executable(), *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True)
            time.sleep(rng.uniform(0.05, 0.9))
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        # The consumer's store is always a whole store: the old one or the new one, never a torn one. (A
        # kill between staging and the rename may leave the staged `.incoming` file; the next pull clears it.)
        load_store(consumer / ".cce" / "index.cce")
    # After the kills, the remote is consistent and the next push and pull go through.
    ok(cce(env, src, "sync", "push"))
    ok(cce(env, consumer, "sync", "pull", "--latest", "--force"))
    assert not list((consumer / ".cce").glob("*.incoming"))
    assert search_rows(env, consumer) != good  # it moved to the new commits
    ok(cce(env, src, "sync", "verify"))
    # A push killed after sending its objects and before moving the ref leaves them unreachable
    # ("dangling"), which git's own gc collects; what must never appear is a missing or broken object.
    assert git(env, tmp_path, "--git-dir", str(tmp_path / "cache.git"), "fsck", "--no-progress",
               "--no-dangling") == ""


def test_a_local_index_after_a_pull_drops_the_pull_marker(env: dict[str, str], tmp_path: Path, published) -> None:
    url, src, sha = published
    consumer = tmp_path / "consumer"
    git(env, tmp_path, "clone", "-q", str(src), str(consumer))
    ok(cce(env, consumer, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "example.com__acme__demo"))
    ok(cce(env, consumer, "sync", "pull"))
    assert f"local cache   : {sha} (" in ok(cce(env, consumer, "sync", "status"))
    ok(cce(env, consumer, "index", "."))
    # The store is a local build now: no marker claims otherwise, and a pull of another sha needs no --force.
    assert not (consumer / ".cce" / "synced.json").exists()
    assert "local cache   : (none pulled yet)" in ok(cce(env, consumer, "sync", "status"))


def test_status_answers_quickly_while_another_process_holds_the_clone(env: dict[str, str], tmp_path: Path,
                                                                     published) -> None:
    import fcntl

    from cce_core.sync.identity import remote_slug

    url, src, sha = published
    lock = Path(env["CCE_HOME"]) / "sync" / f"{remote_slug(url)}.lock"  # the clone's lock, beside the clone
    assert lock.exists()
    with open(lock, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        status = ok(cce(env, src, "sync", "status"))
        elapsed = time.monotonic() - started
    assert "remote latest : (unreachable: the sync clone lock " in status and "held by another process" in status
    assert elapsed < 60  # the 5 s status wait, not the 600 s a push would wait
    assert f"working tree  : {sha}" in status

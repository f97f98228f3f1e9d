"""Knowledge Sync end to end: `cce knowledge push/pull` and the knowledge parts of `cce sync list/pull --all/verify`.

The harness is tests/test_sync_cli.py's: the installed `cce`, real git, `file://` bare remotes, a private
CCE_HOME and git config per test. Stores come from `cce knowledge index` of real feeds.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import test_sync_cli
from helpers import cce_executable, reference_dir
from test_sync_cli import bare_remote, cce, git, ok, one_error, seed
from test_sync_workspace import tiny_repo

from cce_core.knowledge.store import load_store

env = test_sync_cli.env  # the shared hermetic environment fixture

FEED = reference_dir() / "test" / "fixture" / "knowledge" / "curated.jsonl"
SNAPSHOT = "598e1b3891572bbb"
CHECKSUM = "84284a0ad6981d3c40c4dffd6dbb67d7e000cf6e64ff6e75b321d439ee9f452d"
STORE_SHA256 = "ab66052f618f84693cd229a1926dfb28d2570697d803fa9006281ee584a41110"


def project(tmp_path: Path, name: str, *, corpus: str | None = "fixture", remote: str | None = None,
            retention: str = "all", extra: str = "") -> Path:
    root = tmp_path / name
    (root / ".cce").mkdir(parents=True)
    block = "".join(f"    {k}: {v}\n" for k, v in (("corpus_id", corpus), ("remote", remote),
                                                      ("retention", retention)) if v is not None)
    (root / ".cce" / "config").write_text(f"sync:\n  lfs: false\nknowledge:\n  sync:\n{block}{extra}",
                                          encoding="utf-8")
    return root


def index(env: dict[str, str], root: Path, feed: str | Path = FEED) -> str:
    """`cce knowledge index` of ``feed`` (a path, or the feed's text); the snapshot it wrote."""
    if isinstance(feed, str):
        path = root.parent / f"{root.name}-feed.jsonl"
        path.write_text(feed, encoding="utf-8")
        feed = path
    ok(cce(env, root, "knowledge", "index", str(feed)))
    return (root / ".cce" / "knowledge" / "current").read_text(encoding="utf-8").strip()


def record(n: int, body: str | None = None) -> str:
    return json.dumps({"id": f"kn:{n}", "title": f"Note {n}", "body": body or f"Body number {n}.",
                       "source": "handbook", "updated_at": f"2026-01-0{n + 1}T00:00:00Z"},
                      sort_keys=True, separators=(",", ":")) + "\n"


def remote_files(env: dict[str, str], tmp_path: Path, url: str, prefix: str) -> dict[str, bytes]:
    """Every file under ``prefix`` on the remote's main branch, read through a fresh clone."""
    look = tmp_path / f"look-{time.monotonic_ns()}"
    git(env, tmp_path, "clone", "-q", url, str(look))
    base = look / prefix
    out = {p.relative_to(base).as_posix(): p.read_bytes() for p in base.rglob("*") if p.is_file()} \
        if base.is_dir() else {}
    shutil.rmtree(look)
    return out


def knowledge_files(root: Path) -> dict[str, bytes]:
    base = root / ".cce" / "knowledge"
    return {p.name: p.read_bytes() for p in base.iterdir()} if base.is_dir() else {}


@pytest.fixture
def published(env: dict[str, str], tmp_path: Path) -> tuple[str, Path]:
    """A bare remote carrying the fixture corpus as `fixture`: (url, producer root)."""
    url = bare_remote(env, tmp_path / "cache.git")
    root = project(tmp_path, "producer", remote=url)
    assert index(env, root) == SNAPSHOT
    ok(cce(env, root, "knowledge", "push"))
    return url, root


@pytest.fixture
def two_corpora(env: dict[str, str], tmp_path: Path, published) -> tuple[Path, Path]:
    """`published` plus a one-record `runbooks` corpus; (a consumer that pulled `fixture`, runbooks' producer)."""
    url, _producer = published
    other = project(tmp_path, "other", corpus="runbooks", remote=url)
    index(env, other, record(1))
    ok(cce(env, other, "knowledge", "push"))
    consumer = project(tmp_path, "consumer", remote=url)
    ok(cce(env, consumer, "knowledge", "pull"))
    return consumer, other


# --------------------------------------------------------------------------- push and pull


def test_push_wipe_pull_restores_a_byte_identical_store(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    root = project(tmp_path, "producer", remote=url)
    index(env, root)
    before = knowledge_files(root)
    pushed = ok(cce(env, root, "knowledge", "push"))
    head, pushed_at = pushed.split("  pushed at  : ")
    assert head == (f"Pushed corpus fixture@{SNAPSHOT}\n  key        : knowledge/v1/fixture/{SNAPSHOT}.cck\n"
                    f"  checksum   : {CHECKSUM}\n  records    : 2 · chunks : 2\n"
                    "  data as-of : 2026-02-01T10:00:00Z\n")
    assert pushed_at.endswith("Z\n") and "T" in pushed_at

    on_remote = remote_files(env, tmp_path, url, "knowledge/v1/fixture")
    assert sorted(on_remote) == ["598e1b3891572bbb.cck", "corpus.json", "current"]
    assert on_remote["current"] == f"{SNAPSHOT}\n".encode()
    assert hashlib.sha256(on_remote[f"{SNAPSHOT}.cck"]).hexdigest() != CHECKSUM  # the checksum covers checksum=""
    assert on_remote[f"{SNAPSHOT}.cck"].startswith(f'{{"checksum":"{CHECKSUM}"'.encode())
    assert b"[REDACTED:SECRET]" in on_remote[f"{SNAPSHOT}.cck"] and b"s3cr3tvalue123" not in on_remote[
        f"{SNAPSHOT}.cck"]
    meta = json.loads(on_remote["corpus.json"])
    assert on_remote["corpus.json"] == (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode()
    assert meta == {"chunk_count": 2, "corpus_id": "fixture", "current": SNAPSHOT,
                    "data_as_of": "2026-02-01T10:00:00Z", "pushed_at": pushed_at.strip(), "records": 2,
                    "schema": "cce.knowledgemeta/v1"}

    shutil.rmtree(root / ".cce" / "knowledge")
    assert ok(cce(env, root, "knowledge", "pull")) == (
        f"Pulled corpus fixture@{SNAPSHOT}\n  records  : 2 · chunks : 2\n  checksum : {CHECKSUM}\n"
        f"  store    : ./.cce/knowledge/{SNAPSHOT}.json\n")
    after = knowledge_files(root)
    marker = after.pop("synced.json")
    assert after == before
    assert marker == json.dumps({"corpus_id": "fixture", "snapshot": SNAPSHOT, "checksum": CHECKSUM,
                                 "installed_sha256": STORE_SHA256}, separators=(",", ":")).encode()


def test_a_fresh_consumer_pulls_with_flags_only(env: dict[str, str], tmp_path: Path, published) -> None:
    url, producer = published
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    out = ok(cce(env, tmp_path, "knowledge", "pull", "--corpus", "fixture", "--remote", url, "--latest",
                 "--dir", consumer))
    assert out.startswith(f"Pulled corpus fixture@{SNAPSHOT}\n")
    assert out.endswith(f"  store    : {consumer}/.cce/knowledge/{SNAPSHOT}.json\n")
    assert (consumer / ".cce" / "knowledge" / f"{SNAPSHOT}.json").read_bytes() == \
        (producer / ".cce" / "knowledge" / f"{SNAPSHOT}.json").read_bytes()
    assert (consumer / ".cce" / "knowledge" / "current").read_bytes() == f"{SNAPSHOT}\n".encode()
    # A named snapshot pins it; a snapshot id that is not one is refused before anything is fetched.
    ok(cce(env, consumer, "knowledge", "pull", "--corpus", "fixture", "--remote", url, "--snapshot", SNAPSHOT))
    assert one_error(cce(env, consumer, "knowledge", "pull", "--corpus", "fixture", "--remote", url,
                         "--snapshot", "../x")).startswith("error: invalid knowledge snapshot id '../x'")
    assert one_error(cce(env, consumer, "knowledge", "pull", "--corpus", "fixture", "--remote", url,
                         "--snapshot", "00000000000000aa")) == (
        "error: cache miss: knowledge/v1/fixture/00000000000000aa.cck not found on the remote")
    usage = cce(env, consumer, "knowledge", "pull", "--latest", "--snapshot", SNAPSHOT)
    assert usage.returncode == 2 and "--latest cannot be used with --snapshot" in usage.stderr


def test_refusals_are_one_line_and_come_before_any_remote_work(env: dict[str, str], tmp_path: Path) -> None:
    unreachable = f"file://{tmp_path}/nowhere.git"
    root = project(tmp_path, "p", corpus=None, remote=unreachable)
    assert one_error(cce(env, root, "knowledge", "push")) == (
        "error: no local knowledge store under ./.cce/knowledge (`current` missing) — run "
        "`cce knowledge index <feed.jsonl>` first")
    index(env, root)
    assert one_error(cce(env, root, "knowledge", "push")) == (
        "error: cannot determine corpus_id: pass --corpus <id> or set `knowledge.sync.corpus_id` in .cce/config "
        "(a corpus identity is never derived)")
    for bad in ("..", ".", "has space", "has/slash", "emoji✨", ""):
        for verb in ("push", "pull"):
            line = one_error(cce(env, root, "knowledge", verb, "--corpus", bad))
            assert line.startswith(f"error: invalid corpus_id `{bad}`: must be non-empty, charset [A-Za-z0-9._-], "
                                   "and a single path segment"), line
    assert not (Path(env["CCE_HOME"]) / "sync").exists(), "an invalid corpus id must not reach the remote"
    bare = project(tmp_path, "bare")
    index(env, bare)
    assert one_error(cce(env, bare, "knowledge", "push")) == (
        "error: no sync remote configured — run `cce sync init --remote <git-url>`, set `knowledge.sync.remote` in "
        ".cce/config, or pass --remote <url>")
    url = bare_remote(env, tmp_path / "cache.git")
    assert one_error(cce(env, bare, "knowledge", "pull", "--remote", url)) == (
        "error: no `current` pointer for corpus fixture on the remote — has anything been pushed? "
        "(`cce knowledge push --corpus fixture`)")
    assert (bare / ".cce" / "knowledge" / "current").read_text() == f"{SNAPSHOT}\n", "local store untouched"


# --------------------------------------------------------------------------- the push guard


def test_shrink_guard_dry_run_and_force(env: dict[str, str], tmp_path: Path, published) -> None:
    url, root = published
    shrunk = index(env, root, FEED.read_text(encoding="utf-8").split("\n")[0] + "\n")
    assert shrunk != SNAPSHOT
    report = (f"Corpus fixture — outgoing {shrunk} vs remote current {SNAPSHOT}\n"
              "  records : 1 local · 2 remote\n  added   : 0\n  removed : 1 — gh:acme/app#34\n  changed : 0\n")
    before = remote_files(env, tmp_path, url, "knowledge")
    assert ok(cce(env, root, "knowledge", "push", "--dry-run")) == report + "Nothing pushed (--dry-run).\n"
    assert ok(cce(env, root, "knowledge", "push", "--dry-run", "--force")) == report + "Nothing pushed (--dry-run).\n"
    refused = cce(env, root, "knowledge", "push")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr == report + (
        "error: refusing to push: 1 record live on the remote would be dropped (the `removed` list above). Pass "
        "--force to shrink corpus fixture, or --dry-run to inspect without pushing.\n")
    assert remote_files(env, tmp_path, url, "knowledge") == before, "dry-run and refusal change nothing"
    assert ok(cce(env, root, "knowledge", "push", "--force")).startswith(f"Pushed corpus fixture@{shrunk}\n")
    assert remote_files(env, tmp_path, url, "knowledge/v1/fixture")["current"] == f"{shrunk}\n".encode()
    # Growing again adds records: never blocked, and the dry-run says what is new.
    index(env, root)
    assert ok(cce(env, root, "knowledge", "push", "--dry-run")).split("\n")[1:5] == [
        "  records : 2 local · 1 remote", "  added   : 1 — gh:acme/app#34", "  removed : 0", "  changed : 0"]
    ok(cce(env, root, "knowledge", "push"))
    assert ok(cce(env, root, "knowledge", "push", "--dry-run")) == (
        f"Dry-run: corpus fixture@{SNAPSHOT} — the remote `current` already names this snapshot; a push would "
        "re-publish it unchanged.\nNothing pushed (--dry-run).\n")


def test_a_first_publish_dry_run_pushes_nothing(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    root = project(tmp_path, "p", remote=url)
    index(env, root)
    assert ok(cce(env, root, "knowledge", "push", "--dry-run")) == (
        f"Dry-run: corpus fixture@{SNAPSHOT} — no remote `current` pointer; this would be the first publish "
        "(2 records · 2 chunks).\nNothing pushed (--dry-run).\n")
    assert remote_files(env, tmp_path, url, "knowledge") == {}


def test_the_same_snapshot_with_other_content_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    """Reference #113: the snapshot id hashes the feed only; another section budget gives other bytes."""
    url = bare_remote(env, tmp_path / "cache.git")
    feed = json.dumps({"id": "kn:1", "title": "Note", "body": "## A\n\nAlpha.\n\n## B\n\nBeta.\n\n## C\n\nGamma.",
                       "source": "handbook"}) + "\n"
    whole = project(tmp_path, "whole", remote=url, extra="markdown:\n  max_section_tokens: 100000\n")
    split = project(tmp_path, "split", remote=url, extra="markdown:\n  max_section_tokens: 1\n")
    snapshot = index(env, whole, feed)
    assert index(env, split, feed) == snapshot
    assert len(load_store(split).chunks) > len(load_store(whole).chunks)
    ok(cce(env, whole, "knowledge", "push"))
    ok(cce(env, whole, "knowledge", "push"))  # the very same bytes again: an idempotent re-publish
    line = one_error(cce(env, split, "knowledge", "push"))
    assert line.startswith(f"error: push guard: corpus fixture@{snapshot} is already published with DIFFERENT "
                           "content (remote checksum ")
    assert line.endswith("Pass --force to overwrite the published snapshot.")
    dry = ok(cce(env, split, "knowledge", "push", "--dry-run"))
    assert dry.endswith("A real `--force` push would overwrite it.\nNothing pushed (--dry-run).\n")
    cck = f"{snapshot}.cck"
    assert b'"chunk_count":1,' in remote_files(env, tmp_path, url, "knowledge/v1/fixture")[cck]
    ok(cce(env, split, "knowledge", "push", "--force"))
    assert b'"chunk_count":1,' not in remote_files(env, tmp_path, url, "knowledge/v1/fixture")[cck]


def test_an_unreadable_remote_current_blocks_the_guard_not_force(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    seed(env, url, tmp_path, {"knowledge/v1/fixture/current": b"00000000000000aa\n",
                              "knowledge/v1/fixture/00000000000000aa.cck": b"garbage\n"})
    root = project(tmp_path, "p", remote=url)
    index(env, root)
    line = one_error(cce(env, root, "knowledge", "push"))
    assert line.startswith("error: push guard: could not verify the remote's current snapshot "
                           "(fixture@00000000000000aa) — knowledge/v1/fixture/00000000000000aa.cck: bad manifest JSON")
    assert line.endswith("Refusing to replace a corpus the guard cannot read. Pass --force to push without the guard.")
    ok(cce(env, root, "knowledge", "push", "--force"))


# --------------------------------------------------------------------------- retention


def test_keep_last_two_prunes_the_oldest_and_keeps_current(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    root = project(tmp_path, "p", remote=url, retention="keep-last-2")
    snapshots, reports = [], []
    for n in range(4):
        snapshots.append(index(env, root, record(n)))
        # Each feed replaces the record, so every push is a deliberate shrink.
        reports.append(ok(cce(env, root, "knowledge", "push", "--force")))
    assert ["retention" in r for r in reports] == [False, False, True, True]
    assert reports[2].endswith("  retention  : pruned 1 snapshot (keep-last-2)\n")
    files = remote_files(env, tmp_path, url, "knowledge/v1/fixture")
    assert sorted(files) == sorted([f"{snapshots[2]}.cck", f"{snapshots[3]}.cck", "corpus.json", "current"])
    assert files["current"] == f"{snapshots[3]}\n".encode()


def test_retention_never_reaches_another_corpus(env: dict[str, str], tmp_path: Path) -> None:
    """`prod` and `production` share a prefix as text, not as a key segment (reference #121)."""
    url = bare_remote(env, tmp_path / "cache.git")
    other = project(tmp_path, "other", corpus="production", remote=url)
    for n in range(2):
        index(env, other, record(n))
        ok(cce(env, other, "knowledge", "push", "--force"))
    root = project(tmp_path, "p", corpus="prod", remote=url, retention="keep-last-0")
    for n in range(2):
        index(env, root, record(n, "other text"))
        ok(cce(env, root, "knowledge", "push", "--force"))
    assert len([k for k in remote_files(env, tmp_path, url, "knowledge/v1/production") if k.endswith(".cck")]) == 2
    assert len([k for k in remote_files(env, tmp_path, url, "knowledge/v1/prod") if k.endswith(".cck")]) == 1


def test_the_delete_site_refuses_keys_outside_the_corpus() -> None:
    from cce_core.foundation.errors import CceError
    from cce_core.sync.knowledge_service import confine_to_corpus

    confine_to_corpus(["knowledge/v1/prod/0123456789abcdef.cck"], "prod")
    for key in ("knowledge/v1/production/0123456789abcdef.cck", "knowledge/v1/prod", "hash/2.3/prod/x.cce"):
        with pytest.raises(CceError, match="retention refused"):
            confine_to_corpus([key], "prod")


# --------------------------------------------------------------------------- sync list


CORPUS_META = b"""{
  "chunk_count": 9,
  "corpus_id": "internal-tickets",
  "current": "9f1c2a3b4c5d6e7f",
  "data_as_of": "2026-07-01T09:00:00Z",
  "pushed_at": "2026-07-08T03:00:00Z",
  "records": 2,
  "schema": "cce.knowledgemeta/v1"
}
"""
SEED_C = {
    "hash/2.3/aaa__one/1111111.cce": b"AA\n", "hash/2.3/aaa__one/refs/main": b"1111111\n",
    "knowledge/v1/internal-tickets/9f1c2a3b4c5d6e7f.cck": b"NEWCORPUS\n",
    "knowledge/v1/internal-tickets/0000000011111111.cck": b"OLD\n",
    "knowledge/v1/internal-tickets/current": b"9f1c2a3b4c5d6e7f\n",
    "knowledge/v1/internal-tickets/corpus.json": CORPUS_META,
    "knowledge/v1/runbooks/aaaabbbbccccdddd.cck": b"R\n",
}
KNOWLEDGE_SECTION = ("\nknowledge:\n"
                     "corpus_id         current           snapshots  bytes  data as-of\n"
                     "internal-tickets  9f1c2a3b4c5d6e7f          2     14  2026-07-01T09:00:00Z\n"
                     "runbooks          -                         1      2  -\n")


def test_list_goldens_with_a_knowledge_section(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    seed(env, url, tmp_path, SEED_C)
    anywhere = tmp_path / "anywhere"
    anywhere.mkdir()
    assert ok(cce(env, anywhere, "sync", "list", "--remote", url)) == (
        f"remote        : {url}\n\n"
        "repo_id   latest   artifacts  bytes\n"
        "aaa__one  1111111          1      3\n\n"
        "total         : 1 repo, 1 artifact, 3 bytes\n" + KNOWLEDGE_SECTION)
    assert ok(cce(env, anywhere, "sync", "list", "--remote", url, "--json")) == f"""{{
  "knowledge": [
    {{
      "bytes": 14,
      "corpus_id": "internal-tickets",
      "current": "9f1c2a3b4c5d6e7f",
      "data_as_of": "2026-07-01T09:00:00Z",
      "pushed_at": "2026-07-08T03:00:00Z",
      "snapshots": 2
    }},
    {{
      "bytes": 2,
      "corpus_id": "runbooks",
      "current": null,
      "data_as_of": null,
      "pushed_at": null,
      "snapshots": 1
    }}
  ],
  "remote": "{url}",
  "repos": [
    {{
      "artifacts": 1,
      "bytes": 3,
      "latest_sha": "1111111",
      "repo_id": "aaa__one"
    }}
  ],
  "schema": "cce.synclist/v1"
}}
"""
    assert list(anywhere.iterdir()) == [], "list writes nothing locally"


def test_a_knowledge_only_cache_lists_its_corpora(env: dict[str, str], tmp_path: Path, published) -> None:
    url, root = published
    text = ok(cce(env, root, "sync", "list", "--remote", url))
    assert text.startswith(f"remote        : {url}\n\nNo code repos cached — the cache carries only knowledge "
                           "corpora.\n\nknowledge:\ncorpus_id  current           snapshots  bytes  data as-of\n"
                           f"fixture    {SNAPSHOT}          1  ")
    assert text.endswith("  2026-02-01T10:00:00Z\n")
    body = json.loads(ok(cce(env, root, "sync", "list", "--remote", url, "--json")))
    assert body["repos"] == [] and body["knowledge"][0]["current"] == SNAPSHOT


# --------------------------------------------------------------------------- consumer mode


def test_pull_all_installs_the_only_corpus_and_refreshes_idempotently(env: dict[str, str], tmp_path: Path,
                                                                      published) -> None:
    url, producer = published
    sha = tiny_repo(env, url, tmp_path / "alpha", "acme__alpha", {"a.py": "def rocket():\n    return 1\n"})
    into = tmp_path / "ctx"
    first = ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", into, "--remote", url))
    rows = first.split("\n")[2:5]
    assert rows[0].startswith(f"  alpha            pulled      acme__alpha@{sha}  chunks ")
    assert rows[1:] == [f"  knowledge        pulled      fixture@{SNAPSHOT}  → .cce/knowledge/", ""]
    assert first.endswith("summary       : 1 pulled · 0 up-to-date · 0 skipped\n")
    assert (into / ".cce" / "knowledge" / f"{SNAPSHOT}.json").read_bytes() == \
        (producer / ".cce" / "knowledge" / f"{SNAPSHOT}.json").read_bytes()
    stamp = (into / ".cce" / "knowledge" / f"{SNAPSHOT}.json").stat().st_mtime_ns
    second = ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", into))
    assert f"  knowledge        up-to-date  fixture@{SNAPSHOT}\n" in second
    assert (into / ".cce" / "knowledge" / f"{SNAPSHOT}.json").stat().st_mtime_ns == stamp

    # The corpus moves on: only the corpus is refreshed.
    moved = index(env, producer, FEED.read_text(encoding="utf-8") + record(5))
    ok(cce(env, producer, "knowledge", "push"))
    third = ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", into))
    assert f"  knowledge        pulled      fixture@{moved}  → .cce/knowledge/\n" in third
    assert "  alpha            up-to-date  " in third
    assert (into / ".cce" / "knowledge" / "current").read_text() == f"{moved}\n"

    # The consumer root verifies its members and its corpus, offline.
    report = ok(cce(env, into, "sync", "verify", "--checksum-only"))
    assert report.startswith("verify OK (checksum-only): 1 member\n  alpha            acme__alpha@")
    installed = hashlib.sha256((into / ".cce" / "knowledge" / f"{moved}.json").read_bytes()).hexdigest()
    assert report.endswith(f"  knowledge        fixture@{moved}  ({installed[:12]})\n")
    store = into / ".cce" / "knowledge" / f"{moved}.json"
    store.write_bytes(store.read_bytes().replace(b"Body number 5.", b"Body number 6."))
    failed = cce(env, into, "sync", "verify", "--checksum-only")
    assert failed.returncode == 1
    assert failed.stdout.startswith(f"verify FAILED (checksum-only) for knowledge corpus `fixture` (@{moved})\n"
                                    f"  expected : {installed}\n")
    assert "NO rebuild-verify escalation path" in failed.stdout


def test_pull_all_picks_a_corpus_only_when_told_which(env: dict[str, str], tmp_path: Path, published) -> None:
    url, _producer = published
    other = project(tmp_path, "other", corpus="runbooks", remote=url)
    runbooks = index(env, other, record(1))
    ok(cce(env, other, "knowledge", "push"))
    into = tmp_path / "ctx"
    head = f"remote        : {url}\n\nNo code repos cached — the cache carries only knowledge corpora.\n\n"
    assert ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", into, "--remote", url)) == head + (
        "  warning: skipped knowledge — the cache carries 2 corpora (fixture, runbooks); one active corpus per root "
        "— pass --corpus <id> to install one\n")
    assert not (into / ".cce" / "knowledge").exists()
    assert ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", into, "--remote", url, "--corpus", "nope")) == (
        head + "  warning: skipped knowledge — corpus `nope` is not in the cache (it carries: fixture, runbooks)\n")
    assert ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", into, "--remote", url, "--corpus",
                  "runbooks")) == head + f"  knowledge        pulled      runbooks@{runbooks}  → .cce/knowledge/\n"
    # One active corpus per root: the other corpus is not swapped in behind the user's back.
    assert ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", into, "--remote", url, "--corpus",
                  "fixture")) == head + (
        "  warning: skipped knowledge corpus fixture — the local knowledge store came from corpus `runbooks` but "
        "you are pulling `fixture`. Pass --force to replace it (one active corpus per root).\n")
    assert ok(cce(env, into, "sync", "verify", "--checksum-only")).startswith(
        f"verify OK (checksum-only): knowledge corpus runbooks@{runbooks}\n  checksum : ")
    usage = cce(env, tmp_path, "sync", "pull", "--corpus", "fixture")
    assert usage.returncode == 2 and "--corpus requires --all" in usage.stderr


# --------------------------------------------------------------------------- the pull guard and crash safety


def test_one_active_corpus_per_root_and_a_corrupt_marker_arms_the_guard(env: dict[str, str], two_corpora) -> None:
    consumer, other = two_corpora
    runbooks = load_store(other).snapshot
    assert one_error(cce(env, consumer, "knowledge", "pull", "--corpus", "runbooks")) == (
        "error: the local knowledge store came from corpus `fixture` but you are pulling `runbooks`. Pass --force "
        "to replace it (one active corpus per root).")
    marker = consumer / ".cce" / "knowledge" / "synced.json"
    marker.write_bytes(b"")
    assert one_error(cce(env, consumer, "knowledge", "pull", "--corpus", "runbooks")) == (
        "error: the knowledge sync marker ./.cce/knowledge/synced.json is unreadable/corrupt. It records which "
        "corpus is active — pass --force to overwrite it.")
    assert (consumer / ".cce" / "knowledge" / "current").read_text() == f"{SNAPSHOT}\n"
    ok(cce(env, consumer, "knowledge", "pull", "--corpus", "runbooks", "--force"))
    assert json.loads(marker.read_text())["corpus_id"] == "runbooks"
    assert (consumer / ".cce" / "knowledge" / "current").read_text() == f"{runbooks}\n"
    # The same corpus at a newer snapshot supersedes without --force (a refresh).
    newer = index(env, other, record(1) + record(2))
    ok(cce(env, other, "knowledge", "push"))
    ok(cce(env, consumer, "knowledge", "pull", "--corpus", "runbooks"))
    assert (consumer / ".cce" / "knowledge" / "current").read_text() == f"{newer}\n"


def test_a_marker_that_cannot_be_written_leaves_the_active_store(env: dict[str, str], two_corpora) -> None:
    """Reference #122: `current` moves last, after the marker that describes it."""
    consumer, _other = two_corpora
    marker = consumer / ".cce" / "knowledge" / "synced.json"
    marker.unlink()
    marker.mkdir()
    (marker / "wedge").write_text("x")
    line = one_error(cce(env, consumer, "knowledge", "pull", "--corpus", "runbooks", "--force"))
    assert line.startswith("error: could not write the knowledge sync marker: ")
    assert (consumer / ".cce" / "knowledge" / "current").read_text() == f"{SNAPSHOT}\n"
    assert load_store(consumer).snapshot == SNAPSHOT


def test_old_markers_without_an_install_checksum_are_a_notice(env: dict[str, str], tmp_path: Path,
                                                              published) -> None:
    url, _producer = published
    consumer = project(tmp_path, "consumer", remote=url)
    ok(cce(env, consumer, "knowledge", "pull"))
    marker = consumer / ".cce" / "knowledge" / "synced.json"
    old = json.loads(marker.read_text())
    del old["installed_sha256"]
    marker.write_text(json.dumps(old, separators=(",", ":")))
    assert ok(cce(env, consumer, "sync", "verify", "--checksum-only")) == (
        f"verify (checksum-only): knowledge corpus fixture@{SNAPSHOT}: no install checksum recorded (pulled by an "
        "older cce) — re-pull with `cce knowledge pull` to enable checksum verification\n")


@pytest.mark.slow
def test_kill_during_pull_leaves_a_usable_store(env: dict[str, str], two_corpora) -> None:
    consumer, _other = two_corpora
    rng = random.Random(7)
    for n in range(6):
        corpus = ("runbooks", "fixture")[n % 2]
        proc = subprocess.Popen([cce_executable(), "knowledge", "pull", "--corpus", corpus, "--force"],
                                cwd=consumer, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        time.sleep(rng.uniform(0.05, 1.2))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        store = load_store(consumer)  # `current` always names a whole, valid snapshot
        assert store.snapshot == (consumer / ".cce" / "knowledge" / "current").read_text().strip()
    ok(cce(env, consumer, "knowledge", "pull", "--corpus", "fixture", "--force"))
    assert ok(cce(env, consumer, "sync", "verify", "--checksum-only")).startswith(
        f"verify OK (checksum-only): knowledge corpus fixture@{SNAPSHOT}\n")


def test_freshness_for_index_status(env: dict[str, str], tmp_path: Path, two_corpora,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from cce_core.sync.knowledge_service import freshness

    consumer, _runbooks = two_corpora
    producer = tmp_path / "producer"  # `published`'s root, which pushed `fixture`
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert freshness(tmp_path / "nothing-here") is None
    now = freshness(consumer)
    assert now is not None
    assert (now.corpus, now.snapshot, now.records, now.chunks, now.data_as_of, now.remote_current,
            now.behind_remote) == ("fixture", SNAPSHOT, 2, 2, "2026-02-01T10:00:00Z", SNAPSHOT, False)
    moved = index(env, producer, FEED.read_text(encoding="utf-8") + record(5))
    ok(cce(env, producer, "knowledge", "push"))
    later = freshness(consumer)
    assert later is not None and (later.remote_current, later.behind_remote) == (moved, True)
    # A local ingest over the pulled store is no longer "from the corpus".
    index(env, consumer, record(3))
    local = freshness(consumer)
    assert local is not None and local.corpus is None and local.behind_remote


def test_marker_bytes_and_the_diff_list_elision() -> None:
    from cce_core.sync.knowledge_service import KnowledgeMarker, format_ids
    from cce_core.sync.service import SyncMarker

    assert KnowledgeMarker("c1", "9f1c2a3b4c5d6e7f", checksum="abc", installed_sha256="def").to_bytes() == (
        b'{"corpus_id":"c1","snapshot":"9f1c2a3b4c5d6e7f","checksum":"abc","installed_sha256":"def"}')
    assert KnowledgeMarker("c1", "s", checksum="abc").to_bytes() == (
        b'{"corpus_id":"c1","snapshot":"s","checksum":"abc"}')
    assert SyncMarker("r", "a", checksum="c").to_bytes() == b'{"repo_id":"r","sha":"a","checksum":"c"}'
    marker = KnowledgeMarker("c1", "s", checksum="x", installed_sha256="y")
    assert KnowledgeMarker.from_json(json.loads(marker.to_bytes())) == marker
    assert KnowledgeMarker.from_json({"corpus_id": "c1", "snapshot": 3, "checksum": "x"}) is None
    assert format_ids([]) == "0"
    assert format_ids([f"kn:{i:02d}" for i in range(25)]) == (
        "25 — " + ", ".join(f"kn:{i:02d}" for i in range(20)) + " … and 5 more")

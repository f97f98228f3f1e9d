"""CCE Sync wired into the agent path: ``cce init --remote``, the MCP start-up pull, ``index_status`` freshness.

Everything runs the installed ``cce`` against real git and ``file://`` bare
remotes, with the hermetic environment of :mod:`test_sync_cli` (own CCE_HOME,
own git config, no network). The MCP server is driven by the official SDK's
stdio client, as :mod:`test_mcp` does, plus one raw piped run where the exact
bytes on stdout and stderr matter.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import cce_executable
from test_init import MCP_JSON, NEXT_STEPS
from test_sync_cli import bare_remote, cce, env, git, ok, one_error, published, source_repo

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'mcp>=2.3,<3')")

from test_mcp import McpClient  # only once the SDK is known to be there

__all__ = ["env", "published"]  # fixtures, imported so that pytest finds them here

REPO_ID = "example.com__acme__demo"
ORIGIN = "https://example.com/acme/demo.git"
PULLED_LINE = "  index     : pulled from sync remote (cce sync pull --latest)\n"
PURE_LOCAL = "  remote  : (no sync remote configured — pure local)\n"
BEHIND = "  behind remote: yes — run `cce sync pull --latest`\n"


def report(index_line: str, *, gitignore: bool = True) -> str:
    """The whole ``cce init`` report for a project set up in ``.``."""
    out = "CCE is wired up for Claude Code.\n" + index_line
    out += '  .mcp.json : ./.mcp.json (server "cce")\n  CLAUDE.md : ./CLAUDE.md (context_search guidance)\n'
    if gitignore:
        out += "  .gitignore: ./.gitignore (ignores .cce/ cache)\n"
    return out + NEXT_STEPS


def consumer_of(env: dict[str, str], tmp_path: Path, src: Path, name: str = "consumer") -> Path:
    """A clone of ``src`` whose origin names the same repo id the producer pushed under."""
    dest = tmp_path / name
    git(env, tmp_path, "clone", "-q", str(src), str(dest))
    git(env, dest, "remote", "set-url", "origin", ORIGIN)
    return dest


def push_new_commit(env: dict[str, str], src: Path) -> str:
    """Commit one more file in the producer and push its index; the new sha."""
    (src / "extra.py").write_text("def added_later():\n    return 42\n", encoding="utf-8")
    git(env, src, "add", "-A")
    git(env, src, "commit", "-q", "-m", "more")
    ok(cce(env, src, "sync", "push"))
    return git(env, src, "rev-parse", "HEAD")


def sync_config(url: str, *, auto_pull: bool) -> str:
    """A project config with a sync remote (no LFS), as the reference's MCP tests write it."""
    return (f"sync:\n  remote: {url}\n  lfs: false\n  repo_id: {REPO_ID}\n  auto_pull: {str(auto_pull).lower()}\n"
            "  retention: all\n")


def write_config(root: Path, text: str) -> None:
    (root / ".cce").mkdir(exist_ok=True)
    (root / ".cce" / "config").write_text(text, encoding="utf-8")


def marker_sha(root: Path) -> str:
    return json.loads((root / ".cce" / "synced.json").read_text(encoding="utf-8"))["sha"]


def freshness(text: str) -> str:
    """The freshness lines at the end of an ``index_status`` answer (from ``  source  :`` on)."""
    start = text.index("  source  : ")
    return text[start:]


def snapshot(root: Path) -> dict[str, bytes | None]:
    """What ``cce init`` may write, so a failed run can be shown to have written none of it."""
    names = (".mcp.json", "CLAUDE.md", ".gitignore", ".cce/config", ".cce/index.cce", ".cce/synced.json")
    return {name: (root / name).read_bytes() if (root / name).exists() else None for name in names}


# --------------------------------------------------------------------------- cce init --remote


def test_init_remote_pulls_the_index_and_wires_the_project_up(env: dict[str, str], tmp_path: Path,
                                                              published) -> None:
    url, src, sha = published
    consumer = consumer_of(env, tmp_path, src)
    done = cce(env, consumer, "init", "--remote", url)
    assert ok(done) == report(PULLED_LINE)
    assert done.stderr == ""  # the sync init report is not repeated: the init report says it all

    assert marker_sha(consumer) == sha
    assert (consumer / ".cce" / "index.cce").is_file()
    assert (consumer / ".mcp.json").read_text(encoding="utf-8") == MCP_JSON
    assert "<!-- BEGIN CCE MCP -->" in (consumer / "CLAUDE.md").read_text(encoding="utf-8")
    # Configured like `cce sync init`, git-LFS on (the default), the repo id taken from origin.
    assert (consumer / ".cce" / "config").read_text(encoding="utf-8") == (
        f"sync:\n  remote: {url}\n  lfs: true\n  repo_id: {REPO_ID}\n  auto_pull: false\n  retention: all\n")
    attributes = git(env, tmp_path, "--git-dir", str(tmp_path / "cache.git"), "show", "main:.gitattributes")
    assert "*.cce filter=lfs diff=lfs merge=lfs -text" in attributes
    events = [json.loads(line) for line in (consumer / ".cce" / "metrics.jsonl").read_text().splitlines()]
    assert [(e["event"], e["source"], e["sha"]) for e in events] == [("index", "sync-pull", sha)]
    assert ".cce" not in git(env, consumer, "status", "--porcelain")  # the pulled cache stays out of git

    # Re-run without the flag: the configured remote is pulled again (same sha), every file unchanged.
    before = snapshot(consumer)
    again = cce(env, consumer, "init")
    assert ok(again) == report(PULLED_LINE) and again.stderr == ""
    assert snapshot(consumer) == before


def test_init_remote_honours_the_overwrite_guard_unless_forced(env: dict[str, str], tmp_path: Path,
                                                               published) -> None:
    url, src, sha = published
    consumer = consumer_of(env, tmp_path, src)
    ok(cce(env, consumer, "init", "--remote", url))
    newer = push_new_commit(env, src)

    before = snapshot(consumer)
    refused = one_error(cce(env, consumer, "init", "--remote", url))
    assert refused == (f"error: sync pull failed: local cache is at {sha} but you are pulling {newer}. "
                       "Pass --force to overwrite.")
    assert snapshot(consumer) == before

    forced = cce(env, consumer, "init", "--remote", url, "--force")
    assert ok(forced) == report(PULLED_LINE)
    assert marker_sha(consumer) == newer


def test_an_explicit_remote_that_fails_is_one_error_and_writes_nothing(env: dict[str, str],
                                                                       tmp_path: Path) -> None:
    project = source_repo(env, tmp_path / "proj")
    write_config(project, "output:\n  level: lite\n")
    before = snapshot(project)

    missing = one_error(cce(env, project, "init", "--remote", f"file://{tmp_path}/missing.git"))
    assert missing.startswith(f"error: could not clone remote file://{tmp_path}/missing.git: ")
    assert snapshot(project) == before  # the config the step rewrote is put back byte for byte

    empty = bare_remote(env, tmp_path / "empty.git")
    nothing = one_error(cce(env, project, "init", "--remote", empty))
    assert nothing == f"error: sync pull failed: no `--latest` pointer for {REPO_ID} on `main`"
    assert snapshot(project) == before

    # Without a config before, none is left behind, nor the .cce directory made for it.
    fresh = source_repo(env, tmp_path / "fresh")
    one_error(cce(env, fresh, "init", "--remote", empty))
    assert not (fresh / ".cce").exists()
    assert not (fresh / ".mcp.json").exists() and not (fresh / "CLAUDE.md").exists()

    assert one_error(cce(env, fresh, "init", "--remote", " ")) == (
        "error: --remote needs the URL of a sync remote (a git repository)")
    assert not (fresh / ".cce").exists()


def test_a_configured_remote_that_fails_falls_back_to_a_local_build(env: dict[str, str], tmp_path: Path,
                                                                    published) -> None:
    url, src, _sha = published
    local = consumer_of(env, tmp_path, src, "local")
    built = ok(cce(env, local, "init"))  # no remote anywhere: today's local build
    index_line = built.split("\n")[1] + "\n"
    assert index_line.startswith("  index     : built ")

    unreachable = consumer_of(env, tmp_path, src, "unreachable")
    write_config(unreachable, sync_config(f"file://{tmp_path}/missing.git", auto_pull=False))
    done = cce(env, unreachable, "init")
    assert ok(done) == report(index_line)
    warning = done.stderr.strip("\n").split("\n")
    assert len(warning) == 1
    assert warning[0].startswith(f"warning: sync pull failed: could not clone remote file://{tmp_path}/missing.git")
    assert warning[0].endswith(" — built the index locally instead")
    assert (unreachable / ".cce" / "index.cce").is_file()
    assert not (unreachable / ".cce" / "synced.json").exists()

    # Reachable, but nothing published for this repo: the same fallback.
    unpublished = consumer_of(env, tmp_path, src, "unpublished")
    write_config(unpublished, sync_config(url, auto_pull=False).replace(REPO_ID, "someone-else"))
    done = cce(env, unpublished, "init")
    assert ok(done) == report(index_line)
    # The one line names the ids the cache does hold (a repo-id mismatch is the usual cause).
    assert done.stderr == ("warning: sync pull failed: no `--latest` pointer for someone-else on `main` — the cache "
                           f"holds nothing under that repo id; it holds: {REPO_ID} (pick one with `cce sync init "
                           "--remote <url> --repo-id <id>`) — built the index locally instead\n")


def test_a_local_build_drops_the_marker_of_the_store_it_replaced(env: dict[str, str], tmp_path: Path,
                                                                 published) -> None:
    url, src, sha = published
    consumer = consumer_of(env, tmp_path, src)
    ok(cce(env, consumer, "init", "--remote", url))
    push_new_commit(env, src)
    # The configured remote moved on: without --force the guard refuses, and the local build takes over.
    done = cce(env, consumer, "init")
    assert "  index     : built " in ok(done)
    assert done.stderr.startswith(f"warning: sync pull failed: local cache is at {sha} but you are pulling ")
    assert not (consumer / ".cce" / "synced.json").exists()


# --------------------------------------------------------------------------- cce mcp start-up pull


def test_mcp_auto_pull_pulls_before_serving_and_reports_freshness(env: dict[str, str], tmp_path: Path,
                                                                  published) -> None:
    url, src, sha = published
    consumer = consumer_of(env, tmp_path, src)
    write_config(consumer, sync_config(url, auto_pull=True))
    client = McpClient("--dir", consumer, env=env)
    try:
        text = client.text("index_status")
        assert text.startswith(f"Index status\n  store   : {consumer / '.cce' / 'index.cce'}\n  indexed : yes\n")
        assert freshness(text) == (f"  source  : pulled via cce sync (sha {sha[:12]})\n"
                                   f"  remote latest: {sha[:12]}\n  behind remote: no\n")
        assert marker_sha(consumer) == sha
        assert "Loader" in client.text("context_search", {"query": "Loader load"})

        newer = push_new_commit(env, src)
        assert freshness(client.text("index_status")) == (f"  source  : pulled via cce sync (sha {sha[:12]})\n"
                                                          f"  remote latest: {newer[:12]}\n" + BEHIND)
    finally:
        client.close()

    # The next start-up pull does not force: the pulled store stays at its sha until the user replaces it.
    client = McpClient("--dir", consumer, env=env)
    try:
        assert freshness(client.text("index_status")).endswith(BEHIND)
        assert marker_sha(consumer) == sha
    finally:
        client.close()


def test_without_auto_pull_the_server_does_not_pull(env: dict[str, str], tmp_path: Path, published) -> None:
    url, src, _sha = published
    consumer = consumer_of(env, tmp_path, src)
    write_config(consumer, sync_config(url, auto_pull=False))
    client = McpClient("--dir", consumer, env=env)
    try:
        store = consumer / ".cce" / "index.cce"
        assert client.text("index_status") == f"not indexed — no store at {store}. Run `cce index` (or `cce init`)."
    finally:
        client.close()
    assert not (consumer / ".cce" / "index.cce").exists()


def piped_index_status(env: dict[str, str], root: Path) -> tuple[str, list[str], subprocess.CompletedProcess[str]]:
    """One raw session (initialize, index_status, EOF): the tool's text, stderr's lines, the process."""
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "index_status", "arguments": {}}},
    ]
    done = subprocess.run([cce_executable(), "mcp", "--dir", str(root)], env=env, capture_output=True, text=True,
                          input="".join(json.dumps(m) + "\n" for m in messages), timeout=120, check=False)
    replies = [json.loads(line) for line in done.stdout.splitlines()]  # stdout carries protocol messages only
    assert sorted(r["id"] for r in replies) == [0, 1], done.stdout
    text = next(r for r in replies if r["id"] == 1)["result"]["content"][0]["text"]
    return text, [line for line in done.stderr.split("\n") if line], done


def test_a_broken_remote_never_stops_the_server(env: dict[str, str], tmp_path: Path) -> None:
    project = source_repo(env, tmp_path / "proj")
    ok(cce(env, project, "index", "."))
    write_config(project, sync_config(f"file://{tmp_path}/missing.git", auto_pull=True))

    text, stderr, done = piped_index_status(env, project)
    assert done.returncode == 0
    assert freshness(text) == "  source  : local (built by cce index)\n  remote latest: -\n  behind remote: no\n"
    assert len(stderr) == 1, stderr
    assert stderr[0].startswith(f"warning: sync auto-pull failed: could not clone remote file://{tmp_path}/missing")
    assert stderr[0].endswith(" — serving the local index")

    client = McpClient("--dir", project, env=env)
    try:
        assert "Loader" in client.text("context_search", {"query": "Loader load"})
    finally:
        client.close()

    # Nothing local either: still a server, answering "not indexed".
    bare = tmp_path / "bare"
    bare.mkdir()
    write_config(bare, sync_config(f"file://{tmp_path}/missing.git", auto_pull=True))
    text, stderr, done = piped_index_status(env, bare)
    assert done.returncode == 0 and len(stderr) == 1
    assert text == f"not indexed — no store at {bare / '.cce' / 'index.cce'}. Run `cce index` (or `cce init`)."


# --------------------------------------------------------------------------- index_status freshness


def test_index_status_freshness_lines(env: dict[str, str], tmp_path: Path, published) -> None:
    url, src, sha = published
    # Built locally, a reachable remote: its latest is shown, and a local build is never "behind".
    local = consumer_of(env, tmp_path, src, "local")
    ok(cce(env, local, "index", "."))
    write_config(local, sync_config(url, auto_pull=False))
    text, stderr, _ = piped_index_status(env, local)
    assert freshness(text) == f"  source  : local (built by cce index)\n  remote latest: {sha[:12]}\n" \
                              "  behind remote: no\n"
    assert stderr == []

    # Pulled, then the remote taken out of the config: the source stays, the remote line is the pure-local one.
    pulled = consumer_of(env, tmp_path, src, "pulled")
    ok(cce(env, pulled, "init", "--remote", url))
    write_config(pulled, "output:\n  level: standard\n")
    text, stderr, _ = piped_index_status(env, pulled)
    assert freshness(text) == f"  source  : pulled via cce sync (sha {sha[:12]})\n" + PURE_LOCAL
    assert stderr == []

    # Pure local: the bytes tests/test_mcp.py pins.
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "auth.py").write_text("def hash_password(pw):\n    return pw + 'salt'\n", encoding="utf-8")
    ok(cce(env, plain, "index", "."))
    text, _, _ = piped_index_status(env, plain)
    assert freshness(text) == "  source  : local (built by cce index)\n" + PURE_LOCAL


# --------------------------------------------------------------------------- workspaces


def published_workspace(env: dict[str, str], tmp_path: Path) -> tuple[str, Path, str]:
    """A two-member workspace whose manifest is committed, pushed with ``sync push --workspace``: (url, src, sha)."""
    url = bare_remote(env, tmp_path / "cache.git")
    src = tmp_path / "src"
    for name in ("alpha", "beta"):
        (src / name / "src").mkdir(parents=True)
        (src / name / "package.json").write_text(f'{{"name":"{name}"}}', encoding="utf-8")
        (src / name / "src" / "index.js").write_text(f"function {name}Rocket() {{ return 1; }}\n", encoding="utf-8")
    (src / ".gitignore").write_text(".cce/*\n!.cce/workspace.yml\n", encoding="utf-8")
    git(env, src, "init", "-q", "-b", "main")
    git(env, src, "remote", "add", "origin", ORIGIN)
    ok(cce(env, src, "workspace", "init", "."))
    git(env, src, "add", "-A")
    git(env, src, "commit", "-q", "-m", "init")
    ok(cce(env, src, "sync", "init", "--remote", url, "--no-lfs"))
    ok(cce(env, src, "sync", "push", "--workspace"))
    return url, src, git(env, src, "rev-parse", "HEAD")


def test_a_workspace_is_pulled_member_by_member(env: dict[str, str], tmp_path: Path) -> None:
    url, src, sha = published_workspace(env, tmp_path)
    consumer = consumer_of(env, tmp_path, src)
    assert (consumer / ".cce" / "workspace.yml").is_file()  # committed: the clone is a workspace
    done = cce(env, consumer, "init", "--remote", url)
    assert ok(done) == report(PULLED_LINE).replace("Claude Code.", "Claude Code (workspace).")
    assert json.loads((consumer / ".mcp.json").read_text(encoding="utf-8")) == {
        "mcpServers": {"cce": {"command": "cce", "args": ["mcp", "--workspace"]}}}
    assert marker_sha(consumer / "alpha") == marker_sha(consumer / "beta") == sha

    # The MCP start-up pull of a workspace pulls every member too.
    other = consumer_of(env, tmp_path, src, "other")
    write_config(other, sync_config(url, auto_pull=True))
    client = McpClient("--workspace", "--dir", other, env=env)
    try:
        text = client.text("index_status")
        assert text.startswith("Workspace status: src\n  alpha (package alpha) — files 2, chunks ")
        assert "betaRocket" in client.text("context_search", {"query": "beta rocket"})
    finally:
        client.close()
    assert marker_sha(other / "alpha") == marker_sha(other / "beta") == sha

"""CCE Sync for workspaces, end to end: push/pull --workspace and consumer mode (pull --all --into).

The harness is tests/test_sync_cli.py's: the installed `cce`, real git, `file://` bare remotes, a private
CCE_HOME and git config per test. Reports are pinned line for line (shas and checksums are read from what
was published), because other engines' users read the same text.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import test_sync_cli
from test_sync_cli import bare_remote, cce, git, ok, one_error, seed

from cce_core.sync.artifact import import_artifact
from cce_core.workspace.manifest import load_manifest, manifest_yaml

BASE = "example.com__acme__mono"
WS_GRAPH = '{"members":["alpha","beta"],"edges":[{"from":"alpha","to":"beta","via":"package.json"}]}'
ROCKET = "alpha rocket launch thrust"

env = test_sync_cli.env  # the shared hermetic environment fixture (CCE_HOME, HOME, git config)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def dep_workspace(env: dict[str, str], root: Path) -> Path:
    """A committed two-member workspace where `alpha` depends on `beta` (one edge, via package.json).

    Beta shares no words with the rocket query, so only the edge can bring it into those results.
    """
    write(root / "alpha" / "package.json", '{"name":"alpha","dependencies":{"beta":"1.0.0"}}')
    write(root / "alpha" / "src" / "launch.js",
          "".join(f"function alphaRocketLaunch{n}(thrust) {{\n  return thrust * {i};\n}}\n\n"
                  for i, n in enumerate(("Thrust", "Window", "Abort"), 1)))
    write(root / "beta" / "package.json", '{"name":"beta"}')
    write(root / "beta" / "src" / "dive.js", "function betaSubmarineDive(depth) {\n  return depth + 1;\n}\n")
    git(env, root, "init", "-q", "-b", "main")
    git(env, root, "add", "-A")
    git(env, root, "commit", "-q", "-m", "init")
    return root


def push_workspace(env: dict[str, str], url: str, root: Path, base: str) -> str:
    """`cce workspace init` (the manifest stays untracked under .cce/), `sync init`, `sync push --workspace`."""
    ok(cce(env, root, "workspace", "init", "."))
    ok(cce(env, root, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", base))
    return ok(cce(env, root, "sync", "push", "--workspace"))


def tiny_repo(env: dict[str, str], url: str, root: Path, repo_id: str, files: dict[str, str]) -> str:
    """A one-commit repo pushed as `repo_id`; its sha."""
    for rel, text in files.items():
        write(root / rel, text)
    git(env, root, "init", "-q", "-b", "main")
    git(env, root, "add", "-A")
    git(env, root, "commit", "-q", "-m", "init")
    ok(cce(env, root, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", repo_id))
    ok(cce(env, root, "sync", "push"))
    return git(env, root, "rev-parse", "HEAD")


def marker(member: Path) -> dict[str, str]:
    return json.loads((member / ".cce" / "synced.json").read_text(encoding="utf-8"))


def chk(member: Path) -> str:
    return marker(member)["checksum"][:12]


def packages(env: dict[str, str], root: Path, query: str, *extra: str) -> list[str]:
    body = json.loads(ok(cce(env, root.parent, "search", query, root.name, "--workspace", "--json", "--top-k", "3",
                             *extra)))
    return [r["package"] for r in body["results"]]


def results(env: dict[str, str], root: Path, query: str) -> list[tuple[str, str, str, str]]:
    body = json.loads(ok(cce(env, root.parent, "search", query, root.name, "--workspace", "--json", "--top-k", "3")))
    return [(r["package"], r["file_path"], r["chunk_id"], r["score"]) for r in body["results"]]


def snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under ``root`` with its mtime and bytes: a refresh that changes nothing must touch nothing."""
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted(root.rglob("*")) if p.is_file()}


def remote_blob(env: dict[str, str], tmp_path: Path, key: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(tmp_path / "cache.git"), "show", f"main:{key}"], env=env,
                          capture_output=True, check=True).stdout


# --------------------------------------------------------------------------- push / pull --workspace


def test_push_workspace_then_pull_workspace_into_a_fresh_clone(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    src = dep_workspace(env, tmp_path / "src")
    out = push_workspace(env, url, src, BASE)
    sha = git(env, src, "rev-parse", "HEAD")
    alpha, beta = (_published_chk(env, tmp_path, member, sha) for member in ("alpha", "beta"))
    assert out == (f"Pushing workspace src @ {sha}\n"
                   f"  alpha            hash/2.3/{BASE}__alpha/{sha}.cce  ({alpha})\n"
                   f"  beta             hash/2.3/{BASE}__beta/{sha}.cce  ({beta})\n"
                   f"  metadata         workspace.yml + workspace-graph.json under {BASE} (1 edge)\n")
    # The metadata: the manifest's canonical bytes and the compact graph in struct order, no trailing LF.
    assert remote_blob(env, tmp_path, f"hash/2.3/{BASE}/workspace.yml") == \
        manifest_yaml(load_manifest(src)).encode() == (src / ".cce" / "workspace.yml").read_bytes()
    assert remote_blob(env, tmp_path, f"hash/2.3/{BASE}/workspace-graph.json") == WS_GRAPH.encode()
    for member in ("alpha", "beta"):
        assert remote_blob(env, tmp_path, f"hash/2.3/{BASE}__{member}/refs/main") == f"{sha}\n".encode()

    # A fresh clone carries no .cce/: its layout comes from the published manifest, its sha from HEAD.
    clone = tmp_path / "clone"
    git(env, tmp_path, "clone", "-q", str(src), str(clone))
    ok(cce(env, clone, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", BASE))
    pulled = ok(cce(env, clone, "sync", "pull", "--workspace"))
    assert pulled == ("Pulling workspace src\n"
                      f"  manifest         installed from the published metadata under {BASE}\n"
                      f"  alpha            {sha}  chunks 4  ({chk(clone / 'alpha')})\n"
                      f"  beta             {sha}  chunks 2  ({chk(clone / 'beta')})\n"
                      "  metadata         workspace.yml + workspace-graph.json installed (1 cross-member edge)\n")
    assert (clone / ".cce" / "workspace.yml").read_bytes() == (src / ".cce" / "workspace.yml").read_bytes()
    assert (clone / ".cce" / "workspace-graph.json").read_text(encoding="utf-8") == WS_GRAPH
    assert marker(clone / "alpha")["repo_id"] == f"{BASE}__alpha"

    # The pulled workspace answers exactly as the source workspace indexed locally, graph expansion included.
    ok(cce(env, src, "index", "--workspace"))
    assert results(env, clone, ROCKET) == results(env, src, ROCKET)
    assert "beta" in packages(env, clone, ROCKET) and "beta" not in packages(env, clone, ROCKET, "--no-graph")

    # Push refuses a dirty tree, as a single-repo push does.
    write(src / "alpha" / "src" / "launch.js", "// changed\n")
    assert one_error(cce(env, src, "sync", "push", "--workspace")) == (
        "error: refusing to push: the working tree is dirty. Commit your changes and push a clean sha (a cache is "
        "content-addressed by commit).")

    # A member pinned at another sha is not replaced without --force (reference fix #118).
    git(env, src, "commit", "-qam", "v2")
    ok(cce(env, src, "sync", "push", "--workspace"))
    v2 = git(env, src, "rev-parse", "HEAD")
    git(env, clone, "pull", "-q", "--ff-only")
    assert one_error(cce(env, clone, "sync", "pull", "--workspace")) == (
        f"error: workspace member `alpha` local cache is at {sha} but you are pulling {v2}. Pass --force to "
        "overwrite.")
    forced = ok(cce(env, clone, "sync", "pull", "--workspace", "--force"))
    assert forced.startswith(f"Pulling workspace src\n  alpha            {v2}  chunks ")
    assert "manifest         installed" not in forced  # the local manifest now exists and wins


def _published_chk(env: dict[str, str], tmp_path: Path, member: str, sha: str) -> str:
    manifest = remote_blob(env, tmp_path, f"hash/2.3/{BASE}__{member}/{sha}.cce").split(b"\n", 1)[0]
    return json.loads(manifest)["checksum"][:12]


# --------------------------------------------------------------------------- pull --all


def test_pull_all_builds_a_searchable_workspace_and_refreshes_idempotently(env: dict[str, str],
                                                                          tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    ws_src = dep_workspace(env, tmp_path / "mono")
    push_workspace(env, url, ws_src, BASE)
    ws_sha = git(env, ws_src, "rev-parse", "HEAD")
    demo = tmp_path / "demo"
    demo_sha = tiny_repo(env, url, demo, "example.com__acme__demo",
                         {"glacier.py": "def gamma_glacier_melt(rate):\n    return rate - 1\n"})
    # A second workspace whose member is also called `demo`: the consumer keeps it at `demo-2`.
    zeta = tmp_path / "zeta"
    write(zeta / "demo" / "package.json", '{"name":"demo_zeta"}')
    write(zeta / "demo" / "index.js", "function zetaHarbourCrane(load) {\n  return load;\n}\n")
    git(env, zeta, "init", "-q", "-b", "main")
    git(env, zeta, "add", "-A")
    git(env, zeta, "commit", "-q", "-m", "init")
    push_workspace(env, url, zeta, "example.com__zeta__mono")
    zeta_sha = git(env, zeta, "rev-parse", "HEAD")
    # Two repos consumer mode cannot resolve to a latest sha: both skip texts.
    seed(env, url, tmp_path, {"hash/2.3/xxx__multi/3333333.cce": b"CCC", "hash/2.3/xxx__multi/refs/develop": b"3\n",
                              "hash/2.3/xxx__multi/refs/master": b"3\n", "hash/2.3/zzz__nolatest/1234567.cce": b"r\n"})

    ctx = tmp_path / "ctx"
    first = ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", "ctx", "--remote", url))
    skips = ("  warning: skipped xxx__multi — no refs/main; available refs: develop, master — set `sync.ref` in the "
             "member's .cce/config or pull it with `cce sync pull --latest --ref <name>`\n"
             "  warning: skipped zzz__nolatest — no latest pointer on `main` (nothing pushed for the ref yet)\n")
    taken = ("  warning: workspace example.com__zeta__mono: member name `demo` was taken by an earlier repo — kept "
             "as `demo-2` (first in repo_id order wins)\n")
    assert first == (
        f"remote        : {url}\n\n"
        f"  demo             pulled      example.com__acme__demo@{demo_sha}  chunks 1  ({chk(ctx / 'demo')})\n"
        f"  alpha            pulled      {BASE}__alpha@{ws_sha}  chunks 4  ({chk(ctx / 'alpha')})\n"
        f"  beta             pulled      {BASE}__beta@{ws_sha}  chunks 2  ({chk(ctx / 'beta')})\n"
        f"  demo-2           pulled      example.com__zeta__mono__demo@{zeta_sha}  chunks 2  "
        f"({chk(ctx / 'demo-2')})\n"
        + skips + taken +
        "\nmetadata      : 2 published workspace manifests applied · 1 cross-member edge installed"
        "\nworkspace     : ctx/.cce/workspace.yml (4 members)\n"
        "summary       : 4 pulled · 0 up-to-date · 2 skipped\n")
    # Published type/package applied to each workspace's own members; the rest synthesized store-only.
    assert (ctx / ".cce" / "workspace.yml").read_text(encoding="utf-8") == (
        "version: 1\nname: ctx\nmembers:\n"
        "  - name: alpha\n    path: alpha\n    type: javascript\n    package: alpha\n"
        "  - name: beta\n    path: beta\n    type: javascript\n    package: beta\n"
        "  - name: demo\n    path: demo\n    type: store-only\n    package: demo\n"
        "  - name: demo-2\n    path: demo-2\n    type: javascript\n    package: demo_zeta\n")
    assert (ctx / ".cce" / "workspace-graph.json").read_text(encoding="utf-8") == (
        '{"members":["alpha","beta","demo","demo-2"],"edges":[{"from":"alpha","to":"beta","via":"package.json"}]}')
    assert (ctx / "demo-2" / ".cce" / "config").read_text(encoding="utf-8") == (
        f"sync:\n  remote: {url}\n  lfs: false\n  repo_id: example.com__zeta__mono__demo\n  auto_pull: false\n"
        "  retention: all\n")
    assert not (ctx / "nolatest").exists() and not (ctx / "multi").exists()

    # Federated search over the pulled members, with the rewritten graph edge.
    assert packages(env, ctx, "gamma glacier melt rate", "--no-graph")[0] == "demo"
    assert packages(env, ctx, "zeta harbour crane load", "--no-graph")[0] == "demo_zeta"
    assert "beta" in packages(env, ctx, ROCKET) and "beta" not in packages(env, ctx, ROCKET, "--no-graph")

    # Checksum-only verify at the consumer root checks every member, offline.
    checked = ok(cce(env, ctx, "sync", "verify", "--checksum-only"))
    assert checked.split("\n")[0] == "verify OK (checksum-only): 4 members"
    assert f"  demo-2           example.com__zeta__mono__demo@{zeta_sha}  (" in checked

    # Second run, nothing moved: every member up to date and not one file rewritten.
    before = snapshot(ctx)
    second = ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", "ctx"))  # the remote now comes from ctx's config
    assert second == (
        f"remote        : {url}\n\n"
        f"  demo             up-to-date  example.com__acme__demo@{demo_sha}\n"
        f"  alpha            up-to-date  {BASE}__alpha@{ws_sha}\n"
        f"  beta             up-to-date  {BASE}__beta@{ws_sha}\n"
        f"  demo-2           up-to-date  example.com__zeta__mono__demo@{zeta_sha}\n"
        + skips + taken +
        "\nmetadata      : 2 published workspace manifests applied · 1 cross-member edge installed"
        "\nworkspace     : ctx/.cce/workspace.yml (4 members)\n"
        "summary       : 0 pulled · 4 up-to-date · 2 skipped\n")
    assert snapshot(ctx) == before

    # Move one pointer and lose one member's config: exactly that member is re-pulled, the other re-adopted.
    write(demo / "glacier.py", "def gamma_glacier_freeze(rate):\n    return rate + 1\n")
    git(env, demo, "commit", "-qam", "v2")
    ok(cce(env, demo, "sync", "push"))
    demo_v2 = git(env, demo, "rev-parse", "HEAD")
    (ctx / "beta" / ".cce" / "config").unlink()
    third = ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", "ctx"))
    assert third.split("\n")[2:7] == [
        f"  demo             pulled      example.com__acme__demo@{demo_v2}  chunks 1  ({chk(ctx / 'demo')})",
        f"  alpha            up-to-date  {BASE}__alpha@{ws_sha}",
        f"  note: re-adopting existing member `beta` for {BASE}__beta (its config was missing — rewritten)",
        f"  beta             up-to-date  {BASE}__beta@{ws_sha}",
        f"  demo-2           up-to-date  example.com__zeta__mono__demo@{zeta_sha}"]
    assert third.endswith("summary       : 1 pulled · 3 up-to-date · 2 skipped\n")
    assert [m.name for m in load_manifest(ctx).members] == ["alpha", "beta", "demo", "demo-2"]  # no `beta-2`
    assert (ctx / "beta" / ".cce" / "config").is_file()
    for member in ("alpha", "beta", "demo-2"):
        assert (ctx / member / ".cce" / "index.cce").stat().st_mtime_ns == \
            before[f"{member}/.cce/index.cce"][0]


def relabelled(artifact: bytes, repo_id: str) -> bytes:
    """The same artifact published as ``repo_id``'s, with its checksum redone (a pull checks whose it is)."""
    from dataclasses import replace

    parsed = import_artifact(artifact)
    moved = replace(parsed, manifest=replace(parsed.manifest, repo_id=repo_id, checksum=""))
    return replace(moved, manifest=replace(moved.manifest, checksum=moved.computed_checksum())).to_bytes()


def test_published_member_paths_never_write_outside_the_workspace(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    good = tmp_path / "good-src"
    sha = tiny_repo(env, url, good, "evil__ws__good", {"good.py": "def good_one():\n    return 1\n"})
    artifact = remote_blob(env, tmp_path, f"hash/2.3/evil__ws__good/{sha}.cce")
    outside_abs = tmp_path / "outside-abs"
    hostile = ("version: 1\nname: evil\nmembers:\n"
               "  - name: good\n    path: good\n    type: store-only\n    package: good\n"
               "  - name: up\n    path: ../outside-up\n    type: store-only\n    package: up\n"
               f"  - name: abs\n    path: {outside_abs}\n    type: store-only\n    package: abs\n"
               "  - name: link\n    path: link\n    type: store-only\n    package: link\n")
    files = {"hash/2.3/evil__ws/workspace.yml": hostile.encode(), "hash/2.3/evil__../refs/main": f"{sha}\n".encode()}
    for name in ("up", "abs", "link"):  # every member is pullable: only the path check stops a write
        files[f"hash/2.3/evil__ws__{name}/{sha}.cce"] = relabelled(artifact, f"evil__ws__{name}")
        files[f"hash/2.3/evil__ws__{name}/refs/main"] = f"{sha}\n".encode()
    files[f"hash/2.3/evil__../{sha}.cce"] = relabelled(artifact, "evil__..")
    seed(env, url, tmp_path, files)
    outside_link = tmp_path / "outside-link"
    outside_link.mkdir()

    # pull --workspace bootstraps from the hostile manifest: only `good` is laid out and pulled.
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    (consumer / "link").symlink_to(outside_link)
    ok(cce(env, tmp_path, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "evil__ws", "--dir", "consumer"))
    out = ok(cce(env, tmp_path, "sync", "pull", "--workspace", "--latest", "--dir", "consumer"))
    tail = "; refused, nothing is written outside consumer\n"
    assert out == ("Pulling workspace evil\n"
                   "  manifest         installed from the published metadata under evil__ws\n"
                   "  warning: skipped member `up` — its path `../outside-up` climbs out of the workspace with `..`"
                   + tail +
                   f"  warning: skipped member `abs` — its path `{outside_abs}` is absolute" + tail +
                   "  warning: skipped member `link` — its path `link` leads through a symbolic link out of the "
                   "workspace" + tail +
                   f"  good             {sha}  chunks 1  ({chk(consumer / 'good')})\n"
                   "  metadata         workspace.yml installed (no published graph)\n")
    assert [m.path for m in load_manifest(consumer).members] == ["good"]
    assert not (tmp_path / "outside-up").exists() and not outside_abs.exists()
    assert os.listdir(outside_link) == []

    # pull --all: a manifest entry climbing out is left out, and a member directory that is a link out is refused.
    ctx = tmp_path / "ctx"
    write(ctx / ".cce" / "workspace.yml",
          "version: 1\nname: ctx\nmembers:\n  - name: old\n    path: ../outside-old\n    type: store-only\n"
          "    package: old\n")
    (ctx / "good").symlink_to(outside_link)
    out = ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", "ctx", "--remote", url))
    tail = "; refused, nothing is written outside ctx\n"
    assert out == (
        f"remote        : {url}\n\n"
        "  warning: member `old` left out of the workspace — its path `../outside-old` climbs out of the workspace "
        "with `..`" + tail +
        "  warning: skipped evil__.. — its member name `..` cannot be a directory under ctx\n"
        f"  abs              pulled      evil__ws__abs@{sha}  chunks 1  ({chk(ctx / 'abs')})\n"
        "  warning: skipped evil__ws__good — its path `good` leads through a symbolic link out of the workspace"
        + tail +
        f"  link             pulled      evil__ws__link@{sha}  chunks 1  ({chk(ctx / 'link')})\n"
        f"  up               pulled      evil__ws__up@{sha}  chunks 1  ({chk(ctx / 'up')})\n"
        "\nmetadata      : 1 published workspace manifest applied · 0 cross-member edges installed"
        "\nworkspace     : ctx/.cce/workspace.yml (3 members)\n"
        "summary       : 3 pulled · 0 up-to-date · 2 skipped\n")
    assert [m.path for m in load_manifest(ctx).members] == ["abs", "link", "up"]
    assert os.listdir(outside_link) == [] and not (tmp_path / "outside-old").exists()
    assert not (tmp_path / ".cce").exists()


# --------------------------------------------------------------------------- usage and empty caches


@pytest.mark.parametrize(("args", "message"), [
    (["pull", "--all", "--into", "x", "--commit", "abc"], "--all cannot be used with --commit"),
    (["pull", "--all", "--into", "x", "--latest"], "--all cannot be used with --latest"),
    (["pull", "--all", "--into", "x", "--force"], "--all cannot be used with --force"),
    (["pull", "--all", "--into", "x", "--workspace"], "--all cannot be used with --workspace"),
    (["pull", "--all", "--into", "x", "--dir", "."], "--all cannot be used with --dir"),
    (["pull", "--all", "--into", "x", "--ref", "main"], "--all cannot be used with --ref"),
    (["pull", "--all"], "--all requires --into"),
    (["pull", "--into", "x"], "--into requires --all"),
    (["pull", "--remote", "file:///nowhere"], "--remote requires --all"),
    (["pull", "--workspace", "--latest", "--commit", "abc"], "--latest cannot be used with --commit"),
    (["push", "--workspace", "--commit", "abc"], "--commit cannot be used with --workspace"),
])
def test_flag_conflicts_are_usage_errors(env: dict[str, str], tmp_path: Path, args: list[str], message: str) -> None:
    done = cce(env, tmp_path, "sync", *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")
    assert not (tmp_path / "x").exists()


def test_empty_and_unpullable_caches_write_no_workspace(env: dict[str, str], tmp_path: Path) -> None:
    assert one_error(cce(env, tmp_path, "sync", "pull", "--all", "--into", "ctx")) == (
        "error: no sync remote configured — run `cce sync init --remote <git-url>` or pass `--remote <url>`")
    url = bare_remote(env, tmp_path / "cache.git")
    assert ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", "ctx", "--remote", url)) == (
        f"remote        : {url}\n\nThe cache is empty — nothing has been pushed yet.\n")
    seed(env, url, tmp_path, {"hash/2.3/zzz__nolatest/1234567.cce": b"r\n",
                              "hash/2.3/only__meta/workspace.yml": b"version: 1\nname: m\nmembers:\n"})
    assert ok(cce(env, tmp_path, "sync", "pull", "--all", "--into", "ctx", "--remote", url)) == (
        f"remote        : {url}\n\n"
        "  warning: skipped zzz__nolatest — no latest pointer on `main` (nothing pushed for the ref yet)\n"
        "\nNothing pullable — no workspace written.\n")
    assert sorted(os.listdir(tmp_path / "ctx")) == []

    # Without a manifest here or on the cache, the workspace commands say how to make one.
    (tmp_path / "ws").mkdir()
    ok(cce(env, tmp_path / "ws", "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "nothing__here"))
    expected = "error: no workspace manifest at ./.cce/workspace.yml — run `cce workspace init` first"
    assert one_error(cce(env, tmp_path / "ws", "sync", "pull", "--workspace", "--latest")) == expected
    assert one_error(cce(env, tmp_path / "ws", "sync", "push", "--workspace")) == expected

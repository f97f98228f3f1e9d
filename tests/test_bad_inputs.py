"""No input stops a run: hostile or unlucky files give a skip, a refusal or one `error:` line, never a crash.

Every case runs the installed ``cce`` on a tree built at test time (issue #15,
parts 2-4): file and directory names that are not UTF-8, a directory tree
thousands of levels deep, YAML and JSON nested a hundred thousand levels,
workspace members that try to leave the root, and files ``cce init`` must not
rewrite. Whatever the outcome, neither stream may hold a traceback or an
``internal error``; a refusal is exactly one ``error:`` line on stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import cce_executable, run_cce

NEST = 100_000
DEEP_FLOW = "[" * NEST + "]" * NEST
DEEP_JSON = '{"a":' * NEST + "1" + "}" * NEST


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def small_repo(root: Path) -> Path:
    write(root / "app.py", "def greet(name):\n    return 'hello ' + name\n")
    write(root / "lib" / "util.py", "def helper():\n    return 42\n")
    return root


def deep_tree(root: Path, levels: int, every: int = 1000) -> None:
    """``levels`` nested directories ``d/d/…``, built through directory descriptors (no path limit)."""
    fd = os.open(root, os.O_RDONLY)
    try:
        for i in range(levels):
            os.mkdir("d", dir_fd=fd)
            nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nxt
            if i % every == 0:
                f = os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
                os.write(f, f"def level_{i}():\n    return {i}\n".encode())
                os.close(f)
    finally:
        os.close(fd)


def remove_deep(path: Path) -> None:
    """Delete a tree of any depth without recursing (pytest's own cleanup would hit the recursion limit).

    Each directory's subdirectories are first moved up beside ``path``, so no
    path ever grows long and every removal is of a shallow directory.
    """
    top = os.path.dirname(os.path.abspath(path))
    todo = [os.path.abspath(path)]
    moved = 0
    while todo:
        current = todo.pop()
        try:
            entries = list(os.scandir(current))
        except FileNotFoundError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                moved += 1
                hoisted = os.path.join(top, f".deep-{moved}")
                os.rename(entry.path, hoisted)
                todo.append(hoisted)
            else:
                os.unlink(entry.path)
        os.rmdir(current)


@pytest.fixture
def deep_dirs():
    """Paths a test filled with deep trees; removed at teardown, before pytest's recursive cleanup sees them."""
    paths: list[Path] = []
    yield paths
    for path in paths:
        remove_deep(path)


def workspace(root: Path, members: list[tuple[str, str]]) -> Path:
    body = "version: 1\nname: ws\nmembers:\n" + "".join(
        f"  - name: {name}\n    path: \"{path}\"\n    type: store-only\n    package: {name}\n"
        for name, path in members)
    write(root / ".cce" / "workspace.yml", body)
    return root


@dataclass
class Case:
    name: str
    setup: Callable[[Path], list[str]]  # builds the tree under tmp_path, returns the cce arguments
    expect: str  # "ok", "error" or "either"
    check: Callable[[Path, subprocess.CompletedProcess[str]], None] | None = None


def _nonutf8_names(tmp: Path) -> list[str]:
    repo = small_repo(tmp / "repo")
    write(Path(os.fsdecode(bytes(repo) + b"/bad\xff\xfename.py")), "def bad_name():\n    return 1\n")
    write(Path(os.fsdecode(bytes(repo) + b"/dir\xff/inside.py")), "def inside():\n    return 2\n")
    return ["index", str(repo), "--no-metrics"]


def _nonutf8_check(tmp: Path, proc: subprocess.CompletedProcess[str]) -> None:
    assert "  files indexed     : 2\n" in proc.stdout
    assert "name not UTF-8 2" in proc.stdout  # the file and the directory, each counted with its reason


def _deep_config(kind: str) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        repo = small_repo(tmp / "repo")
        if kind == "flow":
            text = "retrieval: " + DEEP_FLOW + "\n"
        else:  # block mappings, one level per line
            text = "".join(" " * i + "k:\n" for i in range(1500)) + " " * 1500 + "v\n"
        write(repo / ".cce" / "config", text)
        return ["init", str(repo)]
    return setup


def _config_error_names_file(tmp: Path, proc: subprocess.CompletedProcess[str]) -> None:
    assert ".cce/config" in proc.stderr and "nested more than" in proc.stderr
    assert not (tmp / "repo" / ".mcp.json").exists()


def _indexed_with_deep_config(command: list[str]) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        repo = small_repo(tmp / "repo")
        assert run_cce("index", repo, "--no-metrics").returncode == 0
        write(repo / ".cce" / "config", "retrieval: " + DEEP_FLOW + "\n")
        return [a.replace("REPO", str(repo)) for a in command]
    return setup


def _deep_manifest(command: list[str]) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        root = tmp / "ws"
        small_repo(root / "a")
        write(root / ".cce" / "workspace.yml", "version: 1\nname: ws\nmembers: " + DEEP_FLOW + "\n")
        return [a.replace("ROOT", str(root)) for a in command]
    return setup


def _escaping_member(kind: str) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        root = tmp / "ws"
        small_repo(root / "good")
        victim = small_repo(tmp / "victim")
        if kind == "dotdot":
            path = "../victim"
        elif kind == "absolute":
            path = str(victim)
        elif kind == "symlink":
            (root / "link").symlink_to(victim)
            path = "link"
        else:  # the store directory of an inside member is a link out
            small_repo(root / "inner")
            (root / "inner" / ".cce").symlink_to(victim)
            path = "inner"
        workspace(root, [("good", "good"), ("evil", path)])
        return ["index", "--workspace", str(root), "--no-metrics"]
    return setup


def _nothing_outside(tmp: Path, proc: subprocess.CompletedProcess[str]) -> None:
    assert "workspace member 'evil'" in proc.stderr
    assert sorted(p.name for p in (tmp / "victim").iterdir()) == ["app.py", "lib"]
    assert not (tmp / "ws" / "good" / ".cce").exists()  # refused before any member is indexed


def _deep_package_json(tmp: Path) -> list[str]:
    root = tmp / "ws"
    small_repo(root / "web")
    write(root / "web" / "package.json", '{"name": "web", "dependencies": ' + DEEP_JSON + "}")
    small_repo(root / "api")
    write(root / "api" / "package.json", '{"name": "api"}')
    assert run_cce("workspace", "init", root).returncode == 0
    return ["index", "--workspace", str(root), "--no-metrics"]


def _deep_graph(tmp: Path) -> list[str]:
    root = tmp / "ws"
    small_repo(root / "api")
    workspace(root, [("api", "api")])
    assert run_cce("index", "--workspace", root, "--no-metrics").returncode == 0
    write(root / ".cce" / "workspace-graph.json", DEEP_JSON)
    return ["stats", "--workspace", str(root)]


def _deep_json_file(rel: str, command: list[str], text: str = DEEP_JSON + "\n") -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        repo = small_repo(tmp / "repo")
        assert run_cce("index", repo).returncode == 0
        write(repo / rel, text)
        return [a.replace("REPO", str(repo)) for a in command]
    return setup


def _deep_store_header(tmp: Path) -> list[str]:
    repo = small_repo(tmp / "repo")
    store = repo / ".cce" / "index.cce"
    assert run_cce("index", repo, "--no-metrics").returncode == 0
    raw = store.read_bytes()
    header = DEEP_JSON.encode()
    # Keep the 16-byte preamble's magic, point its header length at a hostile header.
    write(store, raw[:8] + len(header).to_bytes(8, "little") + header)
    return ["search", "greet", "--dir", str(repo), "--no-metrics"]


def _claude_markers(tmp: Path) -> list[str]:
    repo = small_repo(tmp / "repo")
    write(repo / "CLAUDE.md", "# Mine\n<!-- END CCE MCP -->\nkeep me\n<!-- BEGIN CCE MCP -->\n")
    return ["init", str(repo)]


def _claude_untouched(tmp: Path, proc: subprocess.CompletedProcess[str]) -> None:
    assert "CLAUDE.md" in proc.stderr
    assert (tmp / "repo" / "CLAUDE.md").read_text() == "# Mine\n<!-- END CCE MCP -->\nkeep me\n<!-- BEGIN CCE MCP -->\n"
    assert not (tmp / "repo" / ".mcp.json").exists()


def _mcp_json(text: str) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        repo = small_repo(tmp / "repo")
        write(repo / ".mcp.json", text)
        return ["init", str(repo)]
    return setup


CASES = [
    Case("file and directory names not UTF-8", _nonutf8_names, "ok", _nonutf8_check),
    Case("100,000-level flow YAML config, init", _deep_config("flow"), "error", _config_error_names_file),
    Case("1,500-level block YAML config, init", _deep_config("block"), "error", _config_error_names_file),
    Case("deep config, search", _indexed_with_deep_config(["search", "greet", "--dir", "REPO"]), "either"),
    Case("deep config, stats", _indexed_with_deep_config(["stats", "--dir", "REPO"]), "either"),
    Case("deep config, index", _indexed_with_deep_config(["index", "REPO", "--no-metrics"]), "either"),
    Case("deep workspace.yml, index", _deep_manifest(["index", "--workspace", "ROOT"]), "error"),
    Case("deep workspace.yml, search", _deep_manifest(["search", "x", "ROOT", "--workspace"]), "error"),
    Case("deep workspace.yml, stats", _deep_manifest(["stats", "ROOT", "--workspace"]), "error"),
    Case("deep workspace.yml, list", _deep_manifest(["workspace", "list", "ROOT"]), "error"),
    Case("deep workspace.yml, usage", _deep_manifest(["usage", "ROOT", "--workspace"]), "error"),
    Case("member ../victim", _escaping_member("dotdot"), "error", _nothing_outside),
    Case("member /abs/victim", _escaping_member("absolute"), "error", _nothing_outside),
    Case("member through a symlink out", _escaping_member("symlink"), "error", _nothing_outside),
    Case("member whose .cce is a symlink out", _escaping_member("store-link"), "error", _nothing_outside),
    Case("deep package.json in a member", _deep_package_json, "ok"),
    Case("deep workspace-graph.json", _deep_graph, "ok"),
    Case("deep metrics line, usage", _deep_json_file(".cce/metrics.jsonl", ["usage", "REPO"]), "ok"),
    Case("deep metrics line, stats", _deep_json_file(".cce/metrics.jsonl", ["stats", "--dir", "REPO"]), "ok"),
    Case("deep sync marker, search",
         _deep_json_file(".cce/synced.json", ["search", "greet", "--dir", "REPO", "--no-metrics"]), "either"),
    Case("deep store header, search", _deep_store_header, "error"),
    Case("deep .mcp.json, init", _mcp_json(DEEP_JSON), "error"),
    Case("malformed .mcp.json, init", _mcp_json('{"mcpServers": {"mine": '), "error"),
    Case("unpaired CLAUDE.md markers, init", _claude_markers, "error", _claude_untouched),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_never_crashes(tmp_path: Path, case: Case) -> None:
    args = case.setup(tmp_path)
    proc = run_cce(*args, cwd=tmp_path)
    both = proc.stdout + proc.stderr
    assert "Traceback" not in both and "internal error" not in both and "RecursionError" not in both, both[-2000:]
    if case.expect == "ok" or (case.expect == "either" and proc.returncode == 0):
        assert proc.returncode == 0, proc.stderr
    else:
        assert proc.returncode != 0, proc.stdout
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    if case.check is not None:
        case.check(tmp_path, proc)


def test_a_5000_level_tree_indexes_everything_it_can_reach(tmp_path: Path, deep_dirs: list[Path]) -> None:
    repo = small_repo(tmp_path / "repo")
    deep_dirs.append(repo)
    deep_tree(repo, 5000)
    index = run_cce("index", repo, "--no-metrics")
    assert index.returncode == 0, index.stderr
    # Files at levels 1, 1001 and 2001 fit in a path; deeper ones exceed the system's path length and
    # their directory is counted as unreadable (a walk error), with a warning on stderr.
    assert "  files indexed     : 5\n" in index.stdout
    assert "  walk errors       : 1\n" in index.stdout and "directory unreadable 1" in index.stdout
    assert index.stderr.startswith("warning: 1 directory could not be read")
    for args in (["search", "level", "--dir", repo, "--no-metrics"], ["stats", "--dir", repo]):
        proc = run_cce(*args)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "deep.py" in run_cce("search", "level_1000", "--dir", repo, "--no-metrics").stdout


def test_workspace_init_survives_a_deep_tree_and_non_utf8_names(tmp_path: Path, deep_dirs: list[Path]) -> None:
    root = tmp_path / "ws"
    deep_dirs.append(root)
    write(root / "api" / "package.json", '{"name": "api"}')
    deep_tree(root, 3000)
    write(Path(os.fsdecode(bytes(root) + b"/odd\xff/package.json")), '{"name": "odd"}')
    proc = run_cce("workspace", "init", root)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "path: api" in (root / ".cce" / "workspace.yml").read_text()


def test_allow_outside_root_is_an_explicit_local_opt_in(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    small_repo(root / "good")
    victim = small_repo(tmp_path / "victim")
    workspace(root, [("good", "good"), ("far", "../victim")])
    refused = run_cce("index", "--workspace", root, "--no-metrics")
    assert refused.returncode == 1 and "--allow-outside-root" in refused.stderr
    proc = run_cce("index", "--workspace", root, "--no-metrics", "--allow-outside-root")
    assert proc.returncode == 0, proc.stderr
    assert (victim / ".cce" / "index.cce").is_file()
    # Read commands follow the same opt-in through the environment.
    assert run_cce("stats", root, "--workspace").returncode == 1
    assert run_cce("stats", root, "--workspace", env={"CCE_ALLOW_OUTSIDE_ROOT": "1"}).returncode == 0


def _mcp(repo: Path, extra: str = "") -> subprocess.CompletedProcess[str]:
    calls = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "context_search", "arguments": {"query": "greet"}}},
    ]
    lines = "\n".join(json.dumps(c) for c in calls) + "\n" + extra
    return subprocess.run([cce_executable(), "mcp", "--dir", str(repo)], input=lines, capture_output=True,
                          text=True, timeout=120)


def test_mcp_with_a_deep_config_refuses_with_one_error_line(tmp_path: Path) -> None:
    repo = small_repo(tmp_path / "repo")
    assert run_cce("index", repo, "--no-metrics").returncode == 0
    write(repo / ".cce" / "config", "retrieval: " + DEEP_FLOW + "\n")
    proc = _mcp(repo)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stdout + proc.stderr
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1 and ".cce/config" in proc.stderr


def test_mcp_answers_a_deep_json_line_with_a_parse_error_and_keeps_serving(tmp_path: Path) -> None:
    repo = small_repo(tmp_path / "repo")
    assert run_cce("index", repo, "--no-metrics").returncode == 0
    deep_call = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                            "params": {"name": "context_search", "arguments": {"query": "x"}}})
    proc = _mcp(repo, DEEP_JSON + "\n" + "[" * NEST + "\n" + deep_call + "\n")
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stdout + proc.stderr
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r.get("error", {}).get("code") for r in replies if r.get("id") is None] == [-32700, -32700]
    assert {r.get("id") for r in replies if "result" in r} == {1, 2, 3}

"""``cce init`` through the installed command: the files it writes, byte for byte, and its errors."""

from __future__ import annotations

import json
import os
from importlib.util import find_spec
from pathlib import Path

import pytest
from helpers import run_cce

BEGIN = "<!-- BEGIN CCE MCP -->"
GUIDANCE = (
    "<!-- BEGIN CCE MCP -->\n"
    "## Code Context Engine (CCE)\n"
    "\n"
    "This project is indexed by CCE, exposed as MCP tools. Prefer them over reading or grepping files.\n"
    "\n"
    "- **PREFER `context_search`** to locate code, understand behaviour, or answer \"where is X / how does Y "
    "work\". It returns the most relevant code chunks (file:line + kind) from a hybrid vector + BM25 index, so "
    "you do not pay tokens for whole files.\n"
    "- Reserve file reads for opening a specific path `context_search` points you to.\n"
    "- Use `index_status` to check how fresh the index is, and `record_feedback` to rate a result.\n"
)
END = "<!-- END CCE MCP -->\n"
STANDARD_RULES = (
    "\n### Output compression\n\nAnswer in the fewest words that are correct; when editing code show ONLY the "
    "changed lines (a minimal diff), never reprint whole files; no preamble or postamble.\n"
)
RULES = {
    "off": "",
    "lite": "\n### Output compression\n\nBe concise; drop filler, preamble, and postamble.\n",
    "standard": STANDARD_RULES,
    "max": STANDARD_RULES[:-1] + " Telegraphic prose; code as minimal diffs only.\n",
}
BLOCK = GUIDANCE + STANDARD_RULES + END
MCP_JSON = (
    '{\n  "mcpServers": {\n    "cce": {\n      "args": [\n        "mcp",\n        "--dir",\n        "."\n'
    '      ],\n      "command": "cce"\n    }\n  }\n}\n'
)
GITIGNORE_BLOCK = (
    "# cce local index/cache — never commit (but keep the shared workspace.yml)\n.cce/*\n!.cce/workspace.yml\n"
)
NEXT_STEPS = (
    "\nNext steps:\n"
    "  1. Restart your editor (Claude Code) so it loads .mcp.json.\n"
    "  2. Ask a question about this codebase — the agent calls context_search.\n"
    "  3. Confirm it was used: cce usage (or cce dashboard)\n"
)


def tiny_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "auth.py").write_text("def hash_password(pw):\n    return pw + 'salt'\n", encoding="utf-8")
    (root / "payments.py").write_text("import auth\n\ndef process_payment(amount):\n    return amount\n",
                                      encoding="utf-8")
    return root


# As if `cce` were on the agent's PATH: the family's bytes. The tests that choose the command unset it.
ON_PATH = {"CCE_MCP_COMMAND": "cce"}


def init_ok(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = run_cce("init", *args, cwd=cwd, env=ON_PATH if env is None else env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def written(root: Path) -> dict[str, bytes]:
    return {name: (root / name).read_bytes() for name in (".mcp.json", "CLAUDE.md", ".gitignore")
            if (root / name).exists()}


def one_error_line(done) -> str:
    assert done.returncode != 0
    lines = done.stderr.split("\n")
    assert len(lines) == 2 and lines[1] == "", done.stderr
    assert lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_fresh_directory_gets_index_config_and_block(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    report = init_ok(root)
    assert report == (
        "CCE is wired up for Claude Code.\n"
        "  index     : built 2 chunk(s) from 2 file(s)\n"
        f'  .mcp.json : {root}/.mcp.json (server "cce")\n'
        f"  CLAUDE.md : {root}/CLAUDE.md (context_search guidance)\n" + NEXT_STEPS
    )
    assert read(root / ".mcp.json") == MCP_JSON
    assert read(root / "CLAUDE.md") == "# CLAUDE.md\n\n" + BLOCK
    assert not (root / ".gitignore").exists()
    assert (root / ".cce" / "index.cce").is_file()
    events = [json.loads(line) for line in read(root / ".cce" / "metrics.jsonl").split("\n") if line]
    assert [(e["event"], e["files_indexed"], e["chunks"], e["source"]) for e in events] == [
        ("index", 2, 2, "local")]
    # The freshly built index answers searches.
    found = run_cce("search", "hash password", "--dir", root, "--no-metrics")
    assert found.returncode == 0 and "auth.py" in found.stdout


def test_default_directory_is_the_working_directory(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    report = init_ok(cwd=root)
    assert '  .mcp.json : ./.mcp.json (server "cce")\n' in report
    assert "  CLAUDE.md : ./CLAUDE.md (context_search guidance)\n" in report
    assert read(root / ".mcp.json") == MCP_JSON


def test_rerun_leaves_every_written_file_byte_identical(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    (root / ".git").mkdir()
    (root / ".mcp.json").write_text('{"mcpServers": {"other": {"command": "foo", "args": []}}, "x": 1}',
                                    encoding="utf-8")
    (root / "CLAUDE.md").write_text("# Mine\n\nnotes", encoding="utf-8")
    (root / ".gitignore").write_text("node_modules/", encoding="utf-8")
    init_ok(root)
    first = written(root)
    assert set(first) == {".mcp.json", "CLAUDE.md", ".gitignore"}
    mtimes = {name: (root / name).stat().st_mtime_ns for name in first}
    init_ok(root)
    assert written(root) == first
    # Nothing changed, so nothing was rewritten.
    assert {name: (root / name).stat().st_mtime_ns for name in first} == mtimes


def test_existing_mcp_json_keeps_other_servers_and_its_own_layout(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    (root / ".mcp.json").write_text(
        '{"zeta": true, "mcpServers": {"other": {"command": "foo", "args": ["--flag", "é"]},'
        ' "cce": {"command": "old"}}}', encoding="utf-8")
    init_ok(root)
    # Only the cce entry changed, written the way the file writes its others; no key moved, no newline added.
    assert read(root / ".mcp.json") == (
        '{"zeta": true, "mcpServers": {"other": {"command": "foo", "args": ["--flag", "é"]},'
        ' "cce": {"command": "cce", "args": ["mcp", "--dir", "."]}}}'
    )


ZOD_MCP_JSON = """{
  "mcpServers": {
    "chrome-devtools": {
      "command": "npx",
      "args": ["-y", "chrome-devtools-mcp@latest"]
    }
  }
}
"""


def test_zods_mcp_json_gains_one_entry_in_its_own_style(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    (root / ".mcp.json").write_text(ZOD_MCP_JSON, encoding="utf-8")
    init_ok(root)
    assert read(root / ".mcp.json") == ZOD_MCP_JSON.replace(
        '"chrome-devtools-mcp@latest"]\n    }\n',
        '"chrome-devtools-mcp@latest"]\n    },\n    "cce": {\n      "command": "cce",\n'
        '      "args": ["mcp", "--dir", "."]\n    }\n')
    before = written(root)
    init_ok(root)
    assert written(root) == before


@pytest.mark.parametrize(("existing", "expected"), [
    # Four-space indent and CRLF line ends, no mcpServers yet: one member appended to the top level.
    ('{\r\n    "other": 1\r\n}\r\n',
     '{\r\n    "other": 1,\r\n    "mcpServers": {\r\n        "cce": {\r\n            "command": "cce",\r\n'
     '            "args": ["mcp", "--dir", "."]\r\n        }\r\n    }\r\n}\r\n'),
    # The family's own layout with an outdated command: only the value changes, in that layout.
    (MCP_JSON.replace('"command": "cce"', '"command": "/old/venv/bin/cce"'), MCP_JSON),
    # "mcpServers": null counts as no servers.
    ('{\n  "mcpServers": null\n}\n',
     '{\n  "mcpServers": {\n    "cce": {\n      "command": "cce",\n      "args": ["mcp", "--dir", "."]\n'
     '    }\n  }\n}\n'),
    # An empty server table, and tab indentation.
    ('{\n\t"mcpServers": {}\n}\n',
     '{\n\t"mcpServers": {\n\t\t"cce": {\n\t\t\t"command": "cce",\n\t\t\t"args": ["mcp", "--dir", "."]\n'
     '\t\t}\n\t}\n}\n'),
    # Servers written one per line keep being written so; minified files stay minified.
    ('{\n  "mcpServers": {\n    "gh": {"command": "gh-mcp", "args": []}\n  }\n}\n',
     '{\n  "mcpServers": {\n    "gh": {"command": "gh-mcp", "args": []},\n'
     '    "cce": {"command": "cce", "args": ["mcp", "--dir", "."]}\n  }\n}\n'),
    ('{"mcpServers":{"gh":{"args":[],"command":"gh-mcp"}}}',
     '{"mcpServers":{"gh":{"args":[],"command":"gh-mcp"},"cce":{"args":["mcp","--dir","."],"command":"cce"}}}'),
    # Nothing to keep: the family's bytes.
    ("{}", MCP_JSON),
])
def test_the_merge_changes_only_the_cce_entry(existing, expected):
    from cce_core.agents.init_files import merge_mcp_json

    merged = merge_mcp_json(existing, workspace=False)
    assert merged == expected
    assert json.loads(merged)["mcpServers"]["cce"] == {"command": "cce", "args": ["mcp", "--dir", "."]}
    assert merge_mcp_json(merged, workspace=False) == merged  # a second run changes nothing


def _agent_env(path_dirs: list[Path], **extra: str) -> dict[str, str]:
    """An environment whose PATH is ``path_dirs`` plus the system's, with no override and no virtualenv."""
    env = {k: v for k, v in os.environ.items() if k not in ("CCE_MCP_COMMAND", "VIRTUAL_ENV", "PATH")}
    return {**env, "PATH": os.pathsep.join([*map(str, path_dirs), "/usr/bin", "/bin"]), **extra}


def test_a_cce_in_a_virtualenv_is_registered_by_its_absolute_path(tmp_path):
    from helpers import cce_executable

    venv_bin = Path(cce_executable()).parent
    if not (venv_bin.parent / "pyvenv.cfg").is_file():
        pytest.skip(f"the cce under test is not in a virtualenv ({venv_bin})")
    root = tiny_repo(tmp_path / "proj")
    env = _agent_env([venv_bin], VIRTUAL_ENV=str(venv_bin.parent))  # activated, as in the shell init runs in
    done = run_cce("init", root, env={k: v for k, v in env.items()})
    assert done.returncode == 0, done.stderr
    server = json.loads(read(root / ".mcp.json"))["mcpServers"]["cce"]
    assert server == {"args": ["mcp", "--dir", "."], "command": cce_executable()}
    assert read(root / ".mcp.json") == MCP_JSON.replace('"command": "cce"', f'"command": "{cce_executable()}"')
    notes = [line for line in done.stderr.splitlines() if line]
    assert len(notes) == 1 and notes[0].startswith(f"note: .mcp.json starts the server as {cce_executable()}: ")
    # The agent starts it with a PATH that has never seen the virtualenv: it answers.
    bare = _agent_env([])
    text = search_through_registered_server(root, "hash password", env=bare, use_registered_command=True)
    assert "auth.py:1-2" in text, text


def test_a_cce_on_the_agents_path_is_registered_as_plain_cce(tmp_path):
    from helpers import cce_executable

    on_path = tmp_path / "bin"
    on_path.mkdir()
    (on_path / "cce").symlink_to(cce_executable())  # installed as pipx does: a link in a bin on the PATH
    root = tiny_repo(tmp_path / "proj")
    import subprocess

    done = subprocess.run([str(on_path / "cce"), "init", str(root)], env=_agent_env([on_path]), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert read(root / ".mcp.json") == MCP_JSON


def test_the_command_can_be_chosen(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    init_ok(root, env={"CCE_MCP_COMMAND": "/opt/tools/cce-wrapper"})
    assert json.loads(read(root / ".mcp.json"))["mcpServers"]["cce"]["command"] == "/opt/tools/cce-wrapper"


def test_the_server_command_rule():
    from cce_core.agents.server_command import agent_search_path, choose_server_command

    venv = "/home/u/proj/.venv"
    environ = {"PATH": f"{venv}/bin:/usr/local/bin:/usr/bin", "VIRTUAL_ENV": venv}
    assert agent_search_path(environ) == "/usr/local/bin:/usr/bin"
    assert choose_server_command({"CCE_MCP_COMMAND": " cce "}, "/x/cce").command == "cce"
    assert choose_server_command({}, None).command == "cce"  # nothing known about the running executable
    chosen = choose_server_command({"PATH": "/nonexistent-bin"}, "/somewhere/else/cce")
    assert chosen.command == "/somewhere/else/cce"
    assert chosen.note is not None and "finds none" in chosen.note


@pytest.mark.parametrize("content", ["", "  \n"])
def test_blank_mcp_json_counts_as_empty(tmp_path, content):
    root = tiny_repo(tmp_path / "proj")
    (root / ".mcp.json").write_text(content, encoding="utf-8")
    init_ok(root)
    assert read(root / ".mcp.json") == MCP_JSON


@pytest.mark.parametrize("content", ["not json {", "[1, 2]", '{"mcpServers": [1]}', '{"a": NaN}',
                                     "[" * 100_000 + "]" * 100_000])
def test_unusable_mcp_json_is_never_rewritten(tmp_path, content):
    # The reference's #99: a file init cannot parse is the user's; it is refused, byte for byte untouched,
    # and nothing else is written or built first.
    root = tiny_repo(tmp_path / "proj")
    (root / ".mcp.json").write_text(content, encoding="utf-8")
    proc = run_cce("init", root)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1 and ".mcp.json" in proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert (root / ".mcp.json").read_text(encoding="utf-8") == content
    assert not (root / "CLAUDE.md").exists() and not (root / ".cce" / "index.cce").exists()


def test_existing_claude_md_without_markers_gets_the_block_appended(tmp_path):
    for name, before, after in [
        ("newline", "# My Project\n\nExisting notes.\n", "# My Project\n\nExisting notes.\n\n"),
        ("no-newline", "# My Project\n\nExisting notes.", "# My Project\n\nExisting notes.\n\n"),
        ("empty", "", "\n"),
    ]:
        root = tiny_repo(tmp_path / name)
        (root / "CLAUDE.md").write_text(before, encoding="utf-8")
        init_ok(root)
        assert read(root / "CLAUDE.md") == after + BLOCK, name
        init_ok(root)
        assert read(root / "CLAUDE.md") == after + BLOCK, name


def test_existing_claude_md_with_markers_has_only_the_block_replaced(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    (root / "CLAUDE.md").write_text(
        f"# Mine\n\nbefore\n{BEGIN}\nold guidance\n<!-- END CCE MCP -->\nafter\n", encoding="utf-8")
    init_ok(root)
    expected = "# Mine\n\nbefore\n" + BLOCK + "after\n"
    assert read(root / "CLAUDE.md") == expected
    init_ok(root)
    assert read(root / "CLAUDE.md") == expected
    assert expected.count(BEGIN) == 1


def test_gitignore_is_written_only_in_a_git_checkout(tmp_path):
    plain = tiny_repo(tmp_path / "plain")
    report = init_ok(plain)
    assert ".gitignore" not in report
    assert not (plain / ".gitignore").exists()

    repo = tiny_repo(tmp_path / "repo")
    (repo / ".git").write_text("gitdir: elsewhere\n", encoding="utf-8")  # a worktree's .git is a file
    report = init_ok(repo)
    assert f"  .gitignore: {repo}/.gitignore (ignores .cce/ cache)\n" in report
    assert read(repo / ".gitignore") == GITIGNORE_BLOCK
    init_ok(repo)
    assert read(repo / ".gitignore") == GITIGNORE_BLOCK


def test_gitignore_block_is_appended_once_and_skipped_when_covered(tmp_path):
    repo = tiny_repo(tmp_path / "append")
    (repo / ".git").mkdir()
    (repo / ".gitignore").write_text("node_modules/\n*.log", encoding="utf-8")
    init_ok(repo)
    init_ok(repo)
    assert read(repo / ".gitignore") == "node_modules/\n*.log\n\n" + GITIGNORE_BLOCK

    for line in (".cce", ".cce/", "/.cce", "/.cce/", ".cce/*", "  .cce\r"):
        covered = tiny_repo(tmp_path / f"covered{len(line)}{line.strip().replace('/', '_').replace('*', 's')}")
        (covered / ".git").mkdir()
        (covered / ".gitignore").write_text(f"node_modules/\n{line}\n", encoding="utf-8")
        report = init_ok(covered)
        assert read(covered / ".gitignore") == f"node_modules/\n{line}\n"
        assert ".gitignore: " in report


def test_a_real_git_repo_ignores_the_cache_but_not_the_workspace_manifest(tmp_path):
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tiny_repo(tmp_path / "repo")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    subprocess.run(["git", "init", "-q"], cwd=repo, env=env, check=True)
    init_ok(repo)
    (repo / ".cce" / "workspace.yml").write_text("members: []\n", encoding="utf-8")

    def ignored(rel: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", rel], cwd=repo, env=env).returncode == 0

    assert ignored(".cce/index.cce")
    assert ignored(".cce/metrics.jsonl")
    assert not ignored(".cce/workspace.yml")


@pytest.mark.parametrize("level", ["off", "lite", "standard", "max"])
def test_output_level_from_config_picks_the_rules_section(tmp_path, level):
    root = tiny_repo(tmp_path / "proj")
    (root / ".cce").mkdir()
    (root / ".cce" / "config").write_text(f"output:\n  level: {level}\n", encoding="utf-8")
    init_ok(root)
    claude = read(root / "CLAUDE.md")
    assert claude == "# CLAUDE.md\n\n" + GUIDANCE + RULES[level] + END
    assert len(RULES[level].encode("utf-8")) == {"off": 0, "lite": 75, "standard": 187, "max": 234}[level]
    init_ok(root)
    assert read(root / "CLAUDE.md") == claude


def test_changing_the_output_level_rewrites_only_the_block(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    (root / "CLAUDE.md").write_text("# Mine\n", encoding="utf-8")
    init_ok(root)
    (root / ".cce" / "config").write_text("output:\n  level: off\n", encoding="utf-8")
    init_ok(root)
    assert read(root / "CLAUDE.md") == "# Mine\n\n" + GUIDANCE + END


def test_unsupported_agent_is_one_error_line_and_touches_nothing(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    done = run_cce("init", root, "--agent", "cursor")
    assert one_error_line(done) == (
        "error: unsupported --agent `cursor` — v1 targets Claude Code (pass `--agent claude`)")
    assert sorted(p.name for p in root.iterdir()) == ["auth.py", "payments.py"]


def test_explicit_claude_agent_and_force_are_accepted(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    init_ok(root, "--agent", "claude", "--force")
    assert read(root / ".mcp.json") == MCP_JSON


def test_a_path_that_is_not_a_directory_is_one_error_line(tmp_path):
    missing = tmp_path / "nope"
    assert one_error_line(run_cce("init", missing)) == f"error: not a directory: {missing}"
    a_file = tmp_path / "file.txt"
    a_file.write_text("x", encoding="utf-8")
    assert one_error_line(run_cce("init", a_file)) == f"error: not a directory: {a_file}"
    assert not missing.exists()


def write_workspace(root: Path) -> Path:
    for name in ("alpha", "beta"):
        member = root / name
        (member / "src").mkdir(parents=True)
        (member / "package.json").write_text(f'{{"name":"{name}"}}', encoding="utf-8")
        (member / "src" / "index.js").write_text(f"function {name}() {{ return 1; }}\n", encoding="utf-8")
    (root / ".cce").mkdir()
    (root / ".cce" / "workspace.yml").write_text(
        "version: 1\nname: ws\nmembers:\n"
        "  - name: alpha\n    path: alpha\n    type: javascript\n    package: alpha\n"
        "  - name: beta\n    path: beta\n    type: javascript\n    package: beta\n", encoding="utf-8")
    return root


def test_a_workspace_indexes_every_member_and_serves_the_workspace(tmp_path):
    if find_spec("cce_core.workspace.manifest") is None:
        pytest.skip("this engine has no workspace support (cce_core.workspace.manifest)")
    root = write_workspace(tmp_path / "ws")
    report = init_ok(root)
    assert report.startswith("CCE is wired up for Claude Code (workspace).\n"
                             "  index     : built 4 chunk(s) from 4 file(s) across the workspace\n")
    assert json.loads(read(root / ".mcp.json")) == {
        "mcpServers": {"cce": {"command": "cce", "args": ["mcp", "--workspace"]}}}
    assert (root / "alpha" / ".cce" / "index.cce").is_file()
    assert (root / "beta" / ".cce" / "index.cce").is_file()
    assert (root / ".cce" / "workspace-graph.json").is_file()
    before = written(root)
    init_ok(root)
    assert written(root) == before
    text = search_through_registered_server(root, "beta function")
    assert "beta · src/index.js" in text, text


def test_without_workspace_support_a_workspace_is_one_error(tmp_path):
    from cce_core.agents.init_files import init_project
    from cce_core.foundation.errors import CceError

    root = write_workspace(tmp_path / "ws")
    with pytest.raises(CceError, match="no workspace support"):
        init_project(str(root), "claude", lambda _root: (0, 0), None)
    assert not (root / ".mcp.json").exists() and not (root / "CLAUDE.md").exists()


def test_workspace_mode_points_the_server_at_the_workspace():
    from cce_core.agents.init_files import merge_mcp_json

    assert json.loads(merge_mcp_json(None, workspace=True)) == {
        "mcpServers": {"cce": {"command": "cce", "args": ["mcp", "--workspace"]}}}
    assert merge_mcp_json(None, workspace=False) == MCP_JSON


def test_claude_md_that_is_not_utf8_is_refused_not_overwritten(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    (root / "CLAUDE.md").write_bytes(b"# caf\xe9\n")
    line = one_error_line(run_cce("init", root))
    assert "CLAUDE.md" in line and "UTF-8" in line
    assert (root / "CLAUDE.md").read_bytes() == b"# caf\xe9\n"


def test_new_files_get_ordinary_permissions(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    (root / "CLAUDE.md").write_text("# Mine\n", encoding="utf-8")
    (root / "CLAUDE.md").chmod(0o640)
    old = os.umask(0o022)
    try:
        init_ok(root)
    finally:
        os.umask(old)
    assert (root / ".mcp.json").stat().st_mode & 0o777 == 0o644
    assert (root / "CLAUDE.md").stat().st_mode & 0o777 == 0o640


def search_through_registered_server(root: Path, query: str, env: dict[str, str] | None = None,
                                     use_registered_command: bool = False) -> str:
    """Start the server ``.mcp.json`` registers, in ``root``, and return the text of one context_search.

    Plain ``cce`` is started as the cce under test; an absolute command (or any, with
    ``use_registered_command``) exactly as registered, the way the agent would.
    """
    import subprocess
    import threading

    from helpers import cce_executable

    if run_cce("mcp", "--help").returncode != 0:
        pytest.skip("this cce has no `mcp` command yet")
    server = json.loads(read(root / ".mcp.json"))["mcpServers"]["cce"]
    command = server["command"] if use_registered_command or server["command"] != "cce" else cce_executable()
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "context_search", "arguments": {"query": query}}},
    ]
    env = {k: v for k, v in (os.environ if env is None else env).items() if k != "CCE_DEBUG"}
    # Read the reply to the call, then stop the server: how it ends is the server tests' business.
    proc = subprocess.Popen([command, *server["args"]], cwd=root, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    watchdog = threading.Timer(120, proc.kill)  # a hung server ends the read below instead of the suite
    watchdog.start()
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        replies = {}
        while 2 not in replies:
            line = proc.stdout.readline()
            assert line, "the server closed its output before answering"
            reply = json.loads(line)
            replies[reply.get("id")] = reply
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait(timeout=30)
        proc.stdin.close()
        proc.stdout.close()
    return replies[2]["result"]["content"][0]["text"]


def test_the_registered_server_serves_the_index_init_built(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    init_ok(root)
    text = search_through_registered_server(root, "hash password")
    assert text.startswith(" 1. [") and "auth.py:1-2" in text, text


def test_a_symlinked_claude_md_stays_a_link(tmp_path):
    root = tiny_repo(tmp_path / "proj")
    (root / "AGENTS.md").write_text("# Agents\n", encoding="utf-8")
    (root / "CLAUDE.md").symlink_to("AGENTS.md")
    init_ok(root)
    assert (root / "CLAUDE.md").is_symlink()
    assert read(root / "AGENTS.md") == "# Agents\n\n" + BLOCK

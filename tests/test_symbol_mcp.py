"""The symbol MCP tools through the official MCP SDK client, against a real ``cce mcp`` process.

``find_symbol``, ``find_references``, ``call_graph``, ``change_impact`` and
``repo_map`` are listed after the family's nine tools under our own ranking
profile and not at all under ``family`` (whose tool list is pinned across
the engines); each answers the same rows the CLI prints, bad arguments are
error results (never a dead server), and a long answer is paged with
``offset`` under its cap like the other read-only tools.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import hermetic_env

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'mcp>=2.3,<3')")

from test_mcp import McpClient, index

from cce_core.agents.mcp_symbol_tools import SYMBOL_ANSWER_CAPS, SYMBOL_TOOL_DEFINITIONS

SYMBOL_TOOLS = [d["name"] for d in SYMBOL_TOOL_DEFINITIONS]
UTIL = '"""Helpers."""\n\n\ndef helper(value):\n    return value * 2\n\n\ndef other():\n    return helper(3)\n'
APP = ("from pkg.util import helper\n\n\nclass Service:\n    def run(self, x):\n"
       "        return helper(x) + self.step()\n\n    def step(self):\n        return 1\n")
TESTS = "from pkg.util import helper\n\n\ndef test_helper():\n    assert helper(2) == 4\n"
# 1,500 calls of one function: an answer far above the 40,000-character cap of find_references.
MANY = "from pkg.util import helper\n\n\ndef hammer():\n" + "".join(f"    helper({i})\n" for i in range(1500))
PAGE_TAIL = re.compile(r"\n?… truncated at (\d+) of (\d+) characters; ask for more with offset=(\d+) "
                       r"\(same arguments\)\n\Z")
PAGE_LEAD = re.compile(r"\A… from character (\d+) of (\d+):\n")
OWN_PROFILE = {"CCE_RANKING_PROFILE": "default"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("symbol-mcp")
    root = base / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "util.py").write_text(UTIL, encoding="utf-8")
    (root / "pkg" / "app.py").write_text(APP, encoding="utf-8")
    (root / "pkg" / "many.py").write_text(MANY, encoding="utf-8")
    (root / "tests" / "test_util.py").write_text(TESTS, encoding="utf-8")
    env = {**os.environ, **hermetic_env(base)}
    for args in (("init", "--quiet"), ("add", "."), ("commit", "--quiet", "-m", "first")):
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 0, done.stderr
    index(root)
    return root


@pytest.fixture(scope="module")
def server(repo: Path) -> Iterator[McpClient]:
    client = McpClient("--dir", repo, env=OWN_PROFILE)
    yield client
    client.close()


def test_the_five_tools_follow_the_nine_with_their_schemas(server: McpClient) -> None:
    from cce_core.agents.mcp_tools import TOOL_DEFINITIONS

    tools = server.tools()
    assert [t.name for t in tools] == [d["name"] for d in TOOL_DEFINITIONS] + SYMBOL_TOOLS
    for tool, pinned in zip(tools[len(TOOL_DEFINITIONS):], SYMBOL_TOOL_DEFINITIONS, strict=True):
        assert tool.description == pinned["description"]
        assert tool.input_schema == pinned["inputSchema"]


def test_the_family_profile_keeps_the_family_tool_list(repo: Path) -> None:
    client = McpClient("--dir", repo, env={"CCE_RANKING_PROFILE": "family"})
    try:
        assert not {t.name for t in client.tools()} & set(SYMBOL_TOOLS)
        text, is_error = client.call("find_symbol", {"name": "helper"})
        assert is_error and text == "unknown tool: find_symbol"
    finally:
        client.close()


def test_find_symbol_gives_kind_location_and_signature(server: McpClient) -> None:
    text = server.text("find_symbol", {"name": "helper"})
    assert text == "pkg/util.py:4  function  helper  def helper(value):\n"
    fuzzy = server.text("find_symbol", {"name": "servic", "fuzzy": True})
    assert "pkg/app.py:4  class  Service" in fuzzy


def test_find_references_groups_uses_by_file_with_the_enclosing_function(server: McpClient) -> None:
    text = server.text("find_references", {"name": "helper", "limit": 5})
    lines = text.split("\n")
    assert lines[0].endswith("use(s) of helper")
    assert "pkg/app.py" in lines and "       1  at module level  (import, import)" in lines
    assert "       6  in Service.run  (call, import)" in lines
    assert "more (ask again with a larger limit)" in text


def test_call_graph_both_directions(server: McpClient) -> None:
    callers = server.text("call_graph", {"name": "helper"})
    assert "pkg/app.py:6  Service.run calls helper pkg/util.py:4  [import]" in callers
    callees = server.text("call_graph", {"name": "Service.run", "direction": "callees"})
    assert "pkg/app.py:6  Service.run calls Service.step pkg/app.py:8  [same-file]" in callees


def test_change_impact_of_an_edit(server: McpClient, repo: Path) -> None:
    util = repo / "pkg" / "util.py"
    try:
        util.write_text(UTIL.replace("value * 2", "value * 5"), encoding="utf-8")
        text = server.text("change_impact", {})
    finally:
        util.write_text(UTIL, encoding="utf-8")
    assert text.startswith("working tree vs HEAD: 1 changed file(s)\ntouched (1):\n  pkg/util.py:4  function  helper")
    assert "tests/test_util.py:5  test_helper  uses helper pkg/util.py:4" in text


def test_repo_map_stays_within_its_token_budget(server: McpClient) -> None:
    text = server.text("repo_map", {"tokens": 60})
    assert text.startswith("pkg/util.py:\n")
    used = re.search(r"~(\d+) of 60 tokens", text)
    assert used and int(used.group(1)) <= 60


@pytest.mark.parametrize(("tool", "args", "message"), [
    ("find_symbol", {}, "`name` must be a non-empty string"),
    ("find_references", {"name": "helper", "limit": "ten"}, "`limit` must be an integer"),
    ("call_graph", {"name": "helper", "depth": 9}, "--depth must be between 1 and 5"),
    ("call_graph", {"name": "helper", "direction": "sideways"}, "unknown direction"),
    ("change_impact", {"diff": "no-such-revision"}, "git diff failed"),
    ("repo_map", {"tokens": -1}, "--tokens must be between"),
    ("find_references", {"name": "helper", "offset": -3}, "`offset` must be a non-negative integer"),
])
def test_bad_arguments_are_error_results(server: McpClient, tool: str, args: dict[str, object],
                                         message: str) -> None:
    text, is_error = server.call(tool, args)
    assert is_error and message in text, text
    assert server.text("find_symbol", {"name": "helper"})  # the server is still there


def test_a_long_answer_is_paged_under_its_cap(server: McpClient) -> None:
    cap = SYMBOL_ANSWER_CAPS["find_references"]
    args = {"name": "helper", "limit": 2000}
    whole, offset, pages = "", 0, 0
    while True:
        page = server.text("find_references", {**args, **({"offset": offset} if offset else {})})
        pages += 1
        assert len(page) <= cap
        if offset:
            lead = PAGE_LEAD.match(page)
            assert lead and int(lead.group(1)) == offset
            page = page[lead.end():]
        tail = PAGE_TAIL.search(page)
        if tail is None:
            whole += page
            break
        whole += page[:tail.start()] + ("\n" if not page[:tail.start()].endswith("\n") else "")
        offset = int(tail.group(3))
    assert pages >= 2
    assert whole.count("  in hammer  (call, import)") == 1500


def test_the_tool_functions_are_thin() -> None:
    from test_adapters_thin import fat_functions

    source = (Path(__file__).resolve().parents[1] / "cce_core" / "agents" / "mcp_symbol_tools.py").read_text(
        encoding="utf-8")
    assert fat_functions(source, "cce_core.agents") == {}


def test_a_workspace_session_asks_every_member(tmp_path: Path) -> None:
    from helpers import run_cce

    root = tmp_path / "ws"
    core = "function parse(text) {\n  return text.trim();\n}\nmodule.exports = { parse };\n"
    app = "const { parse } = require('core');\n\nfunction main() {\n  return parse(' x ');\n}\n"
    for member, body in (("core", core), ("app", app)):
        (root / "packages" / member).mkdir(parents=True)
        (root / "packages" / member / "package.json").write_text(f'{{"name": "{member}"}}', encoding="utf-8")
        (root / "packages" / member / "index.js").write_text(body, encoding="utf-8")
    for args in (("workspace", "init", root), ("index", "--workspace", root)):
        done = run_cce(*args)
        assert done.returncode == 0, done.stderr
    client = McpClient("--workspace", "--dir", root, env=OWN_PROFILE)
    try:
        assert client.text("find_symbol", {"name": "parse"}).startswith("core:index.js:1  function  parse")
        uses = client.text("find_references", {"name": "parse"})
        assert "app:index.js\n" in uses
        scoped = client.text("find_references", {"name": "parse", "package": "core"})
        assert "app:index.js" not in scoped
        text, is_error = client.call("find_symbol", {"name": "parse", "package": "nope"})
        assert is_error and "no workspace member" in text
    finally:
        client.close()

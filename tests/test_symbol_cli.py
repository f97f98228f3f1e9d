"""The symbol commands as a user runs them: ``cce symbols|refs|callers|callees|impact|map``.

A three-file Python project in a git repository is indexed once; each
command's ``--json`` must be one object whose list holds rows with at least
``file_path``, ``line``, ``name`` and ``kind`` (a reference's line being the
line of the use, the import line included), the text output must say the
same thing, and bad input must be one ``error:`` line with a non-zero exit.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import hermetic_env, run_cce

UTIL = '"""Helpers."""\n\n\ndef helper(value):\n    return value * 2\n\n\ndef other():\n    return helper(3)\n'
APP = ("from pkg.util import helper\n\n\nclass Service:\n    def run(self, x):\n"
       "        return helper(x) + self.step()\n\n    def step(self):\n        return 1\n")
TESTS = ("from pkg.app import Service\nfrom pkg.util import helper\n\n\ndef test_helper():\n"
         "    assert helper(2) == 4\n\n\ndef test_service():\n    assert Service().run(1) == 3\n")
ROW_KEYS = {"file_path", "line", "name", "kind"}


def _git(root: Path, env: dict[str, str], *args: str) -> None:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("symbol-cli")
    env = {**os.environ, **hermetic_env(base)}
    root = base / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "util.py").write_text(UTIL, encoding="utf-8")
    (root / "pkg" / "app.py").write_text(APP, encoding="utf-8")
    (root / "tests" / "test_app.py").write_text(TESTS, encoding="utf-8")
    _git(root, env, "init", "--quiet")
    _git(root, env, "add", ".")
    _git(root, env, "commit", "--quiet", "-m", "first")
    done = run_cce("index", root, "--no-metrics")
    assert done.returncode == 0, done.stderr
    return root, env


def json_of(*args: str | Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = run_cce(*args, "--json", env=env)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert isinstance(payload, dict)
    return payload


def assert_rows(rows: list[dict[str, Any]]) -> None:
    assert rows, "no rows"
    for row in rows:
        assert set(row) >= ROW_KEYS, row
        assert isinstance(row["line"], int) and row["line"] >= 1


def test_symbols_finds_the_definition_with_its_signature(project: tuple[Path, dict[str, str]]) -> None:
    root, _env = project
    payload = json_of("symbols", "helper", "--dir", root)
    assert_rows(payload["definitions"])
    assert [(r["file_path"], r["line"], r["kind"]) for r in payload["definitions"]] == [("pkg/util.py", 4, "function")]
    assert payload["definitions"][0]["signature"].startswith("def helper(")
    qualified = json_of("symbols", "Service.step", "--store", root / ".cce" / "index.cce")
    assert [(r["file_path"], r["line"]) for r in qualified["definitions"]] == [("pkg/app.py", 8)]


def test_refs_rows_are_uses_with_the_import_lines(project: tuple[Path, dict[str, str]]) -> None:
    root, _env = project
    payload = json_of("refs", "helper", "--dir", root)
    assert_rows(payload["references"])
    sites = {(r["file_path"], r["line"]) for r in payload["references"]}
    # the calls, and the import statements (line 1 of app.py, line 2 of the test), never the definition itself
    assert {("pkg/app.py", 1), ("pkg/app.py", 6), ("pkg/util.py", 9), ("tests/test_app.py", 2),
            ("tests/test_app.py", 6)} <= sites
    assert ("pkg/util.py", 4) not in sites
    text = run_cce("refs", "helper", "--dir", root).stdout
    assert "pkg/app.py\n" in text and "in Service.run" in text


def test_callers_and_callees_name_the_other_end(project: tuple[Path, dict[str, str]]) -> None:
    root, _env = project
    callers = json_of("callers", "helper", "--dir", root)
    assert_rows(callers["callers"])
    assert {(r["name"], r["file_path"], r["line"]) for r in callers["callers"]} >= {
        ("Service.run", "pkg/app.py", 6), ("other", "pkg/util.py", 9), ("test_helper", "tests/test_app.py", 6)}
    callees = json_of("callees", "Service.run", "--dir", root)
    assert_rows(callees["callees"])
    assert {r["name"] for r in callees["callees"]} >= {"helper", "Service.step"}
    deeper = json_of("callers", "Service.step", "--depth", "2", "--dir", root)
    assert {(r["name"], r["depth"]) for r in deeper["callers"]} >= {("Service.run", 1)}


def test_impact_lists_the_touched_function_its_callers_and_tests(project: tuple[Path, dict[str, str]]) -> None:
    root, env = project
    util = root / "pkg" / "util.py"
    try:
        util.write_text(UTIL.replace("value * 2", "value * 3"), encoding="utf-8")
        payload = json_of("impact", "--dir", root, env=env)
        assert [(r["name"], r["file_path"]) for r in payload["touched"]] == [("helper", "pkg/util.py")]
        assert_rows(payload["touched"])
        assert_rows(payload["callers"])
        assert {(r["file_path"], r["line"]) for r in payload["callers"]} >= {
            ("pkg/app.py", 6), ("pkg/util.py", 9), ("tests/test_app.py", 6)}
        assert_rows(payload["tests"])
        assert {r["file_path"] for r in payload["tests"]} == {"tests/test_app.py"}
        staged = json_of("impact", "--staged", "--dir", root, env=env)
        assert staged["touched"] == []  # nothing is staged
    finally:
        util.write_text(UTIL, encoding="utf-8")


def test_map_fits_its_budget_and_ranks_the_used_file_first(project: tuple[Path, dict[str, str]]) -> None:
    root, _env = project
    payload = json_of("map", "--tokens", "200", "--dir", root)
    assert_rows(payload["rows"])
    assert payload["used_tokens"] <= 200
    assert payload["files"][0]["file_path"] == "pkg/util.py"  # helper is used from two other files
    text = run_cce("map", "--tokens", "200", "--dir", root).stdout
    assert text.startswith("pkg/util.py:\n")


@pytest.mark.parametrize(("args", "message"), [
    (("callers", "helper", "--depth", "9"), "--depth must be between 1 and 5"),
    (("refs", "helper", "--limit", "0"), "--limit must be at least 1"),
    (("map", "--tokens", "0"), "--tokens must be between 1"),
    (("impact", "--diff", "no-such-revision"), "git diff failed"),
    (("impact", "--diff", "HEAD", "--staged"), "either --diff REV or --staged"),
    (("symbols", " "), "give a symbol name"),
])
def test_bad_input_is_one_error_line(project: tuple[Path, dict[str, str]], args: tuple[str, ...],
                                     message: str) -> None:
    root, env = project
    done = run_cce(*args, "--dir", root, env=env)
    assert done.returncode != 0
    assert done.stderr.startswith("error: ") and message in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr


def test_a_directory_without_an_index_is_one_error_line(tmp_path: Path) -> None:
    done = run_cce("refs", "helper", "--dir", tmp_path)
    assert done.returncode != 0
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr


def test_signatures_and_map_are_redacted(tmp_path: Path) -> None:
    from secret_formats import j, rand

    secret = j("gh", "p_", rand("symbol-sig", 36))
    root = tmp_path / "leaky"
    root.mkdir()
    (root / "client.py").write_text(f'def connect(token="{secret}"):\n    return token\n', encoding="utf-8")
    (root / "user.py").write_text("from client import connect\n\n\ndef main():\n    return connect()\n",
                                  encoding="utf-8")
    assert run_cce("index", root, "--no-metrics").returncode == 0
    outputs = [run_cce("symbols", "connect", "--dir", root, "--json"), run_cce("map", "--dir", root, "--json"),
               run_cce("callers", "connect", "--dir", root, "--json"), run_cce("symbols", "connect", "--dir", root)]
    for done in outputs:
        assert done.returncode == 0, done.stderr
        assert "connect" in done.stdout
        assert secret not in done.stdout and secret[-10:] not in done.stdout


def test_a_workspace_answers_member_qualified_rows(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    core = "function parse(text) {\n  return text.trim();\n}\nmodule.exports = { parse };\n"
    app = "const { parse } = require('core');\n\nfunction main() {\n  return parse(' x ');\n}\n"
    for member, body in (("core", core), ("app", app)):
        (root / "packages" / member).mkdir(parents=True)
        (root / "packages" / member / "package.json").write_text(json.dumps({"name": member}), encoding="utf-8")
        (root / "packages" / member / "index.js").write_text(body, encoding="utf-8")
    for args in (("workspace", "init", root), ("index", "--workspace", root)):
        done = run_cce(*args)
        assert done.returncode == 0, done.stderr
    found = json_of("symbols", "parse", "--workspace", "--dir", root)["definitions"]
    assert_rows(found)
    assert [(r["member"], r["file_path"], r["line"]) for r in found] == [("core", "index.js", 1)]
    uses = json_of("refs", "parse", "--workspace", "--dir", root)["references"]
    assert ("app", "index.js", 4) in {(r["member"], r["file_path"], r["line"]) for r in uses}
    scoped = json_of("refs", "parse", "--workspace", "--package", "core", "--dir", root)["references"]
    assert {r["member"] for r in scoped} <= {"core"}
    text = run_cce("symbols", "parse", "--workspace", "--dir", root).stdout
    assert text.startswith("core:index.js:1  function  parse")
    mapped = json_of("map", "--workspace", "--dir", root)
    assert_rows(mapped["rows"])
    done = run_cce("refs", "parse", "--workspace", "--package", "nope", "--dir", root)
    assert done.returncode != 0 and done.stderr.startswith("error: no workspace member"), done.stderr

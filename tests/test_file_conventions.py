"""File roles from plugin conventions: the pattern grammar, the hook, its validation, its cache and its effect.

The core's role rules name no language; a plugin declares its language's test
and generated files through ``cce_file_conventions``. These tests hold that
line: a throwaway plugin's convention changes a role, a language no plugin
speaks for keeps the general rules, a bad answer is reported and left out,
the family profile never reads roles, and a one-shot search reads the pooled
answer from the cache without importing any plugin.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

from cce_core.api import FileConventions, hookimpl, validate_plugin
from cce_core.foundation.path_patterns import PathPatterns, pattern_problem
from cce_core.indexing.indexer import build_index
from cce_core.plugins import conventions_cache
from cce_core.plugins.host import PluginHost, default_host
from cce_core.retrieval import file_roles
from cce_core.retrieval.file_roles import GENERATED, NEUTRAL, SOURCE, TEST, FileRoles
from cce_core.retrieval.searcher import Searcher

REPO = Path(__file__).resolve().parents[1]


class LuaConventions:
    """A throwaway plugin for a language no pack in this repository speaks: busted specs, generated bindings."""

    @hookimpl
    def cce_file_conventions(self) -> FileConventions:
        return FileConventions(tests=("*_spec.lua", "spec/"), generated=("*.gen.lua",))


def _host(*plugins: Any) -> PluginHost:
    return PluginHost([(p, "") for p in plugins], entry_points=False)


# -- the pattern grammar ------------------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "path", "hit"), [
    ("*_test.go", "pkg/a/b_test.go", True),
    ("*_test.go", "pkg/a/b_test.go.orig", False),
    ("conftest.py", "tests/sub/conftest.py", True),
    ("spec/", "spec/models/user_spec.rb", True),
    ("spec/", "lib/spec.rb", False),  # a directory pattern never matches the file name
    ("src/test/", "module/src/test/java/A.java", True),
    ("src/test/", "src/main/test/A.java", False),  # components must follow one another
    ("test/*_test.rb", "a/test/x_test.rb", True),
    ("test/*_test.rb", "a/test/deep/x_test.rb", False),
    ("?*Test.java", "src/FooTest.java", True),
    ("?*Test.java", "src/Test.java", False),
    ("*Test.java", "src/latest.java", False),  # case-sensitive
])
def test_a_pattern_matches_by_name_directory_or_tail(pattern: str, path: str, hit: bool) -> None:
    assert PathPatterns((pattern,)).matches(path) is hit


@pytest.mark.parametrize("pattern", ["", " *.py", "/abs/*.py", "a\\b.py", "**/x.py", "a//b", "../x.py", "*", "*/",
                                     3])
def test_a_malformed_pattern_is_named(pattern: object) -> None:
    assert pattern_problem(pattern)


def test_a_well_formed_pattern_passes() -> None:
    assert [pattern_problem(p) for p in ("*_test.go", "spec/", "src/test/", "test/*_test.rb")] == [None] * 4


# -- roles: general rules plus conventions ------------------------------------------------------


def test_a_plugin_convention_changes_a_role_and_a_language_without_one_keeps_the_general_rules() -> None:
    roles = FileRoles(_host(LuaConventions()).file_conventions.pooled())
    assert roles.role("src/parser_spec.lua") == TEST and NEUTRAL.role("src/parser_spec.lua") == SOURCE
    assert roles.role("spec/helpers.lua") == TEST and NEUTRAL.role("spec/helpers.lua") == SOURCE
    assert roles.role("src/bindings.gen.lua") == GENERATED
    # No plugin speaks for Go here: its file-name convention is not the core's to know, its folders are.
    assert roles.role("pkg/server_test.go") == SOURCE
    assert roles.role("tests/server.go") == TEST and roles.role("vendor/x/y.go") == GENERATED
    assert roles.weight("src/parser_spec.lua", frozenset()) < 1.0
    asks_for_tests = frozenset({"test"})
    assert roles.weight("src/parser_spec.lua", asks_for_tests) > roles.weight("src/parser.lua", asks_for_tests)


def test_generated_wins_over_test() -> None:
    roles = FileRoles(FileConventions(tests=("*_test.go",), generated=("*.pb.go",)))
    assert roles.role("api/v1_test.pb.go") == GENERATED


def _rule_strings(path: Path) -> set[str]:
    """Every string literal of a module's code, its docstrings (which may cite examples) left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return {node.value.lower() for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings}


def test_the_core_rules_name_no_language() -> None:
    strings = _rule_strings(REPO / "cce_core" / "retrieval" / "file_roles.py")
    assert "tests" in strings  # the general folder rules are there ...
    for convention in ("_test", "test_", "conftest.py", "spec", "specs", "__tests__", "__mocks__", "node_modules",
                       "target", "cargo.lock", "package-lock.json", "gemfile.lock", "yarn.lock", ".test.", ".spec."):
        assert convention not in strings, convention  # ... a language's own are not


# Each pack's own conventions, as its users meet them (packs whose grammar is not installed are skipped).
@pytest.mark.parametrize(("module", "path", "role"), [
    ("cce_pack_python", "pkg/test_app.py", TEST), ("cce_pack_python", "pkg/app_test.py", TEST),
    ("cce_pack_python", "conftest.py", TEST), ("cce_pack_python", "api/user_pb2.py", GENERATED),
    ("cce_pack_python", "src/contest.py", SOURCE),
    ("cce_pack_javascript", "src/a.test.js", TEST), ("cce_pack_javascript", "src/__tests__/a.js", TEST),
    ("cce_pack_javascript", "node_modules/x/index.js", GENERATED),
    ("cce_pack_typescript", "src/a.spec.ts", TEST), ("cce_pack_typescript", "src/index.d.ts", SOURCE),
    ("cce_pack_ruby", "spec/models/user_spec.rb", TEST), ("cce_pack_ruby", "lib/user_test.rb", TEST),
    ("cce_pack_rust", "src/parser/tests.rs", TEST), ("cce_pack_rust", "target/debug/build/x.rs", GENERATED),
    ("cce_pack_c", "src/jq_test.c", TEST),
    ("cce_pack_go", "lib/foo_test.go", TEST), ("cce_pack_go", "api/v1/user.pb.go", GENERATED),
    ("cce_pack_java", "src/main/java/FooTest.java", TEST), ("cce_pack_java", "src/main/java/Test.java", SOURCE),
])
def test_each_pack_declares_its_languages_conventions(module: str, path: str, role: str) -> None:
    pack_dir = next((REPO / "packs").glob(f"cce-pack-*/{module}"), None)
    if module not in sys.modules and pack_dir is not None and str(pack_dir.parent) not in sys.path:
        sys.path.insert(0, str(pack_dir.parent))  # a pack not installed in this environment (go, java)
    plugin = importlib.import_module(module)
    host = _host(plugin)
    assert host.file_conventions.problems == []
    assert FileRoles(host.file_conventions.pooled()).role(path) == role
    assert NEUTRAL.role(path) in {role, SOURCE}  # the core alone says source, or already agrees


# -- a bad answer is reported, never fatal ------------------------------------------------------


class WrongType:
    @hookimpl
    def cce_file_conventions(self) -> Any:
        return {"tests": ("*_spec.lua",)}


class BadPattern:
    @hookimpl
    def cce_file_conventions(self) -> FileConventions:
        return FileConventions(tests=("**/x_spec.lua", "ok_spec.lua"))


class Raises:
    @hookimpl
    def cce_file_conventions(self) -> FileConventions:
        raise RuntimeError("boom")


@pytest.mark.parametrize(("plugin", "words"), [(WrongType(), "not a FileConventions"), (BadPattern(), "'**'"),
                                               (Raises(), "raised RuntimeError: boom")])
def test_a_bad_answer_is_left_out_and_named_while_the_others_count(plugin: Any, words: str) -> None:
    host = _host(plugin, LuaConventions())
    registry = host.file_conventions
    assert len(registry.problems) >= 1 and words in registry.problems[0]
    assert registry.pooled().tests == ("*_spec.lua", "spec/")  # only the good plugin's
    assert host.startup_problems() == []  # the engine still runs ...
    assert any(words in p for p in host.advisory_problems())  # ... but `cce packs --validate` fails
    report = validate_plugin(plugin)
    assert not report.ok and any(words in d for d in report.diagnostics)


def test_a_good_answer_validates() -> None:
    assert validate_plugin(LuaConventions()).ok


# -- the default ranking reads the roles, the family never does ---------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "sessions.py").write_text(
        "def sign_cookie(value, secret):\n    \"\"\"Sign a session cookie value with the secret key.\"\"\"\n"
        "    return secret + value\n")
    (root / "src" / "app.py").write_text(
        "from sessions import sign_cookie\n\n\ndef respond(value, secret):\n    return sign_cookie(value, secret)\n")
    return root


def _scores(root: Path, profile: str, query: str) -> dict[tuple[str, int], float]:
    host = default_host()
    embedder = host.embedder("hash")
    data, _ = build_index(str(root), host, embedder, protect_secrets=True)
    results = Searcher(data, embedder, profile=profile).search(query, top_k=10)
    return {(r.chunk.file_path, r.chunk.start_line): r.score for r in results}


@pytest.fixture
def restore_roles() -> Any:
    yield
    file_roles.use_roles(None)


def test_a_convention_holds_a_file_back_in_the_default_ranking(repo: Path, restore_roles: None) -> None:
    file_roles.use_roles(NEUTRAL)
    plain = _scores(repo, "default", "session cookie secret")
    file_roles.use_roles(FileRoles(FileConventions(tests=("sessions.py",))))
    held = _scores(repo, "default", "session cookie secret")
    key = ("src/sessions.py", 1)
    assert held[key] == pytest.approx(plain[key] * file_roles.ROLE_WEIGHTS[TEST])


def test_the_family_profile_never_reads_file_roles(repo: Path, restore_roles: None,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    file_roles.use_roles(NEUTRAL)
    before = _scores(repo, "family", "session cookie secret")
    file_roles.use_roles(FileRoles(FileConventions(tests=("sessions.py", "app.py"))))

    def refuse(*_: object) -> None:
        raise AssertionError("the family profile asked for a file role")

    monkeypatch.setattr(FileRoles, "role", refuse)
    assert _scores(repo, "family", "session cookie secret") == before


# -- the cache a one-shot search reads ----------------------------------------------------------


def test_the_pooled_conventions_are_cached_and_refreshed_when_a_plugin_file_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plugin_file = tmp_path / "lua_conventions_plugin.py"
    plugin_file.write_text("")
    calls: list[int] = []

    def full_host() -> tuple[FileConventions, list[str]]:
        calls.append(1)
        return FileConventions(tests=("*_spec.lua",)), [str(plugin_file)]

    monkeypatch.setenv("CCE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CCE_NO_PLUGIN_CACHE", raising=False)
    monkeypatch.setattr("cce_core.plugins.host._default_host", None)
    monkeypatch.setattr(conventions_cache, "_from_full_host", full_host)
    first = conventions_cache.installed_file_conventions()
    second = conventions_cache.installed_file_conventions()
    assert first == second == FileConventions(tests=("*_spec.lua",)) and len(calls) == 1
    assert list((tmp_path / "cache").glob("file-conventions-*.json"))
    import os

    stat = plugin_file.stat()
    os.utime(plugin_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert conventions_cache.installed_file_conventions() == first and len(calls) == 2


def test_the_pack_self_test_refuses_a_convention_that_makes_its_own_source_a_test() -> None:
    import cce_pack_python

    from cce_core.api import pack_self_test

    class TooBroad:
        """The Python pack, with a tests pattern that matches every Python file."""

        @hookimpl
        def cce_register_packs(self, register: Any) -> None:
            register(cce_pack_python.PACK)

        @hookimpl
        def cce_file_conventions(self) -> FileConventions:
            return FileConventions(tests=("*.py",))

    problems = pack_self_test(TooBroad(), "python")
    assert problems and all("would hold back ordinary source" in p for p in problems)
    assert pack_self_test(cce_pack_python, "python") == []

"""`cce packs new`'s engine: a generated pack is complete, its guesses are sound, bad input writes nothing.

Everything here runs against grammars a default install always has (the
python grammar is a dependency of a default pack), so the suite needs no
network and no optional wheel. The heuristics and the tags.scm reader are also
tested on plain strings, which covers grammars that are not installed.
"""

from __future__ import annotations

import importlib
import re
import runpy
import shutil
import subprocess
import sys
import tomllib
import types
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
from tree_sitter import Parser

from cce_core.authoring import (
    grammar_source,
    kind_guesses,
    pack_render,
    pack_sample,
    pack_templates,
    scaffold,
    tags_query,
)
from cce_core.authoring.kind_guesses import (
    looks_like_body,
    looks_like_class,
    looks_like_doc,
    looks_like_function,
    looks_like_import,
)
from cce_core.authoring.scaffold import check_extensions, render_report, scaffold_pack
from cce_core.authoring.tags_query import tags_definitions
from cce_core.foundation.errors import CceError

GRAMMAR = "tree-sitter-python"

SAMPLE = '''\
import os
from collections import OrderedDict


class Greeter:
    """Says hello."""

    def greet(self, name):
        return f"hello {name}"


def main():
    return Greeter().greet(os.getcwd())


def helper():
    def inner():
        return OrderedDict()

    return inner
'''


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "given" / "greeter.pyx2"
    path.parent.mkdir()
    path.write_text(SAMPLE, encoding="utf-8")
    return path


@pytest.fixture
def import_generated(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.SimpleNamespace]:
    """Imports a generated package from its distribution directory, and forgets it afterwards."""
    imported: list[str] = []

    def load(target: Path, module: str) -> types.ModuleType:
        monkeypatch.syspath_prepend(str(target))
        imported.append(module)
        return importlib.import_module(module)

    yield types.SimpleNamespace(load=load)
    for module in imported:
        sys.modules.pop(module, None)


def _leftovers(out_dir: Path) -> list[str]:
    return sorted(p.name for p in out_dir.iterdir()) if out_dir.exists() else []


# --- a complete pack --------------------------------------------------------------------------


def test_scaffold_writes_a_complete_distribution(tmp_path: Path, sample: Path) -> None:
    out = tmp_path / "out"
    report = scaffold_pack("pyclone", GRAMMAR, [".pyx2"], out, sample=sample)
    target = out / "cce-pack-pyclone"
    assert report.target == target
    assert report.module == "cce_pack_pyclone"
    for relative in ("pyproject.toml", "README.md", "cce_pack_pyclone/__init__.py", "cce_pack_pyclone/py.typed",
                     "cce_pack_pyclone/sample.pyx2", "tests/test_pack_pyclone.py"):
        assert (target / relative).is_file(), relative
    assert (target / "cce_pack_pyclone/sample.pyx2").read_bytes() == sample.read_bytes()
    assert (target / "cce_pack_pyclone/py.typed").read_bytes() == b""
    assert _leftovers(out) == ["cce-pack-pyclone"]  # no temporary directory left beside it


def test_pyproject_pins_the_grammar_and_declares_the_entry_point(tmp_path: Path, sample: Path) -> None:
    report = scaffold_pack("pyclone", GRAMMAR, [".pyx2"], tmp_path, sample=sample)
    data = tomllib.loads((report.target / "pyproject.toml").read_text(encoding="utf-8"))
    project = data["project"]
    assert project["name"] == "cce-pack-pyclone"
    assert project["version"] == "0.1.0"
    assert project["requires-python"] == ">=3.11"
    grammar_pin = f"{metadata.distribution(GRAMMAR).metadata['Name']}=={metadata.version(GRAMMAR)}"
    assert project["dependencies"] == ["cce-core>=0.2.1,<0.3", f"tree-sitter=={metadata.version('tree-sitter')}",
                                       grammar_pin]
    assert project["entry-points"]["cce"] == {"pyclone": "cce_pack_pyclone"}
    assert data["tool"]["setuptools"]["packages"] == ["cce_pack_pyclone"]
    assert sorted(data["tool"]["setuptools"]["package-data"]["cce_pack_pyclone"]) == ["py.typed", "sample.pyx2"]


def test_guesses_and_expected_values(tmp_path: Path, sample: Path) -> None:
    report = scaffold_pack("pyclone", GRAMMAR, [".pyx2"], tmp_path, sample=sample)
    assert report.function_types == ("function_definition",)
    assert report.class_types == ("class_definition",)
    assert set(report.import_node_types) == {"import_statement", "import_from_statement"}
    assert "block" in report.body_node_types
    assert "comment" in report.doc_node_types
    # greet, main, helper and the nested inner; one class; imports in first-seen order.
    assert (report.min_functions, report.min_classes) == (4, 1)
    assert report.expected_kinds == ("function_definition", "class_definition")
    assert report.expected_imports == ("os", "collections")
    assert not report.sample_empty
    assert report.sample_origin == f"given {sample}"


def test_report_says_where_each_guess_came_from(tmp_path: Path, sample: Path) -> None:
    report = scaffold_pack("pyclone", GRAMMAR, [".pyx2"], tmp_path, sample=sample)
    text = render_report(report)
    assert text == "\n".join(report.lines)
    origin = report.guesses["function_types"].origin
    assert origin in (kind_guesses.FROM_TAGS, kind_guesses.BY_HEURISTIC)
    assert f"guessed function_types = ('function_definition',) {origin}" in text
    assert "guessed import_node_types = " in text and kind_guesses.BY_HEURISTIC in text
    assert "expected: min_functions=4 min_classes=1" in text
    assert "review this" in text
    assert "EMPTY" not in text
    if report.has_tags_query:  # the python wheel ships queries/tags.scm
        assert report.guesses["function_types"].from_tags == ("function_definition",)


def test_generated_module_compiles_and_builds_the_pack(tmp_path: Path, sample: Path,
                                                        import_generated: types.SimpleNamespace) -> None:
    report = scaffold_pack("pyclone", GRAMMAR, [".pyx2"], tmp_path, sample=sample)
    init = report.target / "cce_pack_pyclone" / "__init__.py"
    source = init.read_text(encoding="utf-8")
    compile(source, str(init), "exec")
    compile((report.target / "tests" / "test_pack_pyclone.py").read_text(encoding="utf-8"), "test_pack.py", "exec")
    # The generated code may lean on the public API only: internal modules move between releases.
    cce_imports = re.findall(r"^\s*(?:from|import) (cce_core\S*)", source, re.MULTILINE)
    assert cce_imports == ["cce_core.api"]

    module = import_generated.load(report.target, "cce_pack_pyclone")
    pack = module.PACK
    assert pack.name == "pyclone"
    assert pack.extensions == (".pyx2",)
    assert pack.grammar_distribution == metadata.distribution(GRAMMAR).metadata["Name"]
    assert pack.function_types == report.function_types
    assert pack.class_types == report.class_types
    assert pack.import_node_types == report.import_node_types
    assert pack.body_node_types == report.body_node_types
    assert pack.doc_node_types == report.doc_node_types
    assert pack.sample == SAMPLE
    assert pack.sample_name == "pyclone.pyx2"
    expected = pack.expected
    assert (expected.min_functions, expected.min_classes) == (4, 1)
    assert expected.kinds == ("function_definition", "class_definition")
    assert expected.imports == ("os", "collections")
    # What the engine will call gives what the pack expects (by construction).
    raw = SAMPLE.encode("utf-8")
    root = Parser(pack.grammar()).parse(raw).root_node
    assert pack.extract_imports(root, raw) == ["os", "collections"]
    assert callable(module.cce_register_packs) and callable(module.cce_render_compact)
    registered: list[object] = []
    module.cce_register_packs(registered.append)
    assert registered == [pack]


GENERATED_TESTS = ["test_the_pack_passes_its_self_test", "test_the_extensions_are_claimed_and_the_sample_is_shipped"]


def _run_generated_tests(target: Path) -> list[str]:
    """Calls every test function of the generated tests file (the pack must be importable); their names."""
    namespace = runpy.run_path(str(target / "tests" / "test_pack_pyclone.py"))
    ran = [name for name, test in namespace.items() if name.startswith("test_") and callable(test)]
    for name in ran:
        namespace[name]()
    return ran


def test_generated_tests_pass_the_validators(tmp_path: Path, sample: Path,
                                             import_generated: types.SimpleNamespace) -> None:
    api = importlib.import_module("cce_core.api")
    report = scaffold_pack("pyclone", GRAMMAR, [".pyx2"], tmp_path, sample=sample)
    module = import_generated.load(report.target, "cce_pack_pyclone")
    assert api.pack_self_test(module, "pyclone") == []
    tests = (report.target / "tests" / "test_pack_pyclone.py").read_text(encoding="utf-8")
    assert 'pack_self_test(PACKAGE, "pyclone") == []' in tests
    assert "SAMPLE_IS_EMPTY = False" in tests
    assert _run_generated_tests(report.target) == GENERATED_TESTS


def _ruff() -> str | None:
    beside = Path(sys.executable).with_name("ruff")
    return str(beside) if beside.exists() else shutil.which("ruff")


def test_generated_python_is_ruff_clean(tmp_path: Path, sample: Path) -> None:
    report = scaffold_pack("pyclone", GRAMMAR, [".pyx2"], tmp_path, sample=sample)
    ruff = _ruff()
    if ruff is None:
        return  # ruff is a development tool; the compile checks above still ran
    # Run inside the pack, so the ruff settings of its own pyproject.toml apply.
    result = subprocess.run([ruff, "check", "--no-cache", "."], cwd=report.target, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_extensions_default_to_the_name(tmp_path: Path) -> None:
    given = tmp_path / "s.pyclone"
    given.write_text("def f():\n    pass\n", encoding="utf-8")
    report = scaffold_pack("pyclone", GRAMMAR, None, tmp_path / "out", sample=given)
    assert report.extensions == (".pyclone",)
    assert report.sample_file == "sample.pyclone"
    assert report.min_functions == 1


def test_a_sample_without_an_extension_takes_the_first_claimed_one(tmp_path: Path) -> None:
    given = tmp_path / "SAMPLE"
    given.write_text("class A:\n    pass\n", encoding="utf-8")
    report = scaffold_pack("pyclone", GRAMMAR, [".pyx2", ".pyx3"], tmp_path / "out", sample=given)
    assert (report.target / "cce_pack_pyclone" / "sample.pyx2").read_text(encoding="utf-8") == given.read_text()
    assert (report.min_functions, report.min_classes) == (0, 1)
    assert any(line.startswith("WARNING: the sample holds no node") for line in report.lines)


# --- finding a sample -------------------------------------------------------------------------


def test_sample_is_the_smallest_clean_file_with_a_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    (project / "src" / "deep").mkdir(parents=True)
    (project / "node_modules").mkdir()
    (project / ".hidden").mkdir()
    (project / "tiny.pyx2").write_text("x = 1\n", encoding="utf-8")  # no function
    (project / "broken.pyx2").write_text("def f(:\n", encoding="utf-8")  # parse error
    (project / "src" / "big.pyx2").write_text("def big():\n    return 1\n\n\ndef other():\n    return 2\n",
                                              encoding="utf-8")
    (project / "src" / "deep" / "small.pyx2").write_text("def s():\n    pass\n", encoding="utf-8")
    (project / "src" / "deep" / "ignored.txt").write_text("def t():\n  0\n", encoding="utf-8")
    (project / "node_modules" / "a.pyx2").write_text("def a(): 0\n", encoding="utf-8")
    (project / ".hidden" / "h.pyx2").write_text("def h(): 0\n", encoding="utf-8")
    (project / "latin1.pyx2").write_bytes(b"def \xe9(): 0\n")  # not UTF-8
    monkeypatch.chdir(project)
    report = scaffold_pack("pyclone", GRAMMAR, [".pyx2"], tmp_path / "out")
    assert not report.sample_empty
    assert report.sample_origin.startswith(f"found {Path('src/deep/small.pyx2')} ")
    shipped = report.target / "cce_pack_pyclone" / "sample.pyx2"
    assert shipped.read_text(encoding="utf-8") == "def s():\n    pass\n"
    assert (report.min_functions, report.expected_kinds) == (1, ("function_definition",))


def test_no_sample_found_writes_an_empty_one_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          import_generated: types.SimpleNamespace) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    report = scaffold_pack("pyclone", GRAMMAR, [".pyx2"], tmp_path / "out")
    assert report.sample_empty
    assert (report.min_functions, report.min_classes, report.expected_kinds, report.expected_imports) == (0, 0, (),
                                                                                                         ())
    assert (report.target / "cce_pack_pyclone" / "sample.pyx2").read_bytes() == b""
    assert any("THE SAMPLE IS EMPTY" in line for line in report.lines)
    readme = (report.target / "README.md").read_text(encoding="utf-8")
    assert "WARNING: the sample is empty" in readme and "is EMPTY and must be replaced" in readme
    tests = (report.target / "tests" / "test_pack_pyclone.py").read_text(encoding="utf-8")
    assert "SAMPLE_IS_EMPTY = True" in tests
    import_generated.load(report.target, "cce_pack_pyclone")
    assert _run_generated_tests(report.target) == GENERATED_TESTS  # an empty sample passes the self-test too
    init = (report.target / "cce_pack_pyclone" / "__init__.py").read_text(encoding="utf-8")
    assert "min_functions=0," in init and "min_classes=0," in init


def test_sample_search_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    (project / "a").mkdir(parents=True)
    (project / "b").mkdir()
    for i in range(10):
        (project / "a" / f"f{i}.txt").write_text("x", encoding="utf-8")
    (project / "b" / "z.pyx2").write_text("def f():\n    pass\n", encoding="utf-8")  # walked after a/
    monkeypatch.setattr(pack_sample, "MAX_FILES_VISITED", 5)
    bounded = scaffold_pack("pyclone", GRAMMAR, [".pyx2"], tmp_path / "out1", search_root=project)
    assert bounded.sample_empty
    monkeypatch.setattr(pack_sample, "MAX_FILES_VISITED", 50)
    unbounded = scaffold_pack("pyclone", GRAMMAR, [".pyx2"], tmp_path / "out2", search_root=project)
    assert not unbounded.sample_empty


# --- bad input writes nothing -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"grammar_distribution": "cce-no-such-grammar-dist"},
         'distribution "cce-no-such-grammar-dist" is not installed — pip install cce-no-such-grammar-dist'),
        ({"grammar_distribution": "tree-sitter"}, "ships no tree-sitter grammar"),
        ({"grammar_distribution": "pluggy"}, "ships no tree-sitter grammar"),
        ({"name": "Py"}, 'invalid pack name "Py"'),
        ({"name": "1py"}, 'invalid pack name "1py"'),
        ({"name": "py-clone"}, 'invalid pack name "py-clone"'),
        ({"name": ""}, 'invalid pack name ""'),
        ({"extensions": ["pyx2"]}, 'invalid extension "pyx2"'),
        ({"extensions": [".PYX2"]}, 'e.g. ".pyx2"'),
        ({"extensions": [".a.b"]}, 'invalid extension ".a.b"'),
        ({"extensions": [".ok", ""]}, 'invalid extension ""'),
        ({"extensions": []}, "no extensions given"),
        ({"sample": "missing.pyx2"}, "does not exist"),
        ({"sample": "."}, "is not a file"),
    ],
)
def test_bad_input_raises_and_writes_nothing(tmp_path: Path, kwargs: dict[str, object], message: str) -> None:
    out = tmp_path / "new" / "out"  # not there yet: a failed run must not create it either
    args: dict[str, object] = {"name": "pyclone", "grammar_distribution": GRAMMAR, "extensions": [".pyx2"],
                               "out_dir": out, "sample": None}
    args.update(kwargs)
    if isinstance(args["sample"], str):
        args["sample"] = tmp_path / str(args["sample"])
    with pytest.raises(CceError) as caught:
        scaffold_pack(**args)  # type: ignore[arg-type]
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "new").exists()


def test_an_existing_target_is_left_alone(tmp_path: Path, sample: Path) -> None:
    target = tmp_path / "cce-pack-pyclone"
    target.mkdir()
    (target / "mine.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(CceError, match="already exists"):
        scaffold_pack("pyclone", GRAMMAR, [".pyx2"], tmp_path, sample=sample)
    assert sorted(p.name for p in target.iterdir()) == ["mine.txt"]
    assert (target / "mine.txt").read_text(encoding="utf-8") == "keep"
    assert _leftovers(tmp_path) == ["cce-pack-pyclone", "given"]


def test_a_non_utf8_sample_is_refused(tmp_path: Path) -> None:
    given = tmp_path / "latin1.pyx2"
    given.write_bytes(b"# caf\xe9\n")
    with pytest.raises(CceError, match="not UTF-8"):
        scaffold_pack("pyclone", GRAMMAR, [".pyx2"], tmp_path / "out", sample=given)
    assert not (tmp_path / "out").exists()


def test_a_failed_write_removes_the_temporary_directory(tmp_path: Path, sample: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    out.mkdir()
    real_write = Path.write_bytes
    calls = {"n": 0}

    def failing_write(self: Path, data: bytes) -> int:  # type: ignore[override]
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", failing_write)
    with pytest.raises(CceError, match=r"could not write .*No space left on device"):
        scaffold_pack("pyclone", GRAMMAR, [".pyx2"], out, sample=sample)
    monkeypatch.undo()
    assert calls["n"] == 3
    assert _leftovers(out) == []


# --- the heuristics, on kind names of grammars this suite does not install --------------------


@pytest.mark.parametrize("kind", [
    "function_declaration", "function_definition", "function_item", "method_declaration", "method_definition",
    "local_function_declaration", "constructor_declaration", "compact_constructor_declaration", "method",
    "singleton_method", "generator_function_declaration", "function_definition_statement",
])
def test_function_shapes(kind: str) -> None:
    assert looks_like_function(kind)


@pytest.mark.parametrize("kind", [
    "function_call", "call_expression", "func_literal", "function_type", "function_signature", "method_signature",
    "abstract_method_signature", "function_expression", "arrow_function", "anonymous_function", "lambda",
    "formal_parameters", "function_declarator", "method_elem", "function_static_declaration", "constructor_body",
    "explicit_constructor_invocation", "table_constructor", "assignment_statement", "declaration",
])
def test_not_function_shapes(kind: str) -> None:
    assert not looks_like_function(kind)


@pytest.mark.parametrize("kind", [
    "class_declaration", "class_definition", "interface_declaration", "struct_item", "enum_declaration",
    "type_declaration", "trait_item", "impl_item", "class", "module", "struct_specifier", "abstract_class_declaration",
    "record_declaration", "annotation_type_declaration", "trait_declaration", "singleton_class",
    "object_declaration", "protocol_declaration",
])
def test_class_shapes(kind: str) -> None:
    assert looks_like_class(kind)


@pytest.mark.parametrize("kind", [
    "class_body", "interface_type", "struct_type", "type_spec", "type_item", "type_definition", "type", "object",
    "enum_body_declarations", "class_heritage", "type_list", "superclass", "anonymous_class", "namespace_definition",
    "field_declaration_list", "module_declaration", "module_directive", "enum_variant_list",
    "type_alias_declaration", "internal_module",
])
def test_not_class_shapes(kind: str) -> None:
    assert not looks_like_class(kind)


@pytest.mark.parametrize(("kind", "expected"), [
    ("import_declaration", True), ("import_statement", True), ("import_from_statement", True),
    ("import_spec", True), ("use_declaration", True), ("namespace_use_declaration", True),
    ("preproc_include", True), ("include_expression", True), ("require_once_expression", True),
    ("using_directive", True), ("require_call", True),
    ("import_spec_list", False), ("import_clause", False), ("import_specifier", False), ("import", False),
    ("namespace_import", False), ("aliased_import", False), ("wildcard_import", False),
    ("future_import_statement", False), ("use_list", False), ("use_as_clause", False),
    ("using_declaration", False), ("import_prefix", False),
])
def test_import_shapes(kind: str, expected: bool) -> None:
    assert looks_like_import(kind) is expected


@pytest.mark.parametrize(("kind", "expected"), [
    ("block", True), ("statement_block", True), ("compound_statement", True), ("class_body", True),
    ("declaration_list", True), ("body_statement", True), ("heredoc_body", False), ("block_comment", False),
    ("record_pattern_body", False), ("argument_list", False),
])
def test_body_shapes(kind: str, expected: bool) -> None:
    assert looks_like_body(kind) is expected


@pytest.mark.parametrize(("kind", "expected"), [
    ("comment", True), ("line_comment", True), ("block_comment", True), ("comment_content", False),
    ("html_comment", False), ("inner_doc_comment_marker", False),
])
def test_doc_shapes(kind: str, expected: bool) -> None:
    assert looks_like_doc(kind) is expected


def test_extensions_are_deduplicated_in_order() -> None:
    assert check_extensions([".b", ".a", ".b"]) == (".b", ".a")


# --- reading tags.scm -------------------------------------------------------------------------

TAGS = r'''
; a comment with (parens) and @definition.class in it
(function_declaration
  name: [
    (identifier) @name
    (dot_index_expression field: (identifier) @name)
  ]) @definition.function

(assignment_statement
  (expression_list . value: (function_definition))) @definition.function

(
  (comment)* @doc
  .
  (method_declaration name: (field_identifier) @name) @definition.method
  (#strip! @doc "^//\\s*")
  (#set-adjacent! @doc @definition.method)
)

(declaration_list
    (function_item name: (identifier) @name) @definition.method)

[
  (class name: (_) @name)
  (class_declaration name: (_) @name)
] @definition.class

(call_expression function: (identifier) @name) @reference.call
(type_spec name: (type_identifier) @name) @definition.type
(_ "quoted)" @name) @definition.module
'''


def test_tags_definitions_take_the_node_the_capture_follows() -> None:
    found = tags_definitions(TAGS)
    assert found == {
        "definition.function": ["function_declaration", "assignment_statement"],
        "definition.method": ["method_declaration", "function_item"],
        "definition.class": ["class", "class_declaration"],
        "definition.type": ["type_spec"],
        "definition.module": [],
    }


def test_tags_definitions_tolerate_unbalanced_input() -> None:
    assert tags_definitions("(function_declaration (identifier) @name") == {}
    assert tags_definitions(") ] (method) @definition.method") == {"definition.method": ["method"]}


def test_generated_import_rule_reads_node_text_through_the_contract() -> None:
    """An import name whose bytes are not UTF-8 reads as empty (``node_text``), not as U+FFFD, and is skipped."""

    class FakeNode(types.SimpleNamespace):
        def child_by_field_name(self, name: str) -> FakeNode | None:
            return getattr(self, "fields", {}).get(name)

        def named_child(self, index: int) -> FakeNode | None:
            return None

    source = b'use "\xff\xfe";\nuse "ok";\n'
    bad = FakeNode(start_byte=0, end_byte=9, fields={"path": FakeNode(start_byte=4, end_byte=8)})
    good = FakeNode(start_byte=10, end_byte=19, fields={"path": FakeNode(start_byte=14, end_byte=18)})
    assert pack_sample.imports_function()([bad, good], source) == ["ok"]


# --- choosing among several grammars in one wheel ---------------------------------------------


def test_language_function_prefers_the_name_then_the_distribution() -> None:
    module = types.ModuleType("fake_grammars")
    module.language_alpha = lambda: None  # type: ignore[attr-defined]
    module.language_beta = lambda: None  # type: ignore[attr-defined]
    module.language_gamma = lambda: None  # type: ignore[attr-defined]
    pick = grammar_source._pick_language_function
    assert pick(module, "gamma", "tree-sitter-beta") == "language_gamma"
    assert pick(module, "other", "tree-sitter-beta") == "language_beta"
    assert pick(module, "other", "tree-sitter-other") == "language_alpha"
    module.language = lambda: None  # type: ignore[attr-defined]
    assert pick(module, "gamma", "tree-sitter-beta") == "language"
    assert pick(types.ModuleType("empty"), "x", "x") is None


# --- the core stays language-neutral ----------------------------------------------------------


SCAFFOLD_MODULES = (scaffold, grammar_source, tags_query, kind_guesses, pack_sample, pack_render, pack_templates)


@pytest.mark.parametrize("module", SCAFFOLD_MODULES, ids=lambda m: m.__name__.rpartition(".")[2])
def test_scaffold_names_no_language(module: types.ModuleType) -> None:
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    names = r"(lua|go|golang|java|php|bash|python|ruby|rust|c|cpp|javascript|typescript|kotlin|swift|scala)"
    assert not re.search(rf"""["']{names}["']""", source, re.IGNORECASE)
    assert not re.search(rf"tree[-_]sitter[-_]{names}\b", source, re.IGNORECASE)
    assert not re.search(r"""["']\.[a-z]{1,4}["']""", source)  # no source-extension literals


def test_templates_import_only_the_public_api() -> None:
    template_dir = Path(scaffold.__file__).with_name("pack_template")
    templates = sorted(template_dir.glob("*.tmpl"))
    assert {t.name for t in templates} >= {"pyproject.toml.tmpl", "README.md.tmpl", "__init__.py.tmpl",
                                          "test_pack.py.tmpl", "imports_from_nodes.py.tmpl", "no_imports.py.tmpl"}
    for template in templates:
        for module in re.findall(r"^\s*(?:from|import) (cce_core\S*)", template.read_text(encoding="utf-8"),
                                 re.MULTILINE):
            assert module == "cce_core.api", template.name

"""`cce_core.api` is the one module plugins import, and every plugin in this repository keeps to it."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

import cce_core
from cce_core import api

REPO = Path(__file__).resolve().parents[1]
PACKS = REPO / "packs"
PLUGIN_DIRS = sorted(p for p in PACKS.iterdir() if (p / "pyproject.toml").exists())


def _cce_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "cce_core":
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "cce_core"]
    return found


def test_every_plugin_in_the_repository_imports_only_the_public_api():
    offenders = {}
    for path in sorted(PACKS.rglob("*.py")):
        wrong = [m for m in _cce_imports(path) if m != "cce_core.api"]
        if wrong:
            offenders[str(path.relative_to(REPO))] = wrong
    assert offenders == {}


def test_the_checker_catches_an_internal_import(tmp_path: Path):
    path = tmp_path / "p.py"
    path.write_text("import cce_core.indexing.chunker\nfrom cce_core.api import hookimpl\n"
                    "def f():\n    from cce_core.plugins.host import PluginHost\n", encoding="utf-8")
    assert _cce_imports(path) == ["cce_core.indexing.chunker", "cce_core.api", "cce_core.plugins.host"]


def test_every_public_name_resolves_and_nothing_else_is_offered():
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    assert sorted(api.__all__) == sorted(set(api.__all__))
    assert set(dir(api)) == set(api.__all__)
    with pytest.raises(AttributeError):
        api.Chunker  # noqa: B018 - internal names are not part of the API


def test_importing_the_api_loads_no_grammar_machinery():
    # An embedder plugin imports the api on every one-shot search: tree-sitter must stay unloaded.
    code = "import sys, cce_core.api; print(sorted(m for m in ('tree_sitter', 'numpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_core_and_every_plugin_package_are_typed():
    assert (Path(cce_core.__file__).parent / "py.typed").exists()
    for plugin in PLUGIN_DIRS:
        packages = [p for p in plugin.iterdir() if (p / "__init__.py").exists()]
        assert packages, plugin
        for package in packages:
            assert (package / "py.typed").exists(), package


@pytest.mark.parametrize("plugin", PLUGIN_DIRS, ids=lambda p: p.name)
def test_every_plugin_has_the_one_shape(plugin: Path):
    project = tomllib.loads((plugin / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == plugin.name, "the directory is named after its distribution"
    assert project.get("readme") == "README.md" and (plugin / "README.md").exists()
    assert list(project["entry-points"]["cce"]), "one entry point in the cce group"
    tests = sorted((plugin / "tests").glob("test_*.py"))
    assert tests, f"{plugin.name} has no tests/test_*.py of its own"
    (core,) = [Requirement(r) for r in project["dependencies"] if Requirement(r).name == "cce-core"]
    assert str(core.specifier), f"{plugin.name} must declare a version range on cce-core"
    assert core.specifier.contains(Version(cce_core.__version__)), (core, cce_core.__version__)


def test_node_text_reads_a_span_and_gives_empty_for_bytes_that_are_not_utf8():
    from types import SimpleNamespace

    from cce_core.api import node_text

    source = "def héllo(): pass".encode() + b"\xff\xfe"
    assert node_text(SimpleNamespace(start_byte=4, end_byte=10), source) == "héllo"
    assert node_text(SimpleNamespace(start_byte=len(source) - 2, end_byte=len(source)), source) == ""


# -- "since" per public name, and one minimum cce-core everywhere ----------------------------------------------

TEMPLATE = REPO / "cce_core" / "authoring" / "pack_template" / "pyproject.toml.tmpl"
API_TABLE_ROW = re.compile(r"^\| `(?P<name>\w+)` \| (?P<since>[^|]*?) \|", re.M)
CORE_REQUIREMENT = re.compile(r'"(cce-core[<>=!~][^"]*)"')


def _template_requirement() -> str:
    """The scaffold's ``cce-core`` line: the one requirement every plugin here and every doc states."""
    (line,) = CORE_REQUIREMENT.findall(TEMPLATE.read_text(encoding="utf-8"))
    return line


def _minimum(requirement: str) -> Version:
    (floor,) = [Version(s.version) for s in Requirement(requirement).specifier if s.operator == ">="]
    return floor


def test_every_public_name_says_since_which_release():
    assert sorted(api.__since__) == sorted(api.__all__)
    for name, since in api.__since__.items():
        assert re.fullmatch(r"0\.\d+\.\d+", since), (name, since)
        assert Version(since) <= Version(cce_core.__version__), (name, since)
    assert api.__since__["node_text"] == "0.2.1" and api.__since__["LanguagePack"] == "0.2.0"


def test_the_docs_show_each_public_names_since():
    rows = {m["name"]: m["since"] for m in API_TABLE_ROW.finditer((REPO / "docs" / "plugins.md").read_text("utf-8"))}
    assert {name: rows.get(name) for name in api.__all__} == api.__since__


def test_one_minimum_cce_core_everywhere():
    wanted = _template_requirement()
    for plugin in PLUGIN_DIRS:
        project = tomllib.loads((plugin / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        (core,) = [r for r in project["dependencies"] if Requirement(r).name == "cce-core"]
        assert core == wanted, plugin.name
    # docs/DECISIONS.md is the record of past choices, old ranges included.
    docs = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
    for doc in [d for d in docs if d.name != "DECISIONS.md"]:
        stated = set(re.findall(r"cce-core\s*>=\s*[\d.]+\s*,\s*<\s*[\d.]+", doc.read_text(encoding="utf-8")))
        assert stated <= {wanted}, (doc.name, stated)


def test_the_minimum_cce_core_offers_every_api_name_the_packs_use():
    floor = _minimum(_template_requirement())
    for path in sorted(PACKS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "cce_core.api":
                for alias in node.names:
                    assert Version(api.__since__[alias.name]) <= floor, (str(path), alias.name)


# -- the renderer types are part of the contract, typed end to end ---------------------------------------------


def test_compact_chunk_lives_in_the_contract_and_the_old_import_still_works():
    from cce_core import hookspecs
    from cce_core.retrieval import detail_views

    assert api.CompactChunk is hookspecs.CompactChunk is detail_views.CompactChunk
    assert hookspecs.CompactChunk.__module__ == "cce_core.hookspecs"
    assert api.CompactRenderer is hookspecs.CompactRenderer


def _annotations(function) -> list[str]:
    import inspect

    signature = inspect.signature(function)
    found = [str(p.annotation) for p in signature.parameters.values() if p.annotation is not p.empty]
    return [*found, str(signature.return_annotation)]


def test_the_contract_has_no_any_holes():
    from cce_core import hookspecs

    functions = [getattr(hookspecs.CceHookSpecs, name) for name in vars(hookspecs.CceHookSpecs)
                 if name.startswith("cce_")]
    functions += [member for cls in (hookspecs.Embedder, hookspecs.DocumentChunker) for name, member in
                  vars(cls).items() if callable(member) and not name.startswith("_")]
    functions += [api.structural_renderer, api.render_definition, hookspecs.CompactRenderer.__call__]
    holes = {f.__qualname__: a for f in functions for a in _annotations(f) if re.search(r"\bAny\b", a)}
    assert holes == {}
    fields = {f"{cls.__name__}.{name}": str(kind) for cls in (hookspecs.LanguagePack, hookspecs.CompactChunk)
              for name, kind in cls.__annotations__.items() if re.search(r"\bAny\b", str(kind))}
    assert fields == {}
    hints = _annotations(hookspecs.CceHookSpecs.cce_render_compact)
    assert "CompactChunk" in hints and _annotations(api.structural_renderer)[-1] == "CompactRenderer"

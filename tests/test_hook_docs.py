"""The plugin contract is documented: every hook in docs/plugins.md and in full in its docstring, every public name.

Like datasette's test of its plugin hooks documentation: adding a hook without
a ``### hook_name`` section in docs/plugins.md fails here, and so does a
section for a hook that does not exist. A hook's docstring must carry every
part of the contract (parameters, result, when it is called, first result or
collected, order, errors), so a hook cannot arrive with a one-line docstring.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from cce_core import api
from cce_core.hookspecs import CceHookSpecs

REPO = Path(__file__).resolve().parents[1]
PLUGINS_DOC = REPO / "docs" / "plugins.md"
AUTHOR_DOCS = (PLUGINS_DOC, REPO / "docs" / "adding-a-language.md")

# The sections every hookspec docstring has, each a line of its own ending in a colon.
REQUIRED_SECTIONS = ("Parameters", "Returns", "Called", "Results", "Order", "Errors")

HOOKS = sorted(name for name in vars(CceHookSpecs) if name.startswith("cce_"))


def _doc(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _documented_hooks() -> list[str]:
    return re.findall(r"^### (cce_\w+)\s*$", _doc(PLUGINS_DOC), flags=re.M)


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)


def _cce_imports(code: str) -> list[str]:
    """Every ``cce_core`` module a code block imports (it may be a fragment, so no AST)."""
    found: list[str] = []
    for line in code.splitlines():
        from_import = re.match(r"\s*from\s+([\w.]+)\s+import\b", line)
        if from_import:
            found.append(from_import.group(1))
            continue
        plain = re.match(r"\s*import\s+(.+)", line)
        if plain:
            found += [part.split(" as ")[0].strip() for part in plain.group(1).split(",")]
    return [module for module in found if module.split(".")[0] == "cce_core"]


def test_there_are_hooks_to_check():
    assert HOOKS, "CceHookSpecs has no cce_* hook"


def test_every_hook_has_a_section_in_docs_plugins_md():
    missing = sorted(set(HOOKS) - set(_documented_hooks()))
    assert missing == [], f"hooks without a '### <name>' section in docs/plugins.md: {missing}"


def test_every_hook_section_in_docs_plugins_md_names_a_real_hook():
    documented = _documented_hooks()
    unknown = sorted(set(documented) - set(HOOKS))
    assert unknown == [], f"docs/plugins.md documents hooks that do not exist: {unknown}"
    assert len(documented) == len(set(documented)), "a hook has two sections in docs/plugins.md"


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hookspec_docstring_has_every_section(hook):
    doc = inspect.getdoc(getattr(CceHookSpecs, hook)) or ""
    missing = [s for s in REQUIRED_SECTIONS if not re.search(rf"^\s*{s}:\s*$", doc, flags=re.M)]
    assert missing == [], f"{hook}'s docstring lacks the section(s) {missing}"
    # A section heading alone is not documentation: each must be followed by text.
    for section in REQUIRED_SECTIONS:
        body = re.search(rf"^\s*{section}:\s*\n(.+)", doc, flags=re.M)
        assert body is not None and body.group(1).strip(), f"{hook}'s {section} section is empty"


def test_every_public_api_name_resolves():
    for name in api.__all__:
        assert getattr(api, name) is not None, name


@pytest.mark.parametrize("name", api.__all__)
def test_every_public_api_name_is_mentioned_in_docs_plugins_md(name):
    assert re.search(rf"`{re.escape(name)}\b", _doc(PLUGINS_DOC)), f"cce_core.api.{name} is not in docs/plugins.md"


@pytest.mark.parametrize("path", AUTHOR_DOCS, ids=lambda p: p.name)
def test_code_examples_import_only_the_public_api(path):
    blocks = _python_blocks(_doc(path))
    assert blocks, f"{path.name} has no python code block"
    wrong = sorted({m for block in blocks for m in _cce_imports(block) if m != "cce_core.api"})
    assert wrong == [], f"{path.name} imports from cce_core modules other than cce_core.api: {wrong}"


def test_the_import_checker_sees_internal_imports():
    code = ("from cce_core.api import hookimpl\n    from cce_core.indexing.chunker import Chunker\n"
            "import os, cce_core.plugins.host as h\nfrom tree_sitter import Node\n")
    assert _cce_imports(code) == ["cce_core.api", "cce_core.indexing.chunker", "cce_core.plugins.host"]


# -- one source: the reference in docs/plugins.md is generated from the docstrings ------------------------------


def test_the_generated_reference_matches_the_docstrings():
    from cce_core.plugins import hook_reference

    text = _doc(PLUGINS_DOC)
    assert hook_reference.regenerate(text) == text, (
        "docs/plugins.md is out of date with cce_core/hookspecs.py: run `python -m cce_core.plugins.hook_reference`")


def test_every_hook_and_contract_type_has_exactly_one_generated_region():
    from cce_core.plugins import hook_reference

    names = [m.group("name") for m in hook_reference.REGION.finditer(_doc(PLUGINS_DOC))]
    assert sorted(names) == sorted(hook_reference.contract_names())
    assert set(HOOKS) <= set(names)


def test_a_changed_docstring_shows_as_drift(monkeypatch):
    from cce_core.plugins import hook_reference

    text = _doc(PLUGINS_DOC)
    changed = CceHookSpecs.cce_extract_imports.__doc__.replace("first-seen order", "any order")
    monkeypatch.setattr(CceHookSpecs.cce_extract_imports, "__doc__", changed)
    assert hook_reference.regenerate(text) != text


def test_the_check_command_fails_on_drift_and_the_write_command_repairs(tmp_path, capsys):
    from cce_core.plugins import hook_reference

    fresh = _doc(PLUGINS_DOC)
    region = next(hook_reference.REGION.finditer(fresh)).group(0)
    doc = tmp_path / "plugins.md"
    doc.write_text(fresh.replace(region, region.replace("\n\n", "\n\nA stale sentence.\n\n", 1)), encoding="utf-8")
    assert hook_reference.main(["--check", str(doc)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert hook_reference.main([str(doc)]) == 0
    assert doc.read_text(encoding="utf-8") == fresh
    assert hook_reference.main(["--check", str(doc)]) == 0


def test_a_region_naming_nothing_is_an_error_line(tmp_path, capsys):
    from cce_core.plugins import hook_reference

    doc = tmp_path / "plugins.md"
    doc.write_text("<!-- BEGIN GENERATED contract:cce_gone -->\nx\n<!-- END GENERATED contract:cce_gone -->\n",
                   encoding="utf-8")
    assert hook_reference.main(["--check", str(doc)]) == 2
    assert capsys.readouterr().err.startswith("error: cannot regenerate")


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_says_since_which_release_and_the_docs_show_it(hook):
    from packaging.version import Version

    import cce_core
    from cce_core.plugins import hook_reference

    since = hook_reference.since(getattr(CceHookSpecs, hook))
    assert since is not None and Version(since) <= Version(cce_core.__version__), hook
    assert f"Since cce-core {since}" in hook_reference.render(hook)


def _words(text: str) -> list[str]:
    """Prose as bare lowercase words: markup (rST roles, backticks, markdown emphasis, links) removed."""
    text = re.sub(r":\w+:`~?([^`]*)`", r"\1", text)
    text = re.sub(r"\]\([^)]*\)", " ", text)
    return re.findall(r"[a-z0-9_.]+", text.lower().replace("``", " "))


def test_the_hand_written_prose_does_not_repeat_the_contract():
    """Outside the generated regions, no run of 12 words from a hookspecs docstring appears again."""
    import inspect

    from cce_core import hookspecs
    from cce_core.plugins import hook_reference

    docstrings = [inspect.getdoc(getattr(CceHookSpecs, h)) or "" for h in HOOKS]
    docstrings += [inspect.getdoc(getattr(hookspecs, n)) or "" for n in hook_reference.contract_names()
                   if n not in HOOKS and hasattr(hookspecs, n)]
    shingles = set()
    for doc in docstrings:
        words = _words(doc)
        shingles |= {" ".join(words[i:i + 12]) for i in range(len(words) - 11)}
    # Code examples may show the same calls; the prose is what must not be written twice.
    hand_written = re.sub(r"^```.*?^```", " ", hook_reference.REGION.sub(" ", _doc(PLUGINS_DOC)), flags=re.M | re.S)
    prose = _words(hand_written)
    repeated = sorted({" ".join(prose[i:i + 12]) for i in range(len(prose) - 11)} & shingles)
    assert repeated == [], repeated[:5]

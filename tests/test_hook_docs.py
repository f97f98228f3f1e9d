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

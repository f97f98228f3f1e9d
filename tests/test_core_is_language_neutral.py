"""The core never names a language: all language knowledge lives in packs.

Scans every module of ``cce_core`` for a pack's name used as a value, grammar
modules, source-extension literals and grammar node kinds. Prose that talks
about the implementation languages ("Python's round()", "Rust's regex") is
fine, and so is a line marked ``lang-guard: engine identity`` where the engine
states its own implementation language. The intent rule's bare extension words
such as ``"py"`` in retrieval.py are a ranking constant of the family's
specification that applies to any query text, not language support.
"""

from __future__ import annotations

import re

from helpers import REPO_ROOT

FORBIDDEN = [
    re.compile(r"""["'](python|javascript|typescript|ruby|rust|c)["']"""),
    re.compile(r"tree[-_]sitter[-_](python|javascript|typescript|ruby|rust|c)\b"),
    re.compile(r"""["']\.(py|pyi|js|jsx|mjs|cjs|ts|tsx|rb|rs|c|h)["']"""),
    re.compile(r"\b(function_definition|class_definition|method_definition|function_item|struct_specifier)\b"),
]


def test_core_sources_name_no_language():
    offenders = []
    for path in sorted((REPO_ROOT / "cce_core").rglob("*.py")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if "lang-guard: engine identity" in line:
                continue
            for pattern in FORBIDDEN:
                if pattern.search(line):
                    offenders.append(f"{path.relative_to(REPO_ROOT)}:{lineno}: {line.strip()}")
    assert not offenders, "language knowledge in the core:\n" + "\n".join(offenders)


def test_core_imports_no_grammar():
    for path in (REPO_ROOT / "cce_core").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+tree_sitter_\w+", text, re.MULTILINE), path

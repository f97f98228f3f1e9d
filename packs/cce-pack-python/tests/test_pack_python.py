"""cce-pack-python alone: the engine's self-test of a pack, then the rules that are Python's own."""

from __future__ import annotations

import cce_pack_python
import pytest

from cce_core.api import chunk_with, imports_with, pack_self_test

PACK = cce_pack_python.PACK


def test_the_pack_passes_its_self_test() -> None:
    assert pack_self_test(cce_pack_python, "python") == []


def test_the_pack_claims_its_extensions_grammar_and_sample() -> None:
    assert PACK.extensions == (".py",)
    assert (PACK.grammar_distribution, PACK.sample_name) == ("tree-sitter-python", "python.py")


def test_sample_chunks_in_document_order() -> None:
    chunks = chunk_with(cce_pack_python, PACK.sample_name, PACK.sample).chunks
    assert [(c.language, c.kind, c.chunk_type) for c in chunks] == [
        ("python", "function_definition", "function"),
        ("python", "class_definition", "class"),
        ("python", "function_definition", "function"),
    ]


# The first dotted component; a bare relative import names nothing.
@pytest.mark.parametrize(("path", "text", "expected"), [
    ("a.py", "import os.path as p\n", ["os"]),
    ("a.py", "from .sub import x\nfrom . import y\nimport a.b, c\n", ["sub", "a", "c"]),
])
def test_import_rule(path: str, text: str, expected: list[str]) -> None:
    assert imports_with(cce_pack_python, path, text) == expected

"""Self-tests of cce-pack-javascript: the validators, the import rule, the shipped sample, odd input.

``chunk_with`` registers the pack alone on a fresh host, so nothing else installed
can change an answer. Run with ``python -m pytest packs/cce-pack-javascript/tests``.
"""

from __future__ import annotations

import cce_pack_javascript
import pytest
from tree_sitter import Parser

from cce_core.api import chunk_with, validate_plugin

PACK = cce_pack_javascript.PACK


def _bare_tree_imports(text: str) -> list[str]:
    """``extract_imports`` on a parsed tree, as validators, tools and plugins call it."""
    source = text.encode("utf-8")
    return PACK.extract_imports(Parser(PACK.grammar()).parse(source).root_node, source)


# -- the pack ------------------------------------------------------------------


def test_the_validators_pass() -> None:
    report = validate_plugin(cce_pack_javascript)
    assert [pack.name for pack in report.packs] == ["javascript"]
    assert report.ok, "\n".join(report.diagnostics)


def test_the_pack_claims_its_extensions() -> None:
    assert PACK.extensions == (".js", ".jsx", ".mjs", ".cjs")
    assert PACK.grammar_distribution == "tree-sitter-javascript"


# -- the sample ----------------------------------------------------------------


def test_sample_meets_expected() -> None:
    result = chunk_with(cce_pack_javascript, PACK.sample_name, PACK.sample)
    functions = [c for c in result.chunks if c.chunk_type == "function"]
    classes = [c for c in result.chunks if c.chunk_type == "class"]
    assert len(functions) >= PACK.expected.min_functions
    assert len(classes) >= PACK.expected.min_classes
    assert set(PACK.expected.kinds) <= {c.kind for c in result.chunks}
    assert result.imports == list(PACK.expected.imports)
    assert all(c.language == "javascript" for c in result.chunks)


def test_sample_chunks_in_document_order() -> None:
    assert PACK.sample_name == "javascript.js"
    result = chunk_with(cce_pack_javascript, PACK.sample_name, PACK.sample)
    assert [(c.kind, c.chunk_type) for c in result.chunks] == [
        ("function_declaration", "function"),
        ("class_declaration", "class"),
        ("method_definition", "function"),
    ]


def test_extract_imports_called_directly_returns_a_list() -> None:
    assert _bare_tree_imports(PACK.sample) == list(PACK.expected.imports)


# -- the import rule -------------------------------------------------------------

# The first real path segment of an ES module specifier, scope kept; require() is not an import.
IMPORT_CASES = [
    ("a.js", 'import x from "@scope/pkg/x";\n', ["@scope/pkg"]),
    ("a.js", 'import { login } from "./auth";\n', ["auth"]),
    ("a.js", 'import z from "../../lib/z.js";\n', ["lib"]),
    (
        "a.js",
        'import "./polyfill";\nimport React from "react";\nimport c from "react/client";\n',
        ["polyfill", "react"],
    ),
    ("a.mjs", "import s from '@solo';\n", ["@solo"]),
    ("a.jsx", 'import t from "";\nimport u from "./";\n', []),
    ("a.cjs", 'const fs = require("fs");\n', []),
]


@pytest.mark.parametrize(("path", "text", "expected"), IMPORT_CASES)
def test_import_rule(path: str, text: str, expected: list[str]) -> None:
    assert chunk_with(cce_pack_javascript, path, text).imports == expected
    assert _bare_tree_imports(text) == expected


# -- odd input -------------------------------------------------------------------

ODD_INPUTS = ["", "\x00\x01 ((((", "import", "use", "#include", "require", "(" * 3000, "é" * 20, 'import "\n']


@pytest.mark.parametrize("text", ODD_INPUTS)
def test_import_extraction_survives_odd_input(text: str) -> None:
    result = chunk_with(cce_pack_javascript, f"odd{PACK.extensions[0]}", text)
    assert isinstance(result.imports, list)
    assert result.chunks
    assert isinstance(_bare_tree_imports(text), list)

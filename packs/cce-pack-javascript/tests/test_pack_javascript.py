"""cce-pack-javascript alone: the engine's self-test of a pack, then the rules that are JavaScript's own."""

from __future__ import annotations

import cce_pack_javascript
import pytest

from cce_core.api import chunk_with, imports_with, pack_self_test

PACK = cce_pack_javascript.PACK


def test_the_pack_passes_its_self_test() -> None:
    assert pack_self_test(cce_pack_javascript, "javascript") == []


def test_the_pack_claims_its_extensions_grammar_and_sample() -> None:
    assert PACK.extensions == (".js", ".jsx", ".mjs", ".cjs")
    assert (PACK.grammar_distribution, PACK.sample_name) == ("tree-sitter-javascript", "javascript.js")


def test_sample_chunks_in_document_order() -> None:
    chunks = chunk_with(cce_pack_javascript, PACK.sample_name, PACK.sample).chunks
    assert [(c.language, c.kind, c.chunk_type) for c in chunks] == [
        ("javascript", "function_declaration", "function"),
        ("javascript", "class_declaration", "class"),
        ("javascript", "method_definition", "function"),
    ]


# The first real path segment of an ES module specifier, scope kept; require() is not an import.
@pytest.mark.parametrize(("path", "text", "expected"), [
    ("a.js", 'import x from "@scope/pkg/x";\n', ["@scope/pkg"]),
    ("a.js", 'import { login } from "./auth";\n', ["auth"]),
    ("a.js", 'import z from "../../lib/z.js";\n', ["lib"]),
    ("a.js", 'import "./polyfill";\nimport React from "react";\nimport c from "react/client";\n',
     ["polyfill", "react"]),
    ("a.mjs", "import s from '@solo';\n", ["@solo"]),
    ("a.jsx", 'import t from "";\nimport u from "./";\n', []),
    ("a.cjs", 'const fs = require("fs");\n', []),
])
def test_import_rule(path: str, text: str, expected: list[str]) -> None:
    assert imports_with(cce_pack_javascript, path, text) == expected

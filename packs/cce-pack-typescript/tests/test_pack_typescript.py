"""cce-pack-typescript alone: the engine's self-test of a pack, then the rules that are TypeScript's own."""

from __future__ import annotations

import cce_pack_typescript
import pytest

from cce_core.api import chunk_with, imports_with, pack_self_test

PACK = cce_pack_typescript.PACK


def test_the_pack_passes_its_self_test() -> None:
    assert pack_self_test(cce_pack_typescript, "typescript") == []


def test_the_pack_claims_its_extensions_grammar_and_sample() -> None:
    assert PACK.extensions == (".ts", ".tsx")
    assert (PACK.grammar_distribution, PACK.sample_name) == ("tree-sitter-typescript", "typescript.ts")


def test_sample_chunks_in_document_order() -> None:
    chunks = chunk_with(cce_pack_typescript, PACK.sample_name, PACK.sample).chunks
    assert [(c.language, c.kind, c.chunk_type) for c in chunks] == [
        ("typescript", "function_declaration", "function"),
        ("typescript", "interface_declaration", "class"),
        ("typescript", "class_declaration", "class"),
        ("typescript", "method_definition", "function"),
    ]


# The JavaScript rule; `import x = require()` and re-exports are not imports.
@pytest.mark.parametrize(("path", "text", "expected"), [
    ("a.ts", 'import { a } from "./store";\nimport type { B } from "@scope/pkg/sub";\n', ["store", "@scope/pkg"]),
    ("a.ts", 'import x = require("legacy");\nexport { c } from "other";\n', []),
    ("a.tsx", 'import React from "react";\nconst App = () => <div />;\n', ["react"]),
])
def test_import_rule(path: str, text: str, expected: list[str]) -> None:
    assert imports_with(cce_pack_typescript, path, text) == expected

"""cce-pack-rust alone: the engine's self-test of a pack, then the rules that are Rust's own."""

from __future__ import annotations

import cce_pack_rust
import pytest

from cce_core.api import chunk_with, imports_with, pack_self_test

PACK = cce_pack_rust.PACK


def test_the_pack_passes_its_self_test() -> None:
    assert pack_self_test(cce_pack_rust, "rust") == []


def test_the_pack_claims_its_extensions_grammar_and_sample() -> None:
    assert PACK.extensions == (".rs",)
    assert (PACK.grammar_distribution, PACK.sample_name) == ("tree-sitter-rust", "rust.rs")


def test_sample_chunks_in_document_order() -> None:
    chunks = chunk_with(cce_pack_rust, PACK.sample_name, PACK.sample).chunks
    assert [(c.language, c.kind, c.chunk_type) for c in chunks] == [
        ("rust", "function_item", "function"),
        ("rust", "struct_item", "class"),
        ("rust", "impl_item", "class"),
        ("rust", "function_item", "function"),
    ]


# The first segment of each `use` path.
@pytest.mark.parametrize(("path", "text", "expected"), [
    ("a.rs", "use crate::store::Index;\nuse std::io;\nuse std::fs;\nuse crate::x;\n", ["crate", "std"]),
    ("a.rs", "use serde::{Deserialize, Serialize};\nuse {a, b};\nuse ::abs::x;\n", ["serde"]),
    ("a.rs", "fn f() {\n    use inner::Thing;\n}\n", ["inner"]),
])
def test_import_rule(path: str, text: str, expected: list[str]) -> None:
    assert imports_with(cce_pack_rust, path, text) == expected

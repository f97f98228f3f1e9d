"""Self-tests of cce-pack-rust: the validators, the import rule, the shipped sample, odd input.

``chunk_with`` registers the pack alone on a fresh host, so nothing else installed
can change an answer. Run with ``python -m pytest packs/cce-pack-rust/tests``.
"""

from __future__ import annotations

import cce_pack_rust
import pytest
from tree_sitter import Parser

from cce_core.api import chunk_with, validate_plugin

PACK = cce_pack_rust.PACK


def _bare_tree_imports(text: str) -> list[str]:
    """``extract_imports`` on a parsed tree, as validators, tools and plugins call it."""
    source = text.encode("utf-8")
    return PACK.extract_imports(Parser(PACK.grammar()).parse(source).root_node, source)


# -- the pack ------------------------------------------------------------------


def test_the_validators_pass() -> None:
    report = validate_plugin(cce_pack_rust)
    assert [pack.name for pack in report.packs] == ["rust"]
    assert report.ok, "\n".join(report.diagnostics)


def test_the_pack_claims_its_extensions() -> None:
    assert PACK.extensions == (".rs",)
    assert PACK.grammar_distribution == "tree-sitter-rust"


# -- the sample ----------------------------------------------------------------


def test_sample_meets_expected() -> None:
    result = chunk_with(cce_pack_rust, PACK.sample_name, PACK.sample)
    functions = [c for c in result.chunks if c.chunk_type == "function"]
    classes = [c for c in result.chunks if c.chunk_type == "class"]
    assert len(functions) >= PACK.expected.min_functions
    assert len(classes) >= PACK.expected.min_classes
    assert set(PACK.expected.kinds) <= {c.kind for c in result.chunks}
    assert result.imports == list(PACK.expected.imports)
    assert all(c.language == "rust" for c in result.chunks)


def test_sample_chunks_in_document_order() -> None:
    assert PACK.sample_name == "rust.rs"
    result = chunk_with(cce_pack_rust, PACK.sample_name, PACK.sample)
    assert [(c.kind, c.chunk_type) for c in result.chunks] == [
        ("function_item", "function"),
        ("struct_item", "class"),
        ("impl_item", "class"),
        ("function_item", "function"),
    ]


def test_extract_imports_called_directly_returns_a_list() -> None:
    assert _bare_tree_imports(PACK.sample) == list(PACK.expected.imports)


# -- the import rule -------------------------------------------------------------

# The first segment of each `use` path.
IMPORT_CASES = [
    ("a.rs", "use crate::store::Index;\nuse std::io;\nuse std::fs;\nuse crate::x;\n", ["crate", "std"]),
    ("a.rs", "use serde::{Deserialize, Serialize};\nuse {a, b};\nuse ::abs::x;\n", ["serde"]),
    ("a.rs", "fn f() {\n    use inner::Thing;\n}\n", ["inner"]),
]


@pytest.mark.parametrize(("path", "text", "expected"), IMPORT_CASES)
def test_import_rule(path: str, text: str, expected: list[str]) -> None:
    assert chunk_with(cce_pack_rust, path, text).imports == expected
    assert _bare_tree_imports(text) == expected


# -- odd input -------------------------------------------------------------------

ODD_INPUTS = ["", "\x00\x01 ((((", "import", "use", "#include", "require", "(" * 3000, "é" * 20, 'import "\n']


@pytest.mark.parametrize("text", ODD_INPUTS)
def test_import_extraction_survives_odd_input(text: str) -> None:
    result = chunk_with(cce_pack_rust, f"odd{PACK.extensions[0]}", text)
    assert isinstance(result.imports, list)
    assert result.chunks
    assert isinstance(_bare_tree_imports(text), list)

"""The Rust language pack (``.rs``) via tree-sitter-rust.

``fn`` items (free functions and methods alike) become ``function`` chunks;
structs, enums, traits, unions and ``impl`` blocks become ``class`` chunks.

Imports are the leading path segment of every ``use`` declaration:
``use std::collections::HashMap;`` gives ``std``, ``use crate::store::Index;``
gives ``crate`` and ``use serde::{Deserialize, Serialize};`` gives ``serde``.
The rule reads the declaration's text, so a ``pub use`` re-export yields ``pub``
exactly as the other engines of the family report it. ``mod x;`` is not an
import.
"""

from __future__ import annotations

from importlib.resources import files

from tree_sitter import Language, Node

from cce_core.api import (
    UNICODE_WHITESPACE,
    LanguagePack,
    PackExpected,
    hookimpl,
    imports_by_node_kind,
    node_text,
    structural_renderer,
)

_LANGUAGE: Language | None = None



def grammar() -> Language:
    global _LANGUAGE
    if _LANGUAGE is None:
        import tree_sitter_rust

        _LANGUAGE = Language(tree_sitter_rust.language())
    return _LANGUAGE




def use_root(declaration: str) -> str:
    """The first path segment of a ``use`` declaration's source text."""
    rest = declaration.strip(UNICODE_WHITESPACE)
    while rest.startswith("use"):
        rest = rest[3:]
    head = rest.lstrip(UNICODE_WHITESPACE).split("::", 1)[0]
    for index, char in enumerate(head):
        if not (char == "_" or char.isalnum()):
            return head[:index]
    return head


def imports_from_nodes(declarations: list[Node], source: bytes) -> list[str]:
    """Module names from the file's ``use`` declarations, given in start-byte order."""
    found: list[str] = []
    try:
        for declaration in declarations:
            name = use_root(node_text(declaration, source))
            if name and name not in found:
                found.append(name)
    except Exception:  # odd input: keep what was already found
        pass
    return found


_IMPORT_KINDS = ("use_declaration",)
# The bare-tree path (validators, plugins, tools) shares imports_from_nodes with the chunker's pass.
extract_imports = imports_by_node_kind(grammar, _IMPORT_KINDS, imports_from_nodes)


PACK = LanguagePack(
    name="rust",
    extensions=(".rs",),
    grammar=grammar,
    function_types=("function_item",),
    class_types=("struct_item", "enum_item", "trait_item", "impl_item", "union_item"),
    import_node_types=_IMPORT_KINDS,
    extract_imports=extract_imports,
    imports_from_nodes=imports_from_nodes,
    sample=files(__package__).joinpath("sample.rs").read_text(encoding="utf-8"),
    sample_name="rust.rs",
    expected=PackExpected(
        min_functions=2,
        min_classes=2,
        kinds=("function_item", "struct_item", "impl_item"),
        imports=("std",),
    ),
    grammar_distribution="tree-sitter-rust",
    body_node_types=("block", "declaration_list", "field_declaration_list", "enum_variant_list"),
    doc_node_types=("line_comment", "block_comment"),
    member_node_types=("field_declaration", "enum_variant", "const_item"),
)


@hookimpl
def cce_register_packs(register):
    register(PACK)


# The family's renderer looks through an expression statement for a leading doc
# in every grammar that has one; kept for byte-identity with the other engines.
_DOC_WRAPPERS = ("expression_statement",)


# The structural compact view for this language; a plugin that overrides it is asked first.
cce_render_compact = structural_renderer(PACK.name, _DOC_WRAPPERS)

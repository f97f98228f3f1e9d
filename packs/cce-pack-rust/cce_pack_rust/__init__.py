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
    FileConventions,
    LanguagePack,
    PackExpected,
    hookimpl,
    imports_by_node_kind,
    node_text,
    structural_renderer,
    tags_query_extension,
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


# Integration tests live in tests/ and benches/ (the engine's general folder rules); a module's unit
# tests moved out of line go to tests.rs or *_test(s).rs. Cargo builds into target/.
CONVENTIONS = FileConventions(tests=("tests.rs", "*_test.rs", "*_tests.rs"), generated=("target/",))


@hookimpl
def cce_file_conventions():
    return CONVENTIONS


# The family's renderer looks through an expression statement for a leading doc
# in every grammar that has one; kept for byte-identity with the other engines.
_DOC_WRAPPERS = ("expression_statement",)


# The structural compact view for this language; a plugin that overrides it is asked first.
cce_render_compact = structural_renderer(PACK.name, _DOC_WRAPPERS)


# Symbols: tree-sitter-rust's shipped tags query finds items and calls; these patterns add `impl`
# blocks as definitions (so a method's qualified name is `Type.method`), path calls (`Type::new()`),
# the names a `use` imports with their module path (@module, for name resolution) and `mod x;`.
# Calls through the instance (`this.x()`, `self.x()`) are @reference.call.self: its class's method first.
TAGS_EXTENSION = r"""
(call_expression function: (field_expression value: (self) field: (field_identifier) @name)) @reference.call.self
(impl_item type: [(type_identifier) @name (generic_type type: (type_identifier) @name)]) @definition.implementation
(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call
(call_expression function: (generic_function function: (identifier) @name)) @reference.call
(use_declaration argument: (scoped_identifier path: (_) @module name: (identifier) @name) @reference.import)
(use_declaration argument: (scoped_use_list path: (_) @module
  list: (use_list (identifier) @name @reference.import)))
(use_declaration argument: (use_as_clause path: (scoped_identifier path: (_) @module name: (identifier) @name)
  @reference.import))
(mod_item name: (identifier) @module !body)
(arguments (identifier) @name) @reference.value
"""


# The grammar's shipped tags query plus the patterns above.
cce_tags_query = tags_query_extension(PACK.name, TAGS_EXTENSION)


@hookimpl
def cce_resolve_import(language, specifier, importer):
    """``crate::a::b``, ``self::``, ``super::`` and ``mod x;`` to ``.rs`` files; another crate's path to none."""
    if language != PACK.name:
        return None
    import posixpath

    parts = [p for p in specifier.split("::") if p]
    directory = posixpath.dirname(importer)
    stem = posixpath.splitext(posixpath.basename(importer))[0]
    # A module's children live beside a mod.rs/lib.rs/main.rs, else in a directory named after the file.
    own = directory if stem in ("mod", "lib", "main") else posixpath.join(directory, stem)
    if not parts:
        return []
    if len(parts) == 1 and parts[0] not in ("crate", "self", "super"):  # `mod x;`, or an outside crate
        return [posixpath.join(own, parts[0] + ".rs"), posixpath.join(own, parts[0], "mod.rs")]
    if parts[0] == "crate":
        base, rest = "", parts[1:]
    elif parts[0] == "self":
        base, rest = own, parts[1:]
    elif parts[0] == "super":
        base, rest = posixpath.dirname(own), parts[1:]
        while rest and rest[0] == "super":
            base, rest = posixpath.dirname(base), rest[1:]
    else:
        return []
    out: list[str] = []
    for n in range(len(rest), 0, -1):  # `a::b::Item`: the module is a::b, or a (b an item of it)
        path = posixpath.join(base, *rest[:n]) if base else "/".join(rest[:n])
        out += [path + ".rs", path + "/mod.rs"]
    return out

"""The TypeScript language pack (``.ts`` and ``.tsx``) via tree-sitter-typescript.

Both extensions are parsed with the plain TypeScript grammar (not the TSX
variant), which is what the other engines of the family do, so chunk ids agree.
Functions, methods, arrow functions and function expressions become
``function`` chunks; classes, interfaces and enums become ``class`` chunks.

Imports follow the JavaScript rule: the specifier of an ``import … from "x"``
statement, reduced to its first meaningful path segment (``"./store"`` gives
``store``, ``"@scope/pkg/sub"`` gives ``@scope/pkg``). ``import x = require("y")``
is not counted.
"""

from __future__ import annotations

from importlib.resources import files

from tree_sitter import Language, Node

from cce_core.api import LanguagePack, PackExpected, hookimpl, imports_by_node_kind, node_text, structural_renderer

_LANGUAGE: Language | None = None


def grammar() -> Language:
    global _LANGUAGE
    if _LANGUAGE is None:
        import tree_sitter_typescript

        _LANGUAGE = Language(tree_sitter_typescript.language_typescript())
    return _LANGUAGE




def _specifier(statement: Node, source: bytes) -> str | None:
    string = statement.child_by_field_name("source")
    if string is None:
        return None
    last_fragment = None
    for child in string.children:
        if child.type == "string_fragment":
            last_fragment = child
    if last_fragment is not None:
        return node_text(last_fragment, source)
    return node_text(string, source).strip("`'\"")


def first_segment(spec: str) -> str:
    """``"./a/b"`` → ``a``; a scoped ``"@s/p/q"`` → ``@s/p``; nothing usable → ``""``."""
    parts = [p for p in spec.split("/") if p and p != "." and p != ".."]
    if not parts:
        return ""
    if parts[0].startswith("@") and len(parts) >= 2:
        return parts[0] + "/" + parts[1]
    return parts[0]


def imports_from_nodes(statements: list[Node], source: bytes) -> list[str]:
    """Module names from the file's import statements, given in start-byte order."""
    modules: list[str] = []
    try:
        for statement in statements:
            spec = _specifier(statement, source)
            module = first_segment(spec) if spec is not None else ""
            if module and module not in modules:
                modules.append(module)
    except Exception:  # never let a strange file break indexing
        pass
    return modules


_IMPORT_KINDS = ("import_statement",)
# The bare-tree path (validators, plugins, tools) shares imports_from_nodes with the chunker's pass.
extract_imports = imports_by_node_kind(grammar, _IMPORT_KINDS, imports_from_nodes)


PACK = LanguagePack(
    name="typescript",
    extensions=(".ts", ".tsx"),
    grammar=grammar,
    function_types=("function_declaration", "method_definition", "arrow_function", "function_expression"),
    class_types=("class_declaration", "interface_declaration", "enum_declaration"),
    import_node_types=_IMPORT_KINDS,
    extract_imports=extract_imports,
    imports_from_nodes=imports_from_nodes,
    sample=files(__package__).joinpath("sample.ts").read_text(encoding="utf-8"),
    sample_name="typescript.ts",
    expected=PackExpected(
        min_functions=2,
        min_classes=2,
        kinds=("interface_declaration", "class_declaration"),
        imports=("fs",),
    ),
    grammar_distribution="tree-sitter-typescript",
    body_node_types=("statement_block", "class_body", "interface_body", "enum_body"),
    doc_node_types=("comment",),
    member_node_types=("public_field_definition", "property_signature", "method_signature", "enum_assignment"),
)


@hookimpl
def cce_register_packs(register):
    register(PACK)


# The family's renderer looks through an expression statement for a leading doc
# in every grammar that has one; kept for byte-identity with the other engines.
_DOC_WRAPPERS = ("expression_statement",)


# The structural compact view for this language; a plugin that overrides it is asked first.
cce_render_compact = structural_renderer(PACK.name, _DOC_WRAPPERS)

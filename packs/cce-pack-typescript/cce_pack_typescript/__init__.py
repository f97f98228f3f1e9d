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

from cce_core.api import (
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


# Jest, Vitest and Jasmine test files and folders (type tests and snapshots included); installed
# packages. A ``.d.ts`` is not generated here: hand-written declarations are the API people ask about,
# and emitted ones sit in ``dist/`` or ``build/``, which the engine's general rules already hold back.
CONVENTIONS = FileConventions(
    tests=("*.test.ts", "*.spec.ts", "*.test.tsx", "*.spec.tsx", "*.test.mts", "*.spec.mts", "*.test.cts",
           "*.spec.cts", "*.test-d.ts", "__tests__/", "__mocks__/", "__snapshots__/", "spec/"),
    generated=("node_modules/",),
)


@hookimpl
def cce_file_conventions():
    return CONVENTIONS


# The family's renderer looks through an expression statement for a leading doc
# in every grammar that has one; kept for byte-identity with the other engines.
_DOC_WRAPPERS = ("expression_statement",)


# The structural compact view for this language; a plugin that overrides it is asked first.
cce_render_compact = structural_renderer(PACK.name, _DOC_WRAPPERS)


# Symbols: tree-sitter-typescript's shipped tags query covers only what TypeScript adds to JavaScript
# (signatures, interfaces, modules, type references); these patterns add the JavaScript part (functions,
# classes, methods, calls), type aliases and enums, the modules a file imports (@module, for name
# resolution) and the names it imports. Names passed as values are left out: they cost a third of
# the indexing time the symbols take and are mostly plain variables.
# Calls through the instance (`this.x()`, `self.x()`) are @reference.call.self: its class's method first.
TAGS_EXTENSION = r"""
(call_expression function: (member_expression object: (this) property: (property_identifier) @name))
  @reference.call.self
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (type_identifier) @name) @definition.class
(method_definition name: (property_identifier) @name) @definition.method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.function
(public_field_definition name: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.method
(pair key: (property_identifier) @name value: [(arrow_function) (function_expression)]) @definition.function
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum

(call_expression function: (identifier) @name) @reference.call
(call_expression function: (member_expression property: (property_identifier) @name)) @reference.call

(import_statement source: (string (string_fragment) @module))
(import_statement (import_clause (named_imports (import_specifier name: (identifier) @name) @reference.import))
  source: (string (string_fragment) @module))
(import_statement (import_clause (identifier) @name @reference.import) source: (string (string_fragment) @module))
(export_statement source: (string (string_fragment) @module))
(export_statement (export_clause (export_specifier name: (identifier) @name) @reference.import)
  source: (string (string_fragment) @module))
(export_statement "*" @name @reference.import source: (string (string_fragment) @module))
(call_expression function: (import) arguments: (arguments (string (string_fragment) @module)))

(new_expression constructor: (identifier) @name) @reference.call
(export_clause (export_specifier name: (identifier) @name) @reference.export)
"""


# The grammar's shipped tags query plus the patterns above.
cce_tags_query = tags_query_extension(PACK.name, TAGS_EXTENSION)


# Where a relative specifier may point, best first: the path as written, then with each extension a
# bundler tries, then as a directory's index file ("./a.js" may name a.ts in TypeScript's ESM style).
_SCRIPT_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".d.ts")


@hookimpl
def cce_resolve_import(language, specifier, importer):
    """Relative specifiers (``./x``, ``../x``) against the importer's directory; a package name names no file."""
    if language != PACK.name:
        return None
    if not specifier.startswith("."):
        return []
    import posixpath

    base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
    if base.startswith("../") or base == "..":
        return []
    stem, dot, ext = base.rpartition(".")
    plain = stem if dot and "." + ext in _SCRIPT_EXTENSIONS and "/" not in ext else base
    return [base, *(plain + e for e in _SCRIPT_EXTENSIONS), *(base + "/index" + e for e in _SCRIPT_EXTENSIONS)]

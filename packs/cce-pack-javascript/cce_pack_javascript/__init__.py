"""The JavaScript language pack (``.js``, ``.jsx``, ``.mjs``, ``.cjs``) via tree-sitter-javascript.

Function declarations, class methods, arrow functions and function expressions
become ``function`` chunks; class declarations become ``class`` chunks.

Imports come from ES module statements only (``import x from "spec"``,
``import "spec"``); ``require()`` calls are not imports here. The module name is
the first meaningful path segment of the specifier: ``"./auth"`` and
``"../auth/login"`` give ``auth``, ``"react-dom/client"`` gives ``react-dom``, and
a scoped package keeps its scope, so ``"@scope/pkg/x"`` gives ``@scope/pkg``.
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
        import tree_sitter_javascript

        _LANGUAGE = Language(tree_sitter_javascript.language())
    return _LANGUAGE




def module_specifier(statement: Node, source: bytes) -> str | None:
    """The quoted module path of an import statement, without its quotes."""
    string = statement.child_by_field_name("source")
    if string is None:
        return None
    fragments = [child for child in string.children if child.type == "string_fragment"]
    if fragments:
        return node_text(fragments[-1], source)
    return node_text(string, source).strip("'\"`")


def specifier_module(spec: str) -> str:
    """The module a specifier names: its first real path segment (scope kept)."""
    segments = [seg for seg in spec.split("/") if seg not in ("", ".", "..")]
    if not segments:
        return ""
    head = segments[0]
    if head.startswith("@") and len(segments) > 1:
        return f"{head}/{segments[1]}"
    return head


def imports_from_nodes(statements: list[Node], source: bytes) -> list[str]:
    """Module names from the file's import statements, given in start-byte order."""
    found: list[str] = []
    try:
        for statement in statements:
            spec = module_specifier(statement, source)
            if spec is None:
                continue
            name = specifier_module(spec)
            if name and name not in found:
                found.append(name)
    except Exception:  # odd input: keep what was already found
        pass
    return found


_IMPORT_KINDS = ("import_statement",)
# The bare-tree path (validators, plugins, tools) shares imports_from_nodes with the chunker's pass.
extract_imports = imports_by_node_kind(grammar, _IMPORT_KINDS, imports_from_nodes)


PACK = LanguagePack(
    name="javascript",
    extensions=(".js", ".jsx", ".mjs", ".cjs"),
    grammar=grammar,
    function_types=("function_declaration", "method_definition", "arrow_function", "function_expression"),
    class_types=("class_declaration",),
    import_node_types=_IMPORT_KINDS,
    extract_imports=extract_imports,
    imports_from_nodes=imports_from_nodes,
    sample=files(__package__).joinpath("sample.js").read_text(encoding="utf-8"),
    sample_name="javascript.js",
    expected=PackExpected(
        min_functions=2,
        min_classes=1,
        kinds=("function_declaration", "method_definition", "class_declaration"),
        imports=("fs",),
    ),
    grammar_distribution="tree-sitter-javascript",
    module_suffixes=(".js",),
    body_node_types=("statement_block", "class_body"),
    doc_node_types=("comment",),
    member_node_types=("field_definition",),
)


@hookimpl
def cce_register_packs(register):
    register(PACK)


# Jest, Vitest, Mocha and Jasmine test files and folders (snapshots included); installed packages.
CONVENTIONS = FileConventions(
    tests=("*.test.js", "*.spec.js", "*.test.jsx", "*.spec.jsx", "*.test.mjs", "*.spec.mjs", "*.test.cjs",
           "*.spec.cjs", "__tests__/", "__mocks__/", "__snapshots__/", "spec/"),
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


# Symbols: tree-sitter-javascript's shipped tags query finds functions, classes, methods and calls; these
# patterns add the modules a file imports (@module, for name resolution: ES imports, re-exports,
# require() and dynamic import()), the names it imports and JSX components (as calls). Names passed
# as values are left out: they cost a third of the indexing time the symbols take and are mostly
# plain variables.
# Calls through the instance (`this.x()`, `self.x()`) are @reference.call.self: its class's method first.
TAGS_EXTENSION = r"""
(call_expression function: (member_expression object: (this) property: (property_identifier) @name))
  @reference.call.self
(import_statement source: (string (string_fragment) @module))
(import_statement (import_clause (named_imports (import_specifier name: (identifier) @name) @reference.import))
  source: (string (string_fragment) @module))
(import_statement (import_clause (identifier) @name @reference.import) source: (string (string_fragment) @module))
(export_statement source: (string (string_fragment) @module))
(export_statement (export_clause (export_specifier name: (identifier) @name) @reference.import)
  source: (string (string_fragment) @module))
(export_statement "*" @name @reference.import source: (string (string_fragment) @module))
(call_expression function: (identifier) @_require arguments: (arguments (string (string_fragment) @module))
  (#eq? @_require "require"))
(call_expression function: (import) arguments: (arguments (string (string_fragment) @module)))

(jsx_opening_element name: (identifier) @name) @reference.call
(jsx_self_closing_element name: (identifier) @name) @reference.call

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

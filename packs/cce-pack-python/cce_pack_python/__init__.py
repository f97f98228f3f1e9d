"""The Python language pack: functions and classes via tree-sitter-python.

Imports come from ``import a.b`` (``a``), ``import a.b as c`` (``a``) and
``from a.b import c`` (``a``); a purely relative ``from . import x`` names no
module and is left out.
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
    structural_renderer,
    tags_query_extension,
)

_LANGUAGE: Language | None = None


def grammar() -> Language:
    global _LANGUAGE
    if _LANGUAGE is None:
        import tree_sitter_python

        _LANGUAGE = Language(tree_sitter_python.language())
    return _LANGUAGE


def _first_component(dotted: str) -> str:
    return next((part for part in dotted.split(".") if part), "")


def _text(node: Node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def imports_from_nodes(nodes: list[Node], source: bytes) -> list[str]:
    """Module names from the file's import statements, given in start-byte order."""
    found: list[str] = []
    for node in nodes:
        names: list[str] = []
        if node.type == "import_statement":
            for child in node.children:
                if child.type == "dotted_name":
                    names.append(_first_component(_text(child, source)))
                elif child.type == "aliased_import" and (aliased := child.child(0)) is not None:
                    names.append(_first_component(_text(aliased, source)))
        else:
            module = node.child_by_field_name("module_name")
            if module is not None:
                names.append(_first_component(_text(module, source)))
        for name in names:
            if name and name not in found:
                found.append(name)
    return found


_IMPORT_KINDS = ("import_statement", "import_from_statement")
# The bare-tree path (validators, plugins, tools) shares imports_from_nodes with the chunker's pass.
extract_imports = imports_by_node_kind(grammar, _IMPORT_KINDS, imports_from_nodes)


PACK = LanguagePack(
    name="python",
    extensions=(".py",),
    grammar=grammar,
    function_types=("function_definition",),
    class_types=("class_definition",),
    import_node_types=_IMPORT_KINDS,
    extract_imports=extract_imports,
    imports_from_nodes=imports_from_nodes,
    sample=files(__package__).joinpath("sample.py").read_text(encoding="utf-8"),
    sample_name="python.py",
    expected=PackExpected(
        min_functions=2,
        min_classes=1,
        kinds=("function_definition", "class_definition"),
        imports=("os",),
    ),
    grammar_distribution="tree-sitter-python",
    module_suffixes=(".py",),
    body_node_types=("block",),
    doc_node_types=("string",),
)


@hookimpl
def cce_register_packs(register):
    register(PACK)


# Test modules as pytest and unittest find them, and the stubs protoc and grpcio-tools write.
CONVENTIONS = FileConventions(
    tests=("test_*.py", "*_test.py", "*_tests.py", "conftest.py"),
    generated=("*_pb2.py", "*_pb2_grpc.py", "*_pb2.pyi"),
)


@hookimpl
def cce_file_conventions():
    return CONVENTIONS


# A docstring is a string wrapped in an expression statement; look through it.
_DOC_WRAPPERS = ("expression_statement",)


# The structural compact view for this language; a plugin that overrides it is asked first.
cce_render_compact = structural_renderer(PACK.name, _DOC_WRAPPERS)


# Symbols: tree-sitter-python's shipped tags query finds definitions and calls; these patterns add what
# navigation needs beyond them — methods told from functions, the modules a file imports (@module, for
# name resolution), the names it imports, calls through `self`/`cls` (the enclosing class's methods
# first), decorators, and names passed as values, so `cce refs` finds a callback as well as a call.
TAGS_EXTENSION = r"""
(class_definition body: (block (function_definition name: (identifier) @name) @definition.method))
(class_definition body: (block (decorated_definition
  definition: (function_definition name: (identifier) @name) @definition.method)))

(import_statement name: (dotted_name) @module)
(import_statement name: (aliased_import name: (dotted_name) @module))
(import_from_statement module_name: (_) @module)
(import_from_statement module_name: (_) @module name: (dotted_name (identifier) @name) @reference.import)
(import_from_statement module_name: (_) @module
  name: (aliased_import name: (dotted_name (identifier) @name)) @reference.import)
(import_from_statement module_name: (_) @module (wildcard_import) @name @reference.import)

(call function: (attribute object: (identifier) @_receiver attribute: (identifier) @name)
  (#match? @_receiver "^(self|cls)$")) @reference.call.self
(decorator (identifier) @name) @reference.call
(decorator (attribute attribute: (identifier) @name)) @reference.call

(argument_list [(identifier) @name (attribute attribute: (identifier) @name)]) @reference.value
(keyword_argument value: [(identifier) @name (attribute attribute: (identifier) @name)]) @reference.value
(assignment right: [(identifier) @name (attribute attribute: (identifier) @name)]) @reference.value
(return_statement [(identifier) @name (attribute attribute: (identifier) @name)]) @reference.value
([(list) (tuple) (set)] [(identifier) @name (attribute attribute: (identifier) @name)]) @reference.value
(pair value: [(identifier) @name (attribute attribute: (identifier) @name)]) @reference.value
"""


# The grammar's shipped tags query plus the patterns above.
cce_tags_query = tags_query_extension(PACK.name, TAGS_EXTENSION)


@hookimpl
def cce_symbol_binding_reader(language):
    """Annotations, parameters, results, locals and ``self.x = y``, read from Python text."""
    if language != PACK.name:
        return None
    from cce_pack_python.symbol_bindings import read_bindings

    return read_bindings


@hookimpl
def cce_resolve_import(language, specifier, importer):
    """``a.b`` -> ``a/b.py`` or ``a/b/__init__.py``; leading dots climb from the importer's package."""
    if language != PACK.name:
        return None
    dots = len(specifier) - len(specifier.lstrip("."))
    rest = [part for part in specifier[dots:].split(".") if part]
    if dots:
        base = importer.split("/")[:-1]
        if dots - 1 > len(base):
            return []
        parts = base[: len(base) - (dots - 1)] + rest
    else:
        parts = rest
    if not parts:
        return []
    stem = "/".join(parts)
    return [stem + ".py", stem + "/__init__.py"]

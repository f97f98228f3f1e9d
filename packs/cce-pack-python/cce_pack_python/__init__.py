"""The Python language pack: functions and classes via tree-sitter-python.

Imports come from ``import a.b`` (``a``), ``import a.b as c`` (``a``) and
``from a.b import c`` (``a``); a purely relative ``from . import x`` names no
module and is left out.
"""

from __future__ import annotations

from importlib.resources import files

from tree_sitter import Language, Node

from cce_core.api import LanguagePack, PackExpected, hookimpl, imports_by_node_kind, structural_renderer

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
                elif child.type == "aliased_import" and child.child(0) is not None:
                    names.append(_first_component(_text(child.child(0), source)))
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


# A docstring is a string wrapped in an expression statement; look through it.
_DOC_WRAPPERS = ("expression_statement",)


# The structural compact view for this language; a plugin that overrides it is asked first.
cce_render_compact = structural_renderer(PACK.name, _DOC_WRAPPERS)

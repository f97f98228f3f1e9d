"""The C language pack (``.c`` and ``.h``) via tree-sitter-c.

Function definitions become ``function`` chunks; ``struct``, ``union`` and
``enum`` specifiers become ``class`` chunks. A specifier is a chunk wherever it
appears, so ``struct Node *n`` in a parameter list yields one as well.

Imports are ``#include`` targets reduced to the header's file stem:
``#include <stdlib.h>`` gives ``stdlib``, ``#include <sys/types.h>`` gives
``types`` and ``#include "dir/store.h"`` gives ``store``. An include through a
macro (``#include CONFIG_H``) names no file and is skipped.
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
)

_LANGUAGE: Language | None = None
_PATH_KINDS = frozenset({"system_lib_string", "string_literal"})



def grammar() -> Language:
    global _LANGUAGE
    if _LANGUAGE is None:
        import tree_sitter_c

        _LANGUAGE = Language(tree_sitter_c.language())
    return _LANGUAGE




def include_stem(target: str) -> str:
    """``<sys/types.h>`` → ``types``; ``"store.h"`` → ``store``; ``<.hidden>`` → ``.hidden``."""
    path = target.strip(UNICODE_WHITESPACE).strip('<>"')
    base = path.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    return base[:dot] if dot > 0 else base


def imports_from_nodes(includes: list[Node], source: bytes) -> list[str]:
    """Header stems from the file's ``#include`` directives, given in start-byte order."""
    found: list[str] = []
    try:
        for include in includes:
            for child in include.children:
                if child.type not in _PATH_KINDS:
                    continue
                stem = include_stem(node_text(child, source))
                if stem and stem not in found:
                    found.append(stem)
    except Exception:  # odd input: keep what was already found
        pass
    return found


_IMPORT_KINDS = ("preproc_include",)
# The bare-tree path (validators, plugins, tools) shares imports_from_nodes with the chunker's pass.
extract_imports = imports_by_node_kind(grammar, _IMPORT_KINDS, imports_from_nodes)


PACK = LanguagePack(
    name="c",
    extensions=(".c", ".h"),
    grammar=grammar,
    function_types=("function_definition",),
    class_types=("struct_specifier", "union_specifier", "enum_specifier"),
    import_node_types=_IMPORT_KINDS,
    extract_imports=extract_imports,
    imports_from_nodes=imports_from_nodes,
    sample=files(__package__).joinpath("sample.c").read_text(encoding="utf-8"),
    sample_name="c.c",
    expected=PackExpected(
        min_functions=1,
        min_classes=1,
        kinds=("function_definition", "struct_specifier"),
        imports=("stdlib",),
    ),
    grammar_distribution="tree-sitter-c",
    body_node_types=("compound_statement", "field_declaration_list", "enumerator_list"),
    doc_node_types=("comment",),
    member_node_types=("field_declaration", "enumerator"),
)


@hookimpl
def cce_register_packs(register):
    register(PACK)


# Test drivers named after what they test (jq's src/jq_test.c, test_*.c).
CONVENTIONS = FileConventions(tests=("*_test.c", "*_tests.c", "test_*.c", "*_test.h"))


@hookimpl
def cce_file_conventions():
    return CONVENTIONS


# The family's renderer looks through an expression statement for a leading doc
# in every grammar that has one; kept for byte-identity with the other engines.
_DOC_WRAPPERS = ("expression_statement",)


# The structural compact view for this language; a plugin that overrides it is asked first.
cce_render_compact = structural_renderer(PACK.name, _DOC_WRAPPERS)


# Symbols: tree-sitter-c's shipped tags query names a function by its declarator only, so a prototype
# looks like a definition and a definition's span ends before its body; it has no calls at all. Here a
# function definition spans its body, a prototype is a `declaration` (the engine lets it stand for the
# definition elsewhere), and calls, macros and includes (@module, for name resolution) are added.
_SHIPPED_DECLARATOR = "(function_declarator declarator: (identifier) @name) @definition.function"
TAGS_EXTENSION = r"""
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator
  declarator: (identifier) @name))) @definition.function
(function_definition declarator: (pointer_declarator declarator: (pointer_declarator
  declarator: (function_declarator declarator: (identifier) @name)))) @definition.function
(declaration declarator: (function_declarator declarator: (identifier) @name)) @definition.declaration
(declaration declarator: (pointer_declarator declarator: (function_declarator
  declarator: (identifier) @name))) @definition.declaration
(preproc_function_def name: (identifier) @name) @definition.macro
(preproc_def name: (identifier) @name) @definition.constant

(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(preproc_include path: (string_literal (string_content) @module))
(preproc_include path: (system_lib_string) @module)
"""


@hookimpl
def cce_tags_query(language, shipped):
    if language != PACK.name:
        return None
    return (shipped or "").replace(_SHIPPED_DECLARATOR, "") + TAGS_EXTENSION


@hookimpl
def cce_resolve_import(language, specifier, importer):
    """``#include "x.h"`` from the including file's directory first, then anywhere (an include path)."""
    if language != PACK.name:
        return None
    import posixpath

    relative = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
    return [relative, specifier] if not relative.startswith("..") else [specifier]

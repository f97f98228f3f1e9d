"""The Ruby language pack (``.rb``) via tree-sitter-ruby.

Instance and singleton methods (``def x`` / ``def self.x``) become ``function``
chunks; classes and modules become ``class`` chunks.

Imports are the targets of bare ``require`` / ``require_relative`` calls, reduced
to the file stem of the last path segment: ``require "json"`` gives ``json``,
``require_relative "lib/store.rb"`` gives ``store``. A method that merely shares
the name but has a receiver (``loader.require "x"``) is not an import.

For compact views, a class body keeps the Rails model DSL lines
(``has_many``, ``validates``, ``scope``, ...) as member lines.
"""

from __future__ import annotations

import re
from importlib.resources import files

from tree_sitter import Language, Node

from cce_core.api import (
    FileConventions,
    LanguagePack,
    PackExpected,
    hookimpl,
    imports_by_pattern,
    node_text,
    structural_renderer,
)

_LANGUAGE: Language | None = None
_REQUIRE_METHODS = ("require", "require_relative")


def grammar() -> Language:
    global _LANGUAGE
    if _LANGUAGE is None:
        import tree_sitter_ruby

        _LANGUAGE = Language(tree_sitter_ruby.language())
    return _LANGUAGE




def require_stem(target: str) -> str:
    """``"a/b.rb"`` → ``b``; a leading-dot name such as ``".env"`` keeps its dot."""
    last = target.rsplit("/", 1)[-1]
    dot = last.rfind(".")
    return last[:dot] if dot > 0 else last


def _first_string_content(node: Node) -> Node | None:
    """The first ``string_content`` under ``node``, in document (pre-)order."""
    cursor = node.walk()
    while True:
        current = cursor.node
        if current is not None and current.type == "string_content":
            return current
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():  # back above the start node: done
                return None


def require_target(call: Node, source: bytes) -> str | None:
    """The string a bare ``require``/``require_relative`` call loads, else ``None``."""
    method = call.child(0)
    if method is None or method.type != "identifier" or node_text(method, source) not in _REQUIRE_METHODS:
        return None
    for child in call.children:
        if child.type == "argument_list":
            content = _first_string_content(child)
            return None if content is None else node_text(content, source)
    return None


# The calls that may load a file: a bare method name among _REQUIRE_METHODS, narrowed in C.
# require_target still checks the method comes first (`x.require "y"` has a receiver).
REQUIRE_PATTERN = (
    "(call (identifier) @_method (#any-of? @_method " + " ".join(f'"{m}"' for m in _REQUIRE_METHODS) + ")) @import"
)


def imports_from_nodes(calls: list[Node], source: bytes) -> list[str]:
    """The stems the ``require`` calls load, from the nodes ``REQUIRE_PATTERN`` captures (see ``import_pattern``)."""
    found: list[str] = []
    # A call two identifiers of which match is captured twice; outer calls first at one start.
    unique = {node.id: node for node in calls}
    try:
        for call in sorted(unique.values(), key=lambda n: (n.start_byte, -n.end_byte)):
            target = require_target(call, source)
            if target is None:
                continue
            stem = require_stem(target)
            if stem and stem not in found:
                found.append(stem)
    except Exception:  # odd input: keep what was already found
        pass
    return found


# The same rule on a bare tree, through the same pattern (validators and tools call it).
extract_imports = imports_by_pattern(grammar, REQUIRE_PATTERN, imports_from_nodes)


PACK = LanguagePack(
    name="ruby",
    extensions=(".rb",),
    grammar=grammar,
    function_types=("method", "singleton_method"),
    class_types=("class", "module"),
    import_node_types=("call",),
    extract_imports=extract_imports,
    imports_from_nodes=imports_from_nodes,
    import_pattern=REQUIRE_PATTERN,
    sample=files(__package__).joinpath("sample.rb").read_text(encoding="utf-8"),
    sample_name="ruby.rb",
    expected=PackExpected(
        min_functions=2,
        min_classes=1,
        kinds=("method", "class"),
        imports=("json",),
    ),
    grammar_distribution="tree-sitter-ruby",
    body_node_types=("body_statement",),
    doc_node_types=("comment",),
    member_line_prefixes=(
        "has_many",
        "has_one",
        "belongs_to",
        "has_and_belongs_to_many",
        "validates",
        "validate",
        "scope",
        "enum",
        "attribute",
        "delegate",
    ),
)


@hookimpl
def cce_register_packs(register):
    register(PACK)


# RSpec's spec/ tree and *_spec.rb, Minitest's *_test.rb and test_*.rb.
CONVENTIONS = FileConventions(tests=("spec/", "*_spec.rb", "*_test.rb", "test_*.rb"))


@hookimpl
def cce_file_conventions():
    return CONVENTIONS


# The grammar has no statement wrapper; a leading comment is a body child itself.
_DOC_WRAPPERS = ()


# The structural compact view for this language; a plugin that overrides it is asked first.
cce_render_compact = structural_renderer(PACK.name, _DOC_WRAPPERS)


# Symbols: tree-sitter-ruby's shipped tags query reads every bare identifier and constant as a call,
# relying on a `#is-not? local` predicate that only tree-sitter's own tags tool evaluates; here that
# pattern is left out (a local variable is no call). Bare identifiers are not recorded at all: without
# scope analysis a local read and an argument-less call look the same, and recording every one doubled
# the index time on rails (calls with arguments or a receiver are `call` nodes, which the shipped
# patterns capture). The patterns below add the files a file requires (@module, for name resolution)
# and constants as uses.
_SHIPPED_BARE_CALLS = re.compile(r"\(\s*\[\(identifier\) \(constant\)\] @name @reference\.call.*?\n\)", re.S)
TAGS_EXTENSION = r"""
(call method: (identifier) @_require arguments: (argument_list (string (string_content) @module))
  (#match? @_require "^(require|require_relative|load|autoload)$"))
(constant) @name @reference.constant
"""


@hookimpl
def cce_tags_query(language, shipped):
    if language != PACK.name:
        return None
    return _SHIPPED_BARE_CALLS.sub("", shipped or "") + TAGS_EXTENSION


@hookimpl
def cce_resolve_import(language, specifier, importer):
    """``require_relative "x"`` from the importer's directory first, then ``require "a/b"`` as ``a/b.rb``."""
    if language != PACK.name:
        return None
    import posixpath

    target = specifier if specifier.endswith(".rb") else specifier + ".rb"
    relative = posixpath.normpath(posixpath.join(posixpath.dirname(importer), target))
    return [relative, target] if not relative.startswith("..") else [target]

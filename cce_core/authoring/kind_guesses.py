"""Which node kinds of a grammar are functions, classes, imports, bodies and doc comments: the scaffold's guesses.

A language pack names the node kinds the chunker and the compact view care
about. ``cce packs new`` guesses them for any grammar, first from the
definitions its ``tags.scm`` lists (kept only when the name also looks the
part), then from the shape of the kind names alone ("local_function_declaration",
"struct_item", "import_spec"). Nothing here knows a particular language; a
test keeps it that way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cce_core.authoring.grammar_source import TAGS_QUERY, Grammar
from cce_core.authoring.tags_query import tags_definitions

FROM_TAGS = f"from {TAGS_QUERY}"
BY_HEURISTIC = "by name heuristic"

# --- node-kind shapes -------------------------------------------------------------------------
# A kind name is split on "_" into words. A definition kind is some modifier words, then the
# words of the thing, then (usually) a definition suffix: "local_function_declaration",
# "abstract_class_declaration", "struct_item", or a bare "method" / "class".
_DEFINITION_SUFFIXES = frozenset({"declaration", "definition", "item", "statement", "def"})
_FUNCTION_WORDS = frozenset({"function", "method", "func", "fn", "procedure", "proc", "subroutine", "sub",
                             "constructor", "destructor"})
_FUNCTION_MODIFIERS = frozenset({"local", "generator", "async", "abstract", "static", "singleton", "compact",
                                 "global"})
# Bare (suffix-less) function kinds are allowed only for these words: a bare "fn" or "sub" is too
# often a keyword-like or expression node.
_BARE_FUNCTION_WORDS = frozenset({"function", "method"})
_CLASS_WORDS = frozenset({"class", "interface", "struct", "trait", "enum", "impl", "module", "object", "record",
                          "protocol", "union", "annotation"})
_CLASS_MODIFIERS = frozenset({"abstract", "singleton", "sealed", "data"})
# "specifier" is how some grammars spell a struct/union/enum definition.
_CLASS_SUFFIXES = frozenset({"declaration", "definition", "item", "specifier", "statement"})
# A bare "object" or "union" is usually a literal or a type expression; only these stand alone.
_BARE_CLASS_WORDS = frozenset({"class", "module"})
# "type" on its own means a type expression almost everywhere; only a type *declaration*
# statement (which holds struct and interface definitions) is class-like.
_TYPE_DECLARATION = ("type", "declaration")

_IMPORT_WORDS = frozenset({"import", "include", "require", "use"})
_IMPORT_MODIFIERS = frozenset({"from", "preproc", "once", "namespace"})
_IMPORT_DIRECTIVE_PREFIXES = frozenset({"preproc"})
_IMPORT_SUFFIXES = frozenset({"statement", "declaration", "directive", "spec", "expression", "call"})
# "using" names a resource declaration in some grammars; only a using *directive* imports.
_USING_DIRECTIVE = ("using", "directive")

_BODY_KINDS = frozenset({"block", "body", "statement_block", "compound_statement", "declaration_list",
                         "field_declaration_list"})
_NOT_BODY_WORDS = frozenset({"heredoc", "nowdoc", "string", "pattern", "comment"})
_NOT_DOC_WORDS = frozenset({"html", "content", "marker"})

# Which tags.scm captures name which member (the standard tags vocabulary).
_TAG_FUNCTION = frozenset({"definition.function", "definition.method"})
_TAG_CLASS = frozenset({"definition.class", "definition.interface", "definition.module", "definition.type",
                        "definition.struct", "definition.enum", "definition.trait", "definition.union"})


@dataclass(frozen=True)
class KindGuess:
    """The node kinds guessed for one ``LanguagePack`` member and where each came from."""

    member: str
    from_tags: tuple[str, ...] = ()
    from_heuristic: tuple[str, ...] = ()
    # Kinds tags.scm marks as definitions that do not look like one (an assignment, a field).
    tags_rejected: tuple[str, ...] = ()

    @property
    def kinds(self) -> tuple[str, ...]:
        return self.from_tags + self.from_heuristic

    @property
    def origin(self) -> str:
        """``from queries/tags.scm``, ``by name heuristic``, both, or that nothing matched."""
        if self.from_tags and self.from_heuristic:
            return (f"{FROM_TAGS} ({', '.join(self.from_tags)}) and {BY_HEURISTIC} "
                    f"({', '.join(self.from_heuristic)})")
        if self.from_tags:
            return FROM_TAGS
        if self.from_heuristic:
            return BY_HEURISTIC
        return "nothing matched"

    def line(self) -> str:
        return f"guessed {self.member} = {self.kinds!r} {self.origin}"


def _words(kind: str) -> list[str]:
    return kind.lower().split("_")


def _strip_suffixes(words: list[str], suffixes: frozenset[str]) -> tuple[list[str], list[str]]:
    core = list(words)
    stripped: list[str] = []
    while len(core) > 1 and core[-1] in suffixes:
        stripped.insert(0, core.pop())
    return core, stripped


def _after_modifiers(words: list[str], modifiers: frozenset[str]) -> list[str]:
    """The words after the leading modifiers ("static_method" → ["method"]); modifiers only lead."""
    start = 0
    while start < len(words) and words[start] in modifiers:
        start += 1
    return words[start:]


def looks_like_function(kind: str) -> bool:
    """``function_declaration``, ``local_function_declaration``, ``method``: not calls, types, literals."""
    core, stripped = _strip_suffixes(_words(kind), _DEFINITION_SUFFIXES)
    thing = _after_modifiers(core, _FUNCTION_MODIFIERS)
    if not thing or not all(word in _FUNCTION_WORDS for word in thing):
        return False
    return bool(stripped) or all(word in _BARE_FUNCTION_WORDS for word in thing)


def looks_like_class(kind: str) -> bool:
    """``class_declaration``, ``struct_item``, ``type_declaration``, ``class``: not bodies, types, lists."""
    words = _words(kind)
    if tuple(words) == _TYPE_DECLARATION:
        return True
    if words[:1] == ["module"] and words[1:] in (["declaration"], ["directive"]):
        return False  # declares a build unit (a module-info file), not a type
    if words[:2] == ["annotation", "type"]:
        words = ["annotation", *words[2:]]  # an annotation type is declared like an interface
    core, stripped = _strip_suffixes(words, _CLASS_SUFFIXES)
    thing = _after_modifiers(core, _CLASS_MODIFIERS)
    if not thing or not all(word in _CLASS_WORDS for word in thing):
        return False
    return bool(stripped) or all(word in _BARE_CLASS_WORDS for word in thing)


def looks_like_import(kind: str) -> bool:
    """``import_declaration``, ``import_spec``, ``use_declaration``, ``preproc_include``: whole imports only."""
    words = _words(kind)
    if tuple(words) == _USING_DIRECTIVE:
        return True
    has_suffix = len(words) > 1 and words[-1] in _IMPORT_SUFFIXES
    core = words[:-1] if has_suffix else words
    if not core or not all(word in _IMPORT_WORDS or word in _IMPORT_MODIFIERS for word in core):
        return False
    if not any(word in _IMPORT_WORDS for word in core):
        return False
    # Without a suffix only a preprocessor directive counts: a bare "import" is a keyword-like node
    # and "namespace_import" a part of an import statement.
    return has_suffix or (len(core) == 2 and core[0] in _IMPORT_DIRECTIVE_PREFIXES and core[1] in _IMPORT_WORDS)


def looks_like_body(kind: str) -> bool:
    """``block``, ``*_body``, ``statement_block``, ``compound_statement``, ``declaration_list``."""
    words = _words(kind)
    if any(word in _NOT_BODY_WORDS for word in words):
        return False
    return kind in _BODY_KINDS or words[-1] == "body" or words[0] == "body"


def looks_like_doc(kind: str) -> bool:
    """``comment``, ``line_comment``, ``block_comment``: not a comment's inner parts."""
    words = _words(kind)
    return words[-1] == "comment" and not any(word in _NOT_DOC_WORDS for word in words)


def guess_kinds(grammar: Grammar, tags_query: str | None) -> dict[str, KindGuess]:
    """Every member's guess: tags.scm definitions that look the part first, then name shapes."""
    kinds = [k for k in grammar.named_kinds if k != grammar.root_kind]
    known = set(kinds)
    definitions = tags_definitions(tags_query) if tags_query else {}

    def from_tags(captures: frozenset[str], shape: Callable[[str], bool]) -> tuple[list[str], list[str]]:
        accepted: list[str] = []
        rejected: list[str] = []
        for capture, tagged in definitions.items():
            if capture not in captures:
                continue
            for kind in tagged:
                if kind not in known or kind in accepted or kind in rejected:
                    continue
                (accepted if shape(kind) else rejected).append(kind)
        return accepted, rejected

    def guess(member: str, shape: Callable[[str], bool], captures: frozenset[str] = frozenset()) -> KindGuess:
        tagged, rejected = from_tags(captures, shape)
        heuristic = sorted(k for k in known if shape(k) and k not in tagged)
        return KindGuess(member, tuple(tagged), tuple(heuristic), tuple(rejected))

    return {
        "function_types": guess("function_types", looks_like_function, _TAG_FUNCTION),
        "class_types": guess("class_types", looks_like_class, _TAG_CLASS),
        "import_node_types": guess("import_node_types", looks_like_import),
        "body_node_types": guess("body_node_types", looks_like_body),
        "doc_node_types": guess("doc_node_types", looks_like_doc),
    }

"""The engine behind ``cce packs new``: a ready-to-edit language pack for any tree-sitter grammar wheel.

Writing a pack by hand means reading a grammar's node kinds, picking the ones
that are functions, classes and imports, finding a sample and measuring what it
must produce. This module does that first draft mechanically so an author
starts from a pack that installs, registers and passes its own tests, and only
has to review the guesses.

The guesses come from the grammar itself: its ``queries/tags.scm`` when the
wheel ships one (the grammar authors' own list of definitions), else the shapes
of its node-kind names. Nothing here knows a particular language; a test keeps
it that way.

Bad input raises :class:`CceError` and writes nothing: the distribution is
built in a temporary directory beside the target and renamed into place only
when complete.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import re
import secrets
import shutil
import string
import textwrap
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from importlib.resources import files
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import Any

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from cce_core.foundation.errors import CceError

TAGS_QUERY = "queries/tags.scm"
FROM_TAGS = f"from {TAGS_QUERY}"
BY_HEURISTIC = "by name heuristic"

# Bounds of the search for a sample in the working directory: a scaffold must not crawl a home directory.
MAX_FILES_VISITED = 2000
MAX_SAMPLE_BYTES = 64 * 1024
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "dist", "build", "target"})

_NAME = re.compile(r"[a-z][a-z0-9_]*")
# One final suffix: the engine maps a file to its pack by the lowercased text after the last dot.
_EXTENSION = re.compile(r"\.[a-z0-9][a-z0-9_+\-]*")

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

_TEMPLATES = "pack_template"


# --- the report -------------------------------------------------------------------------------


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


@dataclass
class ScaffoldReport:
    """What ``scaffold_pack`` wrote and guessed; ``lines`` is what the CLI prints."""

    target: Path
    name: str
    module: str
    distribution: str
    distribution_version: str
    grammar_module: str
    language_function: str
    extensions: tuple[str, ...]
    guesses: dict[str, KindGuess]
    sample_file: str
    sample_origin: str
    sample_empty: bool
    min_functions: int
    min_classes: int
    expected_kinds: tuple[str, ...]
    expected_imports: tuple[str, ...]
    has_tags_query: bool
    lines: list[str] = field(default_factory=list)

    @property
    def function_types(self) -> tuple[str, ...]:
        return self.guesses["function_types"].kinds

    @property
    def class_types(self) -> tuple[str, ...]:
        return self.guesses["class_types"].kinds

    @property
    def import_node_types(self) -> tuple[str, ...]:
        return self.guesses["import_node_types"].kinds

    @property
    def body_node_types(self) -> tuple[str, ...]:
        return self.guesses["body_node_types"].kinds

    @property
    def doc_node_types(self) -> tuple[str, ...]:
        return self.guesses["doc_node_types"].kinds


def render_report(report: ScaffoldReport) -> str:
    """The text ``cce packs new`` prints: one line per fact, warnings in capitals."""
    return "\n".join(report.lines)


# --- the grammar ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Grammar:
    """A grammar found in an installed distribution."""

    distribution: str  # as the distribution spells its own name
    version: str
    module: ModuleType
    language_function: str
    language: Language
    named_kinds: tuple[str, ...]  # named, visible kinds in id order, each once
    root_kind: str

    @property
    def module_name(self) -> str:
        return self.module.__name__


def load_grammar(distribution: str, name: str = "") -> Grammar:
    """The grammar ``distribution`` ships; ``name`` (the pack's) breaks ties between several."""
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        raise CceError(f'distribution "{distribution}" is not installed — pip install {distribution}') from None
    dist_name = dist.metadata["Name"] or distribution
    candidates = _top_level_modules(dist, distribution)
    tried: list[str] = []
    for module_name in candidates:
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # a broken or private module: try the next one
            tried.append(f"{module_name} ({type(exc).__name__})")
            continue
        function = _pick_language_function(module, name, dist_name)
        if function is None:
            tried.append(f"{module_name} (no language function)")
            continue
        try:
            language = Language(getattr(module, function)())
        except Exception as exc:
            raise CceError(
                f'distribution "{dist_name}" has no usable tree-sitter grammar: {module_name}.{function}() did not '
                f"load with tree_sitter.Language ({type(exc).__name__}: {exc}) — install a version built for "
                f"this tree-sitter"
            ) from None
        named = _named_kinds(language)
        root = Parser(language).parse(b"").root_node.type
        return Grammar(dist_name, dist.version, module, function, language, named, root)
    looked = ", ".join(tried) if tried else "no importable module"
    raise CceError(
        f'distribution "{dist_name}" ships no tree-sitter grammar: no importable module with a language() '
        f"function (looked at: {looked})"
    )


def _top_level_modules(dist: metadata.Distribution, requested: str) -> list[str]:
    names: list[str] = []
    top_level = dist.read_text("top_level.txt") or ""
    names.extend(line.strip() for line in top_level.splitlines() if line.strip())
    for path in dist.files or ():
        parts = PurePosixPath(str(path)).parts
        if len(parts) == 2 and parts[1] == "__init__.py":
            names.append(parts[0])
    names.append(requested.replace("-", "_").replace(".", "_"))
    unique = [n for n in dict.fromkeys(names) if n.isidentifier()]
    # Private names ("_binding") are usually the compiled half of the public package: last.
    return sorted(unique, key=lambda n: n.startswith("_"))


def _pick_language_function(module: ModuleType, name: str, dist_name: str) -> str | None:
    functions = sorted(a for a in dir(module) if a.startswith("language") and callable(getattr(module, a, None)))
    if not functions:
        return None
    if "language" in functions:
        return "language"
    if name and f"language_{name}" in functions:
        return f"language_{name}"
    # A wheel with several grammars usually names its main one after itself.
    dist_words = set(re.split(r"[-_.]+", dist_name.lower()))
    for function in functions:
        if function.removeprefix("language_") in dist_words:
            return function
    return functions[0]


def _named_kinds(language: Language) -> tuple[str, ...]:
    kinds: dict[str, None] = {}
    for kind_id in range(language.node_kind_count):
        if language.node_kind_is_named(kind_id) and language.node_kind_is_visible(kind_id):
            kind = language.node_kind_for_id(kind_id)
            if kind:
                kinds[kind] = None
    return tuple(kinds)


def read_tags_query(grammar: Grammar) -> str | None:
    """The grammar's ``queries/tags.scm`` if its wheel ships one."""
    try:
        resource = files(grammar.module_name).joinpath(*TAGS_QUERY.split("/"))
        if resource.is_file():
            return resource.read_text(encoding="utf-8")
    except (OSError, TypeError, ValueError, ModuleNotFoundError):
        pass
    try:
        dist = metadata.distribution(grammar.distribution)
    except metadata.PackageNotFoundError:
        return None
    for path in dist.files or ():
        if str(path).replace("\\", "/").endswith("/" + TAGS_QUERY):
            try:
                return Path(str(dist.locate_file(path))).read_text(encoding="utf-8")
            except OSError:
                continue
    return None


# --- reading tags.scm -------------------------------------------------------------------------

_SCM_TOKEN = re.compile(
    r"""
      (?P<comment>;[^\n]*)
    | (?P<string>"(?:[^"\\]|\\.)*")
    | (?P<open>[(\[])
    | (?P<close>[)\]])
    | (?P<capture>@[\w.\-]+)
    | (?P<field>!?[\w\-]+:)
    | (?P<word>[^\s()\[\]";@]+)
    """,
    re.VERBOSE,
)


@dataclass
class _ScmElement:
    kind: str | None = None  # "(kind ...)"; None for groupings, alternations and strings
    alternatives: list[_ScmElement] = field(default_factory=list)  # "[...]"
    children: list[_ScmElement] = field(default_factory=list)
    captures: list[str] = field(default_factory=list)


def _scm_parse(tokens: list[tuple[str, str]], start: int, nested: bool = True) -> tuple[list[_ScmElement], int]:
    """Elements up to the matching closer; captures attach to the element they follow."""
    elements: list[_ScmElement] = []
    i = start
    while i < len(tokens):
        kind, text = tokens[i]
        i += 1
        if kind == "close":
            if nested:
                return elements, i
            continue  # a stray closer at the top level: skip it, keep reading
        if kind == "open":
            element = _ScmElement()
            if text == "[":
                element.alternatives, i = _scm_parse(tokens, i)
            else:
                if i < len(tokens) and tokens[i][0] == "word":
                    element.kind = tokens[i][1]
                    i += 1
                element.children, i = _scm_parse(tokens, i)
            elements.append(element)
        elif kind == "string":
            elements.append(_ScmElement())
        elif kind == "capture" and elements:
            elements[-1].captures.append(text[1:])
        # fields, quantifiers, anchors and negated fields say nothing about which node is captured
    return elements, i


def _scm_walk(elements: Iterable[_ScmElement]) -> Iterator[_ScmElement]:
    for element in elements:
        yield element
        yield from _scm_walk(element.alternatives)
        yield from _scm_walk(element.children)


def _scm_kinds(element: _ScmElement) -> list[str]:
    if element.kind is not None:
        # "_" is a wildcard, "#..." a predicate, capitals are ERROR / MISSING.
        return [] if element.kind.startswith(("_", "#")) or not element.kind.islower() else [element.kind]
    return [kind for alternative in element.alternatives for kind in _scm_kinds(alternative)]


def tags_definitions(query: str) -> dict[str, list[str]]:
    """Capture name (``definition.function``) → node kinds it is attached to, in first-seen order.

    A loose reading of the query language: enough to see which node each
    ``@definition.*`` capture follows, whatever predicates or nesting surround it.
    """
    tokens = [(m.lastgroup or "", m.group()) for m in _SCM_TOKEN.finditer(query) if m.lastgroup != "comment"]
    elements, _ = _scm_parse(tokens, 0, nested=False)
    found: dict[str, list[str]] = {}
    for element in _scm_walk(elements):
        for capture in element.captures:
            if capture.startswith("definition."):
                bucket = found.setdefault(capture, [])
                bucket.extend(k for k in _scm_kinds(element) if k not in bucket)
    return found


# --- the heuristics ---------------------------------------------------------------------------


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


# --- the sample -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    """What the pack will produce on a text: chunk counts, kinds present and imports."""

    functions: int
    classes: int
    kinds: tuple[str, ...]
    imports: tuple[str, ...]
    has_error: bool


def _pattern(kinds: Sequence[str], capture: str) -> str:
    return "[" + " ".join(f"({k})" for k in dict.fromkeys(kinds)) + "] @" + capture


def _captured(language: Language, root: Node, kinds: Sequence[str], capture: str) -> list[Node]:
    if not kinds:
        return []
    query = Query(language, _pattern(kinds, capture))
    return list(QueryCursor(query).captures(root).get(capture, []))


def imports_function() -> Callable[[list[Node], bytes], list[str]]:
    """The generic ``imports_from_nodes`` the generated pack ships, compiled from the same template.

    Expected imports are computed with exactly the code the pack will run, so
    the generated tests pass by construction.
    """
    code = "from __future__ import annotations\n" + _template("imports_from_nodes.py.tmpl")
    namespace: dict[str, Any] = {}
    exec(compile(code, "<cce pack template: imports_from_nodes>", "exec"), namespace)
    return namespace["imports_from_nodes"]


def measure(grammar: Grammar, text: str, function_types: Sequence[str], class_types: Sequence[str],
            import_kinds: Sequence[str]) -> Measured:
    """Chunk and import counts the way the engine gets them: one query per purpose over the tree."""
    source = text.encode("utf-8")
    root = Parser(grammar.language).parse(source).root_node
    chunk_nodes = _captured(grammar.language, root, [*function_types, *class_types], "chunk")
    class_set = set(class_types)
    classes = sum(1 for node in chunk_nodes if node.type in class_set)
    present = {node.type for node in chunk_nodes}
    kinds = tuple(k for k in dict.fromkeys([*function_types, *class_types]) if k in present)
    imports: list[str] = []
    if import_kinds:
        nodes = sorted(_captured(grammar.language, root, import_kinds, "import"), key=lambda n: n.start_byte)
        imports = imports_function()(nodes, source)
    return Measured(len(chunk_nodes) - classes, classes, kinds, tuple(imports), root.has_error)


def _as_package_text(raw: bytes) -> str:
    """The text ``read_text(encoding="utf-8")`` will give the pack (universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8").read()


def find_sample(grammar: Grammar, extensions: Sequence[str], function_types: Sequence[str],
                root: Path) -> tuple[Path, bytes] | None:
    """The smallest file under ``root`` that parses cleanly and holds a function; bounded, see above."""
    if not function_types:
        return None
    wanted = set(extensions)
    candidates: list[tuple[int, str]] = []
    visited = 0
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIPPED_DIRS)
        for filename in sorted(filenames):
            visited += 1
            if visited > MAX_FILES_VISITED:
                break
            dot = filename.rfind(".")
            if dot <= 0 or filename[dot:].lower() not in wanted:
                continue
            path = os.path.join(directory, filename)
            try:
                size = os.lstat(path).st_size
            except OSError:
                continue
            if 0 < size <= MAX_SAMPLE_BYTES and os.path.isfile(path) and not os.path.islink(path):
                candidates.append((size, path))
        if visited > MAX_FILES_VISITED:
            break
    for _size, path in sorted(candidates):
        try:
            raw = Path(path).read_bytes()
            text = _as_package_text(raw)
        except (OSError, UnicodeDecodeError):
            continue
        measured = measure(grammar, text, function_types, (), ())
        if not measured.has_error and measured.functions > 0:
            return Path(path), raw
    return None


# --- input checks -----------------------------------------------------------------------------


def check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise CceError(f'invalid pack name "{name}": use a lowercase identifier ([a-z][a-z0-9_]*), e.g. "mylang"')


def check_extensions(extensions: Sequence[str]) -> tuple[str, ...]:
    if not extensions:
        raise CceError("no extensions given: claim at least one, e.g. --extensions .x")
    for ext in extensions:
        if not _EXTENSION.fullmatch(ext):
            fixed = "." + ext.strip().lstrip(".").lower()
            raise CceError(
                f'invalid extension "{ext}": each extension must be lowercase with a leading dot and no other '
                f'dot, e.g. "{fixed}"'
            )
    return tuple(dict.fromkeys(extensions))


# --- rendering the files ----------------------------------------------------------------------


def _template(name: str) -> str:
    return files(__package__ or "cce_core.authoring").joinpath(_TEMPLATES, name).read_text(encoding="utf-8")


def _fill(template_name: str, /, **values: object) -> str:
    return string.Template(_template(template_name)).substitute({k: str(v) for k, v in values.items()})


def _py_str(text: str) -> str:
    # JSON string escapes are valid Python escapes, and double quotes match the house style.
    return json.dumps(text)


def py_tuple(items: Sequence[str], indent: int = 0, width: int = 120, prefix: int = 0) -> str:
    """A Python tuple literal of strings that fits ``width`` (one item per line when it does not)."""
    if not items:
        return "()"
    quoted = [_py_str(i) for i in items]
    one_line = "(" + ", ".join(quoted) + ("," if len(quoted) == 1 else "") + ")"
    if indent + prefix + len(one_line) + 1 <= width:
        return one_line
    pad = " " * (indent + 4)
    return "(\n" + "".join(f"{pad}{q},\n" for q in quoted) + " " * indent + ")"


def _grammar_imports(module_name: str) -> str:
    # Sorted as isort would: both are third-party straight imports.
    names = sorted({"tree_sitter", module_name}, key=str.lower)
    return "\n".join(f"        import {n}" for n in names)


@dataclass(frozen=True)
class _Plan:
    name: str
    module: str
    grammar: Grammar
    extensions: tuple[str, ...]
    guesses: dict[str, KindGuess]
    sample_raw: bytes
    sample_file: str
    sample_name: str
    sample_origin: str
    sample_empty: bool
    measured: Measured
    tree_sitter_version: str


def _render_init(plan: _Plan) -> str:
    g = plan.guesses
    import_kinds = g["import_node_types"].kinds
    api = ["LanguagePack", "PackExpected", "hookimpl", "structural_renderer"]
    if import_kinds:
        api.insert(3, "imports_by_node_kind")
        imports_code = ("\n" + _template("imports_from_nodes.py.tmpl") + "\n\n"
                        "extract_imports = imports_by_node_kind(grammar, IMPORT_KINDS, imports_from_nodes)\n")
        imports_doc = ("Imports: for each import node, the text of its path/source/module/name child (else its first "
                       "named child), quotes stripped, each once. A generic rule — review it.")
    else:
        imports_code = "\n" + _template("no_imports.py.tmpl")
        imports_doc = "Imports: no node kind of the grammar looked like an import, so none are extracted yet."
    m = plan.measured
    return _fill(
        "__init__.py.tmpl",
        name=plan.name,
        distribution=plan.grammar.distribution,
        distribution_version=plan.grammar.version,
        grammar_module=plan.grammar.module_name,
        language_function=plan.grammar.language_function,
        about=_docstring_about(plan, imports_doc),
        api_names=", ".join(api),
        grammar_imports=_grammar_imports(plan.grammar.module_name),
        function_types=py_tuple(g["function_types"].kinds, prefix=len("FUNCTION_TYPES = ")),
        class_types=py_tuple(g["class_types"].kinds, prefix=len("CLASS_TYPES = ")),
        import_kinds=py_tuple(import_kinds, prefix=len("IMPORT_KINDS = ")),
        imports_code=imports_code,
        extensions=py_tuple(plan.extensions, indent=4, prefix=len("extensions=")),
        imports_from_nodes_arg="imports_from_nodes" if import_kinds else "None",
        sample_file=plan.sample_file,
        sample_name=plan.sample_name,
        empty_sample_note=" (the sample is EMPTY: replace it, then re-measure)" if plan.sample_empty else "",
        min_functions=m.functions,
        min_classes=m.classes,
        expected_kinds=py_tuple(m.kinds, indent=8, prefix=len("kinds=")),
        expected_imports=py_tuple(m.imports, indent=8, prefix=len("imports=")),
        body_types=py_tuple(g["body_node_types"].kinds, indent=4, prefix=len("body_node_types=")),
        doc_types=py_tuple(g["doc_node_types"].kinds, indent=4, prefix=len("doc_node_types=")),
    )


def _docstring_about(plan: _Plan, imports_doc: str) -> str:
    """The generated module docstring's body: provenance, then one wrapped bullet per guessed member."""
    intro = (f"Generated by ``cce packs new {plan.name} --grammar {plan.grammar.distribution}`` against "
             f"{plan.grammar.distribution} {plan.grammar.version} (``{plan.grammar.module_name}."
             f"{plan.grammar.language_function}()``). The node kinds below are guesses; README.md lists what "
             "to review before publishing.")
    paragraphs = [textwrap.fill(intro, width=100)]
    bullets = []
    for guess in plan.guesses.values():
        kinds = ", ".join(guess.kinds) or "(none)"
        bullets.append(textwrap.fill(f"* {guess.member}: {kinds} — {guess.origin}", width=100,
                                     subsequent_indent="  ", break_on_hyphens=False))
    paragraphs.append("\n".join(bullets))
    paragraphs.append(textwrap.fill(imports_doc, width=100))
    return "\n\n".join(paragraphs)


def _md_kinds(kinds: Sequence[str]) -> str:
    return ", ".join(f"`{k}`" for k in kinds) if kinds else "(none)"


def _render_readme(plan: _Plan) -> str:
    g = plan.guesses
    m = plan.measured
    rows = []
    for guess in g.values():
        if guess.from_tags and guess.from_heuristic:
            where = f"{_md_kinds(guess.from_tags)} from `{TAGS_QUERY}`; {_md_kinds(guess.from_heuristic)} by name"
        elif guess.from_tags:
            where = f"the grammar's `{TAGS_QUERY}`"
        elif guess.from_heuristic:
            where = "name heuristic (the shape of the kind's name)"
        else:
            where = "nothing matched — fill it in by hand if the language has them"
        rows.append(f"| `{guess.member}` | {_md_kinds(guess.kinds)} | {where} |")
    review = [
        "- `FUNCTION_TYPES` / `CLASS_TYPES`: every named node of these kinds becomes a chunk. Parse real "
        "files (`python -c \"import tree_sitter, ...\"` or the tree-sitter playground) and add or drop kinds; an "
        "expression kind (an anonymous function) makes every such expression a chunk.",
        "- Imports — **review this**: " + (
            "the generic `imports_from_nodes` takes each import node's path/source/module/name child (else its "
            "first named child) with quotes stripped. Rewrite it to return the module names the way the "
            "language spells them."
            if g["import_node_types"].kinds else
            "no import node kind was recognised, so `extract_imports` returns nothing. If the language has "
            "imports, list their node kinds in `IMPORT_KINDS` and write `imports_from_nodes`."),
        "- `body_node_types` / `doc_node_types` drive the compact view (signature plus first body line).",
    ]
    rejected = [k for guess in g.values() for k in guess.tags_rejected]
    if rejected:
        review.append(f"- `{TAGS_QUERY}` also marks {_md_kinds(rejected)} as definitions; they were left out "
                      "because they do not look like function or class definitions.")
    if plan.sample_empty:
        origin = plan.sample_origin[:1].upper() + plan.sample_origin[1:]
        sample_section = (
            f"**The sample `cce_pack_{plan.name}/{plan.sample_file}` is EMPTY and must be replaced.** "
            f"{origin}. Put a small, real {plan.name} file there (a few functions, a class-like "
            "definition if the language has one, an import), measure what it produces, update `PACK.expected`, "
            f"and set `SAMPLE_IS_EMPTY = False` in `tests/test_pack_{plan.name}.py`."
        )
        warning = ("> **WARNING: the sample is empty**, so the pack's self-test checks nothing. "
                   "Replace the sample before publishing (see *The sample*).\n\n")
    else:
        sample_section = (f"`cce_pack_{plan.name}/{plan.sample_file}` — {plan.sample_origin}. Make sure it is "
                          "code you may redistribute, or replace it.")
        warning = ""
    expected = (f"min_functions={m.functions}, min_classes={m.classes}, kinds={_md_kinds(m.kinds)}, "
                f"imports={_md_kinds(m.imports)}" + (" (imports: review this)" if g["import_node_types"].kinds else ""))
    return _fill(
        "README.md.tmpl",
        name=plan.name,
        empty_warning_block=warning,
        extensions_text="`, `".join(plan.extensions),
        distribution=plan.grammar.distribution,
        distribution_version=plan.grammar.version,
        grammar_module=plan.grammar.module_name,
        language_function=plan.grammar.language_function,
        guess_table="\n".join(rows),
        review_list="\n".join(review),
        sample_section=sample_section,
        expected_text=expected,
    )


def _render_files(plan: _Plan) -> dict[str, bytes]:
    pyproject = _fill(
        "pyproject.toml.tmpl",
        name=plan.name,
        distribution=plan.grammar.distribution,
        distribution_version=plan.grammar.version,
        tree_sitter_version=plan.tree_sitter_version,
        sample_file=plan.sample_file,
    )
    tests = _fill(
        "test_pack.py.tmpl",
        name=plan.name,
        sample_file=plan.sample_file,
        sample_is_empty=plan.sample_empty,
        extensions=py_tuple(plan.extensions, indent=4, prefix=len("assert pack.extensions == ")),
    )
    return {
        "pyproject.toml": pyproject.encode("utf-8"),
        "README.md": _render_readme(plan).encode("utf-8"),
        f"{plan.module}/__init__.py": _render_init(plan).encode("utf-8"),
        f"{plan.module}/py.typed": b"",
        f"{plan.module}/{plan.sample_file}": plan.sample_raw,
        f"tests/test_pack_{plan.name}.py": tests.encode("utf-8"),
    }


def _report_lines(report: ScaffoldReport, plan: _Plan) -> list[str]:
    lines = [
        f"created {report.target} (distribution cce-pack-{report.name}, module {report.module})",
        f"grammar: {report.distribution} {report.distribution_version}, "
        f"{report.grammar_module}.{report.language_function}() — {len(plan.grammar.named_kinds)} named node kinds"
        + ("" if report.has_tags_query else f"; no {TAGS_QUERY} in the wheel, guesses are by name only"),
    ]
    for guess in report.guesses.values():
        lines.append(guess.line())
        if guess.tags_rejected:
            lines.append(f"  left out {guess.tags_rejected!r}: {TAGS_QUERY} tags them but they are not "
                         "definition-shaped")
    if not report.function_types:
        lines.append("WARNING: no function node kind was found; fill in FUNCTION_TYPES by hand")
    lines.append(f"sample: {report.sample_origin} -> {report.module}/{report.sample_file}")
    if report.sample_empty:
        lines.append(f"WARNING: THE SAMPLE IS EMPTY — replace {report.module}/{report.sample_file} with real code, "
                     f"update PACK.expected and SAMPLE_IS_EMPTY in tests/test_pack_{report.name}.py")
    else:
        if plan.measured.has_error:
            lines.append("WARNING: the sample does not parse cleanly (ERROR nodes); the counts below may be off")
        if report.function_types and not report.min_functions:
            lines.append("WARNING: the sample holds no node of the guessed function kinds; check FUNCTION_TYPES "
                         "or give a sample with functions")
    lines.append(f"expected: min_functions={report.min_functions} min_classes={report.min_classes} "
                 f"kinds={report.expected_kinds!r}")
    lines.append(f"expected imports = {report.expected_imports!r} (review this: generic import rule)"
                 if report.import_node_types else "imports: none (no import node kind recognised)")
    lines.append(f"next: review {report.target / 'README.md'}, then pip install -e {report.target} "
                 f"&& cce packs --validate && python -m pytest {report.target / 'tests'}")
    return lines


# --- the entry point --------------------------------------------------------------------------


def scaffold_pack(name: str, grammar_distribution: str, extensions: Sequence[str] | None, out_dir: Path,
                  sample: Path | None = None, *, search_root: Path | None = None) -> ScaffoldReport:
    """Write ``out_dir / "cce-pack-NAME"``: an installable pack for ``grammar_distribution``'s grammar.

    ``extensions`` default to ``.NAME``. Without ``sample``, the smallest clean
    file with a function under ``search_root`` (the working directory) becomes
    the sample; failing that the sample is empty and the report says so.
    Raises :class:`CceError` on bad input, having written nothing.
    """
    check_name(name)
    exts = check_extensions(list(extensions) if extensions is not None else [f".{name}"])
    out_dir = Path(out_dir)
    target = out_dir / f"cce-pack-{name}"
    if sample is not None and not Path(sample).is_file():
        problem = "is not a file" if Path(sample).exists() else "does not exist"
        raise CceError(f'sample file "{sample}" {problem}')
    if target.exists() or target.is_symlink():
        raise CceError(f'"{target}" already exists; remove it or choose another --dir')
    if out_dir.exists() and not out_dir.is_dir():
        raise CceError(f'"{out_dir}" is not a directory')
    grammar = load_grammar(grammar_distribution, name)
    tags_query = read_tags_query(grammar)
    guesses = guess_kinds(grammar, tags_query)
    function_types = guesses["function_types"].kinds

    sample_raw = b""
    sample_empty = False
    if sample is not None:
        sample_path = Path(sample)
        try:
            sample_raw = sample_path.read_bytes()
            _as_package_text(sample_raw)
        except UnicodeDecodeError:
            raise CceError(f'sample file "{sample}" is not UTF-8 text; the engine reads samples as UTF-8') from None
        except OSError as exc:
            raise CceError(f'sample file "{sample}" cannot be read: {exc.strerror or exc}') from None
        ext = sample_path.suffix.lower() if _EXTENSION.fullmatch(sample_path.suffix.lower()) else exts[0]
        origin = f"given {sample_path}"
        sample_empty = not sample_raw.strip()
    else:
        root = Path(search_root) if search_root is not None else Path.cwd()
        found = find_sample(grammar, exts, function_types, root)
        if found is not None:
            found_path, sample_raw = found
            ext = found_path.suffix.lower()
            try:
                shown = found_path.relative_to(root)
            except ValueError:
                shown = found_path
            origin = f"found {shown} under {root} ({len(sample_raw)} bytes)"
        else:
            ext = exts[0]
            sample_empty = True
            why = "no function kind was guessed" if not function_types else (
                f"no file with {', '.join(exts)} under {root} (at most {MAX_FILES_VISITED} files, "
                f"{MAX_SAMPLE_BYTES // 1024} KiB each) parsed cleanly and held a function")
            origin = f"none given and none found: {why}; wrote an EMPTY sample"
    text = _as_package_text(sample_raw)
    g = guesses
    measured = measure(grammar, text, function_types, g["class_types"].kinds, g["import_node_types"].kinds)
    if sample_empty:
        measured = Measured(0, 0, (), (), False)

    module = f"cce_pack_{name}"
    plan = _Plan(
        name=name,
        module=module,
        grammar=grammar,
        extensions=exts,
        guesses=guesses,
        sample_raw=sample_raw,
        sample_file=f"sample{ext}",
        sample_name=f"{name}{ext if ext in exts else exts[0]}",
        sample_origin=origin,
        sample_empty=sample_empty,
        measured=measured,
        tree_sitter_version=metadata.version("tree-sitter"),
    )
    rendered = _render_files(plan)
    _write_atomically(target, rendered)

    report = ScaffoldReport(
        target=target,
        name=name,
        module=module,
        distribution=grammar.distribution,
        distribution_version=grammar.version,
        grammar_module=grammar.module_name,
        language_function=grammar.language_function,
        extensions=exts,
        guesses=guesses,
        sample_file=plan.sample_file,
        sample_origin=origin,
        sample_empty=sample_empty,
        min_functions=measured.functions,
        min_classes=measured.classes,
        expected_kinds=measured.kinds,
        expected_imports=measured.imports,
        has_tags_query=tags_query is not None,
    )
    report.lines = _report_lines(report, plan)
    return report


def _write_atomically(target: Path, rendered: dict[str, bytes]) -> None:
    """Build the tree beside ``target`` and rename it into place; on any failure leave nothing behind."""
    out_dir = target.parent
    created: list[Path] = []
    for parent in reversed([out_dir, *out_dir.parents]):
        if not parent.exists():
            created.append(parent)
    temp = out_dir / f".{target.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        # os.mkdir honours the umask, so the renamed directory gets normal permissions.
        temp.mkdir()
        for relative, data in rendered.items():
            path = temp / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if target.exists() or target.is_symlink():
            raise CceError(f'"{target}" already exists; remove it or choose another --dir')
        os.rename(temp, target)
    except BaseException as exc:
        shutil.rmtree(temp, ignore_errors=True)
        for directory in reversed(created):  # only the (now empty) directories this call made
            try:
                directory.rmdir()
            except OSError:
                break
        if isinstance(exc, OSError):
            raise CceError(f'could not write "{target}": {exc.strerror or exc}') from None
        raise

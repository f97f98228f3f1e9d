"""The tree-sitter grammar an installed distribution ships, found without knowing the language.

``cce packs new --grammar DIST`` names a wheel, not a module: this module
finds the wheel's importable module and its ``language*()`` function, loads
it with the pinned ``tree_sitter``, lists the grammar's named node kinds, and
reads the ``queries/tags.scm`` the wheel may ship beside it.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from importlib import metadata
from importlib.resources import files
from pathlib import Path, PurePosixPath
from types import ModuleType

from tree_sitter import Language, Parser

from cce_core.foundation.errors import CceError

# Where a grammar wheel keeps its authors' list of definitions.
TAGS_QUERY = "queries/tags.scm"


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

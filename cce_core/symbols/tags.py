"""Which tags query a language pack's symbols come from: the grammar's shipped ``tags.scm``, or a plugin's answer.

Tree-sitter grammar distributions ship ``queries/tags.scm`` in their wheels
(the query GitHub's code navigation and ``tree-sitter tags`` read). The
engine finds it through the distribution the pack names
(``LanguagePack.grammar_distribution``) and hands it to the
``cce_tags_query`` hook, whose first answer replaces or extends it; the
``cce_symbol_binding_reader`` hook adds what a language's syntax says about
names. Nothing here parses a file: :mod:`.extract` runs the compiled query.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from cce_core.hookspecs import LanguagePack

if TYPE_CHECKING:  # pragma: no cover - typing only
    from tree_sitter import Query

    from cce_core.hookspecs import BindingReader
    from cce_core.plugins.host import PluginHost

TAGS_FILE = "queries/tags.scm"


@lru_cache(maxsize=64)
def shipped_tags_query(grammar_distribution: str) -> str | None:
    """The ``queries/tags.scm`` text the distribution ships, or ``None`` (no distribution, or no such file)."""
    if not grammar_distribution:
        return None
    # The import package the distribution's name implies is asked first: the grammar is loaded
    # already, so this costs a stat, where reading the distribution's file list costs importing
    # importlib.metadata and its RECORD (~10 ms of every `cce index`).
    try:
        resource = importlib.resources.files(grammar_distribution.replace("-", "_")).joinpath(TAGS_FILE)
        if resource.is_file():
            return resource.read_text(encoding="utf-8")
    except (ModuleNotFoundError, OSError, UnicodeDecodeError, TypeError, ValueError):
        pass
    from importlib import metadata

    try:  # a distribution whose import package has another name: its file list says where the query is
        shipped = [f for f in metadata.files(grammar_distribution) or ()
                   if str(f).replace("\\", "/").endswith(TAGS_FILE)]
        if shipped:
            # A distribution holding several grammars (typescript and tsx) ships one package; take the shortest path.
            best = min(shipped, key=lambda f: (len(str(f)), str(f)))
            return best.read_text(encoding="utf-8")
    except (metadata.PackageNotFoundError, OSError, UnicodeDecodeError):
        pass
    return None


def tags_query_text(host: PluginHost, pack: LanguagePack) -> str | None:
    """The tags query ``pack``'s files are read with: the hook's first answer, else the shipped one."""
    shipped = shipped_tags_query(pack.grammar_distribution)
    try:
        answer = host.pm.hook.cce_tags_query(language=pack.name, shipped=shipped)
    except Exception:  # a failing plugin must not cost the language its shipped query
        answer = None
    if isinstance(answer, str):
        return answer
    return shipped


def compile_tags_query(host: PluginHost, pack: LanguagePack, text: str | None = None) -> tuple[Query | None, str]:
    """``(query, "")``; ``(None, "")`` when the language has no query; ``(None, problem)`` when it does not compile.

    ``text``: the query :func:`tags_query_text` gives, when the caller has asked for it already.
    """
    text = tags_query_text(host, pack) if text is None else text
    if not text or not text.strip():
        return None, ""
    try:
        from tree_sitter import Query

        return Query(pack.grammar(), text), ""
    except Exception as exc:  # the compiler's message is the diagnosis
        return None, f"the tags query of pack {pack.name!r} does not compile: {type(exc).__name__}: {exc}"


def binding_reader(host: PluginHost, pack: LanguagePack) -> BindingReader | None:
    """The function that reads ``pack``'s bindings from a file's text (``cce_symbol_binding_reader``), if any."""
    try:
        answer = host.pm.hook.cce_symbol_binding_reader(language=pack.name)
    except Exception:  # a failing plugin costs the language its hints, never its symbols
        return None
    return answer if callable(answer) else None


def tags_query_extension(pack_language: str, extension: str) -> Callable[[str, str | None], str | None]:
    """A ready ``cce_tags_query`` implementation: the grammar's shipped query plus ``extension``, for one language.

    A pack assigns it to a module attribute named ``cce_tags_query``, the way
    it assigns :func:`~cce_core.retrieval.detail_views.structural_renderer`
    to ``cce_render_compact``. A pack that must remove shipped patterns writes
    its own implementation instead.
    """
    from cce_core.hookspecs import hookimpl

    @hookimpl
    def cce_tags_query(language: str, shipped: str | None) -> str | None:
        if language != pack_language:
            return None
        return (shipped or "") + extension

    cce_tags_query.__doc__ = f"The {pack_language} grammar's shipped tags query, extended by its pack."
    return cce_tags_query

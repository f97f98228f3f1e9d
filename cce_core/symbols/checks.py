"""The checks `cce packs --validate` makes on a pack's symbols, and how `cce packs` names their source.

A pack's tags query is part of its contract: it must compile against the
pack's grammar, and on the pack's own sample it must find at least one
definition when the sample has functions or classes. The query that is
checked is the one indexing would use, plugin answers included. A binding
reader (``cce_symbol_binding_reader``), when the language has one, must read
the sample without raising and answer with well-formed hints: indexing
swallows a reader's failure, so this check is where its author hears of it.
"""

from __future__ import annotations

from cce_core.hookspecs import BINDING_HINT_KINDS, BindingHint, LanguagePack
from cce_core.indexing.chunker import Chunker
from cce_core.plugins.host import PluginHost
from cce_core.symbols.model import decode_file_symbols
from cce_core.symbols.tags import binding_reader, compile_tags_query, shipped_tags_query, tags_query_text

# How `cce packs` names where a language's symbols come from.
SHIPPED = "tags.scm"  # the grammar's own query, as shipped
EXTENDED = "tags.scm + pack"  # the shipped query with patterns of the pack's (or a plugin's) added
OWN = "pack"  # a query of the pack's (or a plugin's) own
NONE = "none"


def tags_source(host: PluginHost, pack: LanguagePack) -> str:
    """Where ``pack``'s symbols come from: ``tags.scm``, ``tags.scm + pack``, ``pack`` or ``none``."""
    shipped = shipped_tags_query(pack.grammar_distribution)
    text = tags_query_text(host, pack)
    if not text or not text.strip():
        return NONE
    if shipped and text == shipped:
        return SHIPPED
    if shipped and text.startswith(shipped):
        return EXTENDED
    return OWN


def symbol_problems(pack: LanguagePack, host: PluginHost) -> list[str]:
    """The tags query compiles, and finds a definition in the sample when the sample has chunks to find."""
    label = f"[pack:{pack.name}]"
    query, problem = compile_tags_query(host, pack)
    if problem:
        return [f"{label} {problem} — fix the query cce_tags_query returns for {pack.name!r}."]
    if query is None:
        return []
    try:
        chunked = Chunker(host).chunk_with_pack(pack, pack.sample_name, pack.sample)
        symbols = decode_file_symbols(chunked.symbols or b"")
    except Exception as exc:  # the point of the check: report, never raise
        return [f"{label} finding the symbols of its sample raised {type(exc).__name__}: {exc}"]
    wanted = pack.expected.min_functions + pack.expected.min_classes
    if wanted and not symbols.definitions:
        return [f"{label} its tags query finds no definition in its sample, which has functions or classes — "
                "add @definition.function / @definition.class patterns (cce_tags_query in docs/plugins.md)."]
    return _reader_problems(pack, host, query, label)


def _reader_problems(pack: LanguagePack, host: PluginHost, query: object, label: str) -> list[str]:
    """The binding reader, if any, runs on the sample's text and definitions and answers with valid hints."""
    reader = binding_reader(host, pack)
    if reader is None:
        return []
    from tree_sitter import Parser, QueryCursor

    source = pack.sample.encode("utf-8")
    matches = QueryCursor(query).matches(Parser(pack.grammar()).parse(source).root_node)  # type: ignore[arg-type]
    spans = sorted({(node.start_byte, node.end_byte) for _pattern, captures in matches
                    for name, nodes in captures.items() if name.startswith("definition.") for node in nodes})
    try:
        hints = reader(source, spans)
    except Exception as exc:  # the point of the check: report, never raise
        return [f"{label} its binding reader raised {type(exc).__name__}: {exc} on the sample"]
    if not isinstance(hints, list):
        return [f"{label} its binding reader returned {type(hints).__name__}, not a list of BindingHint"]
    for hint in hints:
        if not isinstance(hint, BindingHint) or hint.kind not in BINDING_HINT_KINDS \
                or not 0 <= hint.offset <= len(source):
            return [f"{label} its binding reader returned {hint!r}: each item must be a BindingHint of a known "
                    f"kind ({', '.join(BINDING_HINT_KINDS)}) with an offset inside the text"]
    return []

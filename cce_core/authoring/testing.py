"""What a plugin's own tests need from the engine: chunk and render text with just that plugin.

A pack's tests should pass or fail on the pack alone, not on whatever else is
installed, so each helper registers the plugin on a fresh host that reads no
entry points. These are re-exported by :mod:`cce_core.api`.
"""

from __future__ import annotations

from typing import Any

from tree_sitter import Parser

from cce_core.authoring.validate import validate_plugin
from cce_core.hookspecs import LanguagePack
from cce_core.indexing.chunker import Chunker, FileChunks
from cce_core.plugins.host import PluginHost
from cce_core.retrieval.detail_views import compress
from cce_core.symbols.model import decode_file_symbols


def _host(plugin: Any) -> PluginHost:
    host = PluginHost([(plugin, "")], entry_points=False)
    host.require_healthy()
    return host


def chunk_with(plugin: Any, file_name: str, text: str) -> FileChunks:
    """``text`` cut into chunks as ``cce index`` would cut a file called ``file_name``, using only ``plugin``.

    The result has ``chunks`` (each with ``chunk_type``, ``kind``,
    ``start_line``, ``end_line``, ``content``, ``chunk_id``) and ``imports``.
    The text is not redacted.
    """
    return Chunker(_host(plugin)).chunk_file(file_name, text)


def render_with(plugin: Any, file_name: str, text: str, level: str) -> str:
    """The ``signature`` / ``compact`` / ``full`` view of a chunk's ``text``, as the MCP server serves it."""
    return compress(_host(plugin), file_name, text, level)


# Inputs no pack may choke on: empty, binary noise, bare keywords of common import forms, deep
# nesting, non-ASCII, an unterminated string.
ODD_INPUTS: tuple[str, ...] = ("", "\x00\x01 ((((", "import", "use", "#include", "require", "(" * 3000, "é" * 20,
                               'import "\n')


def bare_tree_imports(pack: LanguagePack, text: str) -> list[str]:
    """``pack.extract_imports`` on a freshly parsed tree of ``text``, as validators and tools call it."""
    source = text.encode("utf-8")
    return pack.extract_imports(Parser(pack.grammar()).parse(source).root_node, source)


def imports_with(plugin: Any, file_name: str, text: str) -> list[str]:
    """The imports ``cce index`` records for ``text``; raises ``AssertionError`` if the pack's two paths disagree.

    The chunker reads imports from the nodes its one query captured
    (``imports_from_nodes``); validators and tools call ``extract_imports`` on
    a bare tree. Both must give the same names, so a pack's import-rule tests
    check both by calling this.
    """
    host = _host(plugin)
    chunked = Chunker(host).chunk_file(file_name, text).imports
    pack = host.packs.pack_for(file_name)
    if pack is not None:
        bare = bare_tree_imports(pack, text)
        if bare != chunked:
            raise AssertionError(f"{pack.name}: the chunker's imports {chunked} differ from extract_imports' {bare}")
    return chunked


def pack_self_test(plugin: Any, name: str) -> list[str]:
    """The checks every pack's own tests make the same way; the problems found (empty when all pass).

    * the engine's validators, all three layers, on the plugin alone;
    * the plugin registers exactly one pack, called ``name``;
    * chunking, symbol and import extraction survive :data:`ODD_INPUTS`: every
      odd file still yields chunks and a list of imports, never an exception;
    * its ``cce_file_conventions`` answer, if any, is well formed (the
      validators) and does not make its own sample a test or a generated
      file — a pattern that broad would hold back every file of the language.
    """
    report = validate_plugin(plugin)
    problems = list(report.diagnostics)
    names = [pack.name for pack in report.packs]
    if names != [name]:
        problems.append(f"the plugin registers packs {names}, expected exactly [{name!r}]")
    if problems:
        return problems
    host = _host(plugin)
    (pack,) = host.packs.packs
    problems.extend(_convention_problems(host, pack))
    chunker = Chunker(host)
    for text in ODD_INPUTS:
        shown = text if len(text) <= 20 else text[:20] + "…"
        try:
            result = chunker.chunk_file(f"odd{pack.extensions[0]}", text)  # its symbols too (tags query)
            decode_file_symbols(result.symbols or b"")
            bare = bare_tree_imports(pack, text)
        except Exception as exc:  # the point of the check: report, never raise
            problems.append(f"[pack:{name}] odd input {shown!r} raised {type(exc).__name__}: {exc}")
            continue
        if not result.chunks:
            problems.append(f"[pack:{name}] odd input {shown!r} gave no chunk at all (expected at least a module)")
        if not isinstance(result.imports, list) or not isinstance(bare, list):
            problems.append(f"[pack:{name}] odd input {shown!r}: imports are not a list")
    return problems


def _convention_problems(host: PluginHost, pack: LanguagePack) -> list[str]:
    """The pack's own conventions must leave ordinary source of the language alone: its sample is source."""
    from cce_core.retrieval.file_roles import GENERATED, TEST, FileRoles

    roles = FileRoles(host.file_conventions.pooled())
    samples = [pack.sample_name, *(f"src/module{ext}" for ext in pack.extensions)]
    return [f"[pack:{pack.name}] its file conventions make {path!r} a {role} file; "
            "a tests or generated pattern that broad would hold back ordinary source"
            for path in samples if (role := roles.role(path)) in (TEST, GENERATED)]

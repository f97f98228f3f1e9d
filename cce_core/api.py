"""The public API for plugin authors: the one module a pack, embedder or override plugin imports.

Everything a plugin needs from the engine is importable from here, and nothing
else in ``cce_core`` is a promise: internal modules move between releases,
this module's names do not. While cce-core is 0.x, a release that changes or
removes a name below raises the minor version (0.2 → 0.3); adding a name is
not a breaking change. :data:`API_VERSION` says which series this is, and
:data:`__since__` the cce-core release that first offered each name. A plugin
declares a floor no older than the newest ``since`` of the names it imports
and a ceiling at the next minor version — the repository's plugins and ``cce
packs new`` all say ``cce-core>=0.2.1,<0.3`` — and keeps working for every
release that range accepts.

The names, by what they are for (the hooks themselves are documented in
:mod:`cce_core.hookspecs`, the contract):

* implementing hooks — :data:`hookimpl`;
* language packs — :class:`LanguagePack`, :class:`PackExpected`,
  :func:`imports_by_node_kind` (an ``extract_imports`` built from a pack's
  ``imports_from_nodes``), :func:`imports_by_pattern` (the same from its
  ``import_pattern``), :class:`FileConventions` (a language's test and
  generated files, for ``cce_file_conventions``);
* compact rendering — :func:`structural_renderer` (a ready
  ``cce_render_compact`` implementation for a pack), :func:`render_definition`
  (the neutral rule, to call from your own renderer), :class:`CompactChunk` (what a
  renderer is given), :class:`CompactRenderer` (the shape of a renderer);
* embedders — :class:`Embedder` (subclass it), :class:`EmbedderError`;
* document chunkers — :class:`DocumentChunker` (subclass it),
  :class:`DocumentSection` (what it returns), :data:`RegisterDocumentChunker`;
* text — :data:`UNICODE_WHITESPACE` (the white-space set the engine family
  trims, which differs from :meth:`str.strip`'s), :func:`estimate_tokens`
  (``cce.tokens/v1``), :func:`chunk_id` (the family's content address) and
  :func:`node_text` (a syntax node's text, empty when its bytes are not UTF-8);
* symbols — :func:`tags_query_extension` (a ready ``cce_tags_query`` implementation),
  :class:`BindingHint` and its kinds (``ANNOTATION_HINT``, ``LOCAL_NAME_HINT``,
  ``RESULT_TYPE_HINT``, ``RESULT_VARIABLE_HINT``, ``ATTRIBUTE_HINT``: what a
  ``cce_symbol_binding_reader`` reports);
* errors — :class:`CceError` (shown to the user as one ``error:`` line);
* testing your plugin — :func:`pack_self_test` (the checks every pack's tests make alike:
  validators, exactly one pack, :data:`ODD_INPUTS` never break it), :func:`validate_plugin`,
  :class:`PluginReport`, :class:`PackReport`, and, with only your plugin registered,
  :func:`chunk_with`, :func:`render_with`, :func:`imports_with` (the imports, checked to agree
  with :func:`bare_tree_imports`).

Heavy names (the chunker, the renderer, the validators, which import
tree-sitter) load on first use, so an embedder plugin importing this module
does not slow down a one-shot search.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import UNICODE_WHITESPACE, chunk_id, estimate_tokens, node_text
from cce_core.hookspecs import (
    ANNOTATION_HINT,
    ATTRIBUTE_HINT,
    LOCAL_NAME_HINT,
    RESULT_TYPE_HINT,
    RESULT_VARIABLE_HINT,
    BindingHint,
    CompactChunk,
    CompactRenderer,
    DocumentChunker,
    DocumentSection,
    Embedder,
    EmbedderError,
    FileConventions,
    LanguagePack,
    PackExpected,
    RegisterDocumentChunker,
    RegisterEmbedder,
    RegisterPack,
    hookimpl,
)

if TYPE_CHECKING:  # pragma: no cover - for type checkers; at run time these load lazily
    from cce_core.authoring.testing import (
        ODD_INPUTS,
        bare_tree_imports,
        chunk_with,
        imports_with,
        pack_self_test,
        render_with,
    )
    from cce_core.authoring.validate import PackReport, PluginReport, validate_plugin
    from cce_core.indexing.chunker import imports_by_node_kind, imports_by_pattern
    from cce_core.retrieval.detail_views import render_definition, structural_renderer
    from cce_core.symbols.tags import tags_query_extension

API_VERSION = "0.2"

# name -> module that defines it, imported on first access.
_LAZY = {
    "imports_by_node_kind": "cce_core.indexing.chunker",
    "imports_by_pattern": "cce_core.indexing.chunker",
    "render_definition": "cce_core.retrieval.detail_views",
    "structural_renderer": "cce_core.retrieval.detail_views",
    "tags_query_extension": "cce_core.symbols.tags",
    "PackReport": "cce_core.authoring.validate",
    "PluginReport": "cce_core.authoring.validate",
    "validate_plugin": "cce_core.authoring.validate",
    "chunk_with": "cce_core.authoring.testing",
    "render_with": "cce_core.authoring.testing",
    "imports_with": "cce_core.authoring.testing",
    "bare_tree_imports": "cce_core.authoring.testing",
    "pack_self_test": "cce_core.authoring.testing",
    "ODD_INPUTS": "cce_core.authoring.testing",
}

__all__ = [
    "ANNOTATION_HINT",
    "API_VERSION",
    "ATTRIBUTE_HINT",
    "LOCAL_NAME_HINT",
    "ODD_INPUTS",
    "RESULT_TYPE_HINT",
    "RESULT_VARIABLE_HINT",
    "UNICODE_WHITESPACE",
    "BindingHint",
    "CceError",
    "CompactChunk",
    "CompactRenderer",
    "DocumentChunker",
    "DocumentSection",
    "Embedder",
    "EmbedderError",
    "FileConventions",
    "LanguagePack",
    "PackExpected",
    "PackReport",
    "PluginReport",
    "RegisterDocumentChunker",
    "RegisterEmbedder",
    "RegisterPack",
    "bare_tree_imports",
    "chunk_id",
    "chunk_with",
    "estimate_tokens",
    "hookimpl",
    "imports_by_node_kind",
    "imports_by_pattern",
    "imports_with",
    "node_text",
    "pack_self_test",
    "render_definition",
    "render_with",
    "structural_renderer",
    "tags_query_extension",
    "validate_plugin",
]


# The cce-core release that first offered each name (cce_core.api itself arrived in 0.2.0). A
# name added now gets the version being developed; tests/test_public_api.py checks that every
# name has one and docs/plugins.md shows them.
__since__: dict[str, str] = {
    "ANNOTATION_HINT": "0.2.1",
    "ATTRIBUTE_HINT": "0.2.1",
    "LOCAL_NAME_HINT": "0.2.1",
    "RESULT_TYPE_HINT": "0.2.1",
    "RESULT_VARIABLE_HINT": "0.2.1",
    "BindingHint": "0.2.1",
    "API_VERSION": "0.2.0",
    "ODD_INPUTS": "0.2.0",
    "UNICODE_WHITESPACE": "0.2.0",
    "CceError": "0.2.0",
    "CompactChunk": "0.2.0",
    "CompactRenderer": "0.2.1",
    "DocumentChunker": "0.2.0",
    "DocumentSection": "0.2.0",
    "Embedder": "0.2.0",
    "EmbedderError": "0.2.0",
    "FileConventions": "0.2.1",
    "LanguagePack": "0.2.0",
    "PackExpected": "0.2.0",
    "PackReport": "0.2.0",
    "PluginReport": "0.2.0",
    "RegisterDocumentChunker": "0.2.0",
    "RegisterEmbedder": "0.2.0",
    "RegisterPack": "0.2.0",
    "bare_tree_imports": "0.2.0",
    "chunk_id": "0.2.0",
    "chunk_with": "0.2.0",
    "estimate_tokens": "0.2.0",
    "hookimpl": "0.2.0",
    "imports_by_node_kind": "0.2.0",
    "imports_by_pattern": "0.2.1",
    "imports_with": "0.2.0",
    "node_text": "0.2.1",
    "pack_self_test": "0.2.0",
    "render_definition": "0.2.0",
    "render_with": "0.2.0",
    "structural_renderer": "0.2.0",
    "tags_query_extension": "0.2.1",
    "validate_plugin": "0.2.0",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

"""The public API for plugin authors: the one module a pack, embedder or override plugin imports.

Everything a plugin needs from the engine is importable from here, and nothing
else in ``cce_core`` is a promise: internal modules move between releases,
this module's names do not. While cce-core is 0.x, a release that changes or
removes a name below raises the minor version (0.2 → 0.3), so a plugin that
declares ``cce-core>=0.2,<0.3`` keeps working for every release it accepts.
Adding a name is not a breaking change. :data:`API_VERSION` says which series
this is.

The names, by what they are for (the hooks themselves are documented in
:mod:`cce_core.hookspecs`, the contract):

* implementing hooks — :data:`hookimpl`;
* language packs — :class:`LanguagePack`, :class:`PackExpected`,
  :func:`imports_by_node_kind` (an ``extract_imports`` built from a pack's
  ``imports_from_nodes``);
* compact rendering — :func:`structural_renderer` (a ready
  ``cce_render_compact`` implementation for a pack), :func:`render_definition`
  (the neutral rule, to call from your own renderer), :class:`CompactChunk`;
* embedders — :class:`Embedder` (subclass it), :class:`EmbedderError`;
* document chunkers — :class:`DocumentChunker` (subclass it),
  :class:`DocumentSection` (what it returns), :data:`RegisterDocumentChunker`;
* text — :data:`UNICODE_WHITESPACE` (the white-space set the engine family
  trims, which differs from :meth:`str.strip`'s), :func:`estimate_tokens`
  (``cce.tokens/v1``), :func:`chunk_id` (the family's content address) and
  :func:`node_text` (a syntax node's text, empty when its bytes are not UTF-8);
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
    DocumentChunker,
    DocumentSection,
    Embedder,
    EmbedderError,
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
    from cce_core.indexing.chunker import imports_by_node_kind
    from cce_core.retrieval.detail_views import CompactChunk, render_definition, structural_renderer

API_VERSION = "0.2"

# name -> module that defines it, imported on first access.
_LAZY = {
    "imports_by_node_kind": "cce_core.indexing.chunker",
    "CompactChunk": "cce_core.retrieval.detail_views",
    "render_definition": "cce_core.retrieval.detail_views",
    "structural_renderer": "cce_core.retrieval.detail_views",
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
    "API_VERSION",
    "ODD_INPUTS",
    "UNICODE_WHITESPACE",
    "CceError",
    "CompactChunk",
    "DocumentChunker",
    "DocumentSection",
    "Embedder",
    "EmbedderError",
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
    "imports_with",
    "node_text",
    "pack_self_test",
    "render_definition",
    "render_with",
    "structural_renderer",
    "validate_plugin",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

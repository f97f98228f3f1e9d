"""The embedder a stored index must be searched with, and the checks that it still matches.

Vectors from two embedders (or two models of one) live in different spaces,
so a search must embed its query exactly as the store's chunks were. The CLI
and the MCP server both ask here; the MCP server degrades to keyword search
where the CLI refuses, so the health check and the model check are separate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cce_core.foundation.errors import CceError

if TYPE_CHECKING:
    from cce_core.hookspecs import Embedder
    from cce_core.indexing.store import StoreData
    from cce_core.plugins.host import PluginHost


def store_embedder_name(data: StoreData) -> str:
    """The name of the embedder that built ``data`` (stores from before the field: ``hash``)."""
    return data.embedder or "hash"


def require_same_model(embedder: Embedder, data: StoreData) -> None:
    """Refuse an embedder now set to another model than the one that built ``data``."""
    built_with = str(data.meta.get("embed_model", "") or "")
    configured = str(embedder.model or "")
    if built_with != configured:
        name = store_embedder_name(data)
        raise CceError(f'this index was built with the {name} model "{built_with}" but the embedder is now '
                       f'set to "{configured}" — re-index, or configure the model the index was built with')


def embedder_for_store(host: PluginHost, data: StoreData) -> Embedder:
    """The embedder that built ``data``, checked to be reachable and set to the same model."""
    embedder = host.ready_embedder(store_embedder_name(data), "search")
    require_same_model(embedder, data)
    return embedder

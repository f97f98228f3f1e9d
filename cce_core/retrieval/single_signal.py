"""Rankings by one signal alone: BM25 only, or embedding cosine only.

The hybrid ranking (``searcher``) fuses both signals. Two callers need each
signal by itself: the MCP server falls back to BM25 alone when a store's
embedder is unreachable, and ``cce relevance`` scores each signal as a backend
of its own to show what the fusion adds. Both orders are exactly the candidate
lists the hybrid ranking starts from (six-decimal score keys, descending, ties
by chunk id), computed by the same numpy kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cce_core.foundation.textrules import UNICODE_WHITESPACE, tokenize
from cce_core.indexing.bm25 import unique_in_order
from cce_core.retrieval.searcher import SearchResult, check_query_dimensions

if TYPE_CHECKING:
    from cce_core.hookspecs import Embedder
    from cce_core.indexing.store import StoreData


def bm25_only_search(store: StoreData, query: str, top_k: int) -> list[SearchResult]:
    """The ``top_k`` chunks with a positive BM25 score key, best first, scored by BM25."""
    import numpy as np

    from cce_core.indexing.bm25 import bm25_scores
    from cce_core.retrieval.numpy_kernel import score_keys, top_by_key

    unique = unique_in_order(tokenize(query))
    if not unique or not store.chunks or top_k <= 0:
        return []
    scores = bm25_scores(store.bm25_source, unique)
    keys = score_keys(scores)
    positive = np.nonzero(keys > 0)[0]
    ids = store.chunk_ids
    order = positive[top_by_key(keys[positive], [ids[int(i)] for i in positive], top_k)]
    return [SearchResult(rank, store.chunks[int(idx)], float(scores[int(idx)]))
            for rank, idx in enumerate(order[:top_k], start=1)]


def vector_only_search(store: StoreData, embedder: Embedder, query: str, top_k: int) -> list[SearchResult]:
    """The ``top_k`` chunks closest to the query's embedding, scored by cosine.

    Every chunk takes part, whatever its cosine (a query with no known words
    still gets the chunk-id order of a zero vector), as in the candidate list
    of the hybrid ranking.
    """
    from cce_core.retrieval.numpy_kernel import NumpyKernel

    if not query.strip(UNICODE_WHITESPACE) or not store.chunks or top_k <= 0:
        return []
    query_vector = embedder.embed_query(query)
    check_query_dimensions(store, query_vector)
    cosines = NumpyKernel(store).cosines(query_vector)
    return [SearchResult(rank, store.chunks[int(idx)], cosines.at(int(idx)))
            for rank, idx in enumerate(cosines.top(top_k), start=1)]

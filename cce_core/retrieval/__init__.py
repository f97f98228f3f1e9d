"""From a query to ranked chunks: the hybrid ranking and the views it serves.

`searcher` ranks (with `numpy_kernel` or `pure_kernel`, which give identical
scores), `store_embedder` picks the embedder a store must be searched with, and
`detail_views` renders a chunk at `signature`, `compact` or `full` detail.
"""

"""From a directory to a store: walk, redact, chunk, tokenize, embed, build BM25 and the import graph, save.

Modules in data-path order: `walker` (with `sensitive`), `redactor`, `chunker`,
`bm25`, `graph`, `store`, and `indexer`, which runs them all.
"""

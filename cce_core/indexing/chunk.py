"""One chunk of a file: the unit the store keeps, ranks and hands to an agent.

It lives apart from the chunker so that reading a store (a search, a sync
pull, a compaction) does not import tree-sitter and the symbol extractor
just to name the type of the rows it reads.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Chunk:
    chunk_id: str
    file_path: str
    start_line: int
    end_line: int
    chunk_type: str  # "function" | "class" | "module" (and document kinds for knowledge)
    kind: str  # the syntax node kind it was cut from, or "module"
    language: str
    content: str
    token_count: int

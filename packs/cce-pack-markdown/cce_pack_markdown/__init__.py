"""The markdown document chunker: heading sections of a markdown document, for knowledge ingest.

This is a *document chunker*, not a language pack: it registers through
``cce_register_document_chunkers`` for the format ``markdown``, so a ``.md``
file inside a code index stays one ``module`` chunk and ``pack_set_id`` does
not change. The rule itself lives in :mod:`cce_pack_markdown.sections`.
"""

from __future__ import annotations

from importlib.resources import files

from cce_core.api import DocumentChunker, DocumentSection, RegisterDocumentChunker, hookimpl
from cce_pack_markdown.sections import (
    BREADCRUMB_SEP,
    DEFAULT_BUDGET,
    MAX_BLOCK_NESTING,
    PREAMBLE,
    block_nesting_estimate,
    chunk_markdown,
    grammar,
)

__all__ = [
    "BREADCRUMB_SEP",
    "CHUNKER",
    "DEFAULT_BUDGET",
    "MAX_BLOCK_NESTING",
    "PREAMBLE",
    "MarkdownChunker",
    "block_nesting_estimate",
    "chunk_markdown",
    "grammar",
]


class MarkdownChunker(DocumentChunker):
    """Heading sections of markdown (``.md``, ``.markdown``) on the tree-sitter-markdown block grammar."""

    name = "markdown"
    formats = ("markdown",)
    extensions = (".md", ".markdown")
    sample = files(__package__).joinpath("sample.md").read_text(encoding="utf-8")

    def chunk_document(self, path: str, content: str, budget: int) -> list[DocumentSection]:
        return chunk_markdown(path, content, budget)


CHUNKER = MarkdownChunker()


@hookimpl
def cce_register_document_chunkers(register: RegisterDocumentChunker) -> None:
    register(CHUNKER)

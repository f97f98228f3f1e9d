"""The compact result grammar and the verbose framing it is measured against.

A served result is framed by one compact line::

     1. [0.912345] src/lib.x:10-24 (function/fn) #039f8bd5b80a698e

The ``grammar`` savings bucket compares that framing with a fixed, field-per-line
verbose rendering of the same rows. Bodies are not part of either text (they
belong to the chunk_compression bucket), so the bucket depends only on the
rows' rank, score, package, path, lines, type, kind and id.

The line served to an agent prints each stored field on one line
(:func:`~cce_core.foundation.safe_text.one_line`): a file name holding a
newline must not forge the rows after it. The bucket measures the fields as
stored, as the other engines do, so the metrics stay theirs byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cce_core.foundation.safe_text import one_line, snippet_line
from cce_core.foundation.textrules import UNICODE_WHITESPACE, estimate_tokens, format6
from cce_core.observability.savings import Bucket


@dataclass(frozen=True)
class GrammarRow:
    rank: int
    score6: str
    package: str | None
    file_path: str
    start: int
    end: int
    chunk_type: str
    kind: str
    chunk_id: str

    @classmethod
    def from_result(cls, result: Any, package: str | None = None) -> GrammarRow:
        c = result.chunk
        return cls(result.rank, format6(result.score), package, c.file_path, c.start_line, c.end_line,
                   c.chunk_type, c.kind, c.chunk_id)


def compact_line(row: GrammarRow) -> str:
    """The row as served: `` 1. [0.912345] path:1-2 (type/kind) #id``, every stored field on one line."""
    return _framed(row, one_line)


def _as_stored(value: str) -> str:
    return value


def _framed(row: GrammarRow, field: Callable[[str], str]) -> str:
    pkg = f"{field(row.package)} · " if row.package is not None else ""
    return (f"{row.rank:>2}. [{row.score6}] {pkg}{field(row.file_path)}:{row.start}-{row.end} "
            f"({field(row.chunk_type)}/{field(row.kind)}) #{field(row.chunk_id)}")


def render_compact(rows: Sequence[GrammarRow]) -> str:
    """The compact framing as the family measures it (fields as stored)."""
    return "".join(_framed(row, _as_stored) + "\n" for row in rows)


def render_verbose(rows: Sequence[GrammarRow]) -> str:
    blocks = []
    for row in rows:
        pkg = f"  package: {row.package}\n" if row.package is not None else ""
        blocks.append(
            f"Result {row.rank}:\n  relevance score: {row.score6}\n{pkg}"
            f"  file path: {row.file_path}\n  start line: {row.start}\n  end line: {row.end}\n"
            f"  chunk type: {row.chunk_type}\n  chunk kind: {row.kind}\n  chunk id: {row.chunk_id}\n"
        )
    return "\n".join(blocks)


def grammar_savings(rows: Sequence[GrammarRow]) -> Bucket:
    """(verbose − compact, verbose) in tokens; an empty result set saves nothing."""
    if not rows:
        return Bucket()
    compact = estimate_tokens(render_compact(rows))
    verbose = estimate_tokens(render_verbose(rows))
    return Bucket(saved_tokens=max(0, verbose - compact), baseline_tokens=verbose)


def grammar_savings_for_results(results: Sequence[Any]) -> Bucket:
    return grammar_savings([GrammarRow.from_result(r) for r in results])


def human_row(rank: int, score6: str, chunk: Any) -> str:
    """The two lines ``cce search`` prints for a code result (the family's text form).

    `` 1. [0.904057] path:7-11 (class/kind)`` then, indented by four spaces, the
    chunk's first line (its first 80 characters, trimmed). The stored fields are
    printed on one line each and the snippet keeps only its tabs, so a file name
    or a line of code cannot forge rows or send a terminal escape.
    """
    first_line = chunk.content.split("\n", 1)[0].removesuffix("\r")[:80].strip(UNICODE_WHITESPACE)
    return (f"{rank:>2}. [{score6}] {one_line(chunk.file_path)}:{chunk.start_line}-{chunk.end_line} "
            f"({one_line(chunk.chunk_type)}/{one_line(chunk.kind)})\n    {snippet_line(first_line)}")

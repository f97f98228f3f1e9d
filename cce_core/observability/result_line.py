"""The compact result grammar and the verbose framing it is measured against.

A served result is framed by one compact line::

     1. [0.912345] src/lib.x:10-24 (function/fn) #039f8bd5b80a698e

The ``grammar`` savings bucket compares that framing with a fixed, field-per-line
verbose rendering of the same rows. Bodies are not part of either text (they
belong to the chunk_compression bucket), so the bucket depends only on the
rows' rank, score, package, path, lines, type, kind and id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cce_core.foundation.textrules import estimate_tokens, format6
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
    pkg = f"{row.package} · " if row.package is not None else ""
    return (f"{row.rank:>2}. [{row.score6}] {pkg}{row.file_path}:{row.start}-{row.end} "
            f"({row.chunk_type}/{row.kind}) #{row.chunk_id}")


def render_compact(rows: Sequence[GrammarRow]) -> str:
    return "".join(compact_line(row) + "\n" for row in rows)


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

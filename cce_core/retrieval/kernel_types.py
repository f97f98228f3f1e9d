"""What a ranking kernel serves, as types both ranking profiles and the kernels share.

Kept apart from :mod:`cce_core.retrieval.searcher` so the default profile's
ranker can name the types without importing the searcher that builds it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol


class Cosines(Protocol):
    """One query's cosine against every chunk, as a ranking kernel serves it."""

    def top(self, limit: int) -> Iterable[int]: ...  # best first; a list, or the numpy kernel's index array
    def at(self, index: int) -> float: ...
    def ensure(self, indices: Iterable[int]) -> None: ...
    def tie(self, index: int) -> Any: ...


class Kernel(Protocol):
    name: str

    def cosines(self, query_vector: Sequence[float]) -> Cosines: ...
    def bm25_top(self, unique_query: list[str], limit: int) -> list[int]: ...

"""A store's BM25 postings and chunk lengths as plain Python lists, without numpy.

The default ranking touches only the query terms' postings and a few hundred
candidates, so it runs in plain Python; a fresh ``cce search`` then never pays
numpy's import (tens of milliseconds, more than the ranking itself on a
repository of a few thousand chunks). A mapped store is read straight from its
segments' typed views; an in-memory store (``cce relevance``, ``cce bench``)
already has numpy arrays, which are converted per term.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - typing only
    from cce_core.indexing.store import StoreData


class PlainPostings:
    """``postings(term) -> [(store position, term frequency)]`` and ``doc_len``, for one store."""

    def __init__(self, store: StoreData) -> None:
        from cce_core.indexing.store import SegmentedStore

        self.store = store
        self._segmented = isinstance(store, SegmentedStore)
        if self._segmented:
            self._positions = None if store.identity else store.position_of_row  # type: ignore[attr-defined]
            self._vocabs = [segment.vocab() for segment in store.segments]  # type: ignore[attr-defined]
        self.doc_len = self._doc_len()

    def _doc_len(self) -> list[int]:
        store = self.store
        if not self._segmented:
            return [int(x) for x in store.bm25_source.doc_len.tolist()]
        lengths: list[int] = []
        for segment in store.segments:  # type: ignore[attr-defined]
            lengths.extend(segment.view("doc_len").tolist())
        positions = self._positions
        if positions is None:
            return lengths
        view = getattr(store, "view", None)
        if view is not None:  # a re-index's live view lists each position's row: one C-level gather
            # (straight over the mapped column: reading it into a list first cost as much again)
            return list(map(lengths.__getitem__, view.view("perm")))
        live = [0] * store.rows  # type: ignore[attr-defined]
        for row, length in enumerate(lengths):
            if positions[row] >= 0:
                live[positions[row]] = length
        return live

    def postings(self, term: str) -> list[tuple[int, int]]:
        """The live chunks holding ``term``, ascending by store position, with their term frequencies."""
        if not self._segmented:
            hit = self.store.bm25_source.postings(term)
            if hit is None:
                return []
            return list(zip(hit[0].tolist(), hit[1].tolist(), strict=True))
        store = self.store
        positions = self._positions
        out: list[tuple[int, int]] = []
        for base, segment, vocab in zip(store.seg_base, store.segments, self._vocabs,  # type: ignore[attr-defined]
                                        strict=True):
            pos = vocab.find(term)
            if pos < 0:
                continue
            ptr = segment.view("bm25_ptr")
            lo, hi = ptr[pos], ptr[pos + 1]
            docs = segment.view("bm25_docs")[lo:hi].tolist()
            tfs = segment.view("bm25_tfs")[lo:hi].tolist()
            if positions is None:
                out.extend(zip([base + d for d in docs], tfs, strict=True))
            else:
                mapped = [positions[base + d] for d in docs]  # one lookup per posting, not two
                out.extend((position, tf) for position, tf in zip(mapped, tfs, strict=True) if position >= 0)
        if positions is not None:
            out.sort()
        return out

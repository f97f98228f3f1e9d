"""BM25 over chunks, kept as postings so a query touches only its own terms.

Lucene-form idf, k1 = 1.2, b = 0.75. Per-document sums follow the order of the
query's unique tokens, as the other engines do, so scores match bit for bit.
Scoring here is on numpy arrays; ``pure_kernel`` evaluates the same float
expression in the same order in plain Python (for a one-shot process that
should not pay numpy's import), and tests compare the two.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from itertools import chain, count
from operator import itemgetter
from typing import TYPE_CHECKING

from cce_core.foundation.textrules import join_in_slices
from cce_core.indexing.store import ArrayPostings, Bm25Arrays, Bm25Source

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

BM25_K1 = 1.2
BM25_B = 0.75


@dataclass
class TokenIds:
    """Every chunk's tokens as ids into one vocabulary (first-seen order)."""

    vocab: list[bytes]
    flat: np.ndarray  # int64 ids of all tokens, chunk after chunk
    lengths: np.ndarray  # int64 tokens per chunk


class TokenIdEncoder:
    """Token ids over one growing vocabulary, filled a file at a time.

    The indexer encodes the files it chunks itself as they are done, and a
    worker process's tokens, numbered there against a vocabulary of its own,
    through :meth:`absorb`, so this work overlaps the workers instead of
    following them. Which id a token gets never shows in the output: BM25
    re-sorts the vocabulary and the embedders only look tokens up, so arrival
    order (which process finished which file first) is harmless.
    """

    def __init__(self) -> None:
        # A missing token is given the next id by the dict itself (``__missing__`` calls the counter,
        # both in C), so one ``itemgetter`` call looks every token up and numbers the new ones in
        # first-seen order: no separate pass to find the unseen tokens.
        self._ids: defaultdict[bytes, int] = defaultdict(count().__next__)

    @property
    def vocab(self) -> list[bytes]:
        return list(self._ids)

    def _ids_of(self, tokens: list[bytes]) -> np.ndarray:
        """The id of each of ``tokens`` (numbering the unseen ones, in order), as int64."""
        import numpy as np

        # itemgetter looks every token up in one C call (a 1-tuple comes back as a bare value).
        if len(tokens) > 1:
            return np.array(itemgetter(*tokens)(self._ids), dtype=np.int64)
        return np.array([self._ids[t] for t in tokens], dtype=np.int64)

    def encode(self, token_lists: list[list[bytes]]) -> tuple[np.ndarray, np.ndarray]:
        """(flat ids, tokens per text) of ``token_lists``, adding unseen tokens to the vocabulary."""
        import numpy as np

        lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
        return self._ids_of(list(chain.from_iterable(token_lists))), lengths

    def absorb(self, vocab: list[bytes]) -> np.ndarray:
        """Each token of ``vocab`` (distinct, in first-seen order) as its id here: unseen ones are added in order.

        A worker process numbers its tokens against a vocabulary of its own;
        this maps that vocabulary once (``ids[local_flat]`` then gives these
        ids), one lookup per distinct token instead of one per token. Added in
        the worker's first-seen order, the tokens get the very ids that encoding
        the worker's files here one by one would have given them.
        """
        return self._ids_of(vocab)

    def token_ids(self, parts: list[tuple[np.ndarray, np.ndarray]]) -> TokenIds:
        """Join encoded parts, in the order given, into one :class:`TokenIds`."""
        import numpy as np

        if not parts:
            return TokenIds(self.vocab, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        return TokenIds(self.vocab, np.concatenate([f for f, _ in parts]), np.concatenate([n for _, n in parts]))


def token_ids(token_lists: list[list[bytes]]) -> TokenIds:
    encoder = TokenIdEncoder()
    return encoder.token_ids([encoder.encode(token_lists)])


def _decoded(tokens: list[bytes]) -> list[str]:
    """``tokens`` (ASCII, no line breaks: see ``tokenize_bytes``) as strings, decoded in one call."""
    joined = join_in_slices(tokens, b"\n")
    if len(tokens) > 1 and joined.count(b"\n") == len(tokens) - 1:
        return joined.decode("ascii").split("\n")
    return [token.decode("ascii") for token in tokens]


def build_bm25(token_lists: list[list[bytes]] | TokenIds) -> Bm25Arrays:
    """Postings (term → ascending docs with term frequencies) over a sorted vocabulary."""
    import numpy as np

    tids = token_lists if isinstance(token_lists, TokenIds) else token_ids(token_lists)
    n_docs = len(tids.lengths)
    n_terms = len(tids.vocab)
    order = sorted(range(n_terms), key=tids.vocab.__getitem__)
    vocab = _decoded(list(itemgetter(*order)(tids.vocab)) if n_terms > 1 else [tids.vocab[i] for i in order])
    if not tids.flat.size:
        return Bm25Arrays(vocab, np.zeros(n_terms + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
                          np.zeros(0, dtype=np.int32), tids.lengths)
    # Every token as one (term in sorted order, doc) key, sorted: each distinct key is a posting and
    # its run length the term frequency. int32 keys when they fit: half the memory to sort and fault in.
    key_type = np.int32 if n_terms * n_docs < 1 << 31 else np.int64
    rank = np.empty(n_terms, dtype=key_type)
    rank[order] = np.arange(n_terms, dtype=key_type)
    keys = rank[tids.flat]
    keys *= n_docs
    keys += np.repeat(np.arange(n_docs, dtype=key_type), tids.lengths)
    keys.sort()
    first = np.empty(keys.size, dtype=bool)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    terms, docs = np.divmod(keys[starts], n_docs)
    ptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(terms, minlength=n_terms), out=ptr[1:])
    tfs = np.diff(starts, append=keys.size).astype(np.int32)
    return Bm25Arrays(vocab, ptr, docs.astype(np.int32), tfs, tids.lengths)


def unique_in_order(tokens: list[str]) -> list[str]:
    return list(dict.fromkeys(tokens))


def bm25_scores(index: Bm25Arrays | Bm25Source, unique_query: list[str]) -> np.ndarray:
    """Raw BM25 score of every chunk for the given unique query tokens.

    ``index`` is a store's postings (``StoreData.bm25_source``) or one set of
    arrays; a term's document frequency is the number of chunks it occurs in.
    """
    import numpy as np

    source = index if isinstance(index, Bm25Source) else ArrayPostings(index)
    n = source.doc_len.shape[0]
    scores = np.zeros(n, dtype=np.float64)
    if n == 0:
        return scores
    avgdl = float(source.doc_len.sum()) / n
    for term in unique_query:
        hit = source.postings(term)
        if hit is None:
            continue
        docs, term_freqs = hit
        n_q = len(docs)
        f = term_freqs.astype(np.float64)
        idf = math.log(1.0 + (n - n_q + 0.5) / (n_q + 0.5))
        dl = source.doc_len[docs].astype(np.float64)
        denom = f + BM25_K1 * ((1.0 - BM25_B) + BM25_B * dl / avgdl)
        scores[docs] += idf * (f * (BM25_K1 + 1.0)) / denom
    return scores

"""BM25 over chunks, kept as postings so a query touches only its own terms.

Lucene-form idf, k1 = 1.2, b = 0.75. Per-document sums follow the order of the
query's unique tokens, as the other engines do, so scores match bit for bit.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter

import numpy as np

from .store import Bm25Arrays

BM25_K1 = 1.2
BM25_B = 0.75


def build_bm25(token_lists: list[list[bytes]]) -> Bm25Arrays:
    postings: dict[bytes, list[tuple[int, int]]] = {}
    doc_len = np.zeros(len(token_lists), dtype=np.int64)
    for doc, tokens in enumerate(token_lists):
        doc_len[doc] = len(tokens)
        for term, tf in Counter(tokens).items():
            entry = postings.get(term)
            if entry is None:
                postings[term] = [(doc, tf)]
            else:
                entry.append((doc, tf))
    vocab_bytes = sorted(postings)
    ptr = np.zeros(len(vocab_bytes) + 1, dtype=np.int64)
    total = 0
    for i, term in enumerate(vocab_bytes):
        total += len(postings[term])
        ptr[i + 1] = total
    docs = np.empty(total, dtype=np.int32)
    tfs = np.empty(total, dtype=np.int32)
    pos = 0
    for term in vocab_bytes:
        entry = postings[term]
        docs[pos : pos + len(entry)] = [d for d, _ in entry]
        tfs[pos : pos + len(entry)] = [t for _, t in entry]
        pos += len(entry)
    return Bm25Arrays([t.decode("ascii") for t in vocab_bytes], ptr, docs, tfs, doc_len)


def unique_in_order(tokens: list[str]) -> list[str]:
    return list(dict.fromkeys(tokens))


def bm25_scores(index: Bm25Arrays, unique_query: list[str]) -> np.ndarray:
    """Raw BM25 score of every chunk for the given unique query tokens."""
    n = index.doc_len.shape[0]
    scores = np.zeros(n, dtype=np.float64)
    if n == 0:
        return scores
    avgdl = float(index.doc_len.sum()) / n
    vocab = index.vocab
    for term in unique_query:
        pos = bisect_left(vocab, term)
        if pos >= len(vocab) or vocab[pos] != term:
            continue
        lo, hi = int(index.ptr[pos]), int(index.ptr[pos + 1])
        n_q = hi - lo
        docs = index.docs[lo:hi]
        f = index.tfs[lo:hi].astype(np.float64)
        idf = math.log(1.0 + (n - n_q + 0.5) / (n_q + 0.5))
        dl = index.doc_len[docs].astype(np.float64)
        denom = f + BM25_K1 * ((1.0 - BM25_B) + BM25_B * dl / avgdl)
        scores[docs] += idf * (f * (BM25_K1 + 1.0)) / denom
    return scores

"""The default embedder: SPEC §5.1 vectors, and its token-id fast path agrees bit for bit."""

from __future__ import annotations

import math

import numpy as np

from cce_core.default_plugins.hash_embedder import EMBED_DIM, HashEmbedder
from cce_core.foundation.textrules import fnv1a64, tokenize, tokenize_bytes
from cce_core.indexing.bm25 import token_ids


def _spec_embed(text: str) -> list[float]:
    v = [0.0] * EMBED_DIM
    for tok in tokenize(text):
        h = fnv1a64(tok.encode())
        v[h % EMBED_DIM] += -1.0 if (h >> 63) & 1 else 1.0
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v] if norm > 0 else v


TEXTS = ["def hash_password(password):\n    return sha256(password)", "", "...", "a a a b", "Ünïcode_x y"]


def test_vectors_follow_the_spec_exactly():
    emb = HashEmbedder()
    got = emb.embed_batch(TEXTS)
    assert got.shape == (len(TEXTS), EMBED_DIM)
    for row, text in zip(got, TEXTS, strict=True):
        assert row.tolist() == _spec_embed(text)
    assert not got[1].any() and not got[2].any()


def test_token_id_path_equals_the_text_path():
    emb = HashEmbedder()
    tids = token_ids([tokenize_bytes(t.encode()) for t in TEXTS])
    fast = emb.embed_tokenized(tids.vocab, tids.flat, tids.lengths)
    assert np.array_equal(fast, emb.embed_batch(TEXTS))
    assert np.array_equal(emb.embed_query(TEXTS[0]), fast[0])

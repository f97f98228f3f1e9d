"""The family's byte-level anchors: tokenizer, FNV-1a, chunk ids, rounding."""

from __future__ import annotations

import numpy as np
import pytest

from cce_core.foundation.textrules import (
    chunk_id,
    estimate_tokens,
    fnv1a64,
    format6,
    plain_sum,
    round6,
    score_key,
    split_lines,
    tokenize,
)
from cce_core.retrieval.numpy_kernel import score_keys, sequential_dot


def test_tokenizer_anchors():
    assert tokenize("hashPassword(user_id)") == ["hashpassword", "user_id"]
    assert tokenize("SELECT * FROM users;") == ["select", "from", "users"]
    assert tokenize("") == []
    assert tokenize("getUserById") == ["getuserbyid"]


def test_tokenizer_treats_non_ascii_as_separator():
    assert tokenize("café_au_lait Ünïcode") == ["caf", "_au_lait", "n", "code"]


def test_tokenizer_equals_the_regex_definition_on_every_byte():
    """The translate-and-split tokenizer is the family's regex rule, byte for byte."""
    import random
    import re

    from cce_core.foundation.textrules import tokenize_bytes

    rule = re.compile(rb"[A-Za-z0-9_]+")
    every_byte = bytes(range(256)) * 2
    samples = [every_byte, b"", b"   ", b"A\x0bB\x1cC\x85D\xa0E", "Ünïcode ß_x".encode()]
    rng = random.Random(7)
    samples += [bytes(rng.randrange(256) for _ in range(rng.randrange(80))) for _ in range(3000)]
    for data in samples:
        expected = rule.findall(data.lower())
        assert tokenize_bytes(data) == expected, data


def test_fnv1a_published_vectors():
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a64(b"foobar") == 0x85944171F73967E8


def test_vectorised_fnv1a_equals_the_byte_loop():
    import random

    from cce_core.foundation.textrules import fnv1a64_many

    rng = random.Random(11)
    items = [b"", b"a", b"foobar", bytes(range(256)), b"\xff" * 300]
    items += [bytes(rng.randrange(256) for _ in range(rng.choice([1, 2, 7, 16, 33, 90]))) for _ in range(2000)]
    hashes = fnv1a64_many(items)
    assert str(hashes.dtype) == "uint64"
    assert hashes.tolist() == [fnv1a64(x) for x in items]
    assert fnv1a64_many([]).tolist() == []


def test_token_estimate_counts_bytes_with_floor_of_one():
    assert estimate_tokens("") == 1
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("éééé") == 2  # 8 bytes


def test_chunk_id_uses_a_raw_100_byte_prefix():
    content = ("é" * 80).encode()  # 160 bytes: the prefix cuts a code point in half
    a = chunk_id("a.py", 1, 2, content)
    assert a == chunk_id("a.py", 1, 2, content[:100] + b"different tail")
    assert a != chunk_id("a.py", 1, 3, content)
    assert len(a) == 16 and int(a, 16) >= 0


def test_rounding_is_half_away_from_zero():
    assert format6(0.1234565) == "0.123457"  # Python's round() would give 0.123456
    assert format6(-0.0000004) == "0.000000"
    assert format6(-1.5) == "-1.500000"
    assert format6(2.0000005) == "2.000001"
    assert round6(0.49999999999999994) == pytest.approx(0.5)
    assert score_key(0.0000005) == 1
    assert score_key(-0.0000005) == -1


def test_vectorised_keys_match_scalar_keys():
    values = np.array([0.1234565, -0.0000005, 0.0, 0.9999995, 0.5, 1e-9])
    assert score_keys(values).tolist() == [score_key(v) for v in values]


def test_sequential_dot_sums_left_to_right():
    a = np.zeros((1, 256))
    a[0, 0], a[0, 1] = 0.6, 0.8
    b = np.zeros(256)
    b[0] = 1.0
    assert sequential_dot(a, b)[0] == pytest.approx(0.6)
    row = np.array([[1e16, 1.0, -1e16, 1.0]])
    # A plain loop gives 1.0 here; a compensated or pairwise sum would give 2.0.
    assert sequential_dot(row, np.ones(4))[0] == plain_sum([1e16, 1.0, -1e16, 1.0])


def test_split_lines_only_on_newline():
    assert split_lines("a\r\nb\x0bc\n") == ["a", "b\x0bc"]
    assert split_lines("") == []


def test_exact_cosines_rank_like_a_full_exact_sort():
    from cce_core.retrieval.numpy_kernel import ExactCosines

    rng = np.random.default_rng(7)
    for trial in range(30):
        n = int(rng.integers(1, 400))
        matrix = rng.normal(size=(n, 256))
        # Many near-ties: quantise so that keys collide and the tie-break matters.
        matrix = np.round(matrix, 1)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        query = matrix[int(rng.integers(0, n))].copy()
        ties = rng.permutation(n)
        ids = [f"{rank:04d}" for rank in ties]  # chunk ids whose order is the permutation
        limit = int(rng.integers(1, 40))
        full = sequential_dot(matrix, query)
        expected = np.lexsort((ties, -score_keys(full)))[:limit]  # every chunk sorted exactly
        cos = ExactCosines(matrix, query, ids)
        got = cos.top(limit)
        assert got.tolist() == expected.tolist(), trial
        assert all(cos.at(int(i)) == full[i] for i in got)


def test_sparse_queries_are_exact_for_every_chunk():
    from cce_core.retrieval.numpy_kernel import ExactCosines

    rng = np.random.default_rng(11)
    matrix = rng.normal(size=(300, 256))
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = np.zeros(256)
    query[rng.choice(256, size=5, replace=False)] = rng.normal(size=5)
    query /= np.linalg.norm(query)
    cos = ExactCosines(matrix, query, [f"{i:04d}" for i in range(300)])
    assert cos.exact.all()
    assert np.array_equal(cos.values, sequential_dot(matrix, query))

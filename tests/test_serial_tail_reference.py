"""The indexer's serial tail, rewritten for speed (#24), still computes exactly what the plain forms compute.

Each faster path (vectorised FNV-1a with a Python finish for long tokens, the
in-place hash-embedder counting, sorted-key BM25 postings, row-major sparse
vectors, one-buffer chunk-text blocks shared between threads, the segment
digest taken beside the write) is compared here, bit for bit, with a
straightforward version of the same computation: the form the code had
before, kept in this file as the reference.
"""

from __future__ import annotations

import hashlib
import random
import threading
import zlib

import numpy as np
import pytest

from cce_core.default_plugins.hash_embedder import EMBED_DIM, HashEmbedder
from cce_core.foundation.textrules import fnv1a64, fnv1a64_many, join_in_slices
from cce_core.indexing import segment
from cce_core.indexing.bm25 import TokenIds, _decoded, build_bm25, token_ids
from cce_core.indexing.chunk import Chunk
from cce_core.indexing.segment import (
    CONTENT_BLOCK_CHUNKS,
    CONTENT_ZLIB_LEVEL,
    Bm25Arrays,
    CompressingChunks,
    FileEntry,
    SegmentParts,
    _blob,
    _compressed_blob,
    _ContentBlocks,
    save_segment,
    serialize_segment,
    vector_sections,
)

WORD = b"abcdefghijklmnopqrstuvwxyz0123456789_"


def _tokens(rng: random.Random, count: int, vocabulary: list[bytes]) -> list[bytes]:
    return [rng.choice(vocabulary) for _ in range(count)]


def _vocabulary(rng: random.Random, size: int, longest: int = 40) -> list[bytes]:
    words = {bytes(rng.choice(WORD) for _ in range(rng.randint(1, longest))) for _ in range(size)}
    return sorted(words)


# -- FNV-1a ------------------------------------------------------------------


def test_vectorised_fnv1a_finishes_long_tokens_like_the_byte_loop():
    rng = random.Random(24)
    # Many items (the join goes a slice at a time past 1,024), equal lengths, and a long tail that
    # only a few items reach (those finish in Python): around the switch, one longer, one much longer.
    items = _vocabulary(rng, 3000, longest=30)
    items += [b"x" * n for n in (31, 40, 64, 65, 200)] + [bytes(rng.choice(WORD) for _ in range(4074))]
    items += [b"q" * 50] * 20  # exactly twenty items of one length: more than a few, then none
    rng.shuffle(items)
    assert fnv1a64_many(items).tolist() == [fnv1a64(x) for x in items]
    for few in ([b"only"], [b"", b""], [b"a" * 100, b""], [b"b" * 17] * 17, [b"c" * 3] * 16):
        assert fnv1a64_many(few).tolist() == [fnv1a64(x) for x in few]


# -- the hash embedder -------------------------------------------------------


def _reference_vectors(vocab: list[bytes], flat: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The float path as it was: signed codes, one weighted bincount, temporaries, one division."""
    n = len(lengths)
    hashes = fnv1a64_many(vocab)
    buckets = (hashes % np.uint64(EMBED_DIM)).astype(np.int64) + 1
    codes = np.where((hashes >> np.uint64(63)).astype(bool), -buckets, buckets)[flat]
    rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
    cells = rows * EMBED_DIM + (np.abs(codes) - 1)
    counts = np.bincount(cells, weights=np.sign(codes).astype(np.float64), minlength=n * EMBED_DIM)
    counts = counts.reshape(n, EMBED_DIM)
    norms = np.sqrt((counts * counts).sum(axis=1))
    return counts / np.where(norms > 0, norms, 1.0)[:, None]


def test_tokenized_vectors_are_bit_identical_to_the_plain_float_path():
    rng = random.Random(7)
    vocabulary = _vocabulary(rng, 400)
    token_lists = [_tokens(rng, rng.choice([0, 1, 2, 5, 40, 300]), vocabulary) for _ in range(120)]
    token_lists[3] = [b"same"] * 5000  # one bucket, a large count
    # A token and another of the same bucket and opposite sign cancel: a row with tokens but norm 0.
    plus, minus = _opposite_pair()
    token_lists[4] = [plus, minus, plus, minus]
    tids = token_ids(token_lists)
    embedder = HashEmbedder()
    got = embedder.embed_tokenized(tids.vocab, tids.flat, tids.lengths)
    want = _reference_vectors(tids.vocab, tids.flat, tids.lengths)
    assert got.dtype == np.float64 and got.shape == (len(token_lists), EMBED_DIM)
    assert got.tobytes() == want.tobytes()
    assert not got[4].any()  # tokens, but they cancel
    assert all(not got[i].any() for i, tokens in enumerate(token_lists) if not tokens)
    assert any(not tokens for tokens in token_lists)
    # The same again (nothing kept between calls changes a bit), and the text path agrees.
    assert embedder.embed_tokenized(tids.vocab, tids.flat, tids.lengths).tobytes() == want.tobytes()
    texts = [" ".join(t.decode() for t in tokens) for tokens in token_lists]
    assert embedder.embed_batch(texts).tobytes() == want.tobytes()


def _opposite_pair() -> tuple[bytes, bytes]:
    seen: dict[int, bytes] = {}
    for i in range(100000):
        token = b"t%d" % i
        h = fnv1a64(token)
        key = (h % EMBED_DIM) * 2 + (h >> 63)
        if key ^ 1 in seen:
            return token, seen[key ^ 1]
        seen[key] = token
    raise AssertionError("no pair found")


def test_tokenized_vectors_refuse_an_id_outside_the_vocabulary():
    with pytest.raises(IndexError):
        HashEmbedder().embed_tokenized([b"a"], np.array([0, 1], dtype=np.int64), np.array([2], dtype=np.int64))


# -- BM25 --------------------------------------------------------------------


def _reference_bm25(tids: TokenIds) -> Bm25Arrays:
    """The postings as they were computed: np.unique over int64 (term, doc) keys."""
    n_docs = len(tids.lengths)
    order = sorted(range(len(tids.vocab)), key=tids.vocab.__getitem__)
    vocab = [tids.vocab[i].decode("ascii") for i in order]
    rank = np.empty(len(order), dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int64)
    terms = rank[tids.flat]
    docs = np.repeat(np.arange(n_docs, dtype=np.int64), tids.lengths)
    pairs, counts = np.unique(terms * n_docs + docs, return_counts=True)
    ptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(pairs // n_docs, minlength=len(vocab)), out=ptr[1:])
    return Bm25Arrays(vocab, ptr, (pairs % n_docs).astype(np.int32), counts.astype(np.int32), tids.lengths)


def _assert_same_postings(got: Bm25Arrays, want: Bm25Arrays) -> None:
    assert list(got.vocab) == list(want.vocab)
    for name in ("ptr", "docs", "tfs", "doc_len"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name


def test_postings_equal_the_unique_pairs_form():
    rng = random.Random(3)
    vocabulary = _vocabulary(rng, 300)
    token_lists = [_tokens(rng, rng.choice([0, 1, 3, 17, 200]), vocabulary) for _ in range(150)]
    tids = token_ids(token_lists)
    _assert_same_postings(build_bm25(tids), _reference_bm25(tids))
    for small in ([[b"a", b"a"]], [[], [b"b"], []], [[b"b", b"a"], [b"a"]]):
        _assert_same_postings(build_bm25(token_ids(small)), _reference_bm25(token_ids(small)))


def test_postings_with_keys_past_int32_equal_the_unique_pairs_form():
    # 47,000 terms x 46,000 documents: (term, doc) keys no longer fit an int32.
    terms = [b"w%d" % i for i in range(47000)]
    token_lists = [[terms[i], terms[(i * 7) % 47000], terms[i]] for i in range(46000)]
    tids = token_ids(token_lists)
    assert len(tids.vocab) * len(tids.lengths) >= 1 << 31
    _assert_same_postings(build_bm25(tids), _reference_bm25(tids))


def test_an_empty_batch_has_empty_postings():
    got = build_bm25([])
    assert list(got.vocab) == [] and got.ptr.tolist() == [0] and not got.docs.size and not got.tfs.size


def test_the_vocabulary_is_decoded_whatever_its_size():
    for tokens in ([], [b"a"], [b"a", b"b"], [b"w%d" % i for i in range(5000)]):
        assert _decoded(tokens) == [t.decode("ascii") for t in tokens]


# -- segment sections ----------------------------------------------------------


def _reference_vector_sections(matrix: np.ndarray) -> tuple[str, list[tuple[str, bytes, str]]]:
    rows, dim = matrix.shape
    if np.count_nonzero(matrix) <= segment.SPARSE_MAX_DENSITY * rows * dim:
        cols, row_ids = np.nonzero(matrix.T)
        ptr = np.zeros(dim + 1, dtype="<i8")
        np.cumsum(np.bincount(cols, minlength=dim), out=ptr[1:])
        return "sparse", [("csc_ptr", ptr.tobytes(), "<i8"), ("csc_row", row_ids.astype("<i4").tobytes(), "<i4"),
                          ("csc_val", matrix[row_ids, cols].astype("<f8").tobytes(), "<f8")]
    return "dense", [("vectors", matrix.astype("<f8").tobytes(), "<f8")]


@pytest.mark.parametrize("density", [0.0, 0.02, 0.1, 0.25, 0.6])
def test_sparse_vector_sections_equal_the_column_pass(density):
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((97, EMBED_DIM)) * (rng.random((97, EMBED_DIM)) < density)
    layout, sections = vector_sections(matrix)
    want_layout, want = _reference_vector_sections(matrix)
    assert layout == want_layout
    assert [(name, bytes(blob), dtype) for name, blob, dtype in sections] == want


def test_blobs_of_ascii_and_other_strings_are_their_utf8_and_offsets():
    for strings in ([], ["a"], ["src/a.py", "", "b"], ["ünï", "x", "日本語", ""], [f"p{i}" for i in range(3000)]):
        blob, ptr = _blob(strings)
        encoded = [s.encode("utf-8") for s in strings]
        assert blob == b"".join(encoded)
        assert np.frombuffer(ptr, dtype="<i8").tolist() == [0, *np.cumsum([len(e) for e in encoded]).tolist()]
    pieces = [bytes([i % 251]) * (i % 5) for i in range(5000)]
    for separator in (b"", b"\n"):
        for some in (pieces, pieces[:1024], pieces[:1025], [], [b"x"]):
            assert join_in_slices(some, separator) == separator.join(some)


def _reference_compressed(strings: list[str]) -> tuple[bytes, bytes, bytes]:
    encoded = [s.encode("utf-8") for s in strings]
    ptr = np.zeros(len(encoded) + 1, dtype="<i8")
    np.cumsum([len(e) for e in encoded], out=ptr[1:])
    blocks = [zlib.compress(b"".join(encoded[i : i + CONTENT_BLOCK_CHUNKS]), CONTENT_ZLIB_LEVEL)
              for i in range(0, len(encoded), CONTENT_BLOCK_CHUNKS)]
    block_ptr = np.zeros(len(blocks) + 1, dtype="<i8")
    np.cumsum([len(b) for b in blocks], out=block_ptr[1:])
    return b"".join(blocks), block_ptr.tobytes(), ptr.tobytes()


def _texts(ascii_only: bool, count: int = 333) -> list[str]:
    rng = random.Random(count)
    accent = "" if ascii_only else "é"
    return [f"def f{i}():\n    return {i}{accent}\n" * rng.randint(0, 30) for i in range(count)]


@pytest.mark.parametrize("ascii_only", [True, False])
def test_text_blocks_compressed_by_several_threads_are_the_one_thread_bytes(ascii_only):
    texts = _texts(ascii_only)
    want = _reference_compressed(texts)
    assert _compressed_blob(texts) == want
    for count in (0, 1, CONTENT_BLOCK_CHUNKS, CONTENT_BLOCK_CHUNKS + 1):
        assert _compressed_blob(texts[:count]) == _reference_compressed(texts[:count])
    shared = _ContentBlocks(texts)
    workers = [threading.Thread(target=shared.work) for _ in range(3)]
    for worker in workers:
        worker.start()
    shared.work()
    for worker in workers:
        worker.join()
    assert shared.result() == want


def _chunk(i: int, text: str) -> Chunk:
    return Chunk(f"{i:016x}", "a.py", 1, 1, "module", "module", "python", text, 1)


def test_compressing_chunks_asked_at_once_help_and_give_the_same_bytes():
    texts = _texts(False, 2000)
    ahead = CompressingChunks([_chunk(i, t) for i, t in enumerate(texts)])
    assert ahead.compressed_content() == _reference_compressed(texts)  # asked before the helper could finish


def test_a_text_that_cannot_be_encoded_fails_the_compression_where_it_is_asked_for():
    ahead = CompressingChunks([_chunk(0, "fine"), _chunk(1, "lone \ud800 surrogate")])
    with pytest.raises(UnicodeEncodeError):
        ahead.compressed_content()


def _parts(symbols: bytes | None) -> SegmentParts:
    texts = _texts(True, 40)
    chunks = [_chunk(i, t) for i, t in enumerate(texts)]
    files = [FileEntry("a.py", "0" * 64, 10, 0, len(chunks), ["b"], 5, 6, symbols)]
    tids = token_ids([[b"def", b"f%d" % i] for i in range(len(chunks))])
    vectors = HashEmbedder().embed_tokenized(tids.vocab, tids.flat, tids.lengths)
    return SegmentParts(chunks, vectors, files, build_bm25(tids), [], [("a.py", "b.py")])


@pytest.mark.parametrize("symbols", [None, b"", b"symbol records " * 50])
def test_a_saved_segment_is_named_by_the_digest_of_its_bytes(tmp_path, symbols):
    parts = _parts(symbols)
    name, sha, size = save_segment(parts, tmp_path)
    data = (tmp_path / name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == sha and name == f"seg-{sha[:24]}.cces" and len(data) == size
    assert data == b"".join(bytes(piece) for piece in serialize_segment(parts))
    mapped = segment.MappedSegment(tmp_path / name)
    assert mapped.has_symbols() == (symbols is not None)
    if symbols is not None:
        assert mapped.symbol_payload("a.py") == symbols

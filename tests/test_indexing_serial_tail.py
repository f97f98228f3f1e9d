"""The indexer's serial tail made cheaper without changing a byte (#24, third pass).

Workers number their tokens against a vocabulary of their own, sent in
installments with the tokens each adds, and the parent maps each token once
(``TokenIdEncoder.absorb``); a batch's chunk texts are compressed
in a helper thread (``CompressingChunks``). Both must give exactly what the
one-process path gives: the same tokens, postings, vectors and segment bytes.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from helpers import REPO_ROOT, decoded_tokens

from cce_core.indexing import indexer, parallel_chunking
from cce_core.indexing.bm25 import TokenIdEncoder, build_bm25
from cce_core.indexing.chunk import Chunk
from cce_core.indexing.chunker import Chunker
from cce_core.indexing.segment import CompressingChunks, SegmentParts, _compressed_blob, serialize_segment
from cce_core.indexing.walker import walk
from cce_core.plugins.host import default_host


def _walked():
    return walk(str(REPO_ROOT / "cce_core"), protect_secrets=True).files


def test_absorb_gives_the_ids_encoding_one_by_one_gives():
    files = [[[b"a", b"b"], [b"c"]], [[b"b", b"d", b"a"]], [[b"e"], [b"d", b"f"]]]
    one_by_one = TokenIdEncoder()
    expected = [one_by_one.encode(f) for f in [[[b"x", b"a"]], *files]]
    # A "parent" that saw [x a] first, then absorbs a "child" that numbered the three files itself.
    parent, child = TokenIdEncoder(), TokenIdEncoder()
    first = parent.encode([[b"x", b"a"]])
    local_flat, local_lengths = child.encode([t for f in files for t in f])
    mapped = parent.absorb(child.vocab)[local_flat]
    assert parent.vocab == one_by_one.vocab
    assert np.array_equal(np.concatenate([first[0], mapped]), np.concatenate([f for f, _ in expected]))
    assert np.array_equal(local_lengths, np.concatenate([n for _, n in expected[1:]]))
    assert TokenIdEncoder().absorb([b"only"]).tolist() == [0]
    assert TokenIdEncoder().absorb([]).tolist() == []


def test_encode_numbers_new_tokens_in_first_seen_order_across_calls():
    encoder = TokenIdEncoder()
    flat, lengths = encoder.encode([[b"b", b"a", b"b"], [b"c"], []])
    assert flat.tolist() == [0, 1, 0, 2] and lengths.tolist() == [3, 1, 0]
    flat, lengths = encoder.encode([[b"d", b"a"]])
    assert flat.tolist() == [3, 1] and encoder.vocab == [b"b", b"a", b"c", b"d"]
    assert encoder.encode([[b"only"]])[0].tolist() == [4]  # one token: itemgetter's bare-value case
    assert encoder.absorb([b"e", b"b"]).tolist() == [5, 0]
    assert encoder.encode([])[0].tolist() == []


@pytest.mark.parametrize(("workers", "installment"), [("2", 16), ("3", 16), ("2", 1), ("2", 7)])
def test_encoded_results_from_workers_equal_the_serial_tokens(monkeypatch, workers, installment):
    # Installments of 1 and 7 files: each child sends many, every one but its first with a vocabulary
    # delta that must map onto the ids its earlier installments already gave.
    monkeypatch.setattr(parallel_chunking, "CHILD_INSTALLMENT_FILES", installment)
    items = [(f.path, f.text) for f in _walked()]
    host = default_host()
    chunker = Chunker(host)
    serial = [parallel_chunking._chunk_text(chunker, path, text, "strict") for path, text in items]  # the plain tokens
    monkeypatch.setenv("CCE_WORKERS", workers)
    encoder = TokenIdEncoder()
    seen: list[int] = []
    parallel = parallel_chunking.chunk_files(host, items, "strict", None, lambda k, _r: seen.append(k), encoder=encoder)
    assert sorted(seen) == list(range(len(items)))
    vocab = encoder.vocab
    assert len(vocab) == len(set(vocab))
    for plain, encoded in zip(serial, parallel, strict=True):
        assert plain[:3] == encoded[:3] and plain[4:] == encoded[4:]  # chunks, imports, estimate, redactions, symbols
        flat, lengths = encoded[3]
        assert decoded_tokens(vocab, flat, lengths) == plain[3]
    # What the store keeps from the ids is independent of which process numbered which token.
    tids = encoder.token_ids([r[3] for r in parallel])
    reference = build_bm25([t for r in serial for t in r[3]])
    got = build_bm25(tids)
    assert list(got.vocab) == list(reference.vocab)
    for name in ("ptr", "docs", "tfs", "doc_len"):
        assert np.array_equal(getattr(got, name), getattr(reference, name)), name


def _segment_digest(batch: indexer.Batch) -> str:
    parts = SegmentParts(list(batch.chunks), batch.embeddings, batch.files, batch.bm25, [], None)
    digest = hashlib.sha256()
    for piece in serialize_segment(parts):
        digest.update(piece)
    return digest.hexdigest()


def test_a_batch_is_the_same_segment_whatever_the_worker_count(monkeypatch):
    files = _walked()
    host = default_host()
    embedder = host.embedder("hash")
    monkeypatch.setenv("CCE_WORKERS", "1")
    serial = indexer.build_batch(host, embedder, files, "strict")
    monkeypatch.setenv("CCE_WORKERS", "2")
    parallel = indexer.build_batch(host, embedder, files, "strict")
    assert np.array_equal(serial.embeddings, parallel.embeddings)
    # The batch's own (pre-compressed) chunk list and a plain copy serialize to the same bytes.
    assert isinstance(parallel.chunks, CompressingChunks)
    own = hashlib.sha256()
    for piece in serialize_segment(SegmentParts(parallel.chunks, parallel.embeddings, parallel.files,
                                                parallel.bm25, [], None)):
        own.update(piece)
    assert own.hexdigest() == _segment_digest(parallel) == _segment_digest(serial)


def _chunk(i: int, text: str) -> Chunk:
    return Chunk(f"{i:016x}", "a.py", 1, 1, "module", "module", "python", text, 1)


def test_compressing_chunks_give_the_blob_compressing_here_gives_and_notice_a_change():
    chunks = [_chunk(i, f"def f{i}():\n    return {i} * 'é'\n" * (i % 7 + 1)) for i in range(100)]
    ahead = CompressingChunks(chunks)
    assert ahead.compressed_content() == _compressed_blob([c.content for c in chunks])
    ahead.append(_chunk(100, "x = 1\n"))
    assert ahead.compressed_content() is None  # changed after it was made: serialize compresses again
    assert CompressingChunks([]).compressed_content() is None


def test_a_failure_in_the_parent_stops_the_children_and_propagates(monkeypatch):
    import os

    parent = os.getpid()
    real = parallel_chunking._chunk_text
    calls = {"n": 0}

    def fails_in_parent(*args, **kwargs):
        if os.getpid() == parent:
            calls["n"] += 1
            if calls["n"] == 2:
                raise ValueError("parent broke")
        return real(*args, **kwargs)

    monkeypatch.setattr(parallel_chunking, "_chunk_text", fails_in_parent)
    monkeypatch.setenv("CCE_WORKERS", "2")
    import multiprocessing
    import time

    items = [(f.path, f.text) for f in _walked()]
    started = time.monotonic()
    with pytest.raises(ValueError, match="parent broke"):
        parallel_chunking.chunk_files(default_host(), items, "strict", None, encoder=TokenIdEncoder())
    # Not the children's join timeout (5 s): a child blocked on sending a result nobody reads is ended at once.
    assert time.monotonic() - started < 4.0
    assert not multiprocessing.active_children()  # none left behind

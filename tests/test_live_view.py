"""A re-indexed store carries its resolved live-file table, so a reader never rebuilds it (#24)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from helpers import OLD_MTIME, index_with_hash, sample_corpus

from cce_core.indexing.segment import MappedSegment
from cce_core.indexing.store import SegmentedStore, load_store, open_segments, segments_dir
from cce_core.plugins.host import default_host
from cce_core.retrieval.searcher import Searcher

OLD = OLD_MTIME
QUERIES = ["segment manifest", "bm25 postings", "def search", "compaction threshold", "zzzz_not_a_word"]


def _corpus(tmp_path: Path) -> Path:
    return sample_corpus(tmp_path, "indexing")


def _edit(root: Path, n: int) -> None:
    path = root / "indexing" / "bm25.py"
    path.write_text(path.read_text(encoding="utf-8") + f"\n\ndef edit_number_{n}():\n    return {n}\n",
                    encoding="utf-8")
    os.utime(path, (OLD + n, OLD + n))
    (root / f"added_{n}.py").write_text(f"def added_{n}(x):\n    return x + {n}\n", encoding="utf-8")
    os.utime(root / f"added_{n}.py", (OLD, OLD))
    if n > 1:
        (root / f"added_{n - 1}.py").unlink()


def _answers(store: SegmentedStore, kernel: str) -> list:
    searcher = Searcher(store, default_host().embedder("hash"), kernel=kernel)
    return [[(r.chunk.chunk_id, r.score, r.rank) for r in searcher.search(q, top_k=10)] for q in QUERIES]


def _resolved_without_view(store_path: Path) -> SegmentedStore:
    opened = open_segments(store_path)
    return SegmentedStore(opened.meta, opened.segments, opened.refs, store_path, opened.size, opened.ordered)


def test_a_reader_of_a_reindexed_store_parses_no_segment_file_table(tmp_path, monkeypatch):
    root = _corpus(tmp_path)
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    _edit(root, 1)
    index_with_hash(root, store)
    parsed: list[str] = []
    real = MappedSegment.json

    def recording(self, name):
        parsed.append(name)
        return real(self, name)

    monkeypatch.setattr(MappedSegment, "json", recording)
    data = load_store(store)
    assert not data.identity and data.view is not None
    _answers(data, "numpy")
    _answers(load_store(store), "lean")
    assert data.file_span("indexing/bm25.py") is not None and data.file_tokens["indexing/bm25.py"] > 0
    assert parsed == []


@pytest.mark.parametrize("edits", [1, 4])
def test_the_view_answers_exactly_like_resolving_the_segments_and_like_a_fresh_index(tmp_path, edits):
    root = _corpus(tmp_path)
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    for n in range(1, edits + 1):
        _edit(root, n)
        index_with_hash(root, store)
    viewed, resolved = load_store(store), _resolved_without_view(store)
    assert viewed.view is not None and len(viewed.segments) == edits + 1
    assert viewed.files == resolved.files
    assert viewed.live_files() == resolved.live_files()
    assert (viewed.rows, viewed.identity) == (resolved.rows, resolved.identity)
    assert np.array_equal(viewed.perm, resolved.perm) and np.array_equal(viewed.inverse, resolved.inverse)
    assert list(viewed.position_of_row) == list(resolved.position_of_row)
    assert list(viewed.chunk_ids) == list(resolved.chunk_ids)
    assert dict(viewed.file_tokens) == dict(resolved.file_tokens)
    for f in resolved.files:
        assert viewed.file_span(f.path) == resolved.file_span(f.path)
    assert viewed.file_span("no/such/file.py") is None
    fresh = tmp_path / "fresh.cce"
    index_with_hash(root, fresh, reuse=False)
    for kernel in ("numpy", "lean"):
        assert _answers(viewed, kernel) == _answers(load_store(fresh), kernel)


def test_a_damaged_view_is_not_trusted_by_the_next_index(tmp_path):
    root = _corpus(tmp_path)
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    _edit(root, 1)
    index_with_hash(root, store)
    view = next(p for p in segments_dir(store).iterdir() if p.name.startswith("view-"))
    raw = bytearray(view.read_bytes())
    raw[-1] ^= 0xFF
    view.write_bytes(bytes(raw))
    assert load_store(store).damaged_segments() == [view.name]
    data, stats = index_with_hash(root, store)
    assert stats.reused_files == 0  # rebuilt, not trusted
    assert data.identity


def test_blob_strings_decode_ascii_and_non_ascii_blobs_alike():
    from cce_core.indexing.segment import BlobStrings, _blob

    for strings in (["a.py", "b/c.rb", ""], ["café/ü.py", "x", "日本.ts", ""]):
        blob, ptr = _blob(strings)
        seq = BlobStrings(memoryview(blob), memoryview(ptr).cast("q"))
        assert seq.to_list() == list(seq) == [seq[i] for i in range(len(seq))] == strings


def test_an_unreadable_view_is_ignored_and_the_segments_answer(tmp_path):
    root = _corpus(tmp_path)
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    _edit(root, 1)
    index_with_hash(root, store)
    expected = _answers(load_store(store), "numpy")
    view = next(p for p in segments_dir(store).iterdir() if p.name.startswith("view-"))
    view.write_bytes(b"not a view at all")
    data = load_store(store)
    assert data.view is None and not data.identity
    assert _answers(data, "numpy") == expected


def test_a_missing_view_is_done_without(tmp_path):
    root = _corpus(tmp_path)
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    _edit(root, 1)
    index_with_hash(root, store)
    expected = _answers(load_store(store), "lean")
    next(p for p in segments_dir(store).iterdir() if p.name.startswith("view-")).unlink()
    data = load_store(store)
    assert data.view is None
    assert _answers(data, "lean") == expected

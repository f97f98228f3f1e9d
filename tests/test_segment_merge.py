"""Folding a store's segments: the one-edit segments at its end are merged, its large ones stay.

A long-lived store (``--watch``, an agent re-indexing after each edit) gains a
small segment per run. Past :data:`MERGE_TAIL_SEGMENTS` of them they become
one segment, and the fresh index's large segments before them are not
rewritten; the store must still answer exactly like a fresh index of the
same tree, whatever the edits were (changed, added, deleted and merely
touched files, a changed import graph).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import OLD_MTIME, assert_same_store, index_with_hash, sample_corpus

from cce_core.indexing import compaction
from cce_core.indexing.compaction import segments_to_fold
from cce_core.indexing.store import SegmentRef, apply_segments, load_store, segments_dir

BIG = compaction.SMALL_SEGMENT_BYTES * 4
SMALL = compaction.SMALL_SEGMENT_BYTES // 4


def _refs(*sizes: int) -> list[SegmentRef]:
    return [SegmentRef(f"seg-{k}", "0" * 64, size, 100) for k, size in enumerate(sizes)]


def test_a_few_small_segments_after_the_fresh_ones_are_left_alone():
    tail = [SMALL] * compaction.MERGE_TAIL_SEGMENTS
    assert segments_to_fold(_refs(BIG, BIG, *tail), 10_000, 100) is None


def test_one_small_segment_too_many_merges_the_small_ones_at_the_end():
    tail = [SMALL] * (compaction.MERGE_TAIL_SEGMENTS + 1)
    assert segments_to_fold(_refs(BIG, BIG, SMALL, BIG, *tail), 10_000, 100) == 4


def test_a_store_small_all_through_is_compacted_instead():
    assert segments_to_fold(_refs(*[SMALL] * (compaction.MERGE_TAIL_SEGMENTS + 1)), 10_000, 100) == 0


def test_superseded_rows_past_the_share_compact_the_store():
    refs = _refs(BIG, SMALL)
    assert segments_to_fold(refs, 10_000, int(10_000 * compaction.COMPACT_DEAD_SHARE) + 1) == 0
    assert segments_to_fold(refs, 10_000, int(10_000 * compaction.COMPACT_DEAD_SHARE)) is None


def test_small_segments_scattered_among_large_ones_compact_the_store_past_the_limit():
    scattered = [size for _ in range(compaction.COMPACT_MAX_SEGMENTS + 1) for size in (SMALL, BIG)]
    assert segments_to_fold(_refs(*scattered), 10_000, 0) == 0


def test_a_large_store_is_not_rewritten_for_its_own_segment_count():
    """A fresh index of a big tree writes many large segments; each edit must not compact it all again."""
    refs = _refs(*[BIG] * (compaction.COMPACT_MAX_SEGMENTS * 2), SMALL, SMALL)
    assert segments_to_fold(refs, 10_000, 0) is None


@pytest.fixture
def small_tail(monkeypatch):
    """Merges after three small segments; the corpus's fresh segment counts as large."""
    monkeypatch.setattr(compaction, "MERGE_TAIL_SEGMENTS", 3)

    def large_from(store: Path) -> None:
        monkeypatch.setattr(compaction, "SMALL_SEGMENT_BYTES", load_store(store).refs[0].bytes)

    return large_from


def _assert_segments_alone_give_the_view(store_path: Path) -> None:
    """Applying the segments in order (what a reader without the live view does) gives the view's files."""
    store = load_store(store_path)
    live: dict = {}
    apply_segments(live, store.segments, 0, store_path)
    resolved = {path: (entry.sha256, entry.size, entry.mtime_ns, entry.chunk_count)
                for path, (_s, entry) in live.items()}
    assert resolved == {f.path: (f.sha256, f.size, f.mtime_ns, f.chunk_count) for f in store.files}


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    os.utime(path, (OLD_MTIME + 100, OLD_MTIME + 100))  # outside the racy window of the run that reads it


def test_the_small_segments_merge_and_the_store_answers_like_a_fresh_one(tmp_path, small_tail):
    root = sample_corpus(tmp_path, "indexing", "retrieval")
    store = tmp_path / "s.cce"
    fresh = tmp_path / "fresh.cce"
    index_with_hash(root, store)
    small_tail(store)
    base = load_store(store).refs[0]

    edits = [
        lambda: _append(root / "indexing" / "bm25.py", "\n\ndef merged_helper_one():\n    return 1\n"),
        lambda: os.utime(root / "python.py", (OLD_MTIME + 10, OLD_MTIME + 10)),  # touched: only its metadata
        lambda: (root / "zz_added.py").write_text("import indexing.bm25\n\nclass AddedThing:\n    pass\n",
                                                  encoding="utf-8"),  # a new file and a new import edge
        lambda: (root / "retrieval" / "single_signal.py").unlink(),
        lambda: _append(root / "indexing" / "bm25.py", "\n\ndef merged_helper_two():\n    return 2\n"),
        lambda: (root / "zz_added.py").unlink(),
        lambda: _append(root / "indexing" / "graph.py", "\n\ndef merged_helper_three():\n    return 3\n"),
        lambda: _append(root / "retrieval" / "searcher.py", "\n\ndef merged_helper_four():\n    return 4\n"),
    ]
    counts = []
    for edit in edits:
        edit()
        if (root / "zz_added.py").exists():
            os.utime(root / "zz_added.py", (OLD_MTIME + 100, OLD_MTIME + 100))
        data, _stats = index_with_hash(root, store)
        counts.append(len(data.segments))
        assert data.refs[0] == base  # the fresh index's segment is never rewritten
        index_with_hash(root, fresh, reuse=False)
        assert_same_store(store, fresh)
        _assert_segments_alone_give_the_view(store)
    # Four small segments merge into one (1 + 1); the merged one stays small and merges again.
    assert counts == [2, 3, 4, 2, 3, 4, 2, 3]
    names = {p.name for p in segments_dir(store).iterdir()}
    reopened = load_store(store)
    assert {r.name for r in reopened.refs} <= names and not reopened.ordered
    assert len([n for n in names if n.endswith(".cces")]) == len(reopened.refs)  # merged segments removed
    touched = next(f for f in reopened.files if f.path == "python.py")
    assert touched.mtime_ns == (OLD_MTIME + 10) * 10**9  # the refreshed metadata survived the merge


def test_a_merge_carries_no_graph_when_none_of_its_segments_did(tmp_path, small_tail):
    root = sample_corpus(tmp_path, "indexing", "retrieval")
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    small_tail(store)
    for n in range(4):  # edits that keep every import: the fresh segment's graph holds throughout
        _append(root / "indexing" / "bm25.py", f"\n\ndef keeps_imports_{n}():\n    return {n}\n")
        data, _stats = index_with_hash(root, store)
    assert len(data.segments) == 2 and not data.segments[-1].carries_edges()
    fresh = tmp_path / "fresh.cce"
    index_with_hash(root, fresh, reuse=False)
    assert_same_store(store, fresh)


def test_a_store_that_is_small_all_through_is_compacted_to_the_fresh_segment(tmp_path, monkeypatch):
    monkeypatch.setattr(compaction, "MERGE_TAIL_SEGMENTS", 2)
    root = sample_corpus(tmp_path, "indexing", "retrieval")
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    for n in range(2):
        _append(root / "indexing" / "bm25.py", f"\n\ndef small_store_{n}():\n    return {n}\n")
        data, _stats = index_with_hash(root, store)
    assert len(data.segments) == 1 and data.ordered  # three small segments: rewritten as a fresh index
    fresh = tmp_path / "fresh.cce"
    index_with_hash(root, fresh, reuse=False)
    (compacted,) = segments_dir(store).iterdir()
    (reference,) = segments_dir(fresh).iterdir()
    assert compacted.read_bytes() == reference.read_bytes()

"""A re-index extends the previous live view as columns, writing what the dict-based writer wrote (#24)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest
from helpers import index_with_hash

from cce_core.indexing.live_table import LiveTable, serialize_columns
from cce_core.indexing.segment import FileEntry, file_columns
from cce_core.indexing.store import SegmentedStore, load_store, open_segments

OLD = 1_600_000_000


def _write(path: Path, text: str, stamp: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (stamp, stamp))


def _module(name: str, n: int, imports: list[str]) -> str:
    head = "".join(f"import {i}\n" for i in imports)
    return f"{head}\ndef {name}_{n}(x):\n    return x + {n}\n"


def _resolved(store_path: Path) -> SegmentedStore:
    opened = open_segments(store_path, use_view=False)
    return SegmentedStore(opened.meta, opened.segments, opened.refs, store_path, opened.size, opened.ordered)


def _reference_view(store_path: Path) -> bytes:
    """The view the dict-based writer makes from a full resolution of the segments (entries encoded by segment.py)."""
    from cce_core.indexing import live_view

    resolved = _resolved(store_path)
    live = resolved.live_files()
    paths = sorted(live)
    entries = [live[p][1] for p in paths]
    counts = np.asarray([e.chunk_count for e in entries], dtype=np.int64)
    first = np.zeros(len(entries), dtype=np.int64)
    if len(entries) > 1:
        np.cumsum(counts[:-1], out=first[1:])
    # The columns as segment.file_columns encodes FileEntry objects: independent of the table's merge.
    assert serialize_columns(LiveTable.from_live(live), first) == file_columns(entries, first)
    return b"".join(live_view.serialize_view(live, resolved.seg_base, resolved.total_rows))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_views_equal_a_full_resolution_after_random_edits(tmp_path, seed):
    rng = random.Random(seed)
    root = tmp_path / "tree"
    store = tmp_path / "store" / "index.cce"
    names = [f"pkg{d}/mod_{k:02d}.py" for d in range(3) for k in range(12)]
    present: dict[str, int] = {}
    for n in range(80):  # files no step touches, so few steps pass the compaction threshold
        _write(root / "stable" / f"s_{n:02d}.py", _module("s", n, ["os"]), OLD)
    for n, name in enumerate(names[:24]):
        _write(root / name, _module("f", n, ["os"] if n % 3 else []), OLD)
        present[name] = n
    (root / "zz_ünïcode.py").write_text("def ünï():\n    return 1\n", encoding="utf-8")
    os.utime(root / "zz_ünïcode.py", (OLD, OLD))
    index_with_hash(root, store)
    checked = 0
    for step in range(1, 9):
        stamp = OLD + step * 10
        for _ in range(rng.randint(1, 4)):
            action = rng.choice(["edit", "add", "delete", "touch", "imports"])
            name = rng.choice(names)
            if action in ("edit", "add") or (action == "imports" and name in present):
                _write(root / name, _module("g", step * 100 + rng.randint(0, 99),
                                            ["json"] if action == "imports" else []), stamp)
                present[name] = step
            elif action == "delete" and name in present:
                (root / name).unlink()
                del present[name]
            elif action == "touch" and name in present:  # same bytes, new time: a refreshed record only
                os.utime(root / name, (stamp + 1, stamp + 1))
        index_with_hash(root, store)
        opened = load_store(store)
        if opened.ordered:  # compacted: no view; the next step extends the compacted store's table
            continue
        assert opened.view is not None, f"step {step}: a re-index writes a view"
        assert opened.view.path.read_bytes() == _reference_view(store), f"seed {seed} step {step}"
        assert opened.live_files() == _resolved(store).live_files()
        checked += 1
    assert checked >= 4


def test_apply_splices_added_files_and_drops_removed_ones():
    def entry(path: str, first: int, count: int, imports: list[str]) -> FileEntry:
        return FileEntry(path, "s" + path, 10, first, count, imports, 5, 7)

    before = [entry("a.py", 0, 2, ["x"]), entry("c.py", 2, 1, []), entry("e.py", 3, 3, ["y", "z"])]
    table = LiveTable.from_entries(before, [0, 0, 0])

    class Segment:
        def __init__(self) -> None:
            self.rows = 4
            self.removes = ["c.py"]
            self.restat = {"e.py": (9, 11), "gone.py": (1, 1)}
            self.files = [entry("d.py", 0, 1, ["q"]), entry("b.py", 1, 3, []), entry("a.py", 0, 0, [])]

    after = table.apply(Segment(), 1, "test")  # type: ignore[arg-type]
    assert after.path_list == ["a.py", "b.py", "d.py", "e.py"]
    assert after.segment.tolist() == [1, 1, 1, 0]
    assert after.local.tolist() == [0, 1, 0, 3]
    assert after.import_lists() == [[], [], ["q"], ["y", "z"]]
    assert after.entry(3) == FileEntry("e.py", "se.py", 10, 3, 3, ["y", "z"], 9, 11)
    assert after.shas.to_list() == ["sa.py", "sb.py", "sd.py", "se.py"]


def test_a_view_pointing_outside_its_segment_is_reported_as_corrupt():
    from cce_core.foundation.errors import CceError

    table = LiveTable.from_entries([FileEntry("a.py", "s", 1, 2, 3, [], 0, 0)], [0])
    table.check([5], "here", "x")
    with pytest.raises(CceError, match="corrupt"):
        table.check([4], "here", "x")
    with pytest.raises(CceError, match="corrupt"):
        table.check([], "here", "x")


def test_file_spans_and_chunk_lengths_read_from_columns_equal_the_file_entries(tmp_path):
    """What the default ranking reads at start (paths, spans, chunk lengths) equals the entries, on every store kind."""
    from cce_core.indexing.store import StoreData
    from cce_core.retrieval.plain_postings import PlainPostings

    root = tmp_path / "tree"
    store = tmp_path / "store" / "index.cce"
    for n in range(40):
        _write(root / f"m_{n:02d}.py", _module("f", n, []), OLD)
    index_with_hash(root, store)
    kinds = {"ordered": load_store(store)}
    _write(root / "m_05.py", _module("g", 500, []) + _module("h", 501, []), OLD + 5)
    _write(root / "a_new.py", _module("n", 7, []), OLD + 5)
    index_with_hash(root, store)
    kinds["view"] = load_store(store)
    kinds["resolved"] = _resolved(store)
    assert kinds["ordered"].ordered and kinds["view"].view is not None and kinds["resolved"].view is None
    for name, opened in kinds.items():
        files = _resolved(store).files if name != "ordered" else list(opened.files)
        expected = ([f.path for f in files], [f.first_chunk for f in files], [f.chunk_count for f in files])
        fresh = load_store(store) if name == "view" else opened
        assert fresh.file_spans() == expected, name
        assert StoreData.file_spans(opened) == expected, name  # the entry-based form agrees
        lengths = opened.doc_len.tolist()
        assert PlainPostings(load_store(store) if name == "view" else opened).doc_len == lengths, name

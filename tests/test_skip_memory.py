"""A file found not UTF-8 is remembered by metadata and not read again while it is unchanged (#24)."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import index_with_hash

from cce_core.indexing import indexer as indexer_module
from cce_core.indexing.skip_memory import skip_list_path

OLD = 1_600_000_000


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "good.py").write_text("def good():\n    return 1\n", encoding="utf-8")
    (root / "latin1.py").write_bytes(b"# caf\xe9\nx = 1\n")
    (root / "blob.c").write_bytes(b"\xff\xfe\x00int main(){}\n")
    for path in root.iterdir():
        os.utime(path, (OLD, OLD))
    return root


def test_a_file_that_is_not_utf8_is_read_once_while_its_metadata_holds(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    store = tmp_path / "s.cce"
    _data, first = index_with_hash(root, store)
    assert first.skip_counts.get("not_utf8") == 2
    assert skip_list_path(store).is_file()
    reads: list[str] = []
    real = indexer_module.read_listed

    def counting(result, listed):
        reads.append(listed.path)
        return real(result, listed)

    monkeypatch.setattr(indexer_module, "read_listed", counting)
    _data, again = index_with_hash(root, store)
    assert reads == []
    assert (again.skip_counts, again.files_skipped) == (first.skip_counts, first.files_skipped)

    # Changed (new time): read again; fixed to UTF-8: indexed.
    (root / "latin1.py").write_bytes(b"# cafe\nx = 1\n")
    os.utime(root / "latin1.py", (OLD + 5, OLD + 5))
    data, third = index_with_hash(root, store)
    assert reads == ["latin1.py"]
    assert third.skip_counts.get("not_utf8") == 1
    assert "latin1.py" in {f.path for f in data.files}


def test_a_rebuild_reads_every_file_again(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    reads: list[str] = []
    real = indexer_module.read_listed

    def counting(result, listed):
        reads.append(listed.path)
        return real(result, listed)

    monkeypatch.setattr(indexer_module, "read_listed", counting)
    index_with_hash(root, store, reuse=False)
    assert sorted(reads) == ["blob.c", "good.py", "latin1.py"]


def test_a_pair_inside_the_racy_window_is_not_remembered(tmp_path):
    root = _tree(tmp_path)
    store = tmp_path / "s.cce"
    index_with_hash(root, store, clock=lambda: OLD * 1_000_000_000)  # "now" is the files' own time
    assert not skip_list_path(store).exists()

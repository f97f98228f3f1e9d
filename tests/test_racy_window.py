"""The racy-window rule: what a store records never depends on when the indexer ran.

A file modified shortly before it is read cannot be trusted by its size and
time on the next run (a second write in the same clock tick leaves the same
pair). The indexer's clock is injected here, so every case is decided by the
numbers below and never by how loaded the machine is.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cce_core.indexing import indexer as indexer_module
from cce_core.indexing.indexer import index_directory
from cce_core.indexing.store import load_store, segments_dir
from cce_core.plugins.host import default_host

T0 = 1_700_000_000 * 10**9  # every file's modification time, in ns
SECOND = 10**9


def _tree(root: Path) -> Path:
    root.mkdir()
    (root / "auth.py").write_text("def hash_password(pw):\n    return pw + 'salt'\n", encoding="utf-8")
    (root / "pay.py").write_text("import auth\n\ndef pay(amount):\n    return amount\n", encoding="utf-8")
    (root / "notes.md").write_text("# Notes\n\nsome words\n", encoding="utf-8")
    for path in root.iterdir():
        os.utime(path, ns=(T0, T0))
    return root


class _ReadLog:
    """Counts the files a run opens (metadata alone decides the others)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        real = indexer_module.read_listed

        def counting(result, listed):
            self.paths.append(listed.path)
            return real(result, listed)

        monkeypatch.setattr(indexer_module, "read_listed", counting)

    def take(self) -> list[str]:
        out, self.paths = sorted(self.paths), []
        return out


def _index(root: Path, store: Path, now_ns: int, **kwargs):
    host = default_host()
    return index_directory(root, store, host, host.embedder("hash"), clock=lambda: now_ns, **kwargs)


def _store_bytes(store: Path) -> bytes:
    data = load_store(store)
    return store.read_bytes() + b"".join(s.path.read_bytes() for s in data.segments)


def test_a_store_built_inside_the_window_equals_one_built_after_it(tmp_path):
    root = _tree(tmp_path / "t")
    early, late = tmp_path / "early.cce", tmp_path / "late.cce"
    _index(root, early, T0 + SECOND // 2)  # every file is racy when read
    _index(root, late, T0 + 60 * SECOND)  # none is
    assert load_store(early).files == load_store(late).files
    assert _store_bytes(early) == _store_bytes(late)
    assert [f.mtime_ns for f in load_store(early).files] == [T0, T0, T0]  # the real time, always


def test_a_re_index_after_the_window_leaves_the_store_byte_identical(tmp_path, monkeypatch):
    root = _tree(tmp_path / "t")
    store = tmp_path / "s.cce"
    reads = _ReadLog(monkeypatch)
    _index(root, store, T0 + SECOND // 2)
    assert reads.take() == ["auth.py", "notes.md", "pay.py"]
    before = _store_bytes(store)
    segments_before = sorted(p.name for p in segments_dir(store).iterdir())
    # The racy files are read again (hashed, not chunked): same bytes, so nothing is written.
    _data, stats = _index(root, store, T0 + 60 * SECOND)
    assert reads.take() == ["auth.py", "notes.md", "pay.py"]
    assert stats.reused_files == 3
    assert _store_bytes(store) == before
    assert sorted(p.name for p in segments_dir(store).iterdir()) == segments_before
    # Read outside the window, they are trusted by their metadata from then on.
    _index(root, store, T0 + 120 * SECOND)
    assert reads.take() == []
    assert _store_bytes(store) == before


def test_a_same_tick_rewrite_after_a_racy_read_is_still_seen(tmp_path, monkeypatch):
    root = _tree(tmp_path / "t")
    store = tmp_path / "s.cce"
    _index(root, store, T0 + SECOND // 2)
    # Rewritten in the same clock tick: same size, same time, different bytes.
    (root / "auth.py").write_text("def hash_passkey(pk):\n    return pk + 'salt'\n", encoding="utf-8")
    os.utime(root / "auth.py", ns=(T0, T0))
    data, _stats = _index(root, store, T0 + 60 * SECOND)
    assert any("hash_passkey" in c.content for c in data.chunks)
    assert not any("hash_password" in c.content for c in data.chunks)


def test_a_file_read_outside_the_window_is_trusted_at_once(tmp_path, monkeypatch):
    root = _tree(tmp_path / "t")
    store = tmp_path / "s.cce"
    reads = _ReadLog(monkeypatch)
    _index(root, store, T0 + 60 * SECOND)
    reads.take()
    _index(root, store, T0 + 61 * SECOND)
    assert reads.take() == []


def test_only_the_racy_file_is_re_read(tmp_path, monkeypatch):
    root = _tree(tmp_path / "t")
    store = tmp_path / "s.cce"
    reads = _ReadLog(monkeypatch)
    _index(root, store, T0 + 60 * SECOND)
    (root / "pay.py").write_text("import auth\n\ndef pay(amount, tip):\n    return amount + tip\n",
                                 encoding="utf-8")
    os.utime(root / "pay.py", ns=(T0 + 100 * SECOND, T0 + 100 * SECOND))
    reads.take()
    _index(root, store, T0 + 100 * SECOND + SECOND // 4)  # pay.py is read inside its window
    assert reads.take() == ["pay.py"]
    _index(root, store, T0 + 200 * SECOND)
    assert reads.take() == ["pay.py"]  # once more, hashed: still the same bytes
    _index(root, store, T0 + 300 * SECOND)
    assert reads.take() == []


def test_an_unreadable_racy_list_distrusts_every_file(tmp_path, monkeypatch):
    from cce_core.indexing.racy import racy_list_path

    root = _tree(tmp_path / "t")
    store = tmp_path / "s.cce"
    reads = _ReadLog(monkeypatch)
    _index(root, store, T0 + SECOND // 2)
    racy_list_path(store).write_text("{not json", encoding="utf-8")
    reads.take()
    _index(root, store, T0 + 60 * SECOND)
    assert reads.take() == ["auth.py", "notes.md", "pay.py"]
    assert not racy_list_path(store).exists()  # nothing is racy any more: no list is kept

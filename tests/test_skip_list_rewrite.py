"""A re-index rewrites the not-UTF-8 skip list only when it changed (#24).

A one-file re-index of a large tree used to rewrite the whole list (thousands
of entries) every run; an unchanged list is now left as it is.
"""

from __future__ import annotations

import os

from helpers import index_with_hash

from cce_core.indexing.skip_memory import load_skip_list, skip_list_path


def test_an_unchanged_skip_list_is_not_rewritten_and_a_changed_one_is(tmp_path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "good.py").write_text("def good():\n    return 1\n", encoding="utf-8")
    (root / "latin1.py").write_bytes(b"# caf\xe9\nx = 1\n")
    for path in root.iterdir():
        os.utime(path, (1_600_000_000, 1_600_000_000))
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    listed = skip_list_path(store)
    before = os.stat(listed)
    (root / "good.py").write_text("def good():\n    return 2\n", encoding="utf-8")  # an edit, the skips unchanged
    os.utime(root / "good.py", (1_600_000_010, 1_600_000_010))
    index_with_hash(root, store)
    index_with_hash(root, store)  # and nothing changed at all
    after = os.stat(listed)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    (root / "blob.c").write_bytes(b"\xff\xfe\x00int main(){}\n")
    os.utime(root / "blob.c", (1_600_000_000, 1_600_000_000))
    index_with_hash(root, store)
    assert set(load_skip_list(store)) == {"latin1.py", "blob.c"}

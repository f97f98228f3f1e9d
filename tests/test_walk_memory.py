"""The remembered walk (walk_memory.scan_remembered) must return exactly what a full walker.scan returns.

Every scenario changes the tree between two remembered walks and compares the
second one with a fresh full scan: listed files with their metadata, every
skip note in order, the counts and byte totals. Directory times are set
explicitly (distinct, and well outside the racy window) so a change is never
hidden by two writes landing in one clock tick.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cce_core.indexing import walk_memory
from cce_core.indexing.walk_memory import scan_remembered, walk_memory_path
from cce_core.indexing.walker import WalkResult, scan

_BASE_S = time.time() - 10_000  # every time set here lies far outside the racy window


class Tree:
    """A small tree whose directory times move by a whole second on every change."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tick = 0

    def _bump(self, directory: Path) -> None:
        self.tick += 1
        os.utime(directory, (_BASE_S + self.tick, _BASE_S + self.tick))

    def settle(self) -> None:
        """Give every directory and file an old, distinct time."""
        for current, _dirs, files in os.walk(self.root):
            for name in files:
                path = Path(current) / name
                if not path.is_symlink():
                    self.tick += 1
                    os.utime(path, (_BASE_S + self.tick, _BASE_S + self.tick))
        for current, _dirs, _files in sorted(os.walk(self.root), key=lambda t: -len(t[0])):
            self._bump(Path(current))

    def write(self, rel: str, text: str = "x = 1\n", *, new: bool = True) -> None:
        path = self.root / rel
        created = []
        parent = path.parent
        while not parent.exists():
            created.append(parent)
            parent = parent.parent
        path.parent.mkdir(parents=True, exist_ok=True)
        existed = path.exists()
        path.write_text(text, encoding="utf-8")
        self.tick += 1
        os.utime(path, (_BASE_S + self.tick, _BASE_S + self.tick))
        if not existed or new:
            for directory in [path.parent, *created, parent]:
                self._bump(directory)

    def edit(self, rel: str, text: str) -> None:
        """Change a file's content in place: its directory's time does not move."""
        self.write(rel, text, new=False)

    def remove(self, rel: str) -> None:
        path = self.root / rel
        path.unlink()
        self._bump(path.parent)

    def rename(self, old: str, new: str) -> None:
        (self.root / old).rename(self.root / new)
        self._bump((self.root / old).parent)
        self._bump((self.root / new).parent)
        self._bump(self.root / new)


def _facts(result: WalkResult) -> tuple[object, ...]:
    return ([(f.path, f.abs_path, f.size, f.mtime_ns) for f in result.listed], result.skips, result.skip_counts,
            result.skip_bytes, result.skipped, result.sensitive_skipped, result.walk_errors)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    t = Tree(tmp_path / "repo")
    t.write("README.md", "# hi\n")
    t.write("src/app.py", "import os\n")
    t.write("src/util/helpers.py", "def f():\n    return 1\n")
    t.write("src/util/deep/er/most.rb", "puts 1\n")
    t.write("lib/a.ts", "export const a = 1\n")
    t.write("lib/data.jsonl", "{}\n")
    t.write("config/.env", "TOKEN=abc\n")
    t.write("build/out.js", "x\n")
    t.write(".hidden/secret.py", "x\n")
    t.write("logs/.gitignore", "*.log\nskip/\n")
    t.write("logs/keep.txt", "keep\n")
    t.write("logs/drop.log", "drop\n")
    t.write("logs/skip/inner.txt", "inner\n")
    t.write(".gitignore", "ignored_dir/\n*.tmp\n")
    t.write("ignored_dir/x.py", "x\n")
    t.write("notes.tmp", "tmp\n")
    t.settle()
    return t


def _check(tree: Tree, memory: Path, listed_afresh: list[str] | None = None) -> WalkResult:
    """A remembered walk, compared with a full one; ``listed_afresh`` collects the directories it listed."""
    real = os.scandir

    def counting(path: str) -> os.ScandirIterator[str]:  # type: ignore[type-var]
        if listed_afresh is not None:
            listed_afresh.append(str(path))
        return real(path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(walk_memory.os, "scandir", counting)
        remembered = scan_remembered(str(tree.root), True, memory)
    assert _facts(remembered) == _facts(scan(str(tree.root), True))
    return remembered


def test_an_unchanged_tree_is_replayed_without_listing_a_directory(tree: Tree, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    first: list[str] = []
    _check(tree, memory, first)
    assert memory.is_file() and str(tree.root) in first
    tree.edit("src/app.py", "import os, sys\n")  # in place: no directory time moves
    calls: list[str] = []
    result = _check(tree, memory, calls)
    assert calls == []
    assert any(f.path == "src/app.py" and f.size == len("import os, sys\n") for f in result.listed)


def test_only_the_changed_directory_is_listed_again(tree: Tree, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    _check(tree, memory)
    tree.write("src/util/new.py", "y = 2\n")
    calls: list[str] = []
    _check(tree, memory, calls)
    assert calls == [str(tree.root / "src" / "util")]


@pytest.mark.parametrize("change", [
    lambda t: t.write("src/added.py", "z = 3\n"),
    lambda t: t.write("brand/new/dir/file.go", "package main\n"),
    lambda t: t.remove("lib/a.ts"),
    lambda t: t.rename("src/util", "src/tools"),
    lambda t: t.rename("src", "source"),
    lambda t: t.write("config/id_rsa", "key\n"),
    lambda t: t.write("lib/events.jsonl", "{}\n"),
    lambda t: t.edit("lib/a.ts", "x" * (2 * 1024 * 1024 + 1)),  # grows past the limit in place
    lambda t: t.write("logs/other.log", "more\n"),
])
def test_a_change_gives_what_a_full_walk_gives(tree: Tree, tmp_path: Path, change: object) -> None:
    memory = tmp_path / "mem"
    _check(tree, memory)
    change(tree)  # type: ignore[operator]
    _check(tree, memory)
    _check(tree, memory)  # and the memory written after the change holds too


def test_an_edited_gitignore_voids_the_memory(tree: Tree, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    _check(tree, memory)
    tree.edit("logs/.gitignore", "*.txt\n")  # in place: logs/ keeps its time, its verdicts change
    result = _check(tree, memory)
    assert "logs/keep.txt" not in {f.path for f in result.listed}
    assert "logs/drop.log" in {f.path for f in result.listed}


def test_an_edited_root_gitignore_of_the_same_size_voids_the_memory(tree: Tree, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    _check(tree, memory)
    tree.edit(".gitignore", "ignored_dir/\n*.xyz\n")  # same length as before
    result = _check(tree, memory)
    assert "notes.tmp" in {f.path for f in result.listed}


def test_a_new_gitignore_above_remembered_directories_applies_to_them(tree: Tree, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    _check(tree, memory)
    tree.write("src/.gitignore", "deep/\n*.py\n")
    result = _check(tree, memory)
    assert [f.path for f in result.listed if f.path.startswith("src/")] == ["src/.gitignore"]


def test_a_removed_gitignore_brings_its_files_back(tree: Tree, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    _check(tree, memory)
    tree.remove("logs/.gitignore")
    result = _check(tree, memory)
    assert {"logs/drop.log", "logs/skip/inner.txt"} <= {f.path for f in result.listed}


def test_symlinks_are_noted_not_followed(tree: Tree, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    _check(tree, memory)
    os.symlink(tree.root / "src", tree.root / "lib" / "src_link")
    os.symlink(tree.root / "README.md", tree.root / "lib" / "readme_link.md")
    tree._bump(tree.root / "lib")
    _check(tree, memory)
    _check(tree, memory)


def test_a_file_replaced_by_a_symlink_in_place(tree: Tree, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    _check(tree, memory)
    (tree.root / "lib" / "a.ts").unlink()
    os.symlink(tree.root / "README.md", tree.root / "lib" / "a.ts")
    tree._bump(tree.root / "lib")
    _check(tree, memory)


def test_an_unreadable_directory_is_noted_every_time(tree: Tree, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    memory = tmp_path / "mem"
    _check(tree, memory)
    locked = str(tree.root / "src" / "util")
    real = os.scandir

    def denying(path: str) -> os.ScandirIterator[str]:  # type: ignore[type-var]
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", denying)  # for both walks: the walker and the memory use os.scandir
    tree._bump(tree.root / "src" / "util")  # a chmod moves the directory's ctime
    first = _check(tree, memory)
    assert first.walk_errors == 1
    second = _check(tree, memory)
    assert second.walk_errors == 1


def test_a_name_not_utf8_is_never_remembered(tree: Tree, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    odd = os.fsdecode(b"bad\xff.py")
    (tree.root / "lib" / odd).write_text("x\n", encoding="utf-8")
    tree._bump(tree.root / "lib")
    _check(tree, memory)
    _check(tree, memory)


def test_a_directory_changed_within_the_racy_window_is_listed_again(tree: Tree, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    lib = tree.root / "lib"
    changed_at = os.stat(lib).st_mtime_ns
    scan_remembered(str(tree.root), True, memory, clock=changed_at + 1_000_000)  # lib/ looks just changed
    calls: list[str] = []
    _check(tree, memory, calls)
    assert str(lib) in calls and str(tree.root / "src" / "util") not in calls


@pytest.mark.parametrize("damage", [b"", b"not json", b'{"format": "other"}', b"[1, 2]"])
def test_a_damaged_memory_means_a_full_walk(tree: Tree, tmp_path: Path, damage: bytes) -> None:
    memory = tmp_path / "mem"
    memory.write_bytes(damage)
    _check(tree, memory)


def test_a_memory_of_another_root_or_setting_is_not_used(tree: Tree, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    _check(tree, memory)
    assert _facts(scan_remembered(str(tree.root), False, memory)) == _facts(scan(str(tree.root), False))
    calls: list[str] = []
    _check(tree, memory, calls)
    assert calls  # the memory now describes protect_secrets=False: listed afresh


def test_the_memory_lives_beside_the_store() -> None:
    assert walk_memory_path(Path("/x/.cce/index.cce")) == Path("/x/.cce/.index.cce.walk")


def _store_facts(store: Path) -> tuple[object, ...]:
    from cce_core.indexing.store import load_store

    data = load_store(store)
    files = sorted((f.path, f.sha256, f.size, f.mtime_ns) for f in data.files)
    chunks = sorted((c.file_path, c.start_line, c.end_line, c.content) for c in data.chunks)
    return files, chunks, sorted(data.edges)


def test_a_reindex_through_the_memory_stores_what_a_fresh_index_stores(tree: Tree, tmp_path: Path) -> None:
    from cce_core.indexing.indexer import index_directory
    from cce_core.plugins.host import default_host

    host = default_host()
    store = tmp_path / "inc" / "index.cce"
    index_directory(tree.root, store, host, host.embedder("hash"))
    assert walk_memory_path(store).is_file()
    tree.edit("src/app.py", "import os\nimport json\n")
    tree.write("pkg/new/mod.py", "def g():\n    return 2\n")
    tree.remove("lib/a.ts")
    tree.rename("src/util", "src/tools")
    tree.edit("logs/.gitignore", "*.txt\n")
    for rel in ("src/app.py", "pkg/new/mod.py", "logs/.gitignore"):
        tree.tick += 1
        os.utime(tree.root / rel, (_BASE_S + tree.tick, _BASE_S + tree.tick))
    _data, stats = index_directory(tree.root, store, host, host.embedder("hash"))
    fresh = tmp_path / "fresh" / "index.cce"
    _data, fresh_stats = index_directory(tree.root, fresh, host, host.embedder("hash"))
    assert _store_facts(store) == _store_facts(fresh)
    assert (stats.skip_counts, stats.files_skipped) == (fresh_stats.skip_counts, fresh_stats.files_skipped)


@pytest.mark.parametrize("tamper", [
    lambda listing: listing[:4],  # a field missing
    lambda listing: [*listing[:3], listing[3] + "k", listing[4]],  # one letter too many
    lambda listing: [*listing[:3], "z" * len(listing[3]), listing[4]],  # an unknown verdict
    lambda listing: [*listing[:3], 7, listing[4]],  # not a string
])
def test_a_malformed_listing_means_a_full_walk(tree: Tree, tmp_path: Path, tamper: object) -> None:
    import json

    memory = tmp_path / "mem"
    _check(tree, memory)
    body = json.loads(memory.read_text(encoding="utf-8"))
    body["dirs"]["lib"] = tamper(body["dirs"]["lib"])  # type: ignore[operator]
    memory.write_text(json.dumps(body), encoding="utf-8")
    _check(tree, memory)
    _check(tree, memory)  # the memory written by that full walk holds


def test_a_memory_written_under_other_walk_rules_is_not_replayed(tree: Tree, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    memory = tmp_path / "mem"
    _check(tree, memory)
    # An upgrade whose rules differ (say, a name newly called sensitive): the old verdicts must not be replayed.
    monkeypatch.setattr(walk_memory, "rules_fingerprint", lambda: "other rules")
    calls: list[str] = []
    _check(tree, memory, calls)
    assert str(tree.root) in calls

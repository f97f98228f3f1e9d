"""The live table answers path lookups without decoding its paths, and answers them exactly as the path map (#24).

A one-file re-index of a 75,000-file tree asks the previous live table for the
row of every listed path and of a few changed ones; it now does so through a
byte comparison (``LiveTable.rows_of``) and bisection (``LiveTable.find``)
instead of a dict of 75,000 decoded paths. These tests hold the shortcuts to
the map's answers, including the cases where the shortcut must give up.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from cce_core.indexing.live_table import LiveTable, Strings
from cce_core.indexing.segment import FileEntry

PATHS = sorted(["README.md", "a/b.py", "a/c.py", "docs/é.md", "docs/日本.md", "src/ß/x.rb", "src/z.rb", "zz/ü.ts"])


def _table(paths: list[str]) -> LiveTable:
    entries = [FileEntry(p, f"{i:064x}", 10, 0, 1, [], 100 + i, 1_600_000_000 + i) for i, p in enumerate(paths)]
    return LiveTable.from_entries(entries, [0] * len(entries))


def _by_map(table: LiveTable, paths: list[str]) -> list[int]:
    return [table.position.get(p, -1) for p in paths]


def test_find_by_bisection_agrees_with_the_path_map() -> None:
    table = _table(PATHS)
    probes = [*PATHS, "", "a", "a/b.pyc", "docs/e.md", "docs/日本.mdx", "zzz", "src/ß"]
    found = [table.find(p) for p in probes]  # before the map exists: bisection over the bytes
    assert "position" not in table.__dict__
    assert found == _by_map(_table(PATHS), probes)


def test_bisect_orders_as_python_strings() -> None:
    rng = random.Random(7)
    alphabet = ["a", "b", "z", "é", "ß", "日", "/", "."]
    paths = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(300)})
    strings = Strings.of(paths)
    for _ in range(300):
        probe = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
        assert strings.bisect(probe) == sum(p < probe for p in paths)


@pytest.mark.parametrize("listed, absent", [
    (PATHS, ()),  # nothing moved: the identity
    (sorted([*PATHS, "a/new.py"]), {"a/new.py"}),  # a left-out file the guess names
    (sorted([*PATHS, "a/new.py"]), ()),  # a new file the guess does not name: the map answers
    (sorted([*PATHS, "a/new.py"]), {"a/new.py", "src/z.rb"}),  # a wrong guess: still the right rows
    ([p for p in PATHS if p != "docs/é.md"], ()),  # a deleted file
    (list(reversed(PATHS)), ()),  # not in the table's order
    ([], ()),
])
def test_rows_of_agrees_with_the_path_map(listed: list[str], absent: set[str]) -> None:
    table = _table(PATHS)
    rows = table.rows_of(listed, absent)
    assert rows.dtype == np.int64
    assert rows.tolist() == _by_map(_table(PATHS), listed)


def test_equal_bytes_cut_elsewhere_are_not_equal() -> None:
    strings = Strings.of(["ab", "c"])
    assert strings.equals(["ab", "c"])
    assert not strings.equals(["a", "bc"])
    assert not Strings.of(["é", "x"]).equals(["éx", ""])
    assert not strings.equals(["ab"])


def test_check_utf8_finds_a_string_cut_inside_a_character() -> None:
    good = Strings.of(["ab", "é", "日本"])
    good.check_utf8()
    Strings.of(["plain", "ascii"]).check_utf8()
    blob = "é日".encode()  # 2 + 3 bytes
    with pytest.raises(UnicodeDecodeError):
        Strings(blob, np.array([0, 1, len(blob)], dtype=np.int64)).check_utf8()  # cuts the é in two
    with pytest.raises(UnicodeDecodeError):
        Strings(b"ok\xff", np.array([0, 2, 3], dtype=np.int64)).check_utf8()
    # What the old full decode said about the same bytes.
    for ptr in ([0, 1, 5], [0, 2, 3], [0, 2, 5], [0, 4, 5]):
        strings = Strings(blob, np.array(ptr, dtype=np.int64))
        try:
            strings.to_list()
            decodes = True
        except UnicodeDecodeError:
            decodes = False
        if decodes:
            strings.check_utf8()
        else:
            with pytest.raises(UnicodeDecodeError):
                strings.check_utf8()


def test_many_lookups_switch_to_the_path_map_with_the_same_answers() -> None:
    paths = sorted(f"d{i // 50}/f{i:05d}.py" for i in range(2000))
    table = _table(paths)
    probes = [*paths[::3], "nope", "d0/f00000.pyc"]
    assert [table.find(p) for p in probes] == _by_map(_table(paths), probes)
    assert "position" in table.__dict__  # built once the bisections stopped paying


"""The walker's skip reasons, and the later reference fixes adopted for walker, workspace, memory and init.

In-process and fast: one :class:`SkipReason` per way an entry is left out,
per-reason counts and bytes beside the family totals, traversal errors counted
rather than dropped (the reference's #133), backslashes kept in file names
(#105), collision-free member names (#131), memory appends that survive a torn
last line (#102), and CLAUDE.md marker handling that never guesses (#99).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cce_core.agents.init_files import BEGIN_MARKER, END_MARKER, merge_claude_md
from cce_core.agents.memory import append_line, load_entries, record
from cce_core.foundation.errors import CceError
from cce_core.foundation.nesting import MAX_YAML_DEPTH, yaml_too_deep
from cce_core.indexing.walker import SkipReason, walk
from cce_core.workspace.manifest import detect_members, member_path_problem


def put(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def test_every_skip_has_a_reason_and_the_family_totals_are_unchanged(tmp_path: Path) -> None:
    put(tmp_path / "keep.py", "x = 1\n")
    put(tmp_path / "events.jsonl", "{}\n")
    put(tmp_path / "big.txt", b"a" * (2 * 1024 * 1024 + 1))
    put(tmp_path / "latin1.txt", b"caf\xe9\n")
    put(tmp_path / ".env", "SECRET=1\n")
    put(tmp_path / "ignored.log", "log\n")
    put(tmp_path / ".gitignore", "*.log\n")
    put(tmp_path / "node_modules" / "dep.js", "x\n")
    put(Path(os.fsdecode(bytes(tmp_path) + b"/n\xffame.py")), "y = 2\n")
    os.symlink(tmp_path / "keep.py", tmp_path / "link.py")
    result = walk(str(tmp_path))
    assert [f.path for f in result.files] == [".gitignore", "keep.py"]
    assert result.skip_counts == {
        SkipReason.JSONL: 1, SkipReason.TOO_LARGE: 1, SkipReason.NOT_UTF8: 1, SkipReason.SENSITIVE: 1,
        SkipReason.GITIGNORED: 1, SkipReason.EXCLUDED_DIR: 1, SkipReason.NAME_NOT_UTF8: 1, SkipReason.SYMLINK: 1,
    }
    assert result.skip_bytes[SkipReason.TOO_LARGE] == 2 * 1024 * 1024 + 1
    assert result.skip_bytes[SkipReason.NAME_NOT_UTF8] == 6
    # The family's totals: skipped = jsonl + too large + not UTF-8 (+ unnameable), sensitive on its own.
    assert (result.skipped, result.sensitive_skipped, result.walk_errors) == (4, 1, 0)
    assert sum(n for reason, n in result.counted_reasons() if reason.tally == "skipped") == result.skipped
    shown = {s.path for s in result.skips if s.reason is SkipReason.NAME_NOT_UTF8}
    assert shown == {"n\\xffame.py"}
    assert all(reason.label for reason in SkipReason)


def test_a_directory_that_cannot_be_listed_is_a_walk_error_not_a_silent_loss(tmp_path: Path) -> None:
    put(tmp_path / "top.py", "top = 1\n")
    put(tmp_path / "locked" / "inner.py", "inner = 2\n")
    (tmp_path / "locked").chmod(0)
    try:
        privileged = os.access(tmp_path / "locked", os.R_OK)
        result = walk(str(tmp_path))
    finally:
        (tmp_path / "locked").chmod(0o755)
    if privileged:
        pytest.skip("running as root: permissions cannot hide a directory (the deep-tree test covers walk errors)")
    assert [f.path for f in result.files] == ["top.py"]
    assert result.walk_errors == 1 and result.skip_counts == {SkipReason.DIR_UNREADABLE: 1}


def test_a_backslash_in_a_file_name_stays_a_distinct_file(tmp_path: Path) -> None:
    put(tmp_path / "a" / "b.py", "nested = 1\n")
    put(tmp_path / "a\\b.py", "backslash = 2\n")
    assert [f.path for f in walk(str(tmp_path)).files] == ["a/b.py", "a\\b.py"]


def test_a_deep_tree_does_not_recurse(tmp_path: Path) -> None:
    from test_bad_inputs import remove_deep

    path = str(tmp_path / "top")
    os.mkdir(path)
    for _ in range(1500):  # well past the recursion limit, still inside PATH_MAX (made one level at a time:
        path += "/d"        # pathlib's and os.makedirs' own parent creation recurses)
        os.mkdir(path)
    Path(path, "leaf.py").write_text("leaf = 1\n", encoding="utf-8")
    try:
        result = walk(str(tmp_path))
    finally:
        remove_deep(tmp_path / "top")
    assert [f.path.count("/") for f in result.files] == [1501]


def test_minted_member_names_never_collide_with_a_real_directory(tmp_path: Path) -> None:
    for sub, pkg in (("a/widget", "widget-a"), ("b/widget", "widget-b"), ("widget-2", "widget-two")):
        put(tmp_path / sub / "package.json", f'{{"name": "{pkg}"}}')
    members = detect_members(tmp_path)
    assert [(m.name, m.path) for m in members] == [("widget", "a/widget"), ("widget-3", "b/widget"),
                                                   ("widget-2", "widget-2")]


def test_member_detection_never_follows_a_link_out_of_the_root(tmp_path: Path) -> None:
    put(tmp_path / "outside" / "pkg" / "package.json", '{"name": "outside"}')
    put(tmp_path / "ws" / "api" / "package.json", '{"name": "api"}')
    (tmp_path / "ws" / "ext").symlink_to(tmp_path / "outside")
    assert [m.path for m in detect_members(tmp_path / "ws")] == ["api"]


@pytest.mark.parametrize(("rel", "fragment"), [
    ("", "empty"), ("/etc", "absolute"), ("\\\\server\\share", "absolute"), ("C:\\x", "absolute"),
    ("../x", "climbs out"), ("a/../../x", "climbs out"), ("a\\..\\..\\x", "climbs out"),
])
def test_member_paths_that_leave_the_root_are_named(tmp_path: Path, rel: str, fragment: str) -> None:
    problem = member_path_problem(tmp_path, rel)
    assert problem is not None and fragment in problem


def test_member_paths_inside_the_root_pass(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "inner").symlink_to(tmp_path / "a")
    assert [member_path_problem(tmp_path, rel) for rel in (".", "a/b", "inner", "a/./b", "missing")] == [None] * 5


def test_yaml_depth_prescan(tmp_path: Path) -> None:
    assert yaml_too_deep("a: " + "[" * 100_000 + "]" * 100_000)
    assert yaml_too_deep("a: " + "{b: " * (MAX_YAML_DEPTH + 1) + "}" * (MAX_YAML_DEPTH + 1))
    assert not yaml_too_deep("a: " + "[" * (MAX_YAML_DEPTH - 1) + "]" * (MAX_YAML_DEPTH - 1))
    assert not yaml_too_deep("a: [unclosed")  # not YAML: the reader's own error says so
    assert not yaml_too_deep("version: 1\nmembers:\n  - name: a\n    path: a\n")


def test_memory_append_heals_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / ".cce" / "memory.jsonl"
    record(path, "prior validated decision one", clock=lambda: "2026-07-05T00:00:00Z")
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # the newline lost (a crash, an editor)
    record(path, "new validated decision two", clock=lambda: "2026-07-05T00:00:00Z")
    raw = path.read_bytes()
    assert raw.count(b"\n") == 2 and raw.endswith(b"}\n")
    assert sorted(e.text for e in load_entries([path])) == ["new validated decision two",
                                                          "prior validated decision one"]


def test_memory_append_is_one_line_per_entry(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    for n in range(3):
        append_line(path, b'{"n":%d}' % n)
    assert path.read_bytes() == b'{"n":0}\n{"n":1}\n{"n":2}\n'
    big = b'{"t":"' + b"x" * 1_000_000 + b'"}'  # larger than any buffer: still one write
    append_line(path, big)
    assert path.read_bytes().endswith(b"\n" + big + b"\n")


def test_a_deep_memory_line_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text("[" * 100_000 + "\n", encoding="utf-8")
    record(path, "still recorded", clock=lambda: "2026-07-05T00:00:00Z")
    assert [e.text for e in load_entries([path])] == ["still recorded"]


@pytest.mark.parametrize("text", [
    f"# Mine\n{BEGIN_MARKER}\na\n{BEGIN_MARKER}\nb\n{END_MARKER}\n",  # two BEGIN lines
    f"# Mine\n{END_MARKER}\nmine\n{BEGIN_MARKER}\n",  # END before BEGIN
    f"# Mine\n{BEGIN_MARKER}\nmine, to the end of the file\n",  # BEGIN alone
    f"# Mine\n{END_MARKER}\n",  # END alone
])
def test_claude_md_with_unclear_markers_is_refused(text: str) -> None:
    with pytest.raises(CceError, match="refusing to modify it"):
        merge_claude_md(text, f"{BEGIN_MARKER}\nnew\n{END_MARKER}\n", "CLAUDE.md")


def test_claude_md_markers_count_only_on_their_own_line() -> None:
    text = f"# Mine\nWe use `{BEGIN_MARKER}` blocks.\n"
    merged = merge_claude_md(text, f"{BEGIN_MARKER}\nnew\n{END_MARKER}\n")
    assert merged == text + f"\n{BEGIN_MARKER}\nnew\n{END_MARKER}\n"


@pytest.mark.parametrize("repo_id", ["", ".", "..", "/abs", "a/../b", "..\\x", "C:\\x", "a/b"])
def test_repo_ids_from_remote_data_cannot_name_a_path(repo_id: str) -> None:
    from cce_core.sync.identity import valid_repo_id

    assert not valid_repo_id(repo_id)

"""The ``sync.*`` config keys: the canonical bytes, YAML 1.2 typing, load precedence, and the in-place save."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cce_core.foundation.config import parse_config
from cce_core.foundation.errors import CceError
from cce_core.sync.settings import (
    KnowledgeSyncSettings,
    Retention,
    SyncSettings,
    config_scalar,
    global_config_path,
    load_knowledge_sync_settings,
    load_sync_settings,
    parse_knowledge_sync_settings,
    parse_sync_settings,
    replace_sync_block,
    save_sync_settings,
    sync_yaml,
)

DEFAULT_BLOCK = "sync:\n  remote: null\n  lfs: true\n  repo_id: null\n  auto_pull: false\n  retention: all\n"


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty CCE_HOME, so no real global config can leak in; returns it."""
    home = tmp_path / "cce-home"
    home.mkdir()
    monkeypatch.setenv("CCE_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    return home


def project(tmp_path: Path, text: str | bytes | None = None) -> Path:
    root = tmp_path / "proj"
    (root / ".cce").mkdir(parents=True)
    if text is not None:
        data = text.encode("utf-8") if isinstance(text, str) else text
        (root / ".cce" / "config").write_bytes(data)
    return root


# --------------------------------------------------------------------------- canonical bytes


def test_default_block_bytes():
    assert sync_yaml(SyncSettings()) == DEFAULT_BLOCK


def test_full_block_bytes():
    settings = SyncSettings(remote="file:///tmp/remote.git", lfs=False, repo_id="example.com__acme__demo",
                            ref="master", auto_pull=True, retention=Retention(10))
    assert sync_yaml(settings) == (
        "sync:\n  remote: file:///tmp/remote.git\n  lfs: false\n  repo_id: example.com__acme__demo\n"
        "  ref: master\n  auto_pull: true\n  retention: keep-last-10\n")


def test_ref_is_written_only_when_set():
    assert "ref:" not in sync_yaml(SyncSettings(remote="r"))
    text = sync_yaml(SyncSettings(ref="master"))
    assert "  repo_id: null\n  ref: master\n  auto_pull: false\n" in text
    assert parse_sync_settings(text).ref == "master"
    assert parse_sync_settings('sync:\n  ref: ""\n').ref is None


@pytest.mark.parametrize(("value", "written"), [
    ("file:///tmp/r.git", "file:///tmp/r.git"),
    ("https://example.com/a_b-c/d.git", "https://example.com/a_b-c/d.git"),
    (".hidden", ".hidden"),  # unlike workspace.yml, a leading dot stays bare
    ("git@github.com:acme/x.git", '"git@github.com:acme/x.git"'),
    ("-x", '"-x"'),
    ("", '""'),
    ("a b", '"a b"'),
    ('a"b\\c', '"a\\"b\\\\c"'),
    ("ü", '"ü"'),
])
def test_scalar_quoting(value: str, written: str):
    assert config_scalar(value) == written


@pytest.mark.parametrize("settings", [
    SyncSettings(),
    SyncSettings(remote="file:///tmp/remote.git", lfs=False, repo_id="example.com__acme__demo",
                 auto_pull=True, retention=Retention(10)),
    SyncSettings(remote='C:\\odd "remote"', repo_id="a b", ref="release/2.x", retention=Retention(0)),
    SyncSettings(remote="git@github.com:acme/billing.git", ref="-dash"),
])
def test_yaml_round_trip(settings: SyncSettings):
    assert parse_sync_settings(sync_yaml(settings)) == settings


@pytest.mark.parametrize(("text", "keep_last"), [
    ("all", None), ("keep-last-5", 5), ("nonsense", None), ("keep-last-", None), ("keep-last-+3", 3),
    ("keep-last--1", None), ("keep-last-007", 7), (" keep-last-2\t", 2), ("keep-last-2 ", 2),
    ("keep-last-18446744073709551615", 18446744073709551615), ("keep-last-18446744073709551616", None),
    ("keep-last-٣", None), ("KEEP-LAST-3", None),
])
def test_retention_grammar(text: str, keep_last: int | None):
    assert Retention.parse(text) == Retention(keep_last)


def test_retention_text():
    assert Retention().text == "all"
    assert Retention(3).text == "keep-last-3"
    with pytest.raises(ValueError):
        Retention(-1)


# --------------------------------------------------------------------------- reading


def test_missing_block_and_empty_file_mean_defaults():
    for text in ("other: 1\n", "", "# nothing\n", "---\n", "sync:\n", "sync: ~\n", "sync: null\n"):
        assert parse_sync_settings(text) == SyncSettings(), text


def test_yaml_1_2_typing():
    settings = parse_sync_settings("sync:\n  remote: 123\n  repo_id: true\n  lfs: FALSE\n  auto_pull: True\n"
                                   "  retention: 5\n")
    assert settings == SyncSettings(remote="123", repo_id="true", lfs=False, auto_pull=True)
    assert parse_sync_settings("sync:\n  remote: ~\n  repo_id: ''\n  lfs:\n").remote is None
    assert parse_sync_settings("sync:\n  remote: 'null'\n").remote == "null"


def test_unknown_keys_and_other_sections_are_never_typed():
    text = ("memory:\n  enabled: yes\nknowledge: [1, 2]\nsync:\n  remote: r\n  future_key: {a: [1]}\n"
            "  lfs: false\n")
    assert parse_sync_settings(text) == SyncSettings(remote="r", lfs=False)


@pytest.mark.parametrize("text", [
    "sync:\n  lfs: yes\n",  # a string in YAML 1.2
    "sync:\n  lfs: 'true'\n",
    "sync:\n  auto_pull: on\n",
    "sync:\n  remote: [a]\n",
    "sync:\n  retention: {n: 1}\n",
    "sync: 5\n",
    "sync: ''\n",
    "sync:\n  remote: a\n  remote: b\n",
    "sync: {}\nsync: {}\n",
    "sync:\n\tremote: x\n",  # a tab indent is not YAML
    "a: 1\n---\nb: 2\n",
    "- a\n- b\n",
    "just text\n",
    "a: [\n",
])
def test_malformed_text_is_one_clear_error(text: str):
    with pytest.raises(CceError, match=r"^invalid sync config: "):
        parse_sync_settings(text)


def test_deep_nesting_is_an_error_not_a_crash():
    deep = "other: " + "[" * 20000 + "]" * 20000 + "\n"
    with pytest.raises(CceError, match="nested too deeply"):
        parse_sync_settings(deep)
    deep_block = "other:\n" + "".join("  " * i + "k:\n" for i in range(1, 3000))
    with pytest.raises(CceError, match="nested too deeply"):
        parse_sync_settings(deep_block)


def test_knowledge_sync_block():
    text = ("knowledge:\n  enabled: false\n  min_score: 0.5\n  sync:\n    corpus_id: internal-tickets\n"
            "    remote: file:///tmp/k.git\n    retention: keep-last-10\nsync:\n  lfs: yes\n")
    assert parse_knowledge_sync_settings(text) == KnowledgeSyncSettings(
        corpus_id="internal-tickets", remote="file:///tmp/k.git", retention=Retention(10))
    # The same text still configures the runtime knowledge keys.
    assert parse_config(text).knowledge_enabled is False
    assert parse_config(text).knowledge_min_score == 0.5


@pytest.mark.parametrize("text", [
    "sync:\n  lfs: true\n", "knowledge:\n  enabled: false\n", "not: yaml: [",
    "knowledge:\n  sync:\n    corpus_id: ''\n", "knowledge:\n  sync:\n    corpus_id: [a]\n",
    "knowledge: 3\n", "a: " + "[" * 20000,
])
def test_knowledge_sync_is_forgiving(text: str):
    assert parse_knowledge_sync_settings(text) == KnowledgeSyncSettings()


def test_knowledge_sync_reads_the_project_file_only(tmp_path: Path, homes: Path):
    (homes / "config.yml").write_text("knowledge:\n  sync:\n    corpus_id: global\n", encoding="utf-8")
    assert load_knowledge_sync_settings(project(tmp_path)) == KnowledgeSyncSettings()
    root = project(tmp_path / "b", "knowledge:\n  sync:\n    corpus_id: c1\n")
    assert load_knowledge_sync_settings(root).corpus_id == "c1"


# --------------------------------------------------------------------------- load precedence


def test_no_config_anywhere_is_all_local(tmp_path: Path, homes: Path):
    assert load_sync_settings(project(tmp_path)) == SyncSettings()


def test_global_config_is_the_fallback(tmp_path: Path, homes: Path):
    (homes / "config.yml").write_text("sync:\n  remote: file:///global.git\n  lfs: false\n", encoding="utf-8")
    assert load_sync_settings(project(tmp_path)) == SyncSettings(remote="file:///global.git", lfs=False)


def test_project_wins_and_inherits_only_the_global_remote(tmp_path: Path, homes: Path):
    (homes / "config.yml").write_text("sync:\n  remote: file:///global.git\n  lfs: false\n  auto_pull: true\n",
                                      encoding="utf-8")
    root = project(tmp_path, "sync:\n  repo_id: mine\n")
    assert load_sync_settings(root) == SyncSettings(remote="file:///global.git", repo_id="mine")
    root2 = project(tmp_path / "two", "sync:\n  remote: file:///project.git\n")
    assert load_sync_settings(root2).remote == "file:///project.git"
    root3 = project(tmp_path / "three", "memory:\n  enabled: false\n")
    assert load_sync_settings(root3) == SyncSettings(remote="file:///global.git")


@pytest.mark.parametrize(("text", "hint"), [
    ("sync:\n\tremote: file:///project.git\n", "fix the file"),
    (b"sync:\n  remote: \xff\n", "fix the file"),
    ("sync:\n  remote: file:///project.git\n  lfs: yes\n", "run `cce sync init` to rewrite its sync block"),
])
def test_a_malformed_project_file_never_falls_back_to_the_global_remote(tmp_path: Path, homes: Path,
                                                                        text: str | bytes, hint: str):
    (homes / "config.yml").write_text("sync:\n  remote: file:///global/other-cache.git\n", encoding="utf-8")
    root = project(tmp_path, text)
    warnings: list[str] = []
    assert load_sync_settings(root, warn=warnings.append) == SyncSettings()
    assert len(warnings) == 1
    assert warnings[0].startswith(f"project sync config {root / '.cce' / 'config'} is malformed and was ignored")
    assert "staying all-local" in warnings[0] and hint in warnings[0]


def test_the_default_warning_goes_to_stderr(tmp_path: Path, homes: Path, capsys: pytest.CaptureFixture[str]):
    load_sync_settings(project(tmp_path, "sync: [\n"))
    assert capsys.readouterr().err.startswith("warning: project sync config ")


def test_a_malformed_global_file_counts_as_absent(tmp_path: Path, homes: Path):
    (homes / "config.yml").write_text("sync:\n  lfs: yes\n  remote: file:///g.git\n", encoding="utf-8")
    warnings: list[str] = []
    assert load_sync_settings(project(tmp_path), warn=warnings.append) == SyncSettings()
    assert warnings == []


def test_global_path_follows_cce_home_then_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CCE_HOME", str(tmp_path / "ch"))
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert global_config_path() == tmp_path / "ch" / "config.yml"
    monkeypatch.setenv("CCE_HOME", "")  # empty is unset, never a path relative to the cwd
    assert global_config_path() == tmp_path / "h" / ".cce" / "config.yml"
    monkeypatch.delenv("CCE_HOME")
    (tmp_path / "h" / ".cce").mkdir(parents=True)
    (tmp_path / "h" / ".cce" / "config.yml").write_text("sync:\n  remote: file:///home.git\n", encoding="utf-8")
    assert load_sync_settings(project(tmp_path)).remote == "file:///home.git"
    monkeypatch.delenv("HOME")
    assert global_config_path() is None


# --------------------------------------------------------------------------- saving


def config_bytes(root: Path) -> bytes:
    return (root / ".cce" / "config").read_bytes()


def test_save_into_a_new_project_writes_the_canonical_bytes(tmp_path: Path, homes: Path):
    root = tmp_path / "fresh"
    root.mkdir()
    settings = SyncSettings(remote="file:///tmp/r.git")
    path = save_sync_settings(root, settings)
    assert path == root / ".cce" / "config"
    assert config_bytes(root) == sync_yaml(settings).encode()
    assert load_sync_settings(root) == settings


def test_a_file_with_only_a_sync_block_becomes_the_reference_bytes(tmp_path: Path, homes: Path):
    root = project(tmp_path, "sync:\n  remote: old\n  lfs: false\n  ref: dev\n  weird: [1]\n")
    settings = SyncSettings(remote="file:///new.git", repo_id="example.com__acme__demo")
    save_sync_settings(root, settings)
    assert config_bytes(root) == sync_yaml(settings).encode()


def test_other_top_level_keys_keep_their_exact_text(tmp_path: Path, homes: Path):
    head = ("# my project settings\nretrieval:\n  detail: full   # wide\n\nknowledge:\n  enabled: false\n"
            "  sync:\n    corpus_id: c1\n\n# sync below\n")
    tail = "\n# memory stays off\nmemory:\n  enabled: false\noutput: {level: lite}\n"
    root = project(tmp_path, head + "sync:\n  remote: old\n  lfs: yes\n  # a note\n" + tail)
    settings = SyncSettings(remote="file:///new.git", lfs=False, ref="trunk")
    save_sync_settings(root, settings)
    assert config_bytes(root) == (head + sync_yaml(settings) + tail).encode()
    assert load_sync_settings(root) == settings
    runtime = parse_config(config_bytes(root).decode())
    assert (runtime.retrieval_detail, runtime.knowledge_enabled, runtime.memory_enabled, runtime.output_level) == \
        ("full", False, False, "lite")
    assert load_knowledge_sync_settings(root).corpus_id == "c1"


def test_a_missing_sync_block_is_added_after_the_last_entry(tmp_path: Path, homes: Path):
    root = project(tmp_path, "memory:\n  enabled: false\n\n# trailing comment\n")
    save_sync_settings(root, SyncSettings(remote="r"))
    assert config_bytes(root) == ("memory:\n  enabled: false\n" + sync_yaml(SyncSettings(remote="r"))
                                  + "\n# trailing comment\n").encode()
    root2 = project(tmp_path / "two", "memory:\n  enabled: false")  # no final line break
    save_sync_settings(root2, SyncSettings())
    assert config_bytes(root2) == ("memory:\n  enabled: false\n" + DEFAULT_BLOCK).encode()


def test_a_comment_only_file_keeps_its_comments(tmp_path: Path, homes: Path):
    root = project(tmp_path, "# hello")
    save_sync_settings(root, SyncSettings())
    assert config_bytes(root) == ("# hello\n" + DEFAULT_BLOCK).encode()


def test_block_scalars_comments_and_document_markers_around_the_block(tmp_path: Path, homes: Path):
    text = ("---\na: 1\nsync: {remote: x}  # inline\nb: |\n  # kept content\n\n  y\n\n# end\n...\n")
    root = project(tmp_path, text)
    save_sync_settings(root, SyncSettings(remote="r"))
    assert config_bytes(root) == ("---\na: 1\n" + sync_yaml(SyncSettings(remote="r"))
                                  + "b: |\n  # kept content\n\n  y\n\n# end\n...\n").encode()
    assert parse_config(config_bytes(root).decode()) == parse_config(text)


def test_repeated_sync_blocks_collapse_into_one(tmp_path: Path, homes: Path):
    root = project(tmp_path, "sync:\n  remote: a\nmid: 1\nsync:\n  remote: b\nend: 2\n")
    save_sync_settings(root, SyncSettings(remote="c"))
    assert config_bytes(root) == (sync_yaml(SyncSettings(remote="c")) + "mid: 1\nend: 2\n").encode()
    assert load_sync_settings(root).remote == "c"


def test_crlf_and_bom_survive(tmp_path: Path, homes: Path):
    root = project(tmp_path, "\ufeffsync:\r\n  remote: a\r\nmemory:\r\n  enabled: false\r\n")
    save_sync_settings(root, SyncSettings(remote="b"))
    assert config_bytes(root) == ("\ufeff" + sync_yaml(SyncSettings(remote="b"))
                                  + "memory:\r\n  enabled: false\r\n").encode()


@pytest.mark.parametrize(("data", "reason"), [
    (b"sync:\n\tremote: x\nknowledge:\n  enabled: false\n", "not a valid YAML config"),
    (b"memory: [\n", "not a valid YAML config"),
    (b"a: 1\n---\nb: 2\n", "more than one YAML document"),
    (b"- a\n", "top level is not a mapping"),
    (b"knowledge:\n  enabled: \xff\n", "not UTF-8"),
    (b"{memory: {enabled: false}}\n", "flow style"),
    (b"{}\n", "flow style"),
    (b"  memory:\n    enabled: false\n", "not at column 0"),
    (b"sync:\n  remote: &r file:///x.git\nknowledge:\n  sync:\n    remote: *r\n", "alias"),
    (b"other: " + b"[" * 20000 + b"]" * 20000 + b"\n", "nested too deeply"),
])
def test_a_file_that_cannot_be_edited_safely_is_refused_and_left_intact(tmp_path: Path, homes: Path,
                                                                        data: bytes, reason: str):
    root = project(tmp_path, data)
    path = root / ".cce" / "config"
    before = os.stat(path)
    with pytest.raises(CceError, match="refusing to rewrite it") as caught:
        save_sync_settings(root, SyncSettings(remote="file:///new.git"))
    assert reason in str(caught.value)
    assert str(path) in str(caught.value)
    assert path.read_bytes() == data
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns
    assert sorted(p.name for p in (root / ".cce").iterdir()) == ["config"]  # no temp file left behind


def test_an_unreadable_config_is_refused(tmp_path: Path, homes: Path):
    root = project(tmp_path)
    (root / ".cce" / "config").mkdir()
    with pytest.raises(CceError, match="cannot read it"):
        save_sync_settings(root, SyncSettings())


def test_values_that_cannot_survive_the_file_are_refused(tmp_path: Path, homes: Path):
    root = project(tmp_path, "memory:\n  enabled: false\n")
    for bad in ("a\nb", "bell\x07"):
        with pytest.raises(CceError, match="line break or control character"):
            save_sync_settings(root, SyncSettings(remote=bad))
    assert config_bytes(root) == b"memory:\n  enabled: false\n"


def test_a_wrongly_typed_sync_block_is_replaced(tmp_path: Path, homes: Path):
    # The load warning for this case points at `cce sync init`, so the save must work.
    root = project(tmp_path, "sync:\n  lfs: yes\nmemory:\n  enabled: false\n")
    save_sync_settings(root, SyncSettings(remote="r"))
    assert config_bytes(root) == (sync_yaml(SyncSettings(remote="r")) + "memory:\n  enabled: false\n").encode()


def test_empty_strings_are_written_quoted_and_read_back_unset():
    text = replace_sync_block("", SyncSettings(remote="", repo_id=""))
    assert '  remote: ""\n' in text and '  repo_id: ""\n' in text
    assert parse_sync_settings(text) == SyncSettings()

"""First-use rough edges of the command line: typos, help text, directories, numbers in JSON, rebuilds.

Each test runs the installed ``cce`` (or, for the help of every command, the
same click command tree in this process) and pins what a new user sees.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import click
import pytest
from helpers import REPO_ROOT, cce_executable, copy_tree, run_cce

from cce_core.indexing.store import default_store_path, load_store, segments_dir

SAMPLES = REPO_ROOT / "samples"


def _one_error(done) -> str:
    assert done.returncode != 0, done.stdout
    lines = done.stderr.split("\n")
    assert len(lines) == 2 and lines[1] == "" and lines[0].startswith("error: "), done.stderr
    return lines[0]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> Path:
    root = copy_tree(SAMPLES, tmp_path_factory.mktemp("papercuts") / "samples")
    done = run_cce("index", root, "--no-metrics")
    assert done.returncode == 0, done.stderr
    return root


# -- a mistyped command is suggested once ----------------------------------------------------------


@pytest.mark.parametrize(("args", "line"), [
    (["serch", "x"], "error: No such command 'serch'. Did you mean 'search'?"),
    (["sync", "pul"], "error: No such command 'pul'. Did you mean 'pull'?"),
    (["workspace", "lst"], "error: No such command 'lst'. Did you mean 'list'?"),
    (["zzzzzz"], "error: No such command 'zzzzzz'."),
])
def test_a_mistyped_command_gets_one_suggestion(args, line):
    done = run_cce(*args)
    assert _one_error(done) == line
    assert done.returncode == 2


# -- help -------------------------------------------------------------------------------------------


def _command_tree() -> click.Group:
    from cce_core.cli.app import build_command

    return build_command(["--help"])


def _every_help(group: click.Group) -> dict[str, str]:
    """``cce [GROUP] NAME --help`` of every command and group, rendered in this process."""
    out: dict[str, str] = {}

    def walk(command: click.Command, path: list[str], parent: click.Context | None) -> None:
        ctx = click.Context(command, info_name=path[-1], parent=parent)
        out[" ".join(path)] = command.get_help(ctx)
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, [*path, name], ctx)

    walk(group, ["cce"], None)
    return out


def _entries(help_text: str) -> list[str]:
    """Each argument, option or command entry of a help page, its wrapped lines joined."""
    entries: list[str] = []
    for line in help_text.split("\n"):
        if re.match(r"^  \S", line):
            entries.append(line.strip())
        elif re.match(r"^ {3,}\S", line) and entries:
            entries[-1] += " " + line.strip()
    return entries


@pytest.mark.parametrize("columns", ["80", "60"])
def test_the_command_list_never_cuts_a_summary(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)
    text = _every_help(_command_tree())["cce"]
    listed = _entries(text[text.index("Commands:"):])
    assert len(listed) >= 15
    for entry in listed:
        assert not entry.endswith("..."), entry
    index = next(e for e in listed if e.startswith("index "))
    assert index.endswith("save the index")  # the whole first sentence of its help


def test_every_argument_shows_its_help(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    pages = _every_help(_command_tree())
    assert "Repository to index" in pages["cce index"]
    assert "Project directory to set up" in pages["cce init"]
    for path, page in pages.items():
        if "Arguments:" not in page:
            continue
        block = page[page.index("Arguments:"):page.index("Options:")]
        for entry in _entries(block):
            assert len(entry.split()) > 1, f"{path}: argument without help: {entry}"


def test_no_default_is_stated_twice(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    for path, page in _every_help(_command_tree()).items():
        for entry in _entries(page):
            said, bracket, _rest = entry.partition("[default:")
            assert not (bracket and "default" in said.lower()), f"{path}: {entry}"


def test_help_through_the_installed_command():
    done = run_cce("init", "--help", env={"COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    assert "Project directory to set up (default: .)." in done.stdout
    assert "[default: .]" not in done.stdout


# -- one directory argument, checked -------------------------------------------------------------


def test_doctor_savings_and_mcp_take_the_directory_as_an_argument(indexed):
    for command in (["doctor"], ["savings"], ["savings", "--json"]):
        positional = run_cce(*command, indexed)
        option = run_cce(*command, "--dir", indexed)
        assert positional.returncode == option.returncode == 0, positional.stderr
        assert positional.stdout == option.stdout
    # The server starts on the directory given as an argument (and ends when stdin does).
    served = subprocess.run([cce_executable(), "mcp", str(indexed)], stdin=subprocess.DEVNULL, capture_output=True,
                            text=True, timeout=120)
    assert served.returncode == 0, served.stderr


@pytest.mark.parametrize("command", [
    ["search", "anything", "--dir"], ["search", "anything"], ["stats", "--dir"], ["stats"], ["doctor", "--dir"],
    ["doctor"], ["savings", "--dir"], ["savings"], ["usage", "--dir"], ["usage"], ["mcp", "--dir"], ["mcp"],
    ["dashboard", "--dir"], ["feedback", "abc123", "--helpful", "--dir"],
])
def test_a_missing_directory_is_named_as_such(tmp_path, command):
    missing = tmp_path / "nowhere"
    assert _one_error(run_cce(*command, missing)) == f"error: no such directory: {missing}"
    assert not missing.exists()  # nothing was created on the way (feedback used to write its log there)


# -- numbers in JSON -------------------------------------------------------------------------------


def test_json_scores_stay_strings_and_numbers_are_opt_in(indexed):
    plain = json.loads(run_cce("search", "Loader load", "--dir", indexed, "--json", "--no-metrics").stdout)
    assert list(plain["results"][0]) == ["chunk_id", "chunk_type", "end_line", "file_path", "kind", "rank", "score",
                                         "start_line"]  # the family's pinned shape, unchanged
    done = run_cce("search", "Loader load", "--dir", indexed, "--json", "--numeric-scores", "--no-metrics")
    assert done.returncode == 0, done.stderr
    numbered = json.loads(done.stdout)
    for a, b in zip(plain["results"], numbered["results"], strict=True):
        assert b.pop("score_value") == float(a["score"])
        assert a == b
    assert isinstance(numbered["results"][0].get("score_value", 0.0), float)
    assert re.search(r'"score": "\d+\.\d{6}",\n\s+"score_value": \d+\.\d+,\n', done.stdout)
    assert _one_error(run_cce("search", "Loader load", "--dir", indexed, "--numeric-scores")) == (
        "error: --numeric-scores goes with --json")


# -- rebuild ---------------------------------------------------------------------------------------


def _flip_a_vector_byte(store: Path) -> Path:
    from test_cli_leftovers import flip_a_vector_byte

    return flip_a_vector_byte(store)


def test_index_rebuild_starts_from_scratch(tmp_path):
    root = copy_tree(SAMPLES, tmp_path / "s")
    assert run_cce("index", root, "--no-metrics").returncode == 0
    store = default_store_path(root)
    (root / ".cce" / "fingerprint.json").unlink()  # nothing tells a damaged segment apart now
    segment = _flip_a_vector_byte(store)
    damaged = segment.read_bytes()
    assert run_cce("index", root, "--no-metrics").returncode == 0
    assert segment.read_bytes() == damaged  # a plain re-index reuses every unchanged file

    rebuilt = run_cce("index", root, "--rebuild", "--no-metrics")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert rebuilt.stdout.startswith(f"Indexed {root}\n")
    for path in segments_dir(store).iterdir():
        assert path.name == f"seg-{hashlib.sha256(path.read_bytes()).hexdigest()[:24]}.cces"
    fresh = tmp_path / "fresh.cce"
    assert run_cce("index", root, "--store", fresh, "--no-metrics").returncode == 0
    assert store.read_bytes() == fresh.read_bytes()


def test_index_rebuild_refuses_a_plan():
    assert _one_error(run_cce("index", SAMPLES, "--rebuild", "--plan")) == (
        "error: --rebuild writes a store; it does not go with --plan")


def test_the_old_store_answers_until_the_rebuilt_one_replaces_it(tmp_path, monkeypatch):
    from cce_core.indexing import indexer as indexer_module
    from cce_core.plugins.host import default_host
    from cce_core.retrieval.searcher import Searcher
    from cce_core.services.index_project import build_store as index_one

    root = copy_tree(SAMPLES, tmp_path / "s")
    host = default_host()
    store = default_store_path(root)
    index_one(root, store, host, host.embedder("hash"), protect_secrets=True, log_metrics=False)
    before = store.read_bytes()
    (root / "python.py").write_text("def rebuilt_marker_function():\n    return 1\n", encoding="utf-8")
    seen: list[list[str]] = []
    real_commit = indexer_module.commit_manifest

    def check_then_commit(*args, **kwargs):
        # Every new segment is on disk, the manifest not yet switched: readers still get the old store whole.
        assert store.read_bytes() == before
        old = load_store(store)
        seen.append([r.chunk.file_path for r in Searcher(old, host.embedder("hash")).search("Loader", top_k=3)])
        assert not any("rebuilt_marker_function" in c.content for c in old.chunks)
        return real_commit(*args, **kwargs)

    monkeypatch.setattr(indexer_module, "commit_manifest", check_then_commit)
    index_one(root, store, host, host.embedder("hash"), protect_secrets=True, log_metrics=False, reuse=False)
    assert seen and seen[0]
    assert any("rebuilt_marker_function" in c.content for c in load_store(store).chunks)


def test_the_language_guide_names_the_rebuild_flag():
    guide = (REPO_ROOT / "docs" / "adding-a-language.md").read_text(encoding="utf-8")
    assert "cce index demo --rebuild" in guide
    assert "delete `DIR/.cce/index.cce`" not in guide


"""``cce knowledge add DIR``: from a documentation folder to searchable knowledge without writing a script.

Every file matching the globs (by default the usual documentation files:
``*.md``, ``*.markdown``, ``*.rst``, ``*.txt``, ``*.adoc``) becomes one
``cce.knowledge/v1`` record: its path is the id, its first heading the title.
Files no document chunker claims are plain text, whose underlined headings
(a title over a line of ``=``, ``-``, ``~``…, optionally with an overline too)
are turned into the feed's ``#`` headings so the sections follow them. An
empty result is an error, and a new user gets from a docs folder to search
results in two commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run_cce

from cce_core.foundation.errors import CceError
from cce_core.knowledge import store as kstore
from cce_core.knowledge.docs_folder import (
    DEFAULT_GLOBS,
    collect_documents,
    default_globs,
    document_record,
    split_title,
)
from cce_core.knowledge.text_headings import underlined_to_hashes

FLASK_DOCS = Path("/work/corpora/flask/docs")

RST = """\
.. currentmodule:: shop

Deploying the shop
==================

The shop runs behind a reverse proxy.

Rolling restarts
----------------

Drain the connection pool before each restart.

Health checks
~~~~~~~~~~~~~

The load balancer probes ``/healthz`` every five seconds.

Rollback
--------

Re-deploy the previous image tag::

    Title in a literal block
    ------------------------
"""

MARKDOWN = "# Refund policy\n\nRefunds are approved within fourteen days.\n\n## Exceptions\n\nGift cards never.\n"


def docs_folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "ops").mkdir(parents=True)
    (docs / "ops" / "deploy.rst").write_text(RST, encoding="utf-8")
    (docs / "refunds.md").write_text(MARKDOWN, encoding="utf-8")
    (docs / "notes.txt").write_text("Plain notes\n===========\n\nThe cache warms at midnight.\n", encoding="utf-8")
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (docs / "conf.py").write_text("project = 'shop'\n", encoding="utf-8")
    (docs / ".env").write_text("SECRET=1\n", encoding="utf-8")
    return docs


# --------------------------------------------------------------------------- underlined headings


def test_underlined_headings_become_hash_headings_by_order_of_appearance() -> None:
    out = underlined_to_hashes(RST)
    lines = out.split("\n")
    assert "# Deploying the shop" in lines and "## Rolling restarts" in lines
    assert "### Health checks" in lines and "## Rollback" in lines
    assert "==================" not in lines and "~~~~~~~~~~~~~" not in lines
    # Text in an indented literal block is left alone, and so is everything else.
    assert "    Title in a literal block" in lines and "    ------------------------" in lines
    assert ".. currentmodule:: shop" in lines and "Drain the connection pool before each restart." in lines


def test_an_overlined_title_is_its_own_style() -> None:
    text = "#####\nParts\n#####\n\nChapter\n=======\n\nx\n\n*******\n Inset \n*******\n"
    assert underlined_to_hashes(text) == "# Parts\n\n## Chapter\n\nx\n\n### Inset\n"


@pytest.mark.parametrize("text", [
    "a paragraph line\nanother line\n-----\n",  # the underline does not follow a lone line
    "\n----\n\ntransition above\n",  # a transition, not a heading
    "  indented\n  ========\n",
    "word\n--\n",  # two characters are not an adornment
    "ab\nx=1\n",
])
def test_what_is_not_an_underlined_heading_is_left_alone(text: str) -> None:
    assert underlined_to_hashes(text) == text


def test_deep_levels_stop_at_six() -> None:
    chars = "=-~^\"'*+"
    text = "".join(f"T{i}\n{c * 3}\n\n" for i, c in enumerate(chars))
    assert underlined_to_hashes(text).split("\n\n")[-2] == "###### T7"


# --------------------------------------------------------------------------- one file, one record


@pytest.mark.parametrize(("text", "title", "body"), [
    (MARKDOWN, "Refund policy", "Refunds are approved within fourteen days.\n\n## Exceptions\n\nGift cards never.\n"),
    ("Setext title\n============\n\nbody\n", "Setext title", "body\n"),
    (".. currentmodule:: shop\n\n# Deploying\n\nbody\n", "Deploying", ".. currentmodule:: shop\n\nbody\n"),
    ("```\n# not a heading\n```\n\n# Real\n\nx\n", "Real", "```\n# not a heading\n```\n\nx\n"),
    ("no heading at all\n", None, "no heading at all\n"),
    ("#hashtag is no heading\n", None, "#hashtag is no heading\n"),
])
def test_the_first_heading_is_the_title_and_leaves_the_body(text: str, title: str | None, body: str) -> None:
    assert split_title(text) == (title, body)


def test_a_record_per_file_with_its_path_as_id() -> None:
    rec = document_record("docs/ops/deploy.rst", RST, "docs", plain_text=True)
    assert (rec["id"], rec["title"], rec["source"]) == ("docs/ops/deploy.rst", "Deploying the shop", "docs")
    assert rec["body"].startswith(".. currentmodule:: shop\n\nThe shop runs") and "## Rolling restarts" in rec["body"]
    untitled = document_record("docs/notes/todo.txt", "just text\n", "docs", plain_text=True)
    assert untitled["title"] == "todo"


def test_default_globs_cover_the_usual_documentation_files() -> None:
    assert DEFAULT_GLOBS == ("*.md", "*.markdown", "*.rst", "*.txt", "*.adoc")
    assert set(DEFAULT_GLOBS) <= set(default_globs())


def test_collect_takes_matching_files_in_path_order_and_skips_the_rest(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path)
    found = collect_documents([docs], tmp_path, default_globs())
    assert [d.record_id for d in found] == ["docs/notes.txt", "docs/ops/deploy.rst", "docs/refunds.md"]
    only_rst = collect_documents([docs], tmp_path, ["*.RST"])  # names match case-insensitively
    assert [d.record_id for d in only_rst] == ["docs/ops/deploy.rst"]
    nested = collect_documents([docs], tmp_path, ["ops/*"])
    assert [d.record_id for d in nested] == ["docs/ops/deploy.rst"]
    twice = collect_documents([docs, docs / "ops"], tmp_path, default_globs())
    assert len(twice) == 3  # a file reached through two folders is one record


def test_an_empty_result_is_an_error_naming_what_was_looked_for(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path)
    with pytest.raises(CceError) as caught:
        collect_documents([docs], tmp_path, ["*.adoc"])
    assert str(caught.value) == (f"no documents to add: no file under {docs} matches *.adoc — "
                                 "pass --glob for the files to take, e.g. --glob '*.rst'")
    with pytest.raises(CceError, match="not a directory"):
        collect_documents([tmp_path / "nope"], tmp_path, default_globs())


# --------------------------------------------------------------------------- through the CLI


def test_add_indexes_a_docs_folder_with_sections_from_every_format(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path)
    (tmp_path / ".cce").mkdir()  # a small budget, so each heading of these short documents is its own section
    (tmp_path / ".cce" / "config").write_text("markdown:\n  max_section_tokens: 20\n", encoding="utf-8")
    done = run_cce("knowledge", "add", docs, "--dir", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "  records   : 3\n" in done.stdout
    store = kstore.load_store(tmp_path)
    by_record: dict[str, list[str]] = {}
    for chunk in store.chunks:
        by_record.setdefault(chunk.record_id, []).append(chunk.kind)
    assert sorted(by_record) == ["docs/notes.txt", "docs/ops/deploy.rst", "docs/refunds.md"]
    assert {"Rolling restarts", "Health checks", "Rollback"} <= set(by_record["docs/ops/deploy.rst"])
    assert "SECRET" not in kstore.store_path(tmp_path, store.snapshot).read_text(encoding="utf-8")
    feed = tmp_path / ".cce" / "knowledge" / "docs-feed.jsonl"
    assert [json.loads(line)["id"] for line in feed.read_text(encoding="utf-8").splitlines()] == sorted(by_record)


def test_add_of_a_folder_with_no_documents_fails_and_writes_nothing(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "conf.py").write_text("x = 1\n", encoding="utf-8")
    done = run_cce("knowledge", "add", docs, "--dir", tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: no documents to add: no file under {docs} matches *.md, ")
    assert not (tmp_path / ".cce").exists()


def test_from_a_docs_folder_to_search_results_in_two_commands(tmp_path: Path) -> None:
    docs_folder(tmp_path)
    added = run_cce("knowledge", "add", "docs/", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    found = run_cce("search", "how do we roll back a deploy", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert "[knowledge] Deploying the shop" in found.stdout


def test_flasks_rst_docs_become_sectioned_knowledge(tmp_path: Path) -> None:
    if not FLASK_DOCS.is_dir():
        pytest.skip(f"the flask corpus is not checked out at {FLASK_DOCS}")
    done = run_cce("knowledge", "add", FLASK_DOCS, "--dir", tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    store = kstore.load_store(tmp_path)
    assert store.records == 75
    testing = {c.kind for c in store.chunks if c.record_id == "docs/testing.rst"}
    assert {"Form Data", "JSON Data"} <= testing  # underlined with `~`: a code fence to the markdown chunker
    found = run_cce("search", "register a blueprint on the application", "--source", "knowledge", "--dir", tmp_path)
    assert found.returncode == 0 and "[knowledge] Modular Applications with Blueprints" in found.stdout

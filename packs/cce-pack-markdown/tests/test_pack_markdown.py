"""cce-pack-markdown alone: the engine's checks of a document chunker, the four byte-pinned goldens, the rule's cases.

The goldens' canonical form is one line per section,
``id\\tkind\\tname\\tstart\\tend\\ttokens\\tcontent`` with every newline of the
content written as ``\\n``, and the checksum is SHA-256 over all the lines. The
fixtures are the reference engine's (``shared/reference/test/fixture/markdown``);
the tests that need them skip when that folder is absent.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import types
from pathlib import Path

import cce_pack_markdown
import pytest
from cce_pack_markdown import (
    MAX_BLOCK_NESTING,
    PREAMBLE,
    block_nesting_estimate,
    chunk_markdown,
)

from cce_core.api import DocumentSection, chunk_with, render_with, validate_plugin

_REPO = Path(__file__).resolve().parents[3]
_FIXTURES = Path(os.environ.get("CCE_REFERENCE_DIR", _REPO.parent / "shared" / "reference")) / "test" / "fixture" \
    / "markdown"

# file, budget, sections, SHA-256 of the canonical form.
GOLDENS = [
    ("code_fence.md", 400, 1, "14a94ff03573a0567a582c0d875acbe30bcfc0a3e3fa840f72324cd37660371a"),
    ("preamble.md", 400, 2, "5a31d985af312ffc7a3b68be79f78fb44af69e4c4e4c387d915c00328c1ae164"),
    ("nested.md", 400, 1, "ecff4f0927d76ff770578c9399fb8fc631d018a69efd572bbc898645b8069598"),
    ("oversized.md", 30, 3, "fa864f7e1af325c13174f876ee7a1f5197a8663464fa7d8dcf8895a5677ccdb5"),
]


def _fixture(name: str) -> str:
    path = _FIXTURES / name
    if not path.is_file():
        pytest.skip(f"reference fixture not found at {path} (set CCE_REFERENCE_DIR to the shared/reference folder)")
    return path.read_text(encoding="utf-8")


def canonical(sections: list[DocumentSection]) -> str:
    return "".join(f"{s.chunk_id}\t{s.kind}\t{s.name}\t{s.start_line}\t{s.end_line}\t{s.token_count}\t"
                   + s.content.replace("\n", "\\n") + "\n" for s in sections)


# -- the plugin as the engine sees it ---------------------------------------------------


def test_the_plugin_passes_the_engines_checks() -> None:
    report = validate_plugin(cce_pack_markdown, "cce-pack-markdown")
    assert report.ok, report.diagnostics
    assert report.packs == [] and [d.name for d in report.documents] == ["markdown"]


def test_the_chunker_declares_its_format_and_extensions() -> None:
    chunker = cce_pack_markdown.CHUNKER
    assert (chunker.name, chunker.formats, chunker.extensions) == ("markdown", ("markdown",), (".md", ".markdown"))
    assert chunker.chunk_document("doc", "# A\n\nx\n", 400) == chunk_markdown("doc", "# A\n\nx\n", 400)


def test_a_markdown_file_in_a_code_index_stays_one_module_chunk() -> None:
    # Not a language pack: with only this plugin installed, a .md file is cut as before.
    text = "# Title\n\nintro\n\n## Sub\n\ndetail\n"
    chunks = chunk_with(cce_pack_markdown, "README.md", text).chunks
    assert [(c.chunk_type, c.kind, c.content) for c in chunks] == [("module", "module", text)]
    assert chunks == chunk_with(types.ModuleType("no_plugin"), "README.md", text).chunks


# -- the goldens --------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "budget", "count", "checksum"), GOLDENS, ids=[g[0] for g in GOLDENS])
def test_golden(name: str, budget: int, count: int, checksum: str) -> None:
    text = _fixture(name)
    sections = chunk_markdown(name, text, budget)
    assert len(sections) == count
    assert hashlib.sha256(canonical(sections).encode("utf-8")).hexdigest() == checksum
    assert chunk_markdown(name, text, budget) == sections  # deterministic


def test_golden_facts() -> None:
    fence = chunk_markdown("code_fence.md", _fixture("code_fence.md"), 400)
    assert fence[0].kind == "Install" and "# comment, not a heading" in fence[0].content
    pre = chunk_markdown("preamble.md", _fixture("preamble.md"), 400)
    assert [(s.kind, s.name, s.start_line) for s in pre] == [(PREAMBLE, PREAMBLE, 1),
                                                              ("Heading One", "# Heading One", 4)]
    assert pre[0].end_line == 2
    nested = chunk_markdown("nested.md", _fixture("nested.md"), 400)
    assert nested[0].kind == "API" and "## Auth" in nested[0].content and "### Refresh" in nested[0].content
    big = chunk_markdown("oversized.md", _fixture("oversized.md"), 30)
    assert [s.kind for s in big] == ["Guide", "Alpha", "Beta"]
    assert big[0].content == "# Guide\n\nIntro paragraph for the guide."
    assert "### Alpha Detail" in big[1].content
    assert [s.name for s in big[1:]] == ["# Guide \u203a ## Alpha", "# Guide \u203a ## Beta"]


def test_nested_section_compact_view_and_round_trip() -> None:
    # A section has no language pack, so the engine's first-line rule renders it.
    (section,) = chunk_markdown("nested.md", _fixture("nested.md"), 400)
    assert render_with(cce_pack_markdown, "nested.md", section.content, "compact") == "# API\n… (+10 lines)"
    assert render_with(cce_pack_markdown, "nested.md", section.content, "signature") == "# API"
    assert render_with(cce_pack_markdown, "nested.md", section.content, "full") == section.content


# -- the rule, case by case ---------------------------------------------------------------


def test_preamble_is_its_own_leading_section() -> None:
    sections = chunk_markdown("doc", "intro line\nmore intro\n\n# Title\n\nbody\n", 400)
    assert [(s.kind, s.name, s.content, s.start_line, s.end_line) for s in sections] == [
        (PREAMBLE, PREAMBLE, "intro line\nmore intro", 1, 2),
        ("Title", "# Title", "# Title\n\nbody", 4, 6),
    ]


def test_no_preamble_when_the_document_opens_with_a_heading() -> None:
    assert [s.kind for s in chunk_markdown("doc", "# Title\n\nbody\n", 400)] == ["Title"]


def test_deeper_headings_roll_into_a_section_within_budget() -> None:
    (section,) = chunk_markdown("doc", "# Title\n\nintro\n\n## Sub\n\ndetail\n", 400)
    assert section.kind == "Title" and "## Sub" in section.content


def test_a_section_over_budget_splits_at_its_deeper_headings() -> None:
    sections = chunk_markdown("doc", "# Title\n\nintro\n\n## Alpha\n\naaa\n\n## Beta\n\nbbb\n", 1)
    assert [(s.kind, s.name, s.content) for s in sections] == [
        ("Title", "# Title", "# Title\n\nintro"),
        ("Alpha", "# Title \u203a ## Alpha", "## Alpha\n\naaa"),
        ("Beta", "# Title \u203a ## Beta", "## Beta\n\nbbb"),
    ]


def test_a_hash_inside_a_fence_is_code() -> None:
    (section,) = chunk_markdown("doc", "# Real\n\n```sh\n# not a heading\necho hi\n```\n\ntail\n", 400)
    assert section.kind == "Real" and "# not a heading" in section.content


def test_a_skipped_level_keeps_the_real_levels_in_the_name() -> None:
    sections = chunk_markdown("doc", "# Title\n\nintro\n\n### Deep\n\nx\n", 1)
    assert [(s.kind, s.name) for s in sections] == [("Title", "# Title"), ("Deep", "# Title \u203a ### Deep")]


def test_setext_headings_split_like_atx_ones() -> None:
    sections = chunk_markdown("doc", "Title\n=====\n\nbody\n\nSub\n---\n\nmore\n", 1)
    assert [s.kind for s in sections] == ["Title", "Sub"]


def test_chunk_ids_are_16_lowercase_hex_and_follow_the_family_rule() -> None:
    sections = chunk_markdown("doc", "# A\n\nx\n\n# B\n\ny\n", 400)
    assert sections == chunk_markdown("doc", "# A\n\nx\n\n# B\n\ny\n", 400)
    for s in sections:
        key = f"doc:{s.start_line}:{s.end_line}:".encode() + s.content.encode("utf-8")[:100]
        assert s.chunk_id == hashlib.sha256(key).hexdigest()[:16]
        assert s.token_count == max(1, len(s.content.encode("utf-8")) // 4)


def test_empty_or_blank_input_gives_no_section() -> None:
    assert chunk_markdown("doc", "", 400) == []
    assert chunk_markdown("doc", "   \n\n  \n", 400) == []


def test_a_flat_section_over_budget_stays_whole() -> None:
    (section,) = chunk_markdown("doc", "# Title\n\nlots of content here and more and more and more\n", 1)
    assert section.kind == "Title"


def test_end_line_ignores_trailing_blank_lines() -> None:
    first = chunk_markdown("doc", "# A\n\nline\n\n\n# B\n\nz\n", 1)[0]
    assert (first.start_line, first.end_line, first.content) == (1, 3, "# A\n\nline")


def test_trims_are_unicode_white_space_not_str_strip() -> None:
    # U+001F is not White_Space: Python's strip() would drop it, the family keeps it.
    (section,) = chunk_markdown("doc", "#  Title\u3000\n\nbody\x1f\n\u2003\n", 400)
    assert section.kind == "Title"
    assert section.content == "#  Title\u3000\n\nbody\x1f"


def test_an_empty_heading_has_empty_text() -> None:
    sections = chunk_markdown("doc", "# \n\nbody\n", 400)
    assert [(s.kind, s.name) for s in sections] == [("", "# ")]


# -- the nesting guard ----------------------------------------------------------------------


def test_the_estimate_counts_quotes_and_half_the_prefix_columns() -> None:
    assert block_nesting_estimate("") == 0
    assert block_nesting_estimate("plain\n") == 1
    assert block_nesting_estimate("> > q\n") == 2 + 2 // 2 + 1
    assert block_nesting_estimate("\t- x") == (4 + 2) // 2 + 1
    assert block_nesting_estimate("1. a\n" + "  " * 10 + "- b") == 11 + 1


def test_deep_but_under_the_guard_is_parsed() -> None:
    doc = "# Title\n\n" + "".join("> " * (i + 1) + "q\n" for i in range(100))
    (section,) = chunk_markdown("gen/deep.md", doc, 400)
    assert section.kind == "Title"


@pytest.mark.parametrize("depth", [MAX_BLOCK_NESTING + 63, 10_000, 100_000])
def test_past_the_guard_the_whole_document_is_one_section(depth: int) -> None:
    doc = f"# Title\n\n{'>' * depth} deep\n"
    (section,) = chunk_markdown("gen/deep.md", doc, 400)
    assert (section.kind, section.name, section.start_line) == (PREAMBLE, PREAMBLE, 1)
    assert section.content == doc.rstrip()


def test_deeply_indented_lists_take_the_whole_document_path() -> None:
    doc = "".join("  " * i + "- item\n" for i in range(300))
    (section,) = chunk_markdown("gen/deep.md", doc, 400)
    assert section.kind == PREAMBLE


_NESTED_SCRIPT = """
import sys
from cce_pack_markdown import chunk_markdown
docs = [
    "# T\\n\\n" + ">" * 10_000 + " deep\\n",
    "# T\\n\\n" + "> " * 10_000 + "deep\\n",
    "".join("> " * i + "q\\n" for i in range(1, 1_001)) + ">" * 10_000,
    "".join(" " * i + "- x\\n" for i in range(0, 10_000, 50)) + "    " * 2_500 + "- deepest\\n",
]
for doc in docs:
    sections = chunk_markdown("gen/deep.md", doc, 400)
    assert len(sections) == 1 and sections[0].kind == "(preamble)", sections[:1]
print("survived", len(docs))
"""


def test_ten_thousand_levels_of_nesting_never_crash_the_process() -> None:
    # A crash in the C scanner would kill the interpreter, so this runs in a process of its own.
    proc = subprocess.run([sys.executable, "-c", _NESTED_SCRIPT], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.strip() == "survived 4"

"""The document-chunker hook: registration, checks, lookup, listing, and that code indexing never sees it.

A document chunker cuts documents (knowledge ingest) into sections; a language
pack cuts code. These tests hold the line between the two: chunkers register
through their own hook, are checked like packs are, are found by format name,
show in ``cce packs``, and take no part in ``pack_set_id`` or in cutting a
file of a code index.
"""

from __future__ import annotations

import json
import re
import types

import pytest
from helpers import REPO_ROOT, run_cce

from cce_core import api
from cce_core.authoring.validate import validate_documents
from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import chunk_id
from cce_core.hookspecs import DocumentChunker, DocumentSection, hookimpl
from cce_core.indexing.chunker import Chunker
from cce_core.plugins.host import (
    PluginHost,
    default_host,
    document_chunker_for,
    document_chunkers,
    missing_document_chunker_message,
)

DEFAULT_PACK_SET = "c,javascript,python,ruby,rust,typescript"


class _Lines(DocumentChunker):
    """A toy format: every non-blank line is a section."""

    name = "lines"
    formats = ("lines", "text-lines")
    extensions = (".lines",)
    sample = "one\ntwo\n"

    def chunk_document(self, path: str, content: str, budget: int) -> list[DocumentSection]:
        out = []
        for number, line in enumerate(content.split("\n"), 1):
            text = line.rstrip(api.UNICODE_WHITESPACE)
            if text:
                out.append(DocumentSection(chunk_id(path, number, number, text.encode()), "line", text, number,
                                           number, api.estimate_tokens(text), text))
        return out


def _plugin(*chunkers: object) -> types.SimpleNamespace:
    @hookimpl
    def cce_register_document_chunkers(register):
        for chunker in chunkers:
            register(chunker)

    return types.SimpleNamespace(cce_register_document_chunkers=cce_register_document_chunkers)


def _host(*plugins: tuple[object, str]) -> PluginHost:
    return PluginHost(list(plugins), entry_points=False)


# -- the contract ------------------------------------------------------------------------------


def test_the_section_record_has_the_agreed_fields_in_order():
    fields = [f for f in DocumentSection.__dataclass_fields__]
    assert fields == ["chunk_id", "kind", "name", "start_line", "end_line", "token_count", "content"]
    section = DocumentSection("0" * 16, "k", "n", 1, 1, 1, "x")
    with pytest.raises(AttributeError):
        section.content = "y"  # type: ignore[misc]


def test_the_api_offers_the_document_names():
    for name in ("DocumentChunker", "DocumentSection", "RegisterDocumentChunker", "estimate_tokens", "chunk_id"):
        assert name in api.__all__
    assert api.DocumentChunker is DocumentChunker and api.DocumentSection is DocumentSection
    assert api.estimate_tokens("abcdefgh") == 2


def test_the_base_class_requires_chunk_document():
    with pytest.raises(NotImplementedError):
        DocumentChunker().chunk_document("p", "x", 400)


# -- registration and lookup -------------------------------------------------------------------


def test_a_registered_chunker_is_found_by_each_of_its_formats_and_listed():
    chunker = _Lines()
    host = _host((_plugin(chunker), "cce-pack-lines"))
    assert host.startup_problems() == []
    assert document_chunker_for("lines", host) is chunker
    assert document_chunker_for("text-lines", host) is chunker
    assert document_chunker_for("markdown", host) is None
    assert document_chunkers(host) == [chunker]
    assert chunker.distribution == "cce-pack-lines"
    assert host.document_chunkers.formats() == ["lines", "text-lines"]


def test_the_missing_chunker_message_names_the_distribution():
    assert missing_document_chunker_message("markdown") == (
        "no document chunker for markdown is installed — install one, e.g. `pip install cce-pack-markdown`")


def test_document_chunkers_take_no_part_in_pack_set_id():
    host = _host((_plugin(_Lines()), "cce-pack-lines"))
    assert host.packs.pack_set_id == ""


@pytest.mark.parametrize(("chunker", "expected"), [
    (object(), "does not subclass cce_core.api.DocumentChunker"),
    (type("NoName", (_Lines,), {"name": ""})(), "name is empty"),
    (type("Upper", (_Lines,), {"name": "Lines"})(), 'name "Lines" may hold only'),
    (type("NoFormats", (_Lines,), {"formats": ()})(), "formats must be a non-empty tuple"),
    (type("BadFormat", (_Lines,), {"formats": ("Mark Down",)})(), "format 'Mark Down' may hold only"),
    (type("BadExt", (_Lines,), {"extensions": ("md",)})(), "extension 'md' must be a lowercase final extension"),
    (type("TwoDots", (_Lines,), {"extensions": (".a.b",)})(), "extension '.a.b' must be"),
])
def test_a_malformed_chunker_is_refused_with_a_named_problem(chunker, expected):
    host = _host((_plugin(chunker), "cce-pack-bad"))
    assert host.document_chunkers.chunkers == []
    problems = host.startup_problems()
    assert len(problems) == 1 and expected in problems[0], problems
    with pytest.raises(CceError):
        host.require_healthy()


def test_two_chunkers_claiming_one_format_the_first_registered_keeps_it():
    first, second = _Lines(), type("Other", (_Lines,), {"name": "other", "extensions": (".other",)})()
    host = _host((_plugin(first), "cce-pack-lines"), (_plugin(second), "cce-pack-other"))
    assert document_chunker_for("lines", host) is first
    problems = host.document_chunkers.problems
    assert any('format "lines" already claimed by document chunker "lines" (distribution "cce-pack-lines")' in p
               for p in problems), problems
    assert all(p.startswith("[document:other]") for p in problems)


def test_a_raising_registration_is_a_named_startup_problem():
    class Broken:
        @hookimpl
        def cce_register_document_chunkers(self, register):
            raise RuntimeError("grammar wheel missing")

    (problem,) = _host((Broken(), "cce-pack-broken")).startup_problems()
    assert 'from distribution "cce-pack-broken" failed while registering' in problem
    assert "cce_register_document_chunkers raised RuntimeError: grammar wheel missing" in problem


def test_a_misspelled_document_hook_is_reported_with_the_right_name():
    plugin = types.SimpleNamespace(cce_register_document_chunker=hookimpl(lambda register: None))
    host = _host((plugin, "cce-pack-typo"))
    assert any('did you mean "cce_register_document_chunkers"' in p for p in host.hook_problems), host.hook_problems


# -- validation ----------------------------------------------------------------------------------


def test_validate_plugin_checks_a_chunker_on_its_sample_and_odd_input():
    assert api.validate_plugin(_plugin(_Lines()), "cce-pack-lines").ok

    class Fragile(_Lines):
        def chunk_document(self, path, content, budget):
            if "\x00" in content:
                raise ValueError("binary")
            return super().chunk_document(path, content, budget)

    class Wrong(_Lines):
        def chunk_document(self, path, content, budget):
            return [("not", "a", "section")] if content else []

    fragile = api.validate_plugin(_plugin(Fragile()))
    assert not fragile.ok
    assert any("raised ValueError: binary on odd input" in d for d in fragile.diagnostics), fragile.diagnostics
    wrong = api.validate_plugin(_plugin(Wrong()))
    assert any("return cce_core.api.DocumentSection records" in d for d in wrong.diagnostics), wrong.diagnostics


def test_validate_documents_reports_each_chunker():
    host = _host((_plugin(_Lines()), ""))
    (report,) = validate_documents(host)
    assert (report.name, report.ok) == ("lines", True)


# -- the installed markdown chunker, and code indexing without it ----------------------------------


def test_the_default_install_has_the_markdown_chunker_and_the_same_pack_set():
    host = default_host()
    chunker = document_chunker_for("markdown")
    assert chunker is not None and chunker.distribution == "cce-pack-markdown"
    assert ".md" in chunker.extensions
    assert host.packs.pack_set_id == DEFAULT_PACK_SET
    assert host.packs.pack_for("README.md") is None  # markdown is not a language pack


_CODE_TREE = {
    "README.md": "# Title\n\nintro\n\n## Sub\n\ndetail\n",
    "app.py": "import os\n\n\ndef main():\n    return os.getcwd()\n",
    "notes.markdown": "plain notes\n",
}


def test_without_the_markdown_plugin_code_indexing_is_unchanged():
    with_markdown = default_host()
    names = {ep_name for ep_name, plugin in with_markdown.pm.list_name_plugin() if plugin is not None}
    assert "markdown" in names
    without = PluginHost(only=names - {"markdown"})
    assert without.startup_problems() == []
    assert document_chunker_for("markdown", without) is None
    assert without.packs.pack_set_id == with_markdown.packs.pack_set_id == DEFAULT_PACK_SET
    for path, text in _CODE_TREE.items():
        assert Chunker(without).chunk_file(path, text) == Chunker(with_markdown).chunk_file(path, text), path
    (readme,) = Chunker(with_markdown).chunk_file("README.md", _CODE_TREE["README.md"]).chunks
    assert (readme.chunk_type, readme.content) == ("module", _CODE_TREE["README.md"])


# -- cce packs -----------------------------------------------------------------------------------


def test_cce_packs_lists_document_chunkers():
    proc = run_cce("packs")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "Document chunkers (1):" in lines
    row = lines[lines.index("Document chunkers (1):") + 1]
    assert re.match(r"  markdown\s+\.md,\.markdown\s+formats markdown · from cce-pack-markdown \S+$", row), row
    assert lines[-1] == f"pack_set_id: {DEFAULT_PACK_SET}"
    assert "Registered language packs (6):" in lines

    listing = json.loads(run_cce("packs", "--json").stdout)
    assert listing["pack_set_id"] == DEFAULT_PACK_SET
    (entry,) = listing["document_chunkers"]
    assert {k: entry[k] for k in ("name", "formats", "extensions", "distribution")} == {
        "name": "markdown", "formats": ["markdown"], "extensions": [".md", ".markdown"],
        "distribution": "cce-pack-markdown"}
    assert any(p["name"] == "markdown" and p["hooks"] == ["cce_register_document_chunkers"]
               for p in listing["plugins"])


def test_cce_packs_validate_checks_document_chunkers():
    proc = run_cce("packs", "--validate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "[document:markdown] ok" in lines
    assert lines[-2:] == ["all 1 document chunkers passed validation", "all 6 packs passed validation"]


def test_the_markdown_pack_is_in_the_default_install():
    requirements = (REPO_ROOT / "requirements.txt").read_text(encoding="utf-8").split("\n")
    assert "-e packs/cce-pack-markdown" in requirements
    pyproject = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"packs/cce-pack-markdown/tests"' in pyproject

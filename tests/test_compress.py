"""Signature/compact/full views of chunks, against the reference's goldens.

The leaf and container goldens are the reference engine's (its
``tests/compress_golden.rs``): each fixture file under
``test/fixture/compress`` (and ``.../containers``) is chunked with its pack,
the first function (or class) chunk by start line is compressed, and the
signature, the compact bytes and their SHA-256 must match. The unit cases
repeat the reference's own compress tests. The last tests prove the views go
through the ``cce_render_compact`` hook: a plugin can replace a pack's renderer.
"""

from __future__ import annotations

import hashlib
import types
from pathlib import Path

import cce_pack_python
import cce_pack_ruby
import pytest

from cce_core.foundation.textrules import estimate_tokens
from cce_core.hookspecs import hookimpl
from cce_core.indexing.chunker import Chunk, Chunker
from cce_core.plugins.host import PluginHost
from cce_core.retrieval.detail_views import (
    DETAIL_LEVELS,
    CompactChunk,
    compress,
    elision_marker,
    first_line_view,
    parse_detail,
    render_definition,
)


@pytest.fixture(scope="module")
def host() -> PluginHost:
    return PluginHost()


# (file, signature, compact, sha256 of compact) — first function chunk of compress/<file>
LEAF_GOLDENS = [
    ("python.py", "def parse_amount(raw):",
     'def parse_amount(raw):\n"""Parse a currency amount from raw text."""\ncleaned = raw.strip().replace("$", "")\n'
     "\u2026 (+2 lines)",
     "ac1c3202b4d42008b5036e54c95fd148a879e91178098e9644a6caf94673a433"),
    ("ruby.rb", "def parse_amount(raw)",
     'def parse_amount(raw)\ncleaned = raw.strip.delete("$")\n\u2026 (+3 lines)',
     "e19ed20076d49d0535991935d7e4c6846d772931667697fa06f57f79224421aa"),
    ("rust.rs", "pub fn parse_amount(raw: &str) -> f64",
     "pub fn parse_amount(raw: &str) -> f64\nlet cleaned = raw.trim().replace('$', \"\");\n\u2026 (+3 lines)",
     "322dabfc73efa40205c210e919912dd6f59b5c311f79b531918c0927656526b8"),
    ("typescript.ts", "function parseAmount(raw: string): number",
     'function parseAmount(raw: string): number\nconst cleaned = raw.trim().replace("$", "");\n\u2026 (+3 lines)',
     "c69e8a6a2fd20e9f157d80aa4fd2fcf9344f02a225de693f77d1af53023f68cf"),
    ("javascript.js", "function parseAmount(raw)",
     'function parseAmount(raw)\nconst cleaned = raw.trim().replace("$", "");\n\u2026 (+3 lines)',
     "997dc69371022ac1ef442031fc8c982d5a483fc51603a299210894423f1fa1b8"),
    ("c.c", "double parse_amount(const char *raw)",
     "double parse_amount(const char *raw)\ndouble value = atof(raw);\n\u2026 (+3 lines)",
     "917fee8aa08d8e7b18f0cbb4eaae863f7066293614159bcd6ec4910b15316928"),
]

# first class chunk of compress/containers/<file>
CONTAINER_GOLDENS = [
    ("ruby.rb", "class Case < ApplicationRecord",
     'class Case < ApplicationRecord\nbelongs_to :assignee, class_name: "User"\n'
     "has_many :comments, dependent: :destroy\nhas_one :summary\nvalidates :title, presence: true\n"
     "scope :open, -> { where(closed: false) }\n"
     "enum status: { open: 0, closed: 1 }\ndef close!\n\u2026 (+3 lines)",
     "5a7b0f812779173dcbb343d7c7814910da80174989fccf11dd2a22e9e6108d0f"),
    ("rust.rs", "pub struct Store",
     "pub struct Store\ndata: HashMap<String, u32>\nname: String\ndirty: bool",
     "0a09c515cec828cacd0e5498173fecaf0e206e48f3e05112fbeddf6ad979e3e0"),
    ("typescript.ts", "class Service",
     "class Service\nprivate repo: Repo\nlimit: number = 10\nfind(id: string): Case {\n\u2026 (+2 lines)",
     "0fe7104a4c2694a1003b678782ab63dc3af194a24baf75098e8b42e7bde43879"),
    ("javascript.js", "class Service",
     "class Service\ncount = 0\nfind(id) {\n\u2026 (+2 lines)\nsave(x) {\n\u2026 (+2 lines)",
     "0cc473af35eeea971669cf5ac98546d25e1bc1dc87117b47210f608fc6a6684d"),
    ("c.c", "struct Point",
     "struct Point\nint x;\ndouble y;\nchar *label;",
     "b41ce20f777a6e6d6e47b23d518d677cf069cca836a6899d54cbc44397673212"),
    ("python.py", "class Service:",
     'class Service:\n"""A tiny service over a repo."""\ndef find(self, id):\n\u2026 (+1 lines)\n'
     "def save(self, x):\n\u2026 (+1 lines)",
     "56731d1e78f1a0f6c646a76e52efbba573c4d368bdd138b8991ad33fbc911c80"),
]


def _first_chunk(host: PluginHost, path: Path, chunk_type: str) -> Chunk:
    chunks = Chunker(host).chunk_file(path.name, path.read_text(encoding="utf-8")).chunks
    picked = sorted((c for c in chunks if c.chunk_type == chunk_type), key=lambda c: c.start_line)
    assert picked, f"no {chunk_type} chunk in {path}"
    return picked[0]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_golden(host: PluginHost, chunk: Chunk, name: str, signature: str, compact: str, sha: str) -> None:
    assert compress(host, name, chunk.content, "signature") == signature
    got = compress(host, name, chunk.content, "compact")
    assert got == compact
    assert _sha256(got) == sha
    assert compress(host, name, chunk.content, "full") is chunk.content
    assert estimate_tokens(got) < estimate_tokens(chunk.content)


@pytest.mark.parametrize(("name", "signature", "compact", "sha"), LEAF_GOLDENS, ids=[g[0] for g in LEAF_GOLDENS])
def test_leaf_goldens(reference: Path, host: PluginHost, name: str, signature: str, compact: str, sha: str):
    chunk = _first_chunk(host, reference / "test/fixture/compress" / name, "function")
    _check_golden(host, chunk, name, signature, compact, sha)


@pytest.mark.parametrize(("name", "signature", "compact", "sha"), CONTAINER_GOLDENS,
                         ids=[g[0] for g in CONTAINER_GOLDENS])
def test_container_goldens(reference: Path, host: PluginHost, name: str, signature: str, compact: str, sha: str):
    chunk = _first_chunk(host, reference / "test/fixture/compress/containers" / name, "class")
    _check_golden(host, chunk, name, signature, compact, sha)


def test_golden_tables_are_self_consistent():
    for _name, signature, compact, sha in LEAF_GOLDENS + CONTAINER_GOLDENS:
        assert compact.startswith(signature)
        assert _sha256(compact) == sha
    for _name, _sig, compact, _sha in LEAF_GOLDENS:
        assert "\u2026 (+" in compact  # every leaf golden is long enough to elide


def test_markdown_section_uses_the_first_line_rule(reference: Path, host: PluginHost):
    text = (reference / "test/fixture/markdown/nested.md").read_text(encoding="utf-8").rstrip()
    assert compress(host, "nested.md", text, "compact") == "# API\n\u2026 (+10 lines)"
    assert compress(host, "nested.md", text, "signature") == "# API"
    assert compress(host, "nested.md", text, "full") == text


# -- the reference's unit cases ------------------------------------------------------------

RUST_FN = "pub fn build_index() -> HashMap<String, u32> {\n    let m = HashMap::new();\n    m\n}"


@pytest.mark.parametrize(("path", "text", "level", "expected"), [
    ("s.rs", RUST_FN, "signature", "pub fn build_index() -> HashMap<String, u32>"),
    ("s.rs", RUST_FN, "compact", "pub fn build_index() -> HashMap<String, u32>\nlet m = HashMap::new();\n"
                                 "\u2026 (+2 lines)"),
    ("s.rs", "pub struct Store {\n    data: u32,\n    name: String,\n}", "signature", "pub struct Store"),
    ("s.rs", "pub struct Store {\n    data: u32,\n    name: String,\n}", "compact",
     "pub struct Store\ndata: u32\nname: String"),
    ("s.rs", "impl Store {\n    pub fn get(&self) -> u32 {\n        0\n    }\n}", "signature", "impl Store"),
    ("s.rs", "impl Store {\n    pub fn get(&self) -> u32 {\n        0\n    }\n}", "compact",
     "impl Store\npub fn get(&self) -> u32 {\n\u2026 (+2 lines)"),
    ("s.rs", "pub enum Kind {\n    Alpha,\n    Beta(u32),\n}", "compact", "pub enum Kind\nAlpha\nBeta(u32)"),
    ("case.rb", "class Case < ApplicationRecord\n  belongs_to :assignee\n  has_many :comments\n"
                "  validates :title, presence: true\n\n  def close!\n    update!(closed: true)\n  end\nend",
     "compact", "class Case < ApplicationRecord\nbelongs_to :assignee\nhas_many :comments\n"
                "validates :title, presence: true\ndef close!\n\u2026 (+2 lines)"),
    ("m.py", 'def f(x):\n    """Doc line."""\n    y = x + 1\n    return y', "compact",
     'def f(x):\n"""Doc line."""\ny = x + 1\n\u2026 (+1 lines)'),
    # a bare class method does not parse to a definition: the first-line rule
    ("a.js", 'load() {\n    return readConfig(".");\n  }', "signature", "load() {"),
    ("a.js", 'load() {\n    return readConfig(".");\n  }', "compact", "load() {\n\u2026 (+2 lines)"),
    # no pack claims the file
    ("notes.md", "# Notes\nsome text\nmore text", "signature", "# Notes"),
    ("notes.md", "# Notes\nsome text\nmore text", "compact", "# Notes\n\u2026 (+2 lines)"),
])
def test_reference_unit_cases(host: PluginHost, path: str, text: str, level: str, expected: str):
    assert compress(host, path, text, level) == expected


def test_full_returns_the_exact_text(host: PluginHost):
    for path, text in [("m.rs", "pub fn f(x: u32) -> u32 {\n    x + 1\n}"), ("a.py", "x = 1\r\n\n\u00e9\x1c  \n"),
                       ("none", ""), ("b.js", "load() {\n}\n")]:
        assert compress(host, path, text, "full") == text


def test_pack_sample_chunks_round_trip(host: PluginHost):
    # Every function chunk of every pack's own sample: the signature is one header,
    # compact starts with it, and full is the stored text to the byte.
    chunker = Chunker(host)
    for pack in host.packs.packs:
        path = "sample" + pack.extensions[0]
        for chunk in chunker.chunk_file(path, pack.sample).chunks:
            signature = compress(host, path, chunk.content, "signature")
            compact = compress(host, path, chunk.content, "compact")
            assert compact.startswith(signature), (pack.name, chunk.content)
            assert compress(host, path, chunk.content, "full") == chunk.content
    ruby = next(c for c in chunker.chunk_file("x.rb", host.packs.pack_for("x.rb").sample).chunks
                if c.chunk_type == "function")
    signature = compress(host, "x.rb", ruby.content, "signature")
    assert signature.startswith("def ") and "\n" not in signature


def test_first_line_rule_edges():
    assert first_line_view("", "compact") == ""
    assert first_line_view(" \n\t\n", "compact") == ""
    assert first_line_view("\n\n  x = 1  \n", "compact") == "  x = 1"
    assert first_line_view("\n  x = 1  \ny\n", "compact") == "  x = 1\n\u2026 (+1 lines)"
    assert first_line_view("a\r\nb\r\n", "signature") == "a"
    # U+001C is not white space for the family, so the line is not blank.
    assert first_line_view("\x1c\nb", "compact") == "\x1c\n\u2026 (+1 lines)"


def test_leaf_without_elision_and_multiline_signature(host: PluginHost):
    assert compress(host, "m.py", "def f(x):\n    return x", "compact") == "def f(x):\nreturn x"
    text = "def f(\n    a,\n    b,\n):\n    return a\n"
    assert compress(host, "m.py", text, "signature") == "def f(\n    a,\n    b,\n):"
    assert compress(host, "m.py", text, "compact") == "def f(\n    a,\n    b,\n):\nreturn a"
    # A one-line definition has no body to show.
    assert compress(host, "m.rs", "struct Unit;", "compact") == "struct Unit;"


def test_non_ascii_text_is_sliced_by_bytes(host: PluginHost):
    text = 'def café(x):\n    """Résumé ✓."""\n    return "naïve"\n'
    assert compress(host, "m.py", text, "compact") == 'def café(x):\n"""Résumé ✓."""\nreturn "naïve"'


def test_detail_levels_parse():
    assert DETAIL_LEVELS == ("signature", "compact", "full")
    for level in DETAIL_LEVELS:
        assert parse_detail(level) == level
    assert parse_detail("COMPACT") == "compact"
    assert parse_detail(" full ") == "full"
    assert parse_detail("\u3000Signature\n") == "signature"
    assert parse_detail("verbose") == "compact"
    assert parse_detail(None) == "compact"
    assert parse_detail("", default="full") == "full"


def test_unknown_detail_is_a_programming_error(host: PluginHost):
    with pytest.raises(ValueError, match="detail level"):
        compress(host, "a.py", "x", "verbose")


def test_elision_marker_is_always_plural():
    assert elision_marker(3) == "\u2026 (+3 lines)"
    assert elision_marker(1) == "\u2026 (+1 lines)"
    assert elision_marker(0).encode("utf-8") == b"\xe2\x80\xa6 (+0 lines)"


# -- the hook ---------------------------------------------------------------------------------

PY_CLASS = 'class Service:\n    """Doc."""\n    def find(self):\n        return 1\n'


def _override_plugin(calls: list[tuple]) -> types.SimpleNamespace:
    @hookimpl
    def cce_render_compact(language, chunk, node, level):
        calls.append((language, chunk, node, level))
        if language != "python" or node is None:
            return None
        name = node.child_by_field_name("name")
        label = chunk.source[name.start_byte:name.end_byte].decode()
        return f"[{level}] {node.type} {label} in {chunk.file_path}"

    return types.SimpleNamespace(cce_render_compact=cce_render_compact)


def test_a_plugin_overrides_the_python_renderer_on_a_bare_host():
    calls: list[tuple] = []
    host = PluginHost([(cce_pack_python, "cce-pack-python"), (_override_plugin(calls), "test")], entry_points=False)
    assert compress(host, "svc.py", PY_CLASS, "compact") == "[compact] class_definition Service in svc.py"
    assert compress(host, "svc.py", PY_CLASS, "signature") == "[signature] class_definition Service in svc.py"
    assert compress(host, "svc.py", PY_CLASS, "full") == PY_CLASS  # full never reaches a renderer
    language, chunk, node, level = calls[0]
    assert (language, level) == ("python", "compact")
    assert isinstance(chunk, CompactChunk) and chunk.content == PY_CLASS and chunk.source == PY_CLASS.encode()
    assert chunk.pack.name == "python" and node.type == "class_definition"
    assert len(calls) == 2


def test_a_plugin_overrides_python_on_top_of_the_installed_packs():
    calls: list[tuple] = []
    host = PluginHost()
    before = compress(host, "svc.py", PY_CLASS, "compact")
    assert before == 'class Service:\n"""Doc."""\ndef find(self):\n\u2026 (+1 lines)'
    host.register_plugin(_override_plugin(calls), "test")
    assert compress(host, "svc.py", PY_CLASS, "compact") == "[compact] class_definition Service in svc.py"
    # The other languages still get their own pack's rendering.
    assert compress(host, "s.rs", RUST_FN, "signature") == "pub fn build_index() -> HashMap<String, u32>"
    assert [c[0] for c in calls] == ["python", "rust"]


def test_the_hook_sees_text_without_a_definition(host: PluginHost):
    calls: list[tuple] = []
    fresh = PluginHost()
    fresh.register_plugin(_override_plugin(calls), "test")
    assert compress(fresh, "m.py", "x = 1\ny = 2\n", "compact") == "x = 1\n\u2026 (+1 lines)"
    assert calls[0][2] is None
    # No pack claims the file: no hook call, the first-line rule.
    assert compress(fresh, "notes.txt", "a\nb", "compact") == "a\n\u2026 (+1 lines)"
    assert len(calls) == 1


class _RubyPackOnly:
    """Registers the Ruby pack but implements no renderer."""

    @hookimpl
    def cce_register_packs(self, register):
        register(cce_pack_ruby.PACK)


def test_without_a_pack_renderer_the_neutral_rule_uses_the_declared_kinds(reference: Path):
    bare = PluginHost([(_RubyPackOnly(), "test")], entry_points=False)
    path = reference / "test/fixture/compress/containers/ruby.rb"
    chunk = _first_chunk(bare, path, "class")
    _, signature, compact, sha = CONTAINER_GOLDENS[0]
    _check_golden(bare, chunk, "ruby.rb", signature, compact, sha)


def test_a_failing_renderer_falls_back_to_the_neutral_rule():
    class Broken:
        @hookimpl
        def cce_render_compact(self, language, chunk, node, level):
            raise RuntimeError("boom")

    host = PluginHost()
    host.register_plugin(Broken(), "test")
    # Without the Python pack's docstring knowledge the neutral rule shows the
    # docstring statement as the first body line.
    assert compress(host, "m.py", 'def f(x):\n    """Doc."""\n    return x\n', "compact") == \
        'def f(x):\n"""Doc."""\n\u2026 (+1 lines)'


def test_render_definition_is_usable_by_a_plugin(host: PluginHost):
    from tree_sitter import Parser

    pack = host.packs.pack_for("m.py")
    source = b'def f(x):\n    """Doc."""\n    return x\n'
    tree = Parser(pack.grammar()).parse(source)
    node = tree.root_node.named_children[0]
    chunk = CompactChunk("m.py", source.decode(), source, pack)
    assert render_definition(chunk, node, "compact") == 'def f(x):\n"""Doc."""\n\u2026 (+1 lines)'
    assert render_definition(chunk, node, "compact", doc_wrappers=("expression_statement",)) == \
        'def f(x):\n"""Doc."""\nreturn x'


def test_threads_render_the_same_bytes(reference: Path, host: PluginHost):
    from concurrent.futures import ThreadPoolExecutor

    base = reference / "test/fixture/compress"
    jobs = [(p.name, p.read_text(encoding="utf-8")) for p in sorted(base.glob("*.*"))]
    jobs += [(p.name, p.read_text(encoding="utf-8")) for p in sorted((base / "containers").glob("*.*"))]
    serial = [compress(host, name, text, "compact") for name, text in jobs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(5):
            assert list(pool.map(lambda job: compress(host, job[0], job[1], "compact"), jobs)) == serial


def test_an_override_registered_before_the_pack_still_wins():
    """Registration order must not decide: the pack's own renderer is asked last."""
    from cce_core.plugins.host import PluginHost

    class Override:
        @hookimpl
        def cce_render_compact(self, language, chunk, node, level):
            return "OVERRIDE" if language == "python" else None

    host = PluginHost([(Override(), "override-dist"), (cce_pack_python, "cce-pack-python")], entry_points=False)
    assert compress(host, "a.py", "def f():\n    return 1\n", "compact") == "OVERRIDE"

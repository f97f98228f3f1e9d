"""Self-tests of cce-pack-ruby: the validators, the import rule, the shipped sample, odd input.

``chunk_with`` registers the pack alone on a fresh host, so nothing else installed
can change an answer. Run with ``python -m pytest packs/cce-pack-ruby/tests``.
"""

from __future__ import annotations

import cce_pack_ruby
import pytest
from tree_sitter import Parser

from cce_core.api import chunk_with, render_with, validate_plugin

PACK = cce_pack_ruby.PACK


def _bare_tree_imports(text: str) -> list[str]:
    """``extract_imports`` on a parsed tree, as validators, tools and plugins call it."""
    source = text.encode("utf-8")
    return PACK.extract_imports(Parser(PACK.grammar()).parse(source).root_node, source)


# -- the pack ------------------------------------------------------------------


def test_the_validators_pass() -> None:
    report = validate_plugin(cce_pack_ruby)
    assert [pack.name for pack in report.packs] == ["ruby"]
    assert report.ok, "\n".join(report.diagnostics)


def test_the_pack_claims_its_extensions() -> None:
    assert PACK.extensions == (".rb",)
    assert PACK.grammar_distribution == "tree-sitter-ruby"


# -- the sample ----------------------------------------------------------------


def test_sample_meets_expected() -> None:
    result = chunk_with(cce_pack_ruby, PACK.sample_name, PACK.sample)
    functions = [c for c in result.chunks if c.chunk_type == "function"]
    classes = [c for c in result.chunks if c.chunk_type == "class"]
    assert len(functions) >= PACK.expected.min_functions
    assert len(classes) >= PACK.expected.min_classes
    assert set(PACK.expected.kinds) <= {c.kind for c in result.chunks}
    assert result.imports == list(PACK.expected.imports)
    assert all(c.language == "ruby" for c in result.chunks)


def test_sample_chunks_in_document_order() -> None:
    assert PACK.sample_name == "ruby.rb"
    result = chunk_with(cce_pack_ruby, PACK.sample_name, PACK.sample)
    assert [(c.kind, c.chunk_type) for c in result.chunks] == [
        ("method", "function"),
        ("class", "class"),
        ("method", "function"),
    ]


def test_extract_imports_called_directly_returns_a_list() -> None:
    assert _bare_tree_imports(PACK.sample) == list(PACK.expected.imports)


# -- the import rule -------------------------------------------------------------

# The stem of the last path segment of a bare require / require_relative.
IMPORT_CASES = [
    ("a.rb", 'require_relative "a/b.rb"\n', ["b"]),
    ("a.rb", 'require "json"\nJSON.parse(x)\nloader.require "other"\nrequire "json"\n', ["json"]),
    ("a.rb", 'require ".env"\nrequire File.join(dir, "lib/c.rb")\nrequire name\n', [".env", "c"]),
]


@pytest.mark.parametrize(("path", "text", "expected"), IMPORT_CASES)
def test_import_rule(path: str, text: str, expected: list[str]) -> None:
    assert chunk_with(cce_pack_ruby, path, text).imports == expected
    assert _bare_tree_imports(text) == expected


# -- odd input -------------------------------------------------------------------

ODD_INPUTS = ["", "\x00\x01 ((((", "import", "use", "#include", "require", "(" * 3000, "é" * 20, 'import "\n']


@pytest.mark.parametrize("text", ODD_INPUTS)
def test_import_extraction_survives_odd_input(text: str) -> None:
    result = chunk_with(cce_pack_ruby, f"odd{PACK.extensions[0]}", text)
    assert isinstance(result.imports, list)
    assert result.chunks
    assert isinstance(_bare_tree_imports(text), list)


# -- compact rendering ---------------------------------------------------------------

# A Rails model: its DSL lines are members of the class, not body statements to elide.
MODEL = """\
class Case < ApplicationRecord
  belongs_to :assignee, class_name: "User"
  has_many :comments, dependent: :destroy
  has_one :summary
  validates :title, presence: true
  scope :open, -> { where(closed: false) }
  enum status: { open: 0, closed: 1 }

  def close!
    update!(closed: true)
    log_event
  end
end
"""


def test_model_dsl_survives_compact() -> None:
    chunk = min((c for c in chunk_with(cce_pack_ruby, "ruby.rb", MODEL).chunks if c.chunk_type == "class"),
                key=lambda c: c.start_line)
    compact = render_with(cce_pack_ruby, "ruby.rb", chunk.content, "compact")
    for line in ("belongs_to :assignee", "has_many :comments", "has_one :summary", "validates :title"):
        assert line in compact
    assert compact == (
        'class Case < ApplicationRecord\nbelongs_to :assignee, class_name: "User"\n'
        "has_many :comments, dependent: :destroy\nhas_one :summary\nvalidates :title, presence: true\n"
        "scope :open, -> { where(closed: false) }\n"
        "enum status: { open: 0, closed: 1 }\ndef close!\n\u2026 (+3 lines)"
    )
    assert render_with(cce_pack_ruby, "ruby.rb", chunk.content, "signature") == "class Case < ApplicationRecord"


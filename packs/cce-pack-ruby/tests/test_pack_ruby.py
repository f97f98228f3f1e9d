"""cce-pack-ruby alone: the engine's self-test of a pack, then the rules that are Ruby's own."""

from __future__ import annotations

import cce_pack_ruby
import pytest

from cce_core.api import chunk_with, imports_with, pack_self_test, render_with

PACK = cce_pack_ruby.PACK


def test_the_pack_passes_its_self_test() -> None:
    assert pack_self_test(cce_pack_ruby, "ruby") == []


def test_require_calls_are_found_in_the_chunkers_one_walk() -> None:
    # import_pattern narrows `call` (every method call) to the require calls, so the chunker
    # reads imports from its shared query instead of walking each tree a second time.
    assert PACK.imports_from_nodes is not None
    assert PACK.import_pattern == cce_pack_ruby.REQUIRE_PATTERN
    assert "@import" in PACK.import_pattern


def test_the_pack_claims_its_extensions_grammar_and_sample() -> None:
    assert PACK.extensions == (".rb",)
    assert (PACK.grammar_distribution, PACK.sample_name) == ("tree-sitter-ruby", "ruby.rb")


def test_sample_chunks_in_document_order() -> None:
    chunks = chunk_with(cce_pack_ruby, PACK.sample_name, PACK.sample).chunks
    assert [(c.language, c.kind, c.chunk_type) for c in chunks] == [
        ("ruby", "method", "function"),
        ("ruby", "class", "class"),
        ("ruby", "method", "function"),
    ]


# The stem of the last path segment of a bare require / require_relative.
@pytest.mark.parametrize(("path", "text", "expected"), [
    ("a.rb", 'require_relative "a/b.rb"\n', ["b"]),
    ("a.rb", 'require "json"\nJSON.parse(x)\nloader.require "other"\nrequire "json"\n', ["json"]),
    ("a.rb", 'require ".env"\nrequire File.join(dir, "lib/c.rb")\nrequire name\n', [".env", "c"]),
    # Nested calls: the outer one first at one start, each stem once.
    ("a.rb", 'require require_relative("x/y")\nrequire "z" if require_relative "w"\n', ["y", "z", "w"]),
    # A call with two identifiers that match (receiver and method) is captured twice by the one walk
    # and must still give one import; the rule reads the call's first child, here the receiver.
    ("a.rb", 'require.require "q"\nrequire_relative.call "r"\n', ["q", "r"]),
])
def test_import_rule(path: str, text: str, expected: list[str]) -> None:
    assert imports_with(cce_pack_ruby, path, text) == expected


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


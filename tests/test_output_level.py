"""Layer 4: the pinned output-compression blocks and the set_output_compression tool texts."""

from __future__ import annotations

from cce_core.agents.output_level import OUTPUT_LEVELS, apply_set_output_compression, output_block


def test_block_byte_lengths_are_pinned():
    assert OUTPUT_LEVELS == ("off", "lite", "standard", "max")
    assert [len(output_block(level).encode("utf-8")) for level in OUTPUT_LEVELS] == [0, 75, 187, 234]


def test_block_texts():
    assert output_block("off") == ""
    assert output_block("lite") == "\n### Output compression\n\nBe concise; drop filler, preamble, and postamble.\n"
    standard = ("\n### Output compression\n\nAnswer in the fewest words that are correct; when editing code show "
                "ONLY the changed lines (a minimal diff), never reprint whole files; no preamble or postamble.\n")
    assert output_block("standard") == standard
    assert output_block("max") == standard[:-1] + " Telegraphic prose; code as minimal diffs only.\n"


def test_the_tool_switches_every_level():
    for level in OUTPUT_LEVELS:
        new, text, is_error = apply_set_output_compression({"level": f" {level.upper()} "})
        assert (new, is_error) == (level, False)
        assert text == f"Output compression is now `{level}` for this session (in-memory; CLAUDE.md unchanged)."


def test_the_tool_rejects_missing_and_unknown_levels():
    for args in ({}, {"level": "  "}, {"level": 3}):
        assert apply_set_output_compression(args) == (
            None, "set_output_compression requires a `level` (one of: off, lite, standard, max).", True)
    assert apply_set_output_compression({"level": "turbo"}) == (
        None, 'set_output_compression: unknown level "turbo"; use "off", "lite", "standard", or "max".', True)
    _, text, _ = apply_set_output_compression({"level": 'a"b'})
    assert text.startswith('set_output_compression: unknown level "a\\"b";')

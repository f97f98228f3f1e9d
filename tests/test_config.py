"""`.cce/config`: YAML 1.2 scalars and the per-section fallback of the reference loaders."""

from __future__ import annotations

import pytest

from cce_core.foundation.config import CceConfig, load_config, parse_config

DEFAULTS = CceConfig()


def test_defaults_when_the_file_is_missing(tmp_path):
    assert load_config(tmp_path) == DEFAULTS
    assert DEFAULTS.retrieval_detail == "compact"
    assert DEFAULTS.output_level == "standard"
    assert DEFAULTS.memory_enabled is True
    assert DEFAULTS.summarization_auto_tokens is None
    assert DEFAULTS.mcp_result_footer == "off"
    assert (DEFAULTS.knowledge_enabled, DEFAULTS.knowledge_min_score, DEFAULTS.knowledge_default_source) == (
        True, 0.30, "both")
    assert DEFAULTS.markdown_max_section_tokens == 400


def test_reads_only_the_project_file(tmp_path):
    (tmp_path / ".cce").mkdir()
    (tmp_path / ".cce" / "config").write_text("output:\n  level: max\nretrieval:\n  detail: signature\n")
    cfg = load_config(tmp_path)
    assert (cfg.output_level, cfg.retrieval_detail) == ("max", "signature")


@pytest.mark.parametrize("text, expected", [
    ("output:\n  level: off\n", "off"),  # YAML 1.2: `off` is a string, not false
    ("output:\n  level: lite\n", "lite"),
    ("output:\n  level: max\n", "max"),
    ("output:\n  level: ' MAX '\n", "max"),  # trimmed, case-insensitive
    ("sync:\n  lfs: true\n", "standard"),
    ("output: {}\n", "standard"),
    ("output:\n  level: bogus\n", "standard"),
    ("not: yaml: [", "standard"),
])
def test_output_level(text, expected):
    assert parse_config(text).output_level == expected


@pytest.mark.parametrize("text, expected", [
    ("memory:\n  enabled: false\n", False),
    ("memory:\n  enabled: False\n", False),
    ("memory:\n  enabled: true\n", True),
    ("memory:\n  enabled: no\n", True),  # `no` is a string: type mismatch, section keeps its default
    ("memory:\n  enabled: off\n", True),
    ("memory:\n  enabled: \"false\"\n", True),  # a quoted string is not a boolean either
    ("memory: {}\n", True),
    ("not: yaml: [", True),
])
def test_memory_enabled(text, expected):
    assert parse_config(text).memory_enabled is expected


@pytest.mark.parametrize("text, expected", [
    ("summarization:\n  auto_tokens: 5000\n", 5000),
    ("summarization:\n  auto_tokens: null\n", None),
    ("summarization:\n  auto_tokens: -3\n", None),
    ("summarization:\n  auto_tokens: 1.5\n", None),
    ("summarization: {}\n", None),
    ("not: yaml: [", None),
])
def test_summarization_auto_tokens(text, expected):
    assert parse_config(text).summarization_auto_tokens == expected


@pytest.mark.parametrize("text, expected", [
    ("mcp:\n  result_footer: on\n", "on"),
    ("mcp:\n  result_footer: \"on\"\n", "on"),
    ("mcp:\n  result_footer: true\n", "on"),
    ("mcp:\n  result_footer: session\n", "session"),
    ("mcp:\n  result_footer: off\n", "off"),
    ("mcp:\n  result_footer: false\n", "off"),
    ("mcp:\n  result_footer: loud\n", "off"),
    ("mcp: {}\n", "off"),
    ("not: yaml: [", "off"),
])
def test_mcp_result_footer(text, expected):
    assert parse_config(text).mcp_result_footer == expected


def test_markdown_budget():
    assert parse_config("markdown:\n  max_section_tokens: 250\n").markdown_max_section_tokens == 250
    assert parse_config("markdown:\n  max_section_tokens: 0\n").markdown_max_section_tokens == 400
    assert parse_config("markdown: {}\n").markdown_max_section_tokens == 400


def test_knowledge_keys_and_the_section_wide_fallback():
    cfg = parse_config("knowledge:\n  enabled: false\n  min_score: 0.5\n  default_source: code\n")
    assert (cfg.knowledge_enabled, cfg.knowledge_min_score, cfg.knowledge_default_source) == (False, 0.5, "code")
    # one bad field resets the whole section, the valid `enabled: false` included
    bad = parse_config("knowledge: {enabled: false, min_score: \"x\"}\n")
    assert (bad.knowledge_enabled, bad.knowledge_min_score) == (True, 0.30)
    # an unknown source is ignored, the rest of the section still applies
    odd = parse_config("knowledge:\n  enabled: false\n  default_source: nonsense\n")
    assert (odd.knowledge_enabled, odd.knowledge_default_source) == (False, "both")


def test_a_bad_section_does_not_spoil_the_others():
    cfg = parse_config("output:\n  level: lite\nmemory: [1, 2]\nretrieval:\n  detail: full\n  extra: 7\n")
    assert (cfg.output_level, cfg.memory_enabled, cfg.retrieval_detail) == ("lite", True, "full")


def test_unknown_keys_are_ignored():
    cfg = parse_config("whatever:\n  x: 1\nmemory:\n  enabled: false\n  colour: blue\n")
    assert cfg.memory_enabled is False


def test_retrieval_detail():
    assert parse_config("retrieval:\n  detail: signature\n").retrieval_detail == "signature"
    assert parse_config("retrieval:\n  detail: FULL\n").retrieval_detail == "full"
    assert parse_config("retrieval:\n  detail: bogus\n").retrieval_detail == "compact"
    assert parse_config("retrieval: {}\n").retrieval_detail == "compact"


def test_non_utf8_or_empty_file_means_defaults(tmp_path):
    (tmp_path / ".cce").mkdir()
    cfg_file = tmp_path / ".cce" / "config"
    cfg_file.write_bytes(b"output:\n  level: \xff\n")
    assert load_config(tmp_path) == DEFAULTS
    cfg_file.write_text("")
    assert load_config(tmp_path) == DEFAULTS

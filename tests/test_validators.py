"""The three pack safety layers, on the real packs and on deliberately broken copies.

Broken packs are built with ``dataclasses.replace`` from an installed pack, so
each test changes exactly one thing and checks that the diagnostic names the
pack, the member at fault and a way to fix it.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import installed_pack

from cce_core.authoring.validate import behaviour_problems, validate_all, validate_pack
from cce_core.hookspecs import LanguagePack, hookimpl
from cce_core.plugins.host import PluginHost
from cce_core.plugins.validation import edit_distance, grammar_problems, structural_problems, suggestions

PACK_NAMES = ["c", "javascript", "python", "ruby", "rust", "typescript"]


def _c_copy(host: PluginHost, **changes) -> LanguagePack:
    """The installed C pack under another name and extension, with ``changes``."""
    base = replace(installed_pack(host, "c"), name="broken-c", extensions=(".bc",), distribution="")
    return replace(base, **changes)


# -- the real packs ------------------------------------------------------------


def test_every_installed_pack_passes_all_layers(host):
    problems, reports = validate_all(host)
    assert problems == []
    assert sorted(r.name for r in reports) == PACK_NAMES
    for report in reports:
        assert report.ok, (report.name, report.diagnostics)


@pytest.mark.parametrize("name", PACK_NAMES)
def test_each_layer_is_clean_for(host, bare_host, name):
    pack = installed_pack(host, name)
    others = [p for p in host.packs.packs if p.name != name]
    assert structural_problems(pack, others) == []
    assert grammar_problems(pack) == []
    assert behaviour_problems(pack, bare_host) == []


@pytest.mark.parametrize("name", PACK_NAMES)
def test_compact_node_kinds_exist_in_the_grammar(host, name):
    # Layer 2 in the core checks the chunk and import kinds; the kinds the compact
    # renderer reads must be real too, so check them here for the shipped packs.
    pack = installed_pack(host, name)
    language = pack.grammar()
    named = {language.node_kind_for_id(i) for i in range(language.node_kind_count) if language.node_kind_is_named(i)}
    declared = (*pack.body_node_types, *pack.doc_node_types, *pack.member_node_types)
    assert [kind for kind in declared if kind not in named] == []


# -- layer 1: structure ----------------------------------------------------------


def test_bad_extension_is_reported_with_a_fix(host):
    pack = replace(installed_pack(host, "ruby"), name="badext", extensions=("RB",))
    problems = structural_problems(pack, [])
    assert len(problems) == 1
    assert "[pack:badext]" in problems[0]
    assert '"RB"' in problems[0]
    assert "leading dot" in problems[0]
    assert '".rb"' in problems[0]


def test_uppercase_name_and_empty_extensions_are_reported(host):
    pack = replace(installed_pack(host, "rust"), name="Rusty", extensions=())
    joined = "\n".join(structural_problems(pack, []))
    assert 'use "rusty"' in joined
    assert "extensions is empty" in joined


def test_extension_clash_names_both_packs(host):
    ruby = installed_pack(host, "ruby")
    twin = replace(ruby, name="ruby-legacy")
    problems = structural_problems(twin, [ruby])
    assert problems == [
        '[pack:ruby-legacy] extension ".rb" already claimed by pack "ruby"; each extension maps to exactly one pack.'
        ' (installed by cce-pack-ruby; uninstall one)'
    ]


# -- layer 2: grammar binding --------------------------------------------------------


def test_misspelt_node_kind_gets_a_did_you_mean(host):
    broken = _c_copy(host, class_types=("struct_specifer", "union_specifier", "enum_specifier"))
    problems = grammar_problems(broken)
    assert len(problems) == 1
    message = problems[0]
    assert "[pack:broken-c]" in message
    assert "class_types" in message
    assert '"struct_specifer"' in message
    assert "Did you mean" in message
    assert '"struct_specifier"' in message
    assert "tree-sitter-c" in message


def test_validate_pack_stops_at_the_grammar_layer(host, bare_host):
    broken = _c_copy(host, class_types=("struct_specifer",))
    report = validate_pack(broken, bare_host)
    assert not report.ok
    assert report.name == "broken-c"
    # Only the root cause: the behaviour layer is not run on a mis-bound pack.
    assert len(report.diagnostics) == 1
    assert "Did you mean" in report.diagnostics[0]


def test_misspelt_import_node_kind_is_reported(host):
    broken = replace(installed_pack(host, "rust"), import_node_types=("use_declaraton",))
    problems = grammar_problems(broken)
    assert len(problems) == 1
    assert "[pack:rust] import_node_types" in problems[0]
    assert '"use_declaration"' in problems[0]


# -- import_pattern: the query that narrows a common import kind (Ruby's require calls) -----------


def test_import_pattern_without_imports_from_nodes_is_reported(host):
    ruby = installed_pack(host, "ruby")
    problems = structural_problems(replace(ruby, imports_from_nodes=None), [])
    assert problems == ["[pack:ruby] import_pattern is set but imports_from_nodes is None, so nothing reads what "
                        "it captures; write imports_from_nodes, or leave import_pattern empty."]


def test_import_pattern_that_does_not_compile_is_reported(host):
    ruby = installed_pack(host, "ruby")
    problems = grammar_problems(replace(ruby, import_pattern="(cal (identifier)) @import"))
    assert len(problems) == 1
    assert problems[0].startswith("[pack:ruby] import_pattern does not compile against tree-sitter-ruby")
    assert "second walk" in problems[0]


def test_import_pattern_without_an_import_capture_is_reported(host):
    ruby = installed_pack(host, "ruby")
    problems = grammar_problems(replace(ruby, import_pattern="(call) @require"))
    assert problems == ["[pack:ruby] import_pattern captures no @import node; end the pattern with @import."]


def test_import_pattern_that_disagrees_with_extract_imports_fails_the_behaviour_layer(host, bare_host):
    # Narrowed to require_relative only: the one-walk imports lose the sample's `require "json"`.
    ruby = installed_pack(host, "ruby")
    narrow = replace(ruby, import_pattern='(call (identifier) @_m (#eq? @_m "require_relative")) @import')
    assert grammar_problems(narrow) == []
    problems = behaviour_problems(narrow, bare_host)
    assert len(problems) == 1
    assert problems[0].startswith("[pack:ruby] imports_from_nodes gave [] on its sample but extract_imports gave")


def test_grammar_loader_that_raises(host):
    def no_grammar():
        raise RuntimeError("shared library missing")

    broken = _c_copy(host, grammar=no_grammar)
    problems = grammar_problems(broken)
    assert len(problems) == 1
    assert "[pack:broken-c] grammar failed to load" in problems[0]
    assert "RuntimeError: shared library missing" in problems[0]
    assert '"tree-sitter-c"' in problems[0]


def test_grammar_loader_that_raises_through_validate_pack(host, bare_host):
    def no_grammar():
        raise ImportError("No module named 'tree_sitter_c'")

    report = validate_pack(_c_copy(host, grammar=no_grammar), bare_host)
    assert len(report.diagnostics) == 1
    assert "grammar failed to load" in report.diagnostics[0]


def test_edit_distance_and_suggestions():
    assert edit_distance("struct_specifer", "struct_specifier") == 1
    assert edit_distance("", "abc") == 3
    assert edit_distance("same", "same") == 0
    assert suggestions("struct_specifer", {"struct_specifier", "union_specifier", "enum_specifier"})[0] == (
        "struct_specifier"
    )


# -- layer 3: behaviour ----------------------------------------------------------------


def test_pack_wired_to_the_wrong_node_types(host, bare_host):
    # Real node kinds, so layer 2 passes, but the sample has no enum and no union.
    miswired = _c_copy(host, function_types=("enum_specifier",), class_types=("union_specifier",))
    assert grammar_problems(miswired) == []
    report = validate_pack(miswired, bare_host)
    joined = "\n".join(report.diagnostics)
    assert "[pack:broken-c] produced 0 function chunks from its sample, expected at least 1" in joined
    assert "function_types = ['enum_specifier']" in joined
    assert "[pack:broken-c] produced 0 class chunks from its sample, expected at least 1" in joined
    assert "class_types = ['union_specifier']" in joined
    assert "'function_definition'" in joined
    assert "'struct_specifier'" in joined
    assert "list that kind in function_types or class_types" in joined


def test_function_kind_mistaken_for_a_class_kind(host, bare_host):
    # Ruby with `method` moved to class_types: the counts no longer add up.
    ruby = installed_pack(host, "ruby")
    swapped = replace(ruby, function_types=("singleton_method",), class_types=("class", "module", "method"))
    problems = behaviour_problems(swapped, bare_host)
    assert len(problems) == 1
    assert "[pack:ruby] produced 0 function chunks" in problems[0]


def test_wrong_expected_imports(host, bare_host):
    rust = installed_pack(host, "rust")
    wrong = replace(rust, expected=replace(rust.expected, imports=("std", "std")))
    problems = behaviour_problems(wrong, bare_host)
    assert problems == [
        "[pack:rust] imports mismatch: extracted ['std'] but expected ['std', 'std'] — "
        "return each module once, in first-seen order."
    ]


def test_import_extractor_that_finds_nothing(host, bare_host):
    c = installed_pack(host, "c")
    silent = replace(c, extract_imports=lambda root, source: [])
    problems = behaviour_problems(silent, bare_host)
    assert len(problems) == 1
    assert "imports mismatch: extracted [] but expected ['stdlib']" in problems[0]


def test_import_extractor_that_raises_does_not_crash_validation(host, bare_host):
    def explode(root, source):
        raise ValueError("boom")

    js = installed_pack(host, "javascript")
    problems = behaviour_problems(replace(js, extract_imports=explode), bare_host)
    assert len(problems) == 1
    assert "imports mismatch" in problems[0]


def test_validate_all_reports_a_broken_plugin_next_to_healthy_ones(host):
    class _Plugin:
        def __init__(self, *packs):
            self._packs = packs

        @hookimpl
        def cce_register_packs(self, register):
            for pack in self._packs:
                register(pack)

    healthy = installed_pack(host, "c")
    broken = _c_copy(host, class_types=("struct_specifer",))
    mixed = PluginHost([(_Plugin(healthy), "cce-pack-c"), (_Plugin(broken), "broken-dist")], entry_points=False)
    problems, reports = validate_all(mixed)
    assert problems == []
    by_name = {r.name: r for r in reports}
    assert by_name["c"].ok
    assert not by_name["broken-c"].ok
    assert "Did you mean" in by_name["broken-c"].diagnostics[0]

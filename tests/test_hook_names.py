"""Hook implementations the engine would never call are found and named, with the closest real hook."""

from __future__ import annotations

import types

from cce_core.api import hookimpl, validate_plugin
from cce_core.plugins.host import PluginHost
from cce_core.plugins.validation import hook_name_problems, hook_names


def _plugin(name: str, **functions: object) -> types.ModuleType:
    module = types.ModuleType(name)
    for attr, value in functions.items():
        setattr(module, attr, value)
    return module


@hookimpl
def cce_register_pack(register):  # misspelled on purpose
    raise AssertionError("never called")


def cce_register_packs_unmarked(register):
    raise AssertionError("never called")


def test_the_hook_names_are_the_hookspecs():
    assert hook_names() == {"cce_register_packs", "cce_extract_imports", "cce_render_compact",
                            "cce_register_embedders", "cce_register_document_chunkers", "cce_file_conventions",
                            "cce_tags_query", "cce_resolve_import", "cce_symbol_binding_reader"}


def test_a_misspelled_hook_names_the_plugin_the_hook_and_the_closest_valid_name():
    problems = hook_name_problems(_plugin("typo", cce_register_pack=cce_register_pack), "typo (cce-pack-typo)")
    assert problems == ['plugin "typo (cce-pack-typo)" implements unknown hook "cce_register_pack" — '
                        'did you mean "cce_register_packs"?']


def test_a_name_nothing_resembles_lists_the_hooks():
    (problem,) = hook_name_problems(_plugin("odd", cce_frobnicate=cce_register_pack), "odd")
    assert problem.startswith('plugin "odd" implements unknown hook "cce_frobnicate" — the hooks are: ')
    assert "cce_register_packs" in problem


def test_a_real_hook_without_the_marker_is_reported():
    (problem,) = hook_name_problems(_plugin("bare", cce_register_packs=cce_register_packs_unmarked), "bare")
    assert "defines cce_register_packs without @hookimpl, so it is never called" in problem


def test_other_attributes_are_not_hooks():
    plugin = _plugin("fine", cce_VERSION="1", helper=cce_register_packs_unmarked, CCE_CONSTANT=3)
    assert hook_name_problems(plugin, "fine") == []


def test_the_host_collects_problems_and_validate_plugin_fails_on_them():
    plugin = _plugin("typo", cce_register_pack=cce_register_pack)
    host = PluginHost([(plugin, "cce-pack-typo")], entry_points=False)
    assert len(host.hook_problems) == 1 and "cce_register_pack" in host.hook_problems[0]
    assert host.startup_problems() == []  # a warning for normal commands, not a reason to refuse them
    report = validate_plugin(plugin, "cce-pack-typo")
    assert not report.ok and report.packs == []
    assert report.diagnostics == host.hook_problems


def test_every_installed_plugin_uses_real_hook_names(host):
    assert host.hook_problems == []


def test_a_marked_function_under_any_other_name_is_an_unknown_hook():
    # pluggy would register it as a hook called "_structural", which nothing ever calls.
    problems = hook_name_problems(_plugin("wrapper", _structural=cce_register_pack), "wrapper")
    assert problems == ['plugin "wrapper" implements unknown hook "_structural" — the hooks are: '
                        "cce_extract_imports, cce_file_conventions, cce_register_document_chunkers, "
                        "cce_register_embedders, cce_register_packs, cce_render_compact, cce_resolve_import, "
                        "cce_symbol_binding_reader, cce_tags_query"]

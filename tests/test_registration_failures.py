"""A plugin whose registration goes wrong is named in one problem line; the engine itself never breaks."""

from __future__ import annotations

import types
from dataclasses import replace

import cce_pack_python
import pytest

from cce_core.api import Embedder, hookimpl, validate_plugin
from cce_core.foundation.errors import CceError
from cce_core.plugins.host import PluginHost
from cce_core.plugins.validation import structural_problems


class _Broken:
    @hookimpl
    def cce_register_packs(self, register):
        raise RuntimeError("grammar wheel missing")


class _Dummy(Embedder):
    name = "dummy"


class _TwoDummies:
    @hookimpl
    def cce_register_embedders(self, register):
        register("dummy", _Dummy)


class _NoParameter:
    @hookimpl
    def cce_register_packs(self):
        self.called = True


class _FailingOverride:
    @hookimpl(tryfirst=True)
    def cce_extract_imports(self, language, root, source):
        raise ValueError("bug in the override")


def test_a_raising_registration_hook_is_a_named_startup_problem():
    host = PluginHost([(_Broken(), "cce-pack-broken")], entry_points=False)
    (problem,) = host.startup_problems()
    assert 'from distribution "cce-pack-broken" failed while registering' in problem
    assert "cce_register_packs raised RuntimeError: grammar wheel missing" in problem
    with pytest.raises(CceError, match="failed while registering"):
        host.require_healthy()
    # Rebuilding the registry reports it once, not twice.
    host.register_plugin(types.ModuleType("empty"))
    assert len(host.startup_problems()) == 1


def test_validate_plugin_reports_a_raising_registration():
    report = validate_plugin(_Broken(), "cce-pack-broken")
    assert not report.ok and "grammar wheel missing" in report.diagnostics[0]


def test_two_embedders_with_one_name_are_a_problem():
    host = PluginHost([(_TwoDummies(), "cce-a"), (_TwoDummies(), "cce-b")], entry_points=False)
    (problem,) = host.startup_problems()
    assert problem == ('[embedder:dummy] name is already registered by distribution "cce-a" (registered again by '
                       '"cce-b"); each embedder name must be unique.')


def test_a_registration_hook_may_take_no_parameter():
    plugin = _NoParameter()
    host = PluginHost([(plugin, "")], entry_points=False)
    assert host.startup_problems() == [] and plugin.called


def test_a_failing_import_override_falls_back_to_the_packs_rule():
    host = PluginHost([(cce_pack_python, "cce-pack-python"), (_FailingOverride(), "x")], entry_points=False)
    from cce_core.indexing.chunker import Chunker

    assert Chunker(host).chunk_file("a.py", "import os\nimport json\n").imports == ["os", "json"]


@pytest.mark.parametrize(("changes", "needle"), [
    ({"name": "py,thon"}, 'may hold only a-z, 0-9, "_", "-" and "+"'),
    ({"name": "my pack"}, "it becomes part of pack_set_id"),
    ({"extensions": (".d.ts",)}, 'extension ".d.ts" can never match'),
    ({"extensions": (".a/b",)}, "can never match"),
])
def test_names_and_extensions_that_can_never_work_are_refused(changes, needle):
    problems = structural_problems(replace(cce_pack_python.PACK, **changes), [])
    assert any(needle in p for p in problems), problems


def test_the_shipped_names_and_extensions_pass():
    assert structural_problems(cce_pack_python.PACK, []) == []

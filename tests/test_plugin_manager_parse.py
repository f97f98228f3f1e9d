"""The plugin host's pluggy manager finds exactly the hooks pluggy's own parse finds.

``cce_core.plugins.host._PluginManager`` answers "not a hook" for a module's
non-function names without pluggy's static lookup (a start-up saving); these
tests hold it to pluggy's verdict, name by name, on every installed plugin and
on a module built to hold the awkward cases.
"""

from __future__ import annotations

import types
from typing import Any, ClassVar

import pluggy

from cce_core.hookspecs import PROJECT_NAME, hookimpl
from cce_core.plugins.host import PluginHost, _PluginManager


def _verdicts(manager: pluggy.PluginManager, plugin: Any) -> dict[str, Any]:
    return {name: manager.parse_hookimpl_opts(plugin, name) for name in dir(plugin)}


def test_every_installed_plugin_parses_as_pluggy_parses_it() -> None:
    host = PluginHost()
    ours, theirs = _PluginManager(PROJECT_NAME), pluggy.PluginManager(PROJECT_NAME)
    plugins = host.pm.get_plugins()
    assert any(isinstance(p, types.ModuleType) for p in plugins)
    found = 0
    for plugin in plugins:
        expected = _verdicts(theirs, plugin)
        assert _verdicts(ours, plugin) == expected, plugin
        found += sum(v is not None for v in expected.values())
    assert found > 0  # the comparison saw real hooks, not only misses


class _Holder:
    @staticmethod
    @hookimpl
    def cce_file_conventions() -> None:
        return None


def test_awkward_module_contents_parse_as_pluggy_parses_them() -> None:
    module = types.ModuleType("awkward_plugin")

    @hookimpl
    def cce_register_packs(register: Any) -> None:
        pass

    class Marked:  # a class carrying the marker attribute is not a hook
        cce_impl: ClassVar[dict[str, bool]] = {"tryfirst": False}

    not_a_function = types.SimpleNamespace(cce_impl={})
    module.__dict__.update({
        "cce_register_packs": cce_register_packs,
        "Marked": Marked,
        "not_a_function": not_a_function,
        "static_hook": _Holder.__dict__["cce_file_conventions"],
        "bound_hook": _Holder().cce_file_conventions,
        "constant": 3,
        "os": types,
    })
    ours, theirs = _PluginManager(PROJECT_NAME), pluggy.PluginManager(PROJECT_NAME)
    expected = _verdicts(theirs, module)
    assert expected["cce_register_packs"] is not None
    assert expected["static_hook"] is not None and expected["bound_hook"] is not None
    assert _verdicts(ours, module) == expected
    # An object plugin (not a module) is pluggy's own parse throughout.
    assert _verdicts(ours, _Holder()) == _verdicts(theirs, _Holder())

"""One ordering rule for every hook: pluggy's call order, the same for collected and first-result hooks.

A third-party plugin can read its place off pluggy's documented rule —
``tryfirst`` implementations, then unmarked ones, then ``trylast`` ones — and
within each group the host's order: the core's built-in plugins, then the
installed entry points by name, then plugins handed to ``PluginHost``. These
tests install fake entry points and record who is called when.
"""

from __future__ import annotations

import sys
import types

import pytest

from cce_core.hookspecs import Embedder, hookimpl
from cce_core.plugins import entry_points as ep_module
from cce_core.plugins.entry_points import EntryPointRecord
from cce_core.plugins.host import PluginHost

HOOKS = ("cce_register_packs", "cce_register_embedders", "cce_register_document_chunkers",
         "cce_extract_imports", "cce_render_compact")


def _recording_plugin(label: str, log: list[tuple[str, str]], **marker: bool) -> types.ModuleType:
    """A plugin implementing every hook; each call appends ``(hook, label)`` and answers nothing."""

    def cce_register_packs(register):
        log.append(("cce_register_packs", label))

    def cce_register_embedders(register):
        log.append(("cce_register_embedders", label))

    def cce_register_document_chunkers(register):
        log.append(("cce_register_document_chunkers", label))

    def cce_extract_imports(language, root, source):
        log.append(("cce_extract_imports", label))

    def cce_render_compact(language, chunk, node, level):
        log.append(("cce_render_compact", label))

    module = types.ModuleType(f"cce_test_order_{label}")
    for function in (cce_register_packs, cce_register_embedders, cce_register_document_chunkers,
                     cce_extract_imports, cce_render_compact):
        setattr(module, function.__name__, hookimpl(**marker)(function))
    return module


@pytest.fixture
def installed(monkeypatch):
    """Install fake entry points (name -> plugin module) in place of the environment's."""

    def install(plugins: dict[str, types.ModuleType]) -> None:
        records = []
        for name, module in plugins.items():
            monkeypatch.setitem(sys.modules, module.__name__, module)
            records.append(EntryPointRecord(name, module.__name__, f"cce-test-{name}", "1.0"))
        monkeypatch.setattr(ep_module, "entry_points", lambda group, refresh=False: list(records))

    return install


def _call_every_hook(host: PluginHost) -> None:
    _ = host.packs, host.embedders, host.document_chunkers  # the collected hooks, called by the host
    host.pm.hook.cce_extract_imports(language="x", root=None, source=b"")
    host.pm.hook.cce_render_compact(language="x", chunk=None, node=None, level="compact")


def _order(log: list[tuple[str, str]], hook: str) -> list[str]:
    return [label for called, label in log if called == hook]


def test_a_third_party_plugin_gets_pluggys_order_on_every_hook(installed):
    log: list[tuple[str, str]] = []
    # Installed in an order unrelated to the names, to show the names decide.
    installed({
        "zeta": _recording_plugin("zeta", log),
        "late": _recording_plugin("late", log, trylast=True),
        "alpha": _recording_plugin("alpha", log),
        "eager": _recording_plugin("eager", log, tryfirst=True),
    })
    _call_every_hook(PluginHost())
    expected = ["eager", "alpha", "zeta", "late"]
    for hook in HOOKS:
        assert _order(log, hook) == expected, hook


def test_the_host_calls_registration_hooks_exactly_as_pluggy_calls_them(installed):
    """The collected hooks are called by the host one by one; pluggy's own call gives the same order."""
    log: list[tuple[str, str]] = []
    installed({name: _recording_plugin(name, log, **marker) for name, marker in
               [("b", {}), ("a", {"trylast": True}), ("c", {"tryfirst": True}), ("d", {})]})
    host = PluginHost()
    _ = host.packs
    by_host = _order(log, "cce_register_packs")
    log.clear()
    host.pm.hook.cce_register_packs(register=lambda pack: None)  # pluggy calls every implementation itself
    assert _order(log, "cce_register_packs") == by_host == ["c", "b", "d", "a"]


def test_plugins_handed_to_the_host_come_in_the_order_given_and_a_later_one_first():
    log: list[tuple[str, str]] = []
    host = PluginHost([(_recording_plugin("one", log), "d1"), (_recording_plugin("two", log), "d2")],
                      entry_points=False)
    host.register_plugin(_recording_plugin("added", log), "d3")
    _call_every_hook(host)
    for hook in HOOKS:
        assert _order(log, hook) == ["added", "one", "two"], hook


def test_the_built_in_embedder_is_registered_first_and_keeps_its_name(installed):
    class Impostor(Embedder):
        name = "hash"

    class TakeOver:
        @hookimpl(tryfirst=True)
        def cce_register_embedders(self, register):
            register("hash", Impostor)

    installed({"aaa": types.ModuleType("cce_test_order_empty")})
    host = PluginHost([(TakeOver(), "cce-impostor")])
    assert type(host.embedder("hash")).__module__ == "cce_core.default_plugins.hash_embedder"
    (problem,) = host.embedder_problems
    assert problem.startswith('[embedder:hash] name is already registered by distribution "cce-core"')

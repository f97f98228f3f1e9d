"""A plugin that fails to import is reported, never a traceback, and never silently dropped."""

from __future__ import annotations

import importlib.metadata as metadata

import pytest

from cce_core.foundation.errors import CceError
from cce_core.plugins.host import PluginHost


class _BrokenEntryPoint:
    name = "broken"
    value = "cce_pack_broken_for_test"
    group = "cce"

    class dist:  # mimics importlib.metadata.Distribution
        name = "cce-pack-broken"
        version = "0.0.1"


def test_a_plugin_that_fails_to_load_stops_the_engine_with_a_clear_error(monkeypatch, tmp_path):
    # An installed pack whose grammar is missing: importing its module fails.
    (tmp_path / "cce_pack_broken_for_test.py").write_text("import tree_sitter_broken\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    real = metadata.entry_points

    def fake_entry_points(**kwargs):
        found = list(real(**kwargs))
        return [*found, _BrokenEntryPoint()] if kwargs.get("group") == "cce" else found

    monkeypatch.setattr(metadata, "entry_points", fake_entry_points)
    monkeypatch.setenv("CCE_NO_PLUGIN_CACHE", "1")  # scan through the patched metadata, not the cache
    host = PluginHost()
    assert "python" in host.packs.names()  # the healthy plugins still load
    problems = host.startup_problems()
    assert problems == [
        'plugin "broken" from distribution "cce-pack-broken" failed to load: ModuleNotFoundError: '
        "No module named 'tree_sitter_broken' — reinstall or uninstall that distribution"
    ]
    with pytest.raises(CceError, match='plugin "broken" from distribution "cce-pack-broken" failed to load'):
        host.require_healthy()

"""A plugin that fails to import is reported, never a traceback, and never silently dropped."""

from __future__ import annotations

import importlib.metadata as metadata

import pytest

from cce_core.errors import CceError
from cce_core.plugins import PluginHost


class _BrokenEntryPoint:
    name = "broken"
    value = "cce_pack_broken"
    group = "cce"

    class dist:  # mimics importlib.metadata.Distribution
        name = "cce-pack-broken"

    def load(self):
        raise ImportError("No module named 'tree_sitter_broken'")


def test_a_plugin_that_fails_to_load_stops_the_engine_with_a_clear_error(monkeypatch):
    real = metadata.entry_points

    def fake_entry_points(**kwargs):
        found = list(real(**kwargs))
        return [*found, _BrokenEntryPoint()] if kwargs.get("group") == "cce" else found

    monkeypatch.setattr(metadata, "entry_points", fake_entry_points)
    host = PluginHost()
    assert "python" in host.packs.names()  # the healthy plugins still load
    problems = host.startup_problems()
    assert problems == [
        'plugin "broken" from distribution "cce-pack-broken" failed to load: ImportError: '
        "No module named 'tree_sitter_broken' — reinstall or uninstall that distribution"
    ]
    with pytest.raises(CceError, match='plugin "broken" from distribution "cce-pack-broken" failed to load'):
        host.require_healthy()

"""The entry-point cache answers like a fresh scan and is dropped the moment the environment changes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cce_core.plugins import entry_points as ep_module
from cce_core.plugins.entry_points import EntryPointRecord, entry_points


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CCE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CCE_NO_PLUGIN_CACHE", raising=False)
    return tmp_path / "cache"


def _count_scans(monkeypatch) -> list[int]:
    calls = [0]
    real = ep_module._scan

    def counting(group):
        calls[0] += 1
        return real(group)

    monkeypatch.setattr(ep_module, "_scan", counting)
    return calls


def test_the_cache_answers_like_a_fresh_scan(cache_dir, monkeypatch):
    calls = _count_scans(monkeypatch)
    first = entry_points("cce")
    second = entry_points("cce")
    assert calls[0] == 1  # the second answer came from the cache
    assert first == second == ep_module._scan("cce")
    names = {r.name for r in first}
    assert {"hash", "python"} <= names
    assert all(r.distribution.startswith("cce-") and r.version != "?" for r in first if r.name in ("hash", "python"))
    assert len(list(cache_dir.glob("entry-points-*.json"))) == 1


def test_a_change_on_sys_path_invalidates_the_cache(cache_dir, tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    calls = _count_scans(monkeypatch)
    entry_points("cce")
    entry_points("cce")
    assert calls[0] == 1
    # What installing a distribution does to its site directory: a new *.dist-info entry.
    (site / "cce_pack_new-1.0.dist-info").mkdir()
    entry_points("cce")
    assert calls[0] == 2


def test_a_corrupt_or_foreign_cache_file_is_ignored(cache_dir, monkeypatch):
    entry_points("cce")
    (path,) = cache_dir.glob("entry-points-*.json")
    path.write_text("{not json", encoding="utf-8")
    assert entry_points("cce") == ep_module._scan("cce")
    data = json.loads(path.read_text(encoding="utf-8"))  # rewritten whole
    data["key"][1] = "another-group"
    path.write_text(json.dumps(data), encoding="utf-8")
    calls = _count_scans(monkeypatch)
    entry_points("cce")
    assert calls[0] == 1


def test_the_cache_can_be_turned_off_and_an_unwritable_cache_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("CCE_CACHE_DIR", str(blocker / "cache"))  # cannot be created: a file is in the way
    assert {r.name for r in entry_points("cce")} >= {"hash"}
    monkeypatch.setenv("CCE_NO_PLUGIN_CACHE", "1")
    calls = _count_scans(monkeypatch)
    entry_points("cce")
    entry_points("cce")
    assert calls[0] == 2


def test_records_load_like_entry_points():
    from cce_core.default_plugins import hash_embedder

    module = "cce_core.default_plugins.hash_embedder"
    assert EntryPointRecord("hash", module, "d", "1").load() is hash_embedder
    assert EntryPointRecord("x", f"{module}:HashEmbedder", "d", "1").load() is hash_embedder.HashEmbedder
    with pytest.raises(ValueError, match="malformed"):
        EntryPointRecord("x", "not a value!", "d", "1").load()


def test_a_stale_cache_entry_that_fails_to_load_is_rescanned_not_reported(cache_dir):
    from cce_core.plugins.host import PluginHost

    entry_points("cce")  # writes the cache for this environment
    (path,) = cache_dir.glob("entry-points-*.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["entry_points"].append({"name": "gone", "value": "cce_pack_uninstalled_long_ago",
                                 "distribution": "cce-pack-gone", "version": "1.0"})
    path.write_text(json.dumps(data), encoding="utf-8")
    host = PluginHost()
    assert host.startup_problems() == []  # the rescan dropped the stale record
    assert "python" in host.packs.names()
    assert "gone" not in {r.name for r in entry_points("cce")}  # and the cache was rewritten

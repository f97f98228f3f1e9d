"""The core's own plugins are registered by module path, like llm's and datasette's defaults.

A source tree that was never ``pip install``-ed has no entry points at all,
yet the host must still offer the ``hash`` embedder; an installed core also
advertises it as an entry point, which must not register it twice. And the
engine reaches the default embedder only through the host, never by importing
the plugin module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from cce_core.default_plugins import BUILTIN_PLUGINS
from cce_core.plugins import entry_points as ep_module
from cce_core.plugins.host import PluginHost

CORE = Path(__file__).resolve().parents[1] / "cce_core"
HASH_MODULE = "cce_core.default_plugins.hash_embedder"


def test_an_uninstalled_source_tree_still_has_the_default_embedder(monkeypatch):
    # What importlib.metadata answers for a checkout on sys.path that pip never installed.
    monkeypatch.setattr(ep_module, "entry_points", lambda group, refresh=False: [])
    host = PluginHost()
    assert list(host.embedders) == ["hash"]
    assert host.startup_problems() == []
    assert host.embedder("hash").embed_query("a b") == PluginHost().embedder("hash").embed_query("a b")
    assert host.plugin_versions() == {"cce-core": __import__("cce_core").__version__}


def test_the_installed_entry_point_does_not_register_the_built_in_twice():
    host = PluginHost()  # the real environment: cce-core advertises hash = cce_core.default_plugins.hash_embedder
    assert any(r.name == "hash" and r.value == HASH_MODULE for r in ep_module.entry_points("cce"))
    owners = [impl.plugin.__name__ for impl in host.pm.hook.cce_register_embedders.get_hookimpls()
              if getattr(impl.plugin, "__name__", "") == HASH_MODULE]
    assert owners == [HASH_MODULE]
    assert host.pm.get_name(__import__(HASH_MODULE, fromlist=["_"])) == "hash"
    assert host.startup_problems() == [] and host.load_failures == []


def test_only_loads_the_built_ins_it_names(monkeypatch):
    monkeypatch.setattr(ep_module, "entry_points", lambda group, refresh=False: [])
    assert "hash" in PluginHost(only={"hash"}).embedders
    assert PluginHost(only={"ollama"}).embedders == {}
    assert PluginHost(entry_points=False).embedders == {}  # a host of exactly the plugins handed in


def test_the_built_ins_are_every_module_of_the_package():
    modules = sorted(p.stem for p in (CORE / "default_plugins").glob("*.py") if p.stem != "__init__")
    assert sorted(value.rsplit(".", 1)[1] for value in BUILTIN_PLUGINS.values()) == modules


def test_the_default_embedder_is_reached_only_through_the_host():
    offenders = {}
    for path in sorted(CORE.rglob("*.py")):
        if path.parent.name == "default_plugins":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            # The host reads the package's list of built-ins; nothing imports a built-in module itself.
            hits = [n for n in names if n.startswith("cce_core.default_plugins.")
                    and not n.startswith("cce_core.default_plugins.BUILTIN_")]
            if hits:
                offenders.setdefault(str(path.relative_to(CORE.parent)), []).extend(hits)
    assert offenders == {}


def test_the_host_embedder_gives_the_family_vectors():
    vector = PluginHost().embedder("hash").embed_batch(["def load(path): return path"])
    assert vector.shape == (1, 256) and np.isclose(float((vector * vector).sum()), 1.0)

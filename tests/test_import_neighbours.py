"""``expand_chunk scope=neighbors`` / ``related_context``: imports resolved by the packs under the default profile.

The family's graph resolves ``from .config import Config`` to the first file in
path order whose stem is ``config`` — here ``docs/config.rst``. The default
profile asks the language pack, which answers with ``pkg/config.py``; the
family profile keeps its pinned answer. A store without symbol records falls
back to the family's graph.
"""

from __future__ import annotations

import json

import pytest
from helpers import run_cce

from cce_core.symbols.file_neighbours import import_neighbours
from cce_core.symbols.index import open_symbols


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("neighbours")
    (root / "pkg").mkdir()
    (root / "docs").mkdir()
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "app.py").write_text(
        "from .config import Config\n\n\nclass App:\n    def make(self):\n        return Config()\n", encoding="utf-8")
    (root / "pkg" / "config.py").write_text("class Config:\n    def load(self):\n        return 1\n", encoding="utf-8")
    (root / "docs" / "config.rst").write_text("Config\n======\n\nHow to configure the app.\n", encoding="utf-8")
    done = run_cce("index", root)
    assert done.returncode == 0, done.stderr
    return root


def _app_chunk(root) -> str:
    found = run_cce("search", "class App make", "--dir", root, "--json", env={"CCE_RANKING_PROFILE": "family"})
    assert found.returncode == 0, found.stderr
    return next(r["chunk_id"] for r in json.loads(found.stdout)["results"] if r["file_path"] == "pkg/app.py")


def _neighbour_files(root, profile: str) -> set[str]:
    done = run_cce("expand", _app_chunk(root), root, "--scope", "neighbors", env={"CCE_RANKING_PROFILE": profile})
    assert done.returncode == 0, done.stderr
    return {line.split(":", 1)[0] for line in done.stdout.splitlines() if "#" in line and ":" in line}


def test_the_default_profile_follows_the_pack_resolved_import(project):
    assert _neighbour_files(project, "default") == {"pkg/config.py"}


def test_the_family_profile_keeps_its_pinned_graph(project):
    assert _neighbour_files(project, "family") == {"docs/config.rst"}


def test_neighbours_go_both_ways_and_only_through_imports(project):
    neighbours = import_neighbours(open_symbols(project / ".cce" / "index.cce"))
    assert neighbours == {"pkg/app.py": ["pkg/config.py"], "pkg/config.py": ["pkg/app.py"]}

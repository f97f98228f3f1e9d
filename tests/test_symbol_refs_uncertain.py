"""``cce refs Class.method`` leaves out guesses; ``--all`` (MCP ``include_uncertain``) adds them.

A use of ``run`` on a receiver the file types (``r = Runner()``) resolves to
``Runner.run``; ``thing.run()`` on an untyped parameter may mean it or not and
is a ``guess``, shown only when asked for.
"""

from __future__ import annotations

import json

import pytest
from helpers import run_cce

SOURCE = ("class Runner:\n    def run(self):\n        return 1\n\n\n"
          "def direct():\n    r = Runner()\n    return r.run()\n\n\n"
          "def unknown(thing):\n    return thing.run()\n")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("uncertain")
    (root / "m.py").write_text(SOURCE, encoding="utf-8")
    done = run_cce("index", root)
    assert done.returncode == 0, done.stderr
    return root


def _rows(root, *extra: str) -> list[tuple[int, str]]:
    done = run_cce("refs", "Runner.run", "--dir", root, "--json", *extra)
    assert done.returncode == 0, done.stderr
    return [(row["line"], row["confidence"]) for row in json.loads(done.stdout)["references"]]


def test_a_qualified_name_keeps_the_uses_that_resolve_to_it(project):
    assert _rows(project) == [(8, "same-file")]


def test_all_adds_the_guesses(project):
    assert _rows(project, "--all") == [(8, "same-file"), (12, "guess")]

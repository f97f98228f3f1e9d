"""change_impact on ten real flask commits: every changed function, and at least the grep-verified callers.

``tests/data/impact_flask.json`` lists ten pallets/flask commits, the
functions each one changed and the direct callers of those functions that a
``git grep`` read by hand confirms (the file says how). The test clones the
pinned flask corpus into a temporary directory, checks each commit out in
history order, re-indexes (incrementally, as a user would) and asks
``change_impact`` for the diff against the commit's parent.

Skipped when the corpus (``CCE_CORPORA_DIR``, default ``/work/corpora``) is
not on this machine or lacks the commits.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = json.loads((REPO / "tests" / "data" / "impact_flask.json").read_text(encoding="utf-8"))
CORPUS = Path(os.environ.get("CCE_CORPORA_DIR", "/work/corpora")) / DATA["corpus"]
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0"}


def _git(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *map(str, args)], cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, **GIT_ENV})


@pytest.fixture(scope="module")
def impacts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """commit → its change_impact answer, computed on a clone checked out at that commit."""
    from cce_core.indexing.indexer import index_directory
    from cce_core.plugins.host import default_host
    from cce_core.services.symbols import MAX_LIMIT, change_impact

    if not (CORPUS / ".git").exists():
        pytest.skip(f"the flask corpus is not at {CORPUS} (set CCE_CORPORA_DIR)")
    commits = [c["commit"] for c in DATA["commits"]]
    if any(_git("-C", CORPUS, "cat-file", "-e", f"{c}^{{commit}}").returncode for c in commits):
        pytest.skip(f"{CORPUS} lacks some of the commits the data names")
    clone = tmp_path_factory.mktemp("impact") / "flask"
    done = _git("clone", "--quiet", "--shared", "--no-checkout", CORPUS, clone)
    assert done.returncode == 0, done.stderr
    order = _git("-C", clone, "rev-list", "--topo-order", "--reverse", "--no-walk", *commits).stdout.split()
    host = default_host()
    store = clone / ".cce" / "index.cce"
    answers: dict[str, Any] = {}
    for commit in order:
        done = _git("-C", clone, "checkout", "--quiet", "--force", commit)
        assert done.returncode == 0, done.stderr
        index_directory(clone, store, host, host.embedder("hash"))
        answers[commit] = change_impact(clone, store, rev=f"{commit}~1", depth=1, limit=MAX_LIMIT)
    return answers


@pytest.mark.parametrize("case", DATA["commits"], ids=[c["commit"][:8] for c in DATA["commits"]])
def test_every_changed_function_is_touched(impacts: dict[str, Any], case: dict[str, Any]) -> None:
    answer = impacts[case["commit"]]
    touched = [(r.file_path, r.qualified_name or r.name) for r in answer.touched]
    # A nested def is named by itself in the data; the engine qualifies it with its enclosing definitions.
    missing = [f for f in case["changed"]
               if not any(path == f["file_path"] and (name == f["name"] or name.endswith("." + f["name"]))
                          for path, name in touched)]
    assert missing == [], (case["subject"], sorted(touched))


@pytest.mark.parametrize("case", DATA["commits"], ids=[c["commit"][:8] for c in DATA["commits"]])
def test_every_grep_verified_caller_is_listed(impacts: dict[str, Any], case: dict[str, Any]) -> None:
    assert _missing_callers(impacts[case["commit"]], case, gaps=False) == [], case["subject"]


def test_known_caller_gaps_are_still_gaps(impacts: dict[str, Any]) -> None:
    """Each caller marked ``gap`` is still missed; once one is found, drop its ``gap`` so the test above holds it."""
    for case in DATA["commits"]:
        gaps = [c for callers in case["callers"].values() for c in callers if "gap" in c]
        assert len(_missing_callers(impacts[case["commit"]], case, gaps=True)) == len(gaps), case["subject"]


def _missing_callers(answer: Any, case: dict[str, Any], gaps: bool) -> list[tuple[str, str, int, str]]:
    listed = {(r.file_path, r.line) for r in answer.callers}
    return [(callee, c["file_path"], c["line"], c["caller"])
            for callee, callers in case["callers"].items() for c in callers
            if ("gap" in c) == gaps and (c["file_path"], c["line"]) not in listed]


def test_the_tests_that_call_a_changed_function_are_listed(impacts: dict[str, Any]) -> None:
    """b10b6d4a changed Config.from_file; tests/test_config.py calls it, so it is among the tests to re-run."""
    case = next(c for c in DATA["commits"] if c["commit"].startswith("b10b6d4a"))
    tests = {r.file_path for r in impacts[case["commit"]].tests}
    assert "tests/test_config.py" in tests


def test_the_data_holds_ten_commits_with_callers() -> None:
    assert len(DATA["commits"]) == 10
    assert sum(len(v) for c in DATA["commits"] for v in c["callers"].values()) >= 30

"""The CLI keeps the cyclic collector out of its start-up and exit (``cce_core.cli.startup_gc``).

The unit tests restore the test process's collector state after themselves;
the process tests run ``main`` in a child and report what the collector did.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cce_core.cli import startup_gc


@pytest.fixture
def collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    startup_gc._saved_thresholds = None
    gc.set_threshold(*thresholds)
    gc.unfreeze()  # back into the oldest generation, collectable again


def test_deferring_raises_only_the_first_threshold_and_start_work_restores_it(collector: None) -> None:
    gc.set_threshold(700, 10, 10)
    startup_gc.defer_collection()
    assert gc.get_threshold() == (startup_gc.STARTUP_THRESHOLD, 10, 10)
    startup_gc.defer_collection()  # a second call keeps the thresholds it saved first
    frozen = gc.get_freeze_count()
    kept_alive: list[list[int]] = [[] for _ in range(100)]  # tracked objects that exist when the work starts
    startup_gc.start_work()
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() >= frozen + len(kept_alive)


def test_start_work_without_a_deferral_leaves_the_collector_alone(collector: None) -> None:
    gc.set_threshold(500, 7, 3)
    frozen = gc.get_freeze_count()
    startup_gc.start_work()
    assert gc.get_threshold() == (500, 7, 3)
    assert gc.get_freeze_count() == frozen


def test_a_collector_switched_off_by_threshold_stays_off(collector: None) -> None:
    gc.set_threshold(0, 10, 10)
    startup_gc.defer_collection()
    assert gc.get_threshold() == (0, 10, 10)
    startup_gc.start_work()
    assert gc.get_threshold() == (0, 10, 10)


_PROBE = """
import gc, json, sys
import cce_core.cli.startup_gc as startup_gc

before = gc.get_threshold()
events = []
gc.callbacks.append(lambda phase, info: events.append("collect") if phase == "start" else None)
original = startup_gc.start_work

def marked():
    events.append("work")
    original()

startup_gc.start_work = marked
from cce_core.cli.app import main

events.append("main")
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
start = events.index("main")
end = events.index("work") if "work" in events else len(events)
sys.stderr.write(json.dumps({"code": code, "startup_collections": events[start:end].count("collect"),
                             "work_started": "work" in events, "restored": list(gc.get_threshold()) == list(before),
                             "frozen": gc.get_freeze_count()}) + "\\n")
"""


def _probe(*args: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=120)
    report: dict[str, object] = json.loads(done.stderr.strip().splitlines()[-1])
    return report


def test_cce_index_starts_up_without_a_collection_then_collects_as_usual(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.py").write_text("x = 1\n", encoding="utf-8")
    report = _probe("index", str(tree), "--store", str(tmp_path / "store" / "index.cce"), "--no-metrics")
    assert report["code"] == 0
    assert report["work_started"] is True
    # Importing the indexer, numpy and every plugin allocates tens of thousands of objects:
    # at the default threshold of 700 that is dozens of collections.
    assert report["startup_collections"] == 0
    assert report["restored"] is True
    assert isinstance(report["frozen"], int) and report["frozen"] > 0
    assert (tmp_path / "store" / "index.cce").exists()


def test_a_command_that_fails_early_still_freezes_before_exit(tmp_path: Path) -> None:
    report = _probe("index", str(tmp_path / "missing"), "--no-metrics")
    assert report["code"] != 0
    assert report["work_started"] is False
    assert isinstance(report["frozen"], int) and report["frozen"] > 0

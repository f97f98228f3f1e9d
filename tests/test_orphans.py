"""kill -9 of a real ``cce index`` leaves no chunking worker behind after one second.

The corpus is generated at test time, big enough (and ``CCE_WORKERS=2``) that
forked workers are busy when the parent is killed. The trial itself lives in
benchmarks/kill9_orphans.py, which runs the same check 20 times on a large
checkout.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from helpers import REPO_ROOT, cce_executable

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _kill9():
    spec = importlib.util.spec_from_file_location("kill9_orphans", REPO_ROOT / "benchmarks" / "kill9_orphans.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("kill9_orphans", module)
    spec.loader.exec_module(module)
    return module


def generated_corpus(root: Path, files: int = 240, functions: int = 150) -> Path:
    for i in range(files):
        body = "".join(f"def func_{i}_{j}(a, b):\n    x = a * {j} + b\n    return x - {i}\n\n"
                       for j in range(functions))
        (root / f"pkg{i % 8}").mkdir(parents=True, exist_ok=True)
        (root / f"pkg{i % 8}" / f"mod{i}.py").write_text(body, encoding="utf-8")
    return root


@pytest.mark.slow
def test_kill9_of_index_leaves_no_worker_behind(tmp_path: Path) -> None:
    kill9 = _kill9()
    corpus = generated_corpus(tmp_path / "corpus")
    cce = cce_executable()
    trials = [kill9.run_trial(corpus, tmp_path / "index.cce", delay, workers=2, wait_for_workers=True, cce=cce)
              for delay in (0.0, 0.15, 0.4)]
    running = [t for t in trials if not t.finished_first and t.workers_at_kill > 0]
    assert running, f"no trial caught the workers running: {trials}"
    assert [t.leftovers for t in trials] == [[], [], []], trials

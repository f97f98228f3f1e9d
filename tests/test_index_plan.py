"""``cce index --plan``: the walker's verdicts without a write, agreeing exactly with ``cce index``."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from helpers import REPO_ROOT, run_cce

from cce_core.indexing.walker import MAX_FILE_BYTES, SkipReason

CORPORA = Path(os.environ.get("CCE_CORPORA_DIR", "/work/corpora"))


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in root.rglob("*")}


def index_figures(text: str) -> dict[str, int]:
    return {key: int(value) for key, value in
            re.findall(r"^  (files indexed|files skipped|sensitive skipped|files to index)\s*: (\d+)", text, re.M)}


def mixed_tree(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    (root / "README.md").write_text("# demo\n", encoding="utf-8")
    (root / ".gitignore").write_text("generated/\n*.log\n", encoding="utf-8")
    (root / "generated").mkdir()
    (root / "generated" / "out.py").write_text("x = 1\n", encoding="utf-8")
    (root / "debug.log").write_text("log line\n", encoding="utf-8")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1\n", encoding="utf-8")
    (root / ".env").write_text("SECRET=1\n", encoding="utf-8")
    (root / "big.txt").write_bytes(b"a" * (MAX_FILE_BYTES + 1))
    (root / "latin1.txt").write_bytes(b"caf\xe9\n")
    (root / "events.jsonl").write_text("{}\n", encoding="utf-8")
    os.symlink("src/app.py", root / "link.py")
    return root


def test_plan_groups_skips_by_the_walkers_reasons_and_writes_nothing(tmp_path: Path) -> None:
    root = mixed_tree(tmp_path / "repo")
    before = snapshot(root)
    done = run_cce("index", "--plan", root, "--json")
    assert done.returncode == 0, done.stderr
    assert snapshot(root) == before and not (root / ".cce").exists()
    plan = json.loads(done.stdout)
    assert plan["schema"] == "cce.index-plan/v1"
    assert plan["index"]["files"] == 3  # src/app.py, README.md, .gitignore
    skipped = {row["reason"]: row for row in plan["skipped"]}
    for row in plan["skipped"]:
        assert row["label"] == SkipReason(row["reason"]).label  # the walker's own reasons and labels
    assert {k: (v["files"], v["directories"]) for k, v in skipped.items()} == {
        "sensitive": (1, 0), "jsonl": (1, 0), "too_large": (1, 0), "not_utf8": (1, 0),
        "gitignored": (1, 1), "excluded_dir": (0, 1), "symlink": (1, 0)}
    assert skipped["too_large"]["bytes"] == MAX_FILE_BYTES + 1
    assert plan["totals"] == {"files_skipped": 3, "sensitive_skipped": 1, "walk_errors": 0}
    packs = {row["pack"]: row["files"] for row in plan["packs"]}
    assert packs["python"] == 1 and sum(packs.values()) == 3 and "(no pack)" in packs  # .gitignore has none
    assert plan["estimate"]["embed_dim"] == 256 and plan["estimate"]["store_bytes"] > 0
    assert plan["largest_directories"][0]["path"] == "src"

    human = run_cce("index", "--plan", root)
    assert human.returncode == 0
    assert human.stdout.startswith(f"Plan for {root} (nothing written)\n  files to index    : 3 (")
    for label in ("sensitive file", "*.jsonl log", "over 2 MiB", "not UTF-8", "gitignored",
                  "default-excluded directory", "symbolic link"):
        assert f"\n  {label} " in human.stdout
    # The same figures `cce index` prints.
    indexed = run_cce("index", root, "--no-metrics", "--store", tmp_path / "s.cce")
    assert index_figures(indexed.stdout)["files indexed"] == index_figures(human.stdout)["files to index"]
    assert {k: v for k, v in index_figures(indexed.stdout).items() if k != "files indexed"} == {
        k: v for k, v in index_figures(human.stdout).items() if k != "files to index"}


def test_allow_secrets_plan_counts_sensitive_files_in(tmp_path: Path) -> None:
    root = mixed_tree(tmp_path / "repo")
    plan = json.loads(run_cce("index", "--plan", root, "--json", "--allow-secrets").stdout)
    assert plan["secret_protection"] is False
    assert plan["totals"]["sensitive_skipped"] == 0 and plan["index"]["files"] == 4


def test_the_chunk_estimate_is_exact_for_files_the_current_store_holds(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(REPO_ROOT / "samples", root)
    assert run_cce("index", root, "--no-metrics").returncode == 0
    plan = json.loads(run_cce("index", "--plan", root, "--json").stdout)
    assert plan["estimate"]["chunks"] == 21 and plan["estimate"]["files_counted_exactly"] == 7


def test_plan_usage_errors(tmp_path: Path) -> None:
    assert run_cce("index", tmp_path, "--json").stderr == "error: --json goes with --plan\n"
    ws = run_cce("index", "--plan", "--workspace", tmp_path)
    assert ws.returncode == 1 and ws.stderr.startswith("error: --plan takes one directory")
    assert run_cce("index", "--plan", tmp_path / "nope").stderr == f"error: no such directory: {tmp_path / 'nope'}\n"


@pytest.mark.parametrize(("corpus", "expected"), [
    ("jq", {"files to index": 190, "sensitive skipped": 104}),
    ("flask", {}),
    ("zod", {}),
])
def test_plan_agrees_with_index_on_real_corpora(tmp_path: Path, corpus: str, expected: dict[str, int]) -> None:
    root = CORPORA / corpus
    if not root.is_dir():
        pytest.skip(f"corpus {root} not present (set CCE_CORPORA_DIR)")
    plan = run_cce("index", "--plan", root, timeout=300)
    assert plan.returncode == 0, plan.stderr
    figures = index_figures(plan.stdout)
    for key, value in expected.items():
        assert figures[key] == value
    indexed = run_cce("index", root, "--no-metrics", "--store", tmp_path / "store.cce", timeout=600)
    assert indexed.returncode == 0, indexed.stderr
    from_index = index_figures(indexed.stdout)
    assert figures["files to index"] == from_index["files indexed"]
    assert figures["files skipped"] == from_index["files skipped"]
    assert figures["sensitive skipped"] == from_index["sensitive skipped"]
    # How much faster the plan is than the index is measured in benchmarks/, never asserted here.

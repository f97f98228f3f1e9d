"""Reference behaviours the CLI lacked: ``cce bench --store`` accepted, ``cce init --force`` rebuilding."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

from conftest import REPO_ROOT, run_cce

from cce_core.indexing.store import default_store_path

SAMPLES = REPO_ROOT / "samples"


def test_bench_accepts_and_ignores_store(tmp_path: Path) -> None:
    store = tmp_path / "never-written.cce"
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps([{"query": "parse config", "expected": ["python.py"]}]), encoding="utf-8")
    done = run_cce("bench", SAMPLES, "--queries", queries, "--store", store, "--json", timeout=300)
    assert done.returncode == 0, done.stderr
    assert "recall" in json.dumps(json.loads(done.stdout))
    assert not store.exists()


def flip_a_vector_byte(store: Path) -> None:
    """Change one embedding value slightly: the store still loads, only its bytes differ."""
    raw = bytearray(store.read_bytes())
    (header_len,) = struct.unpack("<Q", raw[8:16])
    header = json.loads(raw[16 : 16 + header_len])
    offset = 16 + header_len + int(header["sections"]["embeddings"]["offset"])
    raw[offset] ^= 0x01  # the lowest mantissa byte of the first value
    store.write_bytes(bytes(raw))


def test_init_force_rebuilds_the_local_index_from_scratch(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(SAMPLES, root)
    for _ in range(2):  # the second run also indexes the CLAUDE.md and .mcp.json the first one wrote
        assert run_cce("init", root).returncode == 0
    store = default_store_path(root)
    fresh = store.read_bytes()
    (root / ".cce" / "fingerprint.json").unlink()  # an old store: nothing tells a damaged one apart
    flip_a_vector_byte(store)
    damaged = store.read_bytes()
    assert damaged != fresh

    assert run_cce("init", root).returncode == 0
    assert store.read_bytes() == damaged  # a plain init reuses every unchanged file

    forced = run_cce("init", root, "--force")
    assert forced.returncode == 0, forced.stderr
    assert store.read_bytes() == fresh  # --force rebuilt it from the tree
    assert (root / ".cce" / "fingerprint.json").is_file()

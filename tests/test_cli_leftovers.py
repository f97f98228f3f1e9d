"""Reference behaviours the CLI lacked: ``cce bench --store`` accepted, ``cce init --force`` rebuilding."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
from pathlib import Path

from helpers import REPO_ROOT, run_cce

from cce_core.indexing.store import default_store_path, segments_dir

SAMPLES = REPO_ROOT / "samples"


def test_bench_accepts_and_ignores_store(tmp_path: Path) -> None:
    store = tmp_path / "never-written.cce"
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps([{"query": "parse config", "expected": ["python.py"]}]), encoding="utf-8")
    done = run_cce("bench", SAMPLES, "--queries", queries, "--store", store, "--json", timeout=300)
    assert done.returncode == 0, done.stderr
    assert "recall" in json.dumps(json.loads(done.stdout))
    assert not store.exists()


def flip_a_vector_byte(store: Path) -> Path:
    """Change one embedding value slightly in the store's segment, keeping its time: it still loads,
    only its bytes differ, and nothing but a full hash could tell. Returns the segment."""
    segment = max(segments_dir(store).iterdir(), key=lambda path: path.stat().st_size)  # the one with vectors
    before = segment.stat()
    raw = bytearray(segment.read_bytes())
    (header_len,) = struct.unpack("<Q", raw[8:16])
    header = json.loads(raw[16 : 16 + header_len])
    offset = 16 + header_len + int(header["sections"]["csc_val"]["offset"])
    raw[offset] ^= 0x01  # the lowest mantissa byte of the first value
    segment.write_bytes(bytes(raw))
    os.utime(segment, ns=(before.st_atime_ns, before.st_mtime_ns))
    return segment


def test_init_force_rebuilds_the_local_index_from_scratch(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(SAMPLES, root)
    for _ in range(2):  # the second run also indexes the CLAUDE.md and .mcp.json the first one wrote
        assert run_cce("init", root).returncode == 0
    store = default_store_path(root)
    (root / ".cce" / "fingerprint.json").unlink()  # an old store: nothing tells a damaged one apart
    segment = flip_a_vector_byte(store)
    damaged = segment.read_bytes()

    assert run_cce("init", root).returncode == 0
    assert segment.read_bytes() == damaged  # a plain init reuses every unchanged file

    forced = run_cce("init", root, "--force")
    assert forced.returncode == 0, forced.stderr
    # --force rebuilt it from the tree: every segment's bytes hash to the name they were written under.
    for rebuilt in segments_dir(store).iterdir():
        assert rebuilt.name == f"seg-{hashlib.sha256(rebuilt.read_bytes()).hexdigest()[:24]}.cces"
    assert (root / ".cce" / "fingerprint.json").is_file()

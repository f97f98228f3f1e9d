"""The mapped store: lazy chunks equal the written ones, and damage is one clear error, never a traceback."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from helpers import REPO_ROOT, copy_tree, run_cce

from cce_core.foundation.errors import CceError
from cce_core.indexing import store as store_module
from cce_core.indexing.indexer import build_index
from cce_core.indexing.segment import SEGMENT_MAGIC
from cce_core.plugins.host import default_host


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    host = default_host()
    root = copy_tree(REPO_ROOT / "samples", tmp_path_factory.mktemp("st") / "samples")
    data, _stats = build_index(root, host, host.embedder("hash"))
    path = tmp_path_factory.mktemp("stfile") / "index.cce"
    store_module.save_store(data, path)
    return data, path


def test_a_loaded_store_equals_the_one_written(built):
    data, path = built
    loaded = store_module.load_store(path)
    assert isinstance(loaded, store_module.SegmentedStore)
    assert len(loaded.chunks) == len(data.chunks)
    assert list(loaded.chunks) == list(data.chunks)  # every field, text included
    assert loaded.chunks[1:4] == data.chunks[1:4]
    assert loaded.chunks[-1] == data.chunks[-1]
    assert loaded.files == data.files and loaded.edges == data.edges and loaded.meta == data.meta
    assert (loaded.embeddings == data.embeddings).all()
    assert loaded.bm25.vocab == data.bm25.vocab
    assert (loaded.bm25.docs == data.bm25.docs).all() and (loaded.bm25.tfs == data.bm25.tfs).all()
    assert list(loaded.chunk_ids) == [c.chunk_id for c in data.chunks]


def test_chunk_text_is_decoded_only_when_asked_for(built):
    _data, path = built
    loaded = store_module.load_store(path)
    assert all(c is None for c in loaded.chunks._built)
    loaded.chunks[2]
    assert [i for i, c in enumerate(loaded.chunks._built) if c is not None] == [2]


def _header(path: Path) -> tuple[bytes, int, dict]:
    raw = path.read_bytes()
    (header_len,) = struct.unpack("<Q", raw[8:16])
    header = json.loads(raw[16 : 16 + header_len])
    return raw, 16 + header_len, header


def _rewrite_header(path: Path, target: Path, change, magic: bytes = store_module.MAGIC) -> None:
    raw, base, header = _header(path)
    change(header)
    text = json.dumps(header, sort_keys=True).encode()
    text += b" " * ((-(len(text) + 16)) % 8)
    body = raw[base:]
    target.write_bytes(magic + struct.pack("<Q", len(text)) + text + body)


def _only_segment(manifest: Path) -> Path:
    (segment,) = store_module.segments_dir(manifest).iterdir()
    return segment


def test_an_older_store_format_asks_for_a_rebuild(built, tmp_path):
    _data, path = built
    for older in ("cce-python-store/1", "cce-python-store/2"):
        old = tmp_path / "old.cce"
        _rewrite_header(path, old, lambda h, fmt=older: h.update(format=fmt))
        with pytest.raises(CceError, match=r"written by an older cce .* re-run `cce index`"):
            store_module.load_store(old)


@pytest.mark.parametrize("damage", ["truncated", "section_past_end", "vocab_mismatch", "odd_length", "missing_segment",
                                    "manifest_truncated", "segment_name_escapes"])
def test_damaged_stores_fail_with_one_error_line(built, tmp_path, damage):
    _data, path = built
    corpus = copy_tree(REPO_ROOT / "samples", tmp_path / "c")
    target = corpus / ".cce" / "index.cce"
    target.parent.mkdir()
    target.write_bytes(path.read_bytes())
    segment = _only_segment(path)
    seg_dir = store_module.segments_dir(target)
    seg_dir.mkdir()
    seg_target = seg_dir / segment.name
    raw = segment.read_bytes()
    seg_target.write_bytes(raw)
    magic = SEGMENT_MAGIC
    if damage == "truncated":
        seg_target.write_bytes(raw[: len(raw) // 2])
    elif damage == "section_past_end":
        _rewrite_header(segment, seg_target, lambda h: h["sections"]["bm25_docs"].update(length=10**9), magic)
    elif damage == "odd_length":
        _rewrite_header(segment, seg_target, lambda h: h["sections"]["bm25_tfs"].update(length=3), magic)
    elif damage == "vocab_mismatch":
        def shorter_vocab(h):
            h["sections"]["bm25_ptr"]["length"] -= 8
        _rewrite_header(segment, seg_target, shorter_vocab, magic)
    elif damage == "missing_segment":
        seg_target.unlink()
    elif damage == "manifest_truncated":
        target.write_bytes(path.read_bytes()[:20])
    else:
        _rewrite_header(path, target, lambda h: h["segments"][0].update(name="../../escape.cces"))
    proc = run_cce("search", "Loader load", "--dir", corpus, "--no-metrics")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "corrupt" in lines[0], proc.stderr

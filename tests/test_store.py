"""The mapped store: lazy chunks equal the written ones, and damage is one clear error, never a traceback."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from conftest import REPO_ROOT, copy_tree, run_cce

from cce_core.foundation.errors import CceError
from cce_core.indexing import store as store_module
from cce_core.indexing.indexer import build_index
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
    assert isinstance(loaded, store_module.MappedStore)
    assert len(loaded.chunks) == len(data.chunks)
    assert list(loaded.chunks) == list(data.chunks)  # every field, text included
    assert loaded.chunks[1:4] == data.chunks[1:4]
    assert loaded.chunks[-1] == data.chunks[-1]
    assert loaded.files == data.files and loaded.edges == data.edges and loaded.meta == data.meta
    assert (loaded.embeddings == data.embeddings).all()
    assert loaded.bm25.vocab == data.bm25.vocab
    assert (loaded.bm25.docs == data.bm25.docs).all() and (loaded.bm25.tfs == data.bm25.tfs).all()
    assert loaded.chunk_id_rank.tolist() == data.chunk_id_rank.tolist()
    assert list(loaded.chunk_ids) == [c.chunk_id for c in data.chunks]


def test_chunk_text_is_decoded_only_when_asked_for(built):
    _data, path = built
    loaded = store_module.load_store(path)
    assert all(c is None for c in loaded.chunks._built)
    loaded.chunks[2]
    assert [i for i, c in enumerate(loaded.chunks._built) if c is not None] == [2]


def _sections(path: Path) -> tuple[bytes, int, dict]:
    raw = path.read_bytes()
    (header_len,) = struct.unpack("<Q", raw[8:16])
    header = json.loads(raw[16 : 16 + header_len])
    return raw, 16 + header_len, header


def _rewrite_header(path: Path, target: Path, change) -> None:
    raw, base, header = _sections(path)
    change(header)
    text = json.dumps(header, sort_keys=True).encode()
    text += b" " * ((-(len(text) + 16)) % 8)
    body = raw[base:]
    target.write_bytes(store_module.MAGIC + struct.pack("<Q", len(text)) + text + body)


def test_an_older_store_format_asks_for_a_rebuild(built, tmp_path):
    _data, path = built
    old = tmp_path / "old.cce"
    _rewrite_header(path, old, lambda h: h.update(format="cce-python-store/1"))
    with pytest.raises(CceError, match=r"written by an older cce .* re-run `cce index`"):
        store_module.load_store(old)


@pytest.mark.parametrize("damage", ["truncated", "section_past_end", "vocab_mismatch", "odd_length"])
def test_damaged_stores_fail_with_one_error_line(built, tmp_path, damage):
    _data, path = built
    corpus = copy_tree(REPO_ROOT / "samples", tmp_path / "c")
    target = corpus / ".cce" / "index.cce"
    target.parent.mkdir()
    raw = path.read_bytes()
    if damage == "truncated":
        target.write_bytes(raw[: len(raw) // 2])
    elif damage == "section_past_end":
        _rewrite_header(path, target, lambda h: h["sections"]["bm25_docs"].update(length=10**9))
    elif damage == "odd_length":
        _rewrite_header(path, target, lambda h: h["sections"]["bm25_tfs"].update(length=3))
    else:
        def shorter_vocab(h):
            h["sections"]["bm25_ptr"]["length"] -= 8
        _rewrite_header(path, target, shorter_vocab)
    proc = run_cce("search", "Loader load", "--dir", corpus, "--no-metrics")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "corrupt" in lines[0], proc.stderr

"""The `.cck` knowledge artifact: the shared golden, its byte layout, and every import refusal."""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import reference_dir

from cce_core.knowledge.ingest import ingest_file
from cce_core.knowledge.store import KnowledgeChunk, KnowledgeStore, load_store
from cce_core.sync.artifact import ArtifactError
from cce_core.sync.knowledge_artifact import PHASE_A_REFUSAL, export_knowledge, import_knowledge

GOLDEN_CHECKSUM = "84284a0ad6981d3c40c4dffd6dbb67d7e000cf6e64ff6e75b321d439ee9f452d"
GOLDEN_STORE_SHA256 = "ab66052f618f84693cd229a1926dfb28d2570697d803fa9006281ee584a41110"


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kn")
    ingest_file(reference_dir() / "test" / "fixture" / "knowledge" / "curated.jsonl", root)
    return root


@pytest.fixture
def store(fixture_root: Path) -> KnowledgeStore:
    return load_store(fixture_root)


def chunk(record: str, content: str, **facets) -> KnowledgeChunk:
    fields = {"url": None, "state": None, "state_reason": None, "updated_at": None, "group": None, "labels": [],
              "title": "T", "links": [], "embedding": [0.5, -0.25], **facets}
    return KnowledgeChunk(f"id-{record}-{len(content)}", record, "section", "S", 1, 2, 3, content, "src", **fields)


def small_store(*chunks: KnowledgeChunk) -> KnowledgeStore:
    return KnowledgeStore("cce.knowledge/v1", "0123456789abcdef", len({c.record_id for c in chunks}), list(chunks))


def lines(raw: bytes) -> list[str]:
    return raw.decode("utf-8").split("\n")


# --------------------------------------------------------------------------- the golden


def test_the_fixture_corpus_exports_to_the_shared_golden(store: KnowledgeStore, fixture_root: Path) -> None:
    artifact = export_knowledge(store, "fixture")
    m = artifact.manifest
    assert (m.corpus_id, m.snapshot, m.records, m.chunk_count) == ("fixture", "598e1b3891572bbb", 2, 2)
    assert m.data_as_of == "2026-02-01T10:00:00Z"
    assert m.checksum == GOLDEN_CHECKSUM
    # Import gives back the store byte for byte: the file a local ingest wrote.
    restored = import_knowledge(artifact.to_bytes()).to_store().to_bytes()
    assert restored == (fixture_root / ".cce" / "knowledge" / "598e1b3891572bbb.json").read_bytes()
    assert hashlib.sha256(restored).hexdigest() == GOLDEN_STORE_SHA256
    assert "[REDACTED:SECRET]" in artifact.to_bytes().decode() and "s3cr3tvalue123" not in artifact.to_bytes().decode()


def test_export_from_a_loaded_store_equals_export_from_the_ingested_one(store: KnowledgeStore) -> None:
    again = import_knowledge(export_knowledge(store, "fixture").to_bytes()).to_store()
    assert export_knowledge(again, "fixture").to_bytes() == export_knowledge(store, "fixture").to_bytes()
    assert again == store


# --------------------------------------------------------------------------- layout


def test_manifest_line_has_the_sorted_keys_compact_and_no_provenance(store: KnowledgeStore) -> None:
    first = lines(export_knowledge(store, "fixture").to_bytes())[0]
    assert first.startswith('{"checksum":"')
    assert list(json.loads(first)) == ["checksum", "chunk_count", "contract", "corpus_id", "data_as_of", "records",
                                       "snapshot"]
    assert ", " not in first and ": " not in first and "built_" not in first


def test_stream_is_manifest_plus_chunks_each_lf_terminated_and_no_graph(store: KnowledgeStore) -> None:
    raw = export_knowledge(store, "fixture").to_bytes()
    assert raw.endswith(b"\n")
    assert len(lines(raw)) == 2 + 1 + 1  # manifest, two chunks, the empty tail after the final LF
    assert b'"edges"' not in raw


def test_chunk_lines_keep_store_order_and_every_field() -> None:
    # Store order, not sorted: the second record's chunk sorts first by id and path but stays second.
    store = small_store(chunk("zz", "first"), chunk("aa", "second", url="https://x", labels=["l"]))
    chunk_lines = [json.loads(line) for line in lines(export_knowledge(store, "c").to_bytes())[1:-1]]
    assert [c["record_id"] for c in chunk_lines] == ["zz", "aa"]
    assert list(chunk_lines[0]) == sorted(chunk_lines[0])
    assert len(chunk_lines[0]) == 18
    first = lines(export_knowledge(store, "c").to_bytes())[1]
    for shape in ('"url":null', '"state":null', '"updated_at":null', '"group":null', '"labels":[]', '"links":[]'):
        assert shape in first


def test_embeddings_are_base64_little_endian_doubles() -> None:
    vector = [i * 0.001 - 0.123 for i in range(256)]
    store = small_store(chunk("a", "x", embedding=vector))
    line = json.loads(lines(export_knowledge(store, "c").to_bytes())[1])
    assert len(line["embedding"]) == 2732
    assert list(struct.unpack("<256d", base64.b64decode(line["embedding"]))) == vector


def test_data_as_of_is_the_newest_updated_at_or_null() -> None:
    dated = small_store(chunk("a", "x", updated_at="2026-01-02T00:00:00Z"), chunk("b", "y"),
                        chunk("c", "z", updated_at="2026-01-10T00:00:00Z"))
    assert export_knowledge(dated, "c").manifest.data_as_of == "2026-01-10T00:00:00Z"
    bare = export_knowledge(small_store(chunk("a", "x")), "c")
    assert bare.manifest.data_as_of is None and b'"data_as_of":null' in bare.to_bytes()


def test_a_store_without_persisted_embeddings_is_refused(store: KnowledgeStore) -> None:
    phase_a = replace(store, chunks=[replace(c, embedding=[]) for c in store.chunks])
    with pytest.raises(ArtifactError) as err:
        export_knowledge(phase_a, "fixture")
    assert str(err.value) == PHASE_A_REFUSAL


def test_the_checksum_is_deterministic_and_round_trips(store: KnowledgeStore) -> None:
    a, b = export_knowledge(store, "fixture"), export_knowledge(store, "fixture")
    assert a.to_bytes() == b.to_bytes() and a.manifest.checksum == a.computed_checksum()
    assert import_knowledge(a.to_bytes()).to_bytes() == a.to_bytes()
    assert export_knowledge(store, "other").manifest.checksum != a.manifest.checksum


# --------------------------------------------------------------------------- import refusals


@pytest.fixture
def good(store: KnowledgeStore) -> bytes:
    return export_knowledge(store, "fixture").to_bytes()


def refused(raw: bytes) -> str:
    with pytest.raises(ArtifactError) as err:
        import_knowledge(raw)
    return str(err.value)


def test_a_tampered_checksum_is_refused(good: bytes) -> None:
    tampered = good.replace(GOLDEN_CHECKSUM.encode(), b"0" * 64, 1)
    assert refused(tampered).startswith(f"checksum mismatch: manifest says {'0' * 64}, recomputed {GOLDEN_CHECKSUM}")


def test_a_flipped_content_byte_is_refused(good: bytes) -> None:
    manifest_end = good.index(b"\n")
    at = good.index(b'"content":"', manifest_end) + len(b'"content":"')
    while not good[at:at + 1].islower():
        at += 1
    flipped = good[:at] + good[at:at + 1].upper() + good[at + 1:]
    assert refused(flipped).startswith("checksum mismatch: manifest says ")


def test_an_empty_stream_is_refused() -> None:
    assert refused(b"") == "artifact too short: need at least a manifest line"
    assert refused(b"\n").startswith("bad manifest JSON: ")


def test_a_missing_chunk_line_is_a_line_count_error(good: bytes) -> None:
    parts = good.split(b"\n")
    del parts[1]
    assert refused(b"\n".join(parts)) == "artifact line count 2 does not match chunk_count 2 (expected 3)"


def test_non_utf8_is_refused() -> None:
    assert refused(b"\xff\xfe\x00").startswith("artifact is not UTF-8: ")


def test_bad_json_lines_are_named(good: bytes) -> None:
    assert refused(b"{nope\n").startswith("bad manifest JSON: ")
    parts = good.split(b"\n")
    parts[1] = b"[1,"
    assert refused(b"\n".join(parts)).startswith("bad chunk JSON: ")


@pytest.mark.parametrize(("drop", "message"), [
    ("data_as_of", "manifest missing nullable string field `data_as_of`"),
    ("contract", "manifest missing string field `contract`"),
    ("corpus_id", "manifest missing string field `corpus_id`"),
    ("records", "manifest missing integer field `records`"),
    ("chunk_count", "manifest missing integer field `chunk_count`"),
    ("checksum", "manifest missing string field `checksum`"),
])
def test_manifest_fields_are_required(good: bytes, drop: str, message: str) -> None:
    parts = good.split(b"\n")
    manifest = json.loads(parts[0])
    del manifest[drop]
    parts[0] = json.dumps(manifest, separators=(",", ":")).encode()
    assert refused(b"\n".join(parts)) == message


def test_manifest_counts_must_be_unsigned_integers(good: bytes) -> None:
    parts = good.split(b"\n")
    for bad in (-1, 2.0, True, "2"):
        manifest = json.loads(parts[0])
        manifest["records"] = bad
        assert refused(b"\n".join([json.dumps(manifest).encode(), *parts[1:]])) == \
            "manifest missing integer field `records`"


@pytest.mark.parametrize(("field", "value", "message"), [
    ("embedding", None, "chunk missing string field `embedding`"),
    ("chunk_id", None, "chunk missing string field `chunk_id`"),
    ("start_line", -1, "chunk missing integer field `start_line`"),
    ("token_count", 1.5, "chunk missing integer field `token_count`"),
    ("url", 3, "chunk missing nullable string field `url`"),
    ("labels", "x", "chunk missing array field `labels`"),
])
def test_chunk_fields_are_typed(good: bytes, field: str, value: object, message: str) -> None:
    parts = good.split(b"\n")
    line = json.loads(parts[1])
    line[field] = value
    parts[1] = json.dumps(line).encode()
    assert refused(b"\n".join(parts)) == message


def test_a_missing_nullable_chunk_field_is_refused(good: bytes) -> None:
    parts = good.split(b"\n")
    line = json.loads(parts[1])
    del line["group"]
    parts[1] = json.dumps(line).encode()
    assert refused(b"\n".join(parts)) == "chunk missing nullable string field `group`"


def test_bad_embeddings_are_refused(good: bytes) -> None:
    parts = good.split(b"\n")
    for bad, start in (("!!!", "bad embedding base64"), (base64.b64encode(b"1234567").decode(),
                                                          "embedding byte length 7 is not a multiple of 8"),
                       (base64.b64encode(struct.pack("<d", float("nan"))).decode(),
                        "chunk embedding holds a non-finite value")):
        line = json.loads(parts[1])
        line["embedding"] = bad
        assert refused(b"\n".join([parts[0], json.dumps(line).encode(), *parts[2:]])).startswith(start)


def test_a_valid_artifact_with_a_different_body_still_fails_the_checksum(good: bytes) -> None:
    parts = good.split(b"\n")
    line = json.loads(parts[1])
    line["labels"] = ["injected"]
    parts[1] = json.dumps(line, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert refused(b"\n".join(parts)).startswith("checksum mismatch")

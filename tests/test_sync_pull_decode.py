"""Decoding a pulled artifact on two cores gives exactly the store and the verdicts of decoding it on one."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import reference_dir

from cce_core.indexing.indexer import build_index
from cce_core.indexing.store import serialize_parts
from cce_core.sync import pull_decode
from cce_core.sync.artifact import (
    ArtifactError,
    artifact_to_store,
    export_artifact,
    import_artifact,
    pack_module_suffixes,
)

posix_only = pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")


def _store_bytes(data) -> bytes:
    return b"".join(bytes(part) for part in serialize_parts(data))


@pytest.fixture(scope="module")
def raw(host) -> bytes:
    samples = reference_dir() / "test" / "fixture" / "samples"
    if not samples.is_dir():
        pytest.skip(f"reference fixture not found at {samples}")
    data, _ = build_index(samples, host, host.embedder("hash"), protect_secrets=True)
    return export_artifact(data, "cce/demo", "0" * 40, pack_module_suffixes(host))


@pytest.fixture
def always_parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pull_decode, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(pull_decode, "_can_fork", lambda: True)


def _serial(raw: bytes, host) -> bytes:
    return _store_bytes(artifact_to_store(import_artifact(raw), host.embedder("hash")))


@posix_only
def test_two_process_decoding_builds_the_same_store_bytes(raw: bytes, host, always_parallel, monkeypatch) -> None:
    def no_fallback(_chunks):
        raise AssertionError("the child's BM25 should have been adopted")

    monkeypatch.setattr(pull_decode, "bm25_of", no_fallback)
    artifact, data = pull_decode.decode_to_store(raw, host.embedder("hash"))
    assert artifact.manifest.checksum == import_artifact(raw).manifest.checksum
    assert _store_bytes(data) == _serial(raw, host)


@posix_only
def test_a_child_that_disagrees_is_ignored(raw: bytes, host, always_parallel, monkeypatch) -> None:
    # The child reports BM25 for other chunks (a wrong digest): the parent must build its own.
    real_child = pull_decode._child_bm25

    def lying_child(raw_bytes: bytes, conn) -> None:
        lines = raw_bytes.split(b"\n")
        real_child(b"\n".join([lines[0], *lines[2:]]), conn)  # one chunk line fewer

    monkeypatch.setattr(pull_decode, "_child_bm25", lying_child)
    _artifact, data = pull_decode.decode_to_store(raw, host.embedder("hash"))
    assert _store_bytes(data) == _serial(raw, host)


@posix_only
def test_a_child_that_fails_is_ignored(raw: bytes, host, always_parallel, monkeypatch) -> None:
    monkeypatch.setattr(pull_decode, "_child_bm25", lambda raw_bytes, conn: conn.close())
    _artifact, data = pull_decode.decode_to_store(raw, host.embedder("hash"))
    assert _store_bytes(data) == _serial(raw, host)


@posix_only
def test_a_bad_artifact_gets_the_same_error_and_leaves_no_child(raw: bytes, host, always_parallel) -> None:
    import multiprocessing

    tampered = raw.replace(b'"kind":"', b'"kind":"x', 1)
    with pytest.raises(ArtifactError) as serial:
        import_artifact(tampered)
    with pytest.raises(ArtifactError) as parallel:
        pull_decode.decode_to_store(tampered, host.embedder("hash"))
    assert str(parallel.value) == str(serial.value)
    assert multiprocessing.active_children() == []


def test_small_artifacts_are_decoded_in_process(raw: bytes, host, monkeypatch) -> None:
    def no_fork(_raw: bytes) -> None:
        raise AssertionError("a small artifact must not fork")

    monkeypatch.setattr(pull_decode, "_Bm25Child", no_fork)
    assert len(raw) < pull_decode.PARALLEL_MIN_BYTES
    _artifact, data = pull_decode.decode_to_store(raw, host.embedder("hash"))
    assert _store_bytes(data) == _serial(raw, host)


def test_pull_installs_through_decode_to_store(raw: bytes, host, tmp_path: Path, monkeypatch) -> None:
    # install_artifact (every pull) must go through decode_to_store, or the speed-up is dead code.
    from cce_core.sync import service

    calls = []

    def recording(raw_bytes: bytes, embedder, *request):
        calls.append(len(raw_bytes))
        return pull_decode.decode_to_store(raw_bytes, embedder, *request)

    monkeypatch.setattr(service, "decode_to_store", recording)
    service.install_artifact(tmp_path, raw, log_metrics=False)
    assert calls == [len(raw)]

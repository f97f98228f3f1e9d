"""The store fingerprint and ``cce doctor``, through the installed ``cce`` (plus a pull installed in-process).

Acceptance of issue #12 part 2: after ``cce index`` a ``fingerprint.json``
with the pinned field order and self-checksum sits beside the store and the
doctor reports all ok; a flipped store byte, an edited fingerprint, another
embedder or pack set each FAIL with exit 1; a store without a fingerprint
gets the advisory and exit 0.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from pathlib import Path

import pytest
from helpers import REPO_ROOT, reference_dir, run_cce

from cce_core import __version__
from cce_core.indexing.fingerprint import Fingerprint, fingerprint_path, parse_fingerprint
from cce_core.indexing.store import default_store_path, load_store, segments_dir

SAMPLES = REPO_ROOT / "samples"
FIELDS = ["block_nesting_limit", "embed_dim", "embedder", "engine_version", "markdown_section_tokens", "pack_set",
          "redaction", "schema", "sha256", "spec_version", "store_sha256", "tokenizer"]
FAILED = "error: doctor found definite corruption or config drift (see above)\n"


def indexed(tmp_path: Path, name: str = "proj") -> Path:
    root = tmp_path / name
    shutil.copytree(SAMPLES, root)
    done = run_cce("index", root, "--no-metrics")
    assert done.returncode == 0, done.stderr
    return root


def doctor(*args: str | Path):
    return run_cce("doctor", *args)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def reseal(path: Path, **changes: object) -> None:
    """Rewrite the fingerprint with ``changes`` and a valid self-checksum: a store built under another config."""
    value = json.loads(path.read_text(encoding="utf-8"))
    value.update(changes)
    value["sha256"] = ""
    value["sha256"] = hashlib.sha256(json.dumps(value, separators=(",", ":")).encode()).hexdigest()
    path.write_text(json.dumps(value, separators=(",", ":")), encoding="utf-8")


def pack_set() -> str:
    from cce_core.plugins.host import default_host

    return default_host().packs.pack_set_id


def test_index_writes_the_fingerprint_with_pinned_order_and_self_checksum(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    store = default_store_path(root)
    path = root / ".cce" / "fingerprint.json"
    raw = path.read_bytes()
    assert b"\n" not in raw and b" " not in raw.replace(b'" ', b"")  # one compact line
    value = json.loads(raw)
    assert list(value) == FIELDS
    assert value == {
        "block_nesting_limit": 192, "embed_dim": 256, "embedder": "hash", "engine_version": __version__,
        "markdown_section_tokens": 400, "pack_set": pack_set(), "redaction": True, "schema": "cce.fingerprint/v1",
        "sha256": value["sha256"], "spec_version": "1.0", "store_sha256": sha(store), "tokenizer": "cce.tokens/v1"}
    probe = dict(value, sha256="")
    assert value["sha256"] == hashlib.sha256(json.dumps(probe, separators=(",", ":")).encode()).hexdigest()
    assert parse_fingerprint(raw).intact
    # Re-indexing an unchanged tree leaves store and fingerprint byte-identical.
    assert run_cce("index", root, "--no-metrics").returncode == 0
    assert path.read_bytes() == raw


def test_a_healthy_store_is_all_ok(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    done = doctor("--dir", root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    assert done.stdout == (
        f"cce doctor — {root}\n"
        "  ok        store parses: 21 chunks across 7 files (embedder hash)\n"
        f"  ok        fingerprint matches this installation (hash/256 · packs `{pack_set()}` · cce.tokens/v1)\n"
        "  ok        provenance: local build (no sync marker)\n"
        "summary: 1 store checked · 0 failures · 0 advisories\n")
    same = run_cce("doctor", cwd=root)  # the current directory by default
    assert same.returncode == 0 and same.stdout.startswith("cce doctor — .\n")


def rewrite_manifest(store: Path) -> None:
    """The same manifest in other bytes (indented JSON): it still parses, but no longer matches its fingerprint."""
    raw = store.read_bytes()
    text = json.dumps(json.loads(raw[16:]), indent=1).encode()
    store.write_bytes(raw[:8] + struct.pack("<Q", len(text)) + text)


def test_a_flipped_store_byte_fails_and_a_reindex_repairs_it(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    store = default_store_path(root)
    rewrite_manifest(store)
    done = doctor("--dir", root)
    assert done.returncode == 1
    assert "  FAIL      store bytes do not match the fingerprint" in done.stdout
    assert done.stdout.endswith("summary: 1 store checked · 1 failure · 0 advisories\n")
    assert done.stderr == FAILED
    # The store no longer matches its fingerprint, so the next index rebuilds instead of reusing it.
    assert run_cce("index", root, "--no-metrics").returncode == 0
    assert doctor("--dir", root).returncode == 0


def test_a_flipped_segment_byte_fails_and_a_reindex_repairs_it(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    (segment,) = segments_dir(default_store_path(root)).iterdir()
    raw = bytearray(segment.read_bytes())
    raw[-64] ^= 0x01  # inside the last section: the segment still parses
    segment.write_bytes(bytes(raw))
    done = doctor("--dir", root)
    assert done.returncode == 1
    assert f"  FAIL      segment {segment.name} does not match its recorded checksum" in done.stdout
    assert done.stdout.endswith("summary: 1 store checked · 1 failure · 0 advisories\n")
    # The segment is newer than the manifest that names it: the next index hashes it and rebuilds.
    assert run_cce("index", root, "--no-metrics").returncode == 0
    assert doctor("--dir", root).returncode == 0


def test_a_damaged_header_is_a_parse_failure(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    store = default_store_path(root)
    store.write_bytes(b"not a store at all")
    done = doctor("--dir", root)
    assert done.returncode == 1
    assert "  FAIL      store cannot be parsed: " in done.stdout
    assert "  FAIL      store bytes do not match the fingerprint" in done.stdout


def test_an_edited_fingerprint_fails_its_self_checksum(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    path = root / ".cce" / "fingerprint.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    value["pack_set"] = "python"
    path.write_text(json.dumps(value, separators=(",", ":")), encoding="utf-8")
    done = doctor("--dir", root)
    assert done.returncode == 1 and done.stderr == FAILED
    assert "  FAIL      fingerprint self-checksum mismatch" in done.stdout


def test_unparsable_fingerprint_fails(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    (root / ".cce" / "fingerprint.json").write_text("{not json", encoding="utf-8")
    done = doctor("--dir", root)
    assert done.returncode == 1
    assert "  FAIL      could not parse " in done.stdout


@pytest.mark.parametrize(("changes", "expected"), [
    ({"embedder": "ollama"},
     "  FAIL      embedder drift: the fingerprint records `ollama` but the store declares `hash`"),
    ({"embed_dim": 128}, "  FAIL      embedding dimensions changed: built at 128, this engine embeds at 256"),
    ({"pack_set": "python,ruby"}, "  FAIL      chunker changed: the store was built with packs `python,ruby`"),
    ({"tokenizer": "cce.tokens/v0"}, "  FAIL      tokenizer rule changed (`cce.tokens/v0` vs `cce.tokens/v1`)"),
    ({"block_nesting_limit": 64}, "  FAIL      document nesting limit changed (64 vs 192)"),
])
def test_configuration_drift_fails(tmp_path: Path, changes: dict[str, object], expected: str) -> None:
    root = indexed(tmp_path)
    reseal(root / ".cce" / "fingerprint.json", **changes)
    done = doctor("--dir", root)
    assert done.returncode == 1, done.stdout
    assert expected in done.stdout
    assert "fingerprint matches" not in done.stdout


def test_a_store_rebuilt_with_another_embedder_fails(tmp_path: Path) -> None:
    """The embedder changed under the fingerprint: a store declaring another embedder than recorded."""
    from cce_core.indexing.store import save_store

    root = indexed(tmp_path)
    store = default_store_path(root)
    data = load_store(store)
    meta = dict(data.meta, embedder="other", embed_model="m")
    from cce_core.indexing.store import StoreData

    rebuilt = StoreData(meta, list(data.chunks), data.embeddings.copy(), data.files, data.edges, data.bm25)
    save_store(rebuilt, store)  # an older cce would write the store and no fingerprint
    done = doctor("--dir", root)
    assert done.returncode == 1
    assert "embedder drift: the fingerprint records `hash` but the store declares `other`" in done.stdout
    assert "store bytes do not match the fingerprint" in done.stdout


@pytest.mark.parametrize(("changes", "expected"), [
    ({"markdown_section_tokens": 300}, "  advisory  document section budget differs (300 vs the default 400)"),
    ({"redaction": False}, "  advisory  built with --allow-secrets (secret protection OFF)"),
])
def test_soft_findings_are_advisories(tmp_path: Path, changes: dict[str, object], expected: str) -> None:
    root = indexed(tmp_path)
    reseal(root / ".cce" / "fingerprint.json", **changes)
    done = doctor("--dir", root)
    assert done.returncode == 0, done.stdout
    assert expected in done.stdout
    assert "summary: 1 store checked · 0 failures · 1 advisory\n" in done.stdout


def test_allow_secrets_build_is_recorded_and_advised(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(SAMPLES, root)
    assert run_cce("index", root, "--no-metrics", "--allow-secrets").returncode == 0
    assert json.loads((root / ".cce" / "fingerprint.json").read_text(encoding="utf-8"))["redaction"] is False
    done = doctor("--dir", root)
    assert done.returncode == 0 and "--allow-secrets" in done.stdout


def test_a_store_without_fingerprint_gets_the_advisory(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    (root / ".cce" / "fingerprint.json").unlink()
    done = doctor("--dir", root)
    assert done.returncode == 0
    assert ("  advisory  no fingerprint recorded (store built before fingerprints existed) — re-index to enable "
            "drift detection\n") in done.stdout
    assert done.stdout.endswith("summary: 1 store checked · 0 failures · 1 advisory\n")
    assert run_cce("index", root, "--no-metrics").returncode == 0  # re-indexing writes it
    assert (root / ".cce" / "fingerprint.json").is_file()


@pytest.mark.slow
def test_a_kill_between_store_and_fingerprint_is_detected_and_the_store_stays_usable(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    old_fingerprint = (root / ".cce" / "fingerprint.json").read_bytes()
    (root / "extra.py").write_text("def added():\n    return 1\n", encoding="utf-8")
    assert run_cce("index", root, "--no-metrics").returncode == 0
    # As if killed after the store's rename and before the fingerprint's: the old fingerprint remains.
    (root / ".cce" / "fingerprint.json").write_bytes(old_fingerprint)
    done = doctor("--dir", root)
    assert done.returncode == 1 and "store bytes do not match the fingerprint" in done.stdout
    assert "store parses: 22 chunks across 8 files" in done.stdout
    search = run_cce("search", "added", "--dir", root)
    assert search.returncode == 0 and "extra.py" in search.stdout
    assert run_cce("index", root, "--no-metrics").returncode == 0
    assert doctor("--dir", root).returncode == 0


def test_store_mode_and_named_store_fingerprints(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(SAMPLES, root)
    out = tmp_path / "stores"
    for name in ("a.cce", "b.cce"):
        assert run_cce("index", root, "--no-metrics", "--store", out / name).returncode == 0
    # (A store's writer lock file, `<store>.lock`, sits beside it too; it is not the fingerprint's concern.)
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".") and not p.name.endswith(".lock")) == [
        "a.cce", "a.cce.d", "a.cce.fingerprint.json", "b.cce", "b.cce.d", "b.cce.fingerprint.json"]
    assert fingerprint_path(out / "a.cce") == out / "a.cce.fingerprint.json"
    done = doctor("--store", out / "a.cce")
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith(f"cce doctor — store {out / 'a.cce'}\n")
    assert "provenance" not in done.stdout  # a bare store file has no sync marker to check


def test_usage_errors(tmp_path: Path) -> None:
    both = doctor("--dir", tmp_path, "--store", tmp_path / "x")
    assert both.returncode == 2 and both.stderr == "error: --dir cannot be used with --store\n"
    empty = doctor("--dir", tmp_path)
    assert empty.returncode == 1
    assert empty.stderr == (f"error: no store at {tmp_path / '.cce' / 'index.cce'} — index first "
                            f"(`cce index {tmp_path}`)\n")
    missing = doctor("--store", tmp_path / "nope.cce")
    assert missing.returncode == 1 and missing.stderr.startswith(f"error: no store at {tmp_path / 'nope.cce'}")
    assert doctor("--dir", tmp_path / "nope").stderr == f"error: no such directory: {tmp_path / 'nope'}\n"
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    assert doctor("--dir", tmp_path / "a-file").stderr == f"error: not a directory: {tmp_path / 'a-file'}\n"


def write_workspace(root: Path, members: list[str]) -> None:
    lines = ["version: 1", "name: demo", "members:"]
    for name in members:
        lines += [f"  - name: {name}", f"    path: {name}", "    type: store-only", f"    package: {name}"]
    (root / ".cce").mkdir(parents=True, exist_ok=True)
    (root / ".cce" / "workspace.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_workspace_mode_checks_every_member(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    indexed(root, "api")
    indexed(root, "web")
    write_workspace(root, ["api", "web"])
    done = doctor("--dir", root)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.split("\n")
    assert lines[0] == "cce doctor — workspace demo (2 members)"
    assert lines[1] == "api:" and "web:" in lines
    assert done.stdout.endswith("summary: 2 stores checked · 0 failures · 0 advisories\n")
    store = default_store_path(root / "web")
    rewrite_manifest(store)
    failed = doctor("--dir", root)
    assert failed.returncode == 1
    web = failed.stdout.split("web:\n", 1)[1]
    assert "FAIL      store bytes do not match the fingerprint" in web
    assert failed.stdout.endswith("summary: 2 stores checked · 1 failure · 0 advisories\n")


def test_a_corrupt_workspace_manifest_fails(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    (root / ".cce" / "workspace.yml").write_text("members: [\n", encoding="utf-8")
    done = doctor("--dir", root)
    assert done.returncode == 1
    assert "  FAIL      the workspace manifest is present but unreadable" in done.stdout


def test_sync_marker_checks(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    marker = root / ".cce" / "synced.json"
    store = default_store_path(root)
    marker.write_text(json.dumps({"repo_id": "example.com__acme__demo", "sha": "0" * 40, "checksum": "f" * 64,
                                  "installed_sha256": sha(store)}, separators=(",", ":")), encoding="utf-8")
    done = doctor("--dir", root)
    assert done.returncode == 0, done.stdout
    assert (f"  ok        pulled store bytes match the install record (example.com__acme__demo@{'0' * 40} · "
            f"{sha(store)[:12]})\n") in done.stdout
    marker.write_text(json.dumps({"repo_id": "r", "sha": "0" * 40, "checksum": "f" * 64}), encoding="utf-8")
    old = doctor("--dir", root)
    assert old.returncode == 0 and "  advisory  no install checksum recorded" in old.stdout
    marker.write_text(json.dumps({"repo_id": "r", "sha": "0" * 40, "checksum": "f" * 64,
                                  "installed_sha256": "0" * 64}), encoding="utf-8")
    bad = doctor("--dir", root)
    assert bad.returncode == 1
    assert "  FAIL      verify FAILED (checksum-only) for this store (r@" in bad.stdout
    assert "\n            expected : " + "0" * 64 + "\n" in bad.stdout  # continuation lines indented under FAIL


def test_a_sync_pull_writes_the_fingerprint(tmp_path: Path) -> None:
    from cce_core.default_plugins.hash_embedder import HashEmbedder
    from cce_core.indexing.indexer import build_index
    from cce_core.maintenance.doctor import run_doctor
    from cce_core.plugins.host import default_host
    from cce_core.sync.artifact import export_artifact, pack_module_suffixes
    from cce_core.sync.service import install_artifact

    host = default_host()
    data, _stats = build_index(SAMPLES, host, HashEmbedder())
    raw = export_artifact(data, "example.com__acme__demo", "1" * 40, pack_module_suffixes(host))
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    install_artifact(consumer, raw, log_metrics=False)
    store = default_store_path(consumer)
    recorded = parse_fingerprint((consumer / ".cce" / "fingerprint.json").read_bytes())
    assert recorded.store_sha256 == sha(store) and recorded.intact
    report = run_doctor(directory=consumer)
    assert report.healthy, report.text()
    assert "pulled store bytes match the install record (example.com__acme__demo@" in report.text()


def test_the_fingerprint_is_deterministic(tmp_path: Path) -> None:
    a = parse_fingerprint((indexed(tmp_path, "a") / ".cce" / "fingerprint.json").read_bytes())
    b = parse_fingerprint((indexed(tmp_path, "b") / ".cce" / "fingerprint.json").read_bytes())
    assert a == b
    assert isinstance(a, Fingerprint) and a.sealed() == a


def test_a_knowledge_store_is_checked_and_a_corrupt_one_fails(tmp_path: Path):
    feed = reference_dir() / "test" / "fixture" / "knowledge" / "curated.jsonl"
    if not feed.is_file():
        pytest.skip(f"reference fixture not found at {feed}")
    root = tmp_path / "notes"
    root.mkdir()
    assert run_cce("knowledge", "index", feed, "--dir", root).returncode == 0
    healthy = doctor("--dir", root)
    assert healthy.returncode == 0, healthy.stderr
    assert "  ok        contract cce.knowledge/v1 · snapshot 598e1b3891572bbb · 2 records · 2 chunks" in healthy.stdout
    (root / ".cce" / "knowledge" / "598e1b3891572bbb.json").write_text('{"broken', encoding="utf-8")
    broken = doctor("--dir", root)
    assert broken.returncode == 1
    assert "FAIL      knowledge store cannot be loaded:" in broken.stdout
    assert broken.stderr.count("\n") == 1 and broken.stderr.startswith("error: ")


def test_file_digests_are_remembered_per_file_version_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import hashlib as real_hashlib

    from cce_core.foundation.atomic import atomic_write
    from cce_core.indexing import fingerprint

    reads: list[str] = []
    real_digest = real_hashlib.file_digest

    def counting(fh, name):
        reads.append(fh.name)
        return real_digest(fh, name)

    monkeypatch.setattr(fingerprint.hashlib, "file_digest", counting)
    path = tmp_path / "store.cce"
    atomic_write(path, b"one")
    first = fingerprint.file_sha256(path)
    moved = tmp_path / "renamed.cce"
    path.rename(moved)  # a rename keeps the file: no second read
    assert fingerprint.file_sha256(moved) == first == real_hashlib.sha256(b"one").hexdigest()
    assert len(reads) == 1
    atomic_write(moved, b"two")  # a rewrite is a new file version: read again
    assert fingerprint.file_sha256(moved) == real_hashlib.sha256(b"two").hexdigest()
    assert len(reads) == 2

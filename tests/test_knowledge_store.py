"""The ``cce.knowledge/v1`` feed, the snapshot store and ingest: goldens, exact errors, atomicity, corruption."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from helpers import reference_dir

from cce_core.foundation.errors import CceError
from cce_core.hookspecs import DocumentSection as Section
from cce_core.knowledge import store as kstore
from cce_core.knowledge.feed import FeedError, KnowledgeRecord, parse_feed, render_document
from cce_core.knowledge.ingest import DISABLED_MESSAGE, build_store, ingest_file, snapshot_id
from cce_core.plugins.host import document_chunker_for, missing_document_chunker_message

FIXTURE = reference_dir() / "test" / "fixture" / "knowledge" / "curated.jsonl"
GOLDEN_SNAPSHOT = "598e1b3891572bbb"
GOLDEN_SHA256 = "ab66052f618f84693cd229a1926dfb28d2570697d803fa9006281ee584a41110"
GOLDEN_IDS = ["5fb9ad2eca3c1ee6", "64a595c97b7c78af"]


class FakeChunker:
    """One section per document (or per ``## `` heading): enough to test ingest without the markdown pack."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []

    def chunk_document(self, path: str, content: str, budget: int) -> list[Section]:
        self.calls.append((path, content, budget))
        parts = content.split("\n\n## ")
        out = []
        line = 1
        for i, part in enumerate(parts):
            text = part if i == 0 else "## " + part
            n = text.count("\n")
            out.append(Section(hashlib.sha256(f"{path}:{line}:{text}".encode()).hexdigest()[:16], f"s{i}",
                               f"s{i}", line, line + n, len(text) // 4 or 1, text))
            line += n + 2
        return out


def real_chunker():
    chunker = document_chunker_for("markdown")
    assert chunker is not None, "cce-pack-markdown is part of the default install"
    return chunker


def fixture_store() -> kstore.KnowledgeStore:
    if not FIXTURE.exists():
        pytest.skip(f"reference fixture not found at {FIXTURE} (set CCE_REFERENCE_DIR to the shared/reference folder)")
    raw = FIXTURE.read_bytes()
    return build_store(parse_feed(raw.decode("utf-8")), raw, 400, real_chunker())


# --------------------------------------------------------------------------- the feed


def test_feed_parses_required_optional_and_ignores_unknown_keys() -> None:
    text = ('\n{"id":"gh:o/r#1","title":"T","body":"b","source":"gh","state":"open","labels":["bug","p1"],'
            '"url":"https://x/1","issue_type":"epic","extra":{"k":1}}\n   \n')
    (rec,) = parse_feed(text)
    assert rec == KnowledgeRecord(id="gh:o/r#1", title="T", body="b", source="gh", url="https://x/1", state="open",
                                  labels=("bug", "p1"), extra={"k": 1})
    assert rec.group is None and rec.links == () and rec.updated_at is None


def test_render_trims_the_title_and_keeps_the_body_verbatim() -> None:
    rec = KnowledgeRecord(id="a", title="  Login policy  ", body="## Why\n\nBecause.", source="s")
    assert render_document(rec) == "# Login policy\n\n## Why\n\nBecause."


@pytest.mark.parametrize(("feed", "message"), [
    ('{"id":"a","title":"t","body":"b","source":"s"}\n{"id":"b","title":"t","body":"b"}\n',
     "line 2: invalid cce.knowledge/v1 record: missing field `source`"),
    ("not json", "line 1: invalid cce.knowledge/v1 record: Expecting value at line 1 column 1"),
    ('\n\n{"id":5,"title":"t","body":"b","source":"s"}',
     "line 3: invalid cce.knowledge/v1 record: field `id`: invalid type: integer `5`, expected a string"),
    ('{"id":"a","title":"t","body":"b","source":"s","labels":"bug"}',
     "line 1: invalid cce.knowledge/v1 record: field `labels`: invalid type: string \"bug\", "
     "expected a sequence of strings"),
    ('{"id":"a","title":"t","body":"b","source":"s","links":[1]}',
     "line 1: invalid cce.knowledge/v1 record: field `links`: invalid type: integer `1`, expected a string"),
    ('{"id":"a","title":"t","body":"b","source":"s","state":true}',
     "line 1: invalid cce.knowledge/v1 record: field `state`: invalid type: boolean `true`, "
     "expected a string or null"),
    ('[1,2]', "line 1: invalid cce.knowledge/v1 record: invalid type: sequence, expected a cce.knowledge/v1 "
              "record object"),
    ('{"id":"a","id":"b","title":"t","body":"b","source":"s"}',
     "line 1: invalid cce.knowledge/v1 record: duplicate field `id`"),
    ('{"id":"a","title":"t","body":"b","source":"s","extra":NaN}',
     "line 1: invalid cce.knowledge/v1 record: expected value (`NaN` is not JSON)"),
])
def test_bad_records_name_their_line(feed: str, message: str) -> None:
    with pytest.raises(FeedError) as caught:
        parse_feed(feed)
    assert str(caught.value) == message


def test_a_deeply_nested_record_is_an_error_not_a_crash() -> None:
    line = '{"id":"a","title":"t","body":"b","source":"s","extra":' + "[" * 10_000 + "]" * 10_000 + "}"
    with pytest.raises(FeedError) as caught:
        parse_feed(line)
    assert str(caught.value) == "line 1: invalid cce.knowledge/v1 record: recursion limit exceeded"


def test_nulls_are_accepted_for_optional_strings_and_crlf_lines_parse() -> None:
    text = '{"id":"a","title":"t","body":"b","source":"s","url":null,"state_reason":null}\r\n'
    (rec,) = parse_feed(text)
    assert rec.url is None and rec.state_reason is None


# --------------------------------------------------------------------------- the store golden


def test_fixture_store_is_byte_identical_to_the_family_golden() -> None:
    store = fixture_store()
    data = store.to_bytes()
    assert store.snapshot == GOLDEN_SNAPSHOT == snapshot_id(FIXTURE.read_bytes())
    assert hashlib.sha256(data).hexdigest() == GOLDEN_SHA256
    assert [c.chunk_id for c in store.chunks] == GOLDEN_IDS
    assert store.schema == "cce.knowledge/v1" and store.records == 2
    assert "s3cr3tvalue123" not in data.decode("utf-8")
    assert "api_key = [REDACTED:SECRET]" in store.chunks[1].content
    assert data.endswith(b"}\n") and not data.endswith(b"\n\n")


def test_facets_ride_on_every_chunk() -> None:
    policy, epic = fixture_store().chunks
    assert (policy.record_id, policy.source, policy.state, policy.state_reason) == (
        "gh:acme/app#12", "github-issues", "closed", "completed")
    assert (policy.updated_at, policy.group, policy.url, policy.labels) == (
        "2026-02-01T10:00:00Z", "Identity", "https://example.test/12", ["policy", "auth"])
    assert policy.title == "Login rate-limit policy" and policy.links == ["https://example.test/pr/40"]
    assert len(policy.embedding) == 256
    assert (epic.state, epic.state_reason, epic.updated_at, epic.url) == ("open", None, None, None)


def test_store_round_trips_through_its_bytes() -> None:
    store = fixture_store()
    assert kstore.store_from_bytes(store.to_bytes()) == store
    assert kstore.store_from_bytes(store.to_bytes()).to_bytes() == store.to_bytes()


def test_secret_facets_are_redacted_but_the_record_id_is_not() -> None:
    aws = "AKIA" + "IOSFODNN7EXAMPLE"
    ghp = "ghp" + "_" + "0123456789abcdefghijklmnopqrstuvwx01"
    line = json.dumps({"id": "gh:4", "title": f"Rotate leaked key {aws} in prod", "body": "body",
                       "source": f"github-issues {aws}", "url": f"https://example.test/1?token={ghp}",
                       "state": f"open; leaked {aws}", "updated_at": f"2026-01-02 token={ghp}",
                       "labels": [f"leak-{aws}", "bug"], "group": f"Ops {aws}",
                       "state_reason": "rotated; old api_key = s3cr3tvalue123",
                       "links": [f"https://example.test/pull/7?auth_token={ghp}"]})
    store = build_store(parse_feed(line), line.encode(), 400, FakeChunker())
    data = store.to_bytes().decode("utf-8")
    assert aws not in data and ghp not in data and "s3cr3tvalue123" not in data
    chunk = store.chunks[0]
    assert chunk.title == "Rotate leaked key [REDACTED:AWS_ACCESS_KEY] in prod"
    assert chunk.record_id == "gh:4"


def test_clean_facets_pass_through_unchanged() -> None:
    line = json.dumps({"id": "a", "title": "T", "body": "b", "source": "s", "url": "https://x/1", "state": "open",
                       "updated_at": "2026-01-01T00:00:00Z", "labels": ["x"], "group": "G", "links": ["https://x/pr/1"]})
    (chunk,) = build_store(parse_feed(line), line.encode(), 400, FakeChunker()).chunks
    assert (chunk.url, chunk.state, chunk.updated_at, chunk.labels, chunk.group, chunk.links) == (
        "https://x/1", "open", "2026-01-01T00:00:00Z", ["x"], "G", ["https://x/pr/1"])


def test_the_document_is_redacted_before_chunking() -> None:
    chunker = FakeChunker()
    line = json.dumps({"id": "a", "title": "Config", "body": "The key is api_key = s3cr3tvalue123 in prod.",
                       "source": "s"})
    build_store(parse_feed(line), line.encode(), 123, chunker)
    ((path, content, budget),) = chunker.calls
    assert (path, budget) == ("a", 123)
    assert "s3cr3tvalue123" not in content and "[REDACTED:SECRET]" in content


# --------------------------------------------------------------------------- install, supersede, corruption


def write_feed(tmp_path: Path, records: list[dict], name: str = "feed.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def rec(i: int, body: str = "body") -> dict:
    return {"id": f"r{i}", "title": f"Title {i}", "body": body, "source": "s"}


def test_install_writes_the_snapshot_then_the_pointer(tmp_path: Path) -> None:
    store = fixture_store()
    path = kstore.install_store(tmp_path, store.to_bytes(), store.snapshot)
    assert path == kstore.store_path(tmp_path, store.snapshot) == tmp_path / ".cce/knowledge/598e1b3891572bbb.json"
    assert (tmp_path / ".cce/knowledge/current").read_bytes() == b"598e1b3891572bbb\n"
    assert kstore.current_snapshot(tmp_path) == store.snapshot
    assert kstore.load_store(tmp_path) == store
    assert kstore.load_store(tmp_path, store.snapshot) == store
    assert path.read_bytes() == store.to_bytes()


def test_install_refuses_bad_bytes_and_a_mismatched_snapshot(tmp_path: Path) -> None:
    store = fixture_store()
    with pytest.raises(CceError, match="malformed knowledge store"):
        kstore.install_store(tmp_path, b"{}", store.snapshot)
    with pytest.raises(CceError, match="as 0000000000000000"):
        kstore.install_store(tmp_path, store.to_bytes(), "0000000000000000")
    with pytest.raises(CceError, match="invalid knowledge snapshot id"):
        kstore.store_path(tmp_path, "../escape")
    assert not (tmp_path / ".cce").exists()


def test_a_newer_ingest_supersedes_the_old(tmp_path: Path) -> None:
    first = ingest_file(write_feed(tmp_path, [rec(1)], "a.jsonl"), tmp_path, chunker=FakeChunker())
    second = ingest_file(write_feed(tmp_path, [rec(1), rec(2)], "b.jsonl"), tmp_path, chunker=FakeChunker())
    assert first.snapshot != second.snapshot
    assert kstore.current_snapshot(tmp_path) == second.snapshot
    assert kstore.load_store(tmp_path).records == 2
    assert kstore.load_store(tmp_path, first.snapshot).records == 1  # the old file stays, no longer current


def test_a_bad_record_fails_the_whole_ingest_and_writes_nothing(tmp_path: Path) -> None:
    good = ingest_file(write_feed(tmp_path, [rec(1)]), tmp_path, chunker=FakeChunker())
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(rec(2)) + "\n" + '{"id":"x","title":"t","body":"b"}\n', encoding="utf-8")
    before = sorted(p.name for p in kstore.knowledge_dir(tmp_path).iterdir())
    with pytest.raises(CceError, match=r"^line 2: invalid cce.knowledge/v1 record: missing field `source`$"):
        ingest_file(bad, tmp_path, chunker=FakeChunker())
    assert sorted(p.name for p in kstore.knowledge_dir(tmp_path).iterdir()) == before
    assert kstore.current_snapshot(tmp_path) == good.snapshot


def test_knowledge_enabled_false_refuses(tmp_path: Path) -> None:
    (tmp_path / ".cce").mkdir()
    (tmp_path / ".cce" / "config").write_text("knowledge:\n  enabled: false\n", encoding="utf-8")
    chunker = FakeChunker()
    with pytest.raises(CceError) as caught:
        ingest_file(write_feed(tmp_path, [rec(1)]), tmp_path, chunker=chunker)
    assert str(caught.value) == DISABLED_MESSAGE == "knowledge is disabled (knowledge.enabled: false in .cce/config)"
    assert not kstore.knowledge_dir(tmp_path).exists() and chunker.calls == []


def test_the_section_budget_comes_from_the_config(tmp_path: Path) -> None:
    (tmp_path / ".cce").mkdir()
    (tmp_path / ".cce" / "config").write_text("markdown:\n  max_section_tokens: 30\n", encoding="utf-8")
    chunker = FakeChunker()
    ingest_file(write_feed(tmp_path, [rec(1)]), tmp_path, chunker=chunker)
    assert chunker.calls[0][2] == 30


def test_a_missing_chunker_names_the_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cce_core.plugins.host as host

    monkeypatch.setattr(host, "document_chunker_for", lambda fmt, host=None: None)
    with pytest.raises(CceError) as caught:
        ingest_file(write_feed(tmp_path, [rec(1)]), tmp_path)
    assert str(caught.value) == missing_document_chunker_message("markdown")
    assert "pip install cce-pack-markdown" in str(caught.value)
    assert not kstore.knowledge_dir(tmp_path).exists()


def test_missing_and_corrupt_stores_are_told_apart(tmp_path: Path) -> None:
    with pytest.raises(kstore.KnowledgeStoreMissing, match=r"run `cce knowledge index <feed.jsonl>` first"):
        kstore.load_store(tmp_path)
    assert kstore.current_snapshot(tmp_path) is None
    summary = ingest_file(write_feed(tmp_path, [rec(1)]), tmp_path, chunker=FakeChunker())
    summary.store_path.write_bytes(b'{"schema":"cce.knowledge/v1","snapshot":')
    with pytest.raises(kstore.KnowledgeStoreCorrupt, match=r"is corrupt .*re-run `cce knowledge index"):
        kstore.load_store(tmp_path)
    summary.store_path.unlink()
    with pytest.raises(kstore.KnowledgeStoreCorrupt, match=r"the `current` pointer names it but .* is missing"):
        kstore.load_store(tmp_path)
    (tmp_path / ".cce/knowledge/current").write_bytes(b"../../etc/passwd\n")
    with pytest.raises(kstore.KnowledgeStoreCorrupt, match="does not name a snapshot"):
        kstore.load_store(tmp_path)


@pytest.mark.parametrize("mutate", [
    lambda o: o.update(schema="cce.knowledge/v2"),
    lambda o: o.update(records="2"),
    lambda o: o["chunks"][0].pop("content"),
    lambda o: o["chunks"][0].update(start_line=-1),
    lambda o: o["chunks"][0].update(labels=[1]),
    lambda o: o["chunks"][0].update(embedding=["x"]),
    lambda o: o.update(snapshot="0000000000000000"),
])
def test_a_malformed_store_is_corrupt(tmp_path: Path, mutate) -> None:
    store = fixture_store()
    path = kstore.install_store(tmp_path, store.to_bytes(), store.snapshot)
    obj = json.loads(path.read_bytes())
    mutate(obj)
    path.write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(kstore.KnowledgeStoreCorrupt):
        kstore.load_store(tmp_path)


def test_a_store_without_the_retrieval_facets_still_loads(tmp_path: Path) -> None:
    store = fixture_store()
    obj = json.loads(store.to_bytes())
    for chunk in obj["chunks"]:
        del chunk["title"], chunk["links"], chunk["embedding"]
    loaded = kstore.store_from_bytes(json.dumps(obj).encode())
    assert loaded.chunks[0].title == "" and loaded.chunks[0].embedding == []


def test_a_killed_install_leaves_the_old_store_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = ingest_file(write_feed(tmp_path, [rec(1)], "a.jsonl"), tmp_path, chunker=FakeChunker())
    old_bytes = old.store_path.read_bytes()
    real_replace = os.replace
    calls: list[str] = []

    def dying_replace(src: str, dst: str) -> None:
        calls.append(os.path.basename(dst))
        if os.path.basename(dst) == "current":
            raise KeyboardInterrupt  # killed after the snapshot landed, before the pointer moved
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", dying_replace)
    with pytest.raises(KeyboardInterrupt):
        ingest_file(write_feed(tmp_path, [rec(1), rec(2)], "b.jsonl"), tmp_path, chunker=FakeChunker())
    monkeypatch.setattr(os, "replace", real_replace)
    assert calls[-1] == "current" and calls[0].endswith(".json")
    assert kstore.current_snapshot(tmp_path) == old.snapshot
    assert kstore.load_store(tmp_path).to_bytes() == old_bytes
    assert not [p for p in kstore.knowledge_dir(tmp_path).iterdir() if p.name.endswith(".tmp")]


def test_ingest_redacts_with_the_projects_secrets_profile(tmp_path: Path) -> None:
    # A GitLab token pasted into a runbook: the family redactor misses it, the strict default does not.
    from secret_formats import j, rand

    token = j("gl", "pat-", rand("knowledge-runbook", 20))
    record = {"id": "kn:runbook", "title": "Deploy runbook", "source": "handbook",
              "body": f"## CI\n\nSet GITLAB_TOKEN: {token} before the deploy job."}
    feed = tmp_path / "feed.jsonl"
    feed.write_text(json.dumps(record) + "\n", encoding="utf-8")
    strict_root, family_root = tmp_path / "strict", tmp_path / "family"
    strict_root.mkdir()
    (family_root / ".cce").mkdir(parents=True)
    (family_root / ".cce" / "config").write_text("secrets:\n  profile: family\n", encoding="utf-8")
    ingest_file(feed, strict_root, real_chunker())
    ingest_file(feed, family_root, real_chunker())
    strict_bytes = kstore.load_store(strict_root).to_bytes().decode("utf-8")
    assert token not in strict_bytes and "[REDACTED:" in strict_bytes
    assert token in kstore.load_store(family_root).to_bytes().decode("utf-8")  # the family's exact set

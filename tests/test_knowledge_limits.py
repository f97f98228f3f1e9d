"""Knowledge ingest under hostile feeds: documented ceilings, duplicate ids, lone surrogates, a streamed build.

A feed is untrusted input: 40,000 empty headings in 120 KB, or 100,000 tiny
records, must be refused with one clear line (naming the line and the limit)
instead of growing the store and the process without bound. Every refusal
leaves the previous store current and writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path

import pytest
from helpers import run_cce
from test_knowledge_store import FakeChunker, fixture_store

from cce_core.foundation.errors import CceError
from cce_core.knowledge import store as kstore
from cce_core.knowledge.feed import FeedError, parse_feed
from cce_core.knowledge.ingest import ingest_file
from cce_core.knowledge.limits import (
    DEFAULT_LIMITS,
    MAX_FEED_BYTES,
    MAX_RECORDS,
    MAX_SECTIONS,
    MAX_SECTIONS_PER_RECORD,
    IngestLimits,
)


def record(i: int | str, body: str = "body") -> dict:
    return {"id": f"r{i}", "title": f"Title {i}", "body": body, "source": "s"}


def write(tmp_path: Path, lines: list[str], name: str = "feed.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def feed_of(tmp_path: Path, records: list[dict], name: str = "feed.jsonl") -> Path:
    return write(tmp_path, [json.dumps(r) for r in records], name)


def knowledge_files(root: Path) -> list[str]:
    folder = kstore.knowledge_dir(root)
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# --------------------------------------------------------------------------- the documented numbers


def test_the_limits_are_the_documented_numbers() -> None:
    assert (MAX_FEED_BYTES, MAX_RECORDS, MAX_SECTIONS, MAX_SECTIONS_PER_RECORD) == (
        64 * 1024 * 1024, 50_000, 50_000, 1_000)
    assert IngestLimits() == DEFAULT_LIMITS
    doc = (Path(__file__).resolve().parents[1] / "docs" / "knowledge.md").read_text(encoding="utf-8")
    for shown in ("64 MiB", "50,000 records", "50,000 sections", "1,000 sections"):
        assert shown in doc, f"docs/knowledge.md does not state the limit {shown!r}"


# --------------------------------------------------------------------------- duplicate ids, lone surrogates


def test_a_duplicate_record_id_is_refused_with_both_line_numbers() -> None:
    text = "\n".join(json.dumps(r) for r in (record(1), record(2), record(1))) + "\n"
    with pytest.raises(FeedError) as caught:
        parse_feed(text)
    assert str(caught.value) == ('line 3: invalid cce.knowledge/v1 record: duplicate record id "r1" '
                                 "(first on line 1)")


@pytest.mark.parametrize(("line", "field"), [
    ('{"id":"a","title":"x\\ud800y","body":"b","source":"s"}', "title"),
    ('{"id":"a","title":"t","body":"\\udfff","source":"s"}', "body"),
    ('{"id":"a","title":"t","body":"b","source":"s","labels":["ok","\\ud83d"]}', "labels"),
    ('{"id":"\\ud800","title":"t","body":"b","source":"s"}', "id"),
])
def test_a_lone_surrogate_escape_is_an_invalid_record(line: str, field: str) -> None:
    with pytest.raises(FeedError) as caught:
        parse_feed(line)
    message = str(caught.value)
    assert message.startswith(f"line 1: invalid cce.knowledge/v1 record: field `{field}`: lone surrogate")


def test_a_surrogate_pair_is_a_character_not_an_error() -> None:
    (rec,) = parse_feed('{"id":"a","title":"\\ud83d\\ude00","body":"b","source":"s"}')
    assert rec.title == "\U0001f600"


def test_a_lone_surrogate_through_the_cli_is_one_line_not_an_internal_error(tmp_path: Path) -> None:
    feed = write(tmp_path, ['{"id":"a","title":"ok","body":"b","source":"s"}',
                            '{"id":"b","title":"x\\ud800y","body":"b","source":"s"}'])
    done = run_cce("knowledge", "index", feed, "--dir", tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("error: line 2: invalid cce.knowledge/v1 record: field `title`: lone surrogate")
    assert "internal error" not in done.stderr and done.stderr.count("\n") == 1
    assert knowledge_files(tmp_path) == []


def test_a_duplicate_id_through_the_cli_writes_nothing(tmp_path: Path) -> None:
    feed = feed_of(tmp_path, [record(1), record(2), record(1)])
    done = run_cce("knowledge", "index", feed, "--dir", tmp_path)
    assert done.returncode == 1
    assert done.stderr == ('error: line 3: invalid cce.knowledge/v1 record: duplicate record id "r1" '
                           "(first on line 1)\n")
    assert knowledge_files(tmp_path) == []


# --------------------------------------------------------------------------- the ceilings


def test_an_empty_feed_is_an_error_not_an_empty_store(tmp_path: Path) -> None:
    feed = write(tmp_path, ["", "   "])
    with pytest.raises(CceError) as caught:
        ingest_file(feed, tmp_path, chunker=FakeChunker())
    assert str(caught.value) == f"{feed} holds no records — nothing to index"
    assert knowledge_files(tmp_path) == []


def test_an_oversized_feed_is_refused_before_it_is_read(tmp_path: Path) -> None:
    chunker = FakeChunker()
    feed = feed_of(tmp_path, [record(1), record(2)])
    size = feed.stat().st_size
    with pytest.raises(CceError) as caught:
        ingest_file(feed, tmp_path, chunker=chunker, limits=IngestLimits(max_feed_bytes=size - 1))
    assert str(caught.value) == (f"{feed} is {size:,} bytes; a knowledge feed may be at most {size - 1:,} bytes "
                                 "— trim the feed")
    assert chunker.calls == [] and knowledge_files(tmp_path) == []


def test_too_many_records_are_refused_at_the_first_one_over(tmp_path: Path) -> None:
    chunker = FakeChunker()
    feed = feed_of(tmp_path, [record(i) for i in range(4)])
    with pytest.raises(CceError) as caught:
        ingest_file(feed, tmp_path, chunker=chunker, limits=IngestLimits(max_records=3))
    assert str(caught.value) == "line 4: the feed has more than 3 records, the most one knowledge store holds — " \
                                "trim the feed"
    assert chunker.calls == [] and knowledge_files(tmp_path) == []


def test_a_record_with_too_many_sections_is_refused(tmp_path: Path) -> None:
    body = "".join(f"\n\n## h{i}\n\ntext" for i in range(5))  # the fake chunker: 6 sections
    feed = feed_of(tmp_path, [record(1), record("big", body)])
    with pytest.raises(CceError) as caught:
        ingest_file(feed, tmp_path, chunker=FakeChunker(), limits=IngestLimits(max_sections_per_record=5))
    assert str(caught.value) == ('line 2: record "rbig" makes 6 sections, more than the 5 one record may have — '
                                 "split it into several records or use fewer headings")
    assert knowledge_files(tmp_path) == []


def test_too_many_sections_in_all_are_refused_and_the_old_store_stays(tmp_path: Path) -> None:
    old = ingest_file(feed_of(tmp_path, [record(1)], "old.jsonl"), tmp_path, chunker=FakeChunker())
    before = knowledge_files(tmp_path)
    body = "\n\n## a\n\nx\n\n## b\n\ny"  # three sections a record
    feed = feed_of(tmp_path, [record(i, body) for i in range(4)])
    with pytest.raises(CceError) as caught:
        ingest_file(feed, tmp_path, chunker=FakeChunker(), limits=IngestLimits(max_sections=10))
    assert str(caught.value) == ("line 4: the feed makes more than 10 sections, the most one knowledge store holds "
                                 "— trim the feed")
    assert knowledge_files(tmp_path) == before and kstore.current_snapshot(tmp_path) == old.snapshot


def test_forty_thousand_empty_headings_are_refused_through_the_cli(tmp_path: Path) -> None:
    body = "".join(f"## {i}\n" for i in range(40_000))  # the 120 KB feed that made a 147 MB store
    feed = feed_of(tmp_path, [record("flood", body)])
    done = run_cce("knowledge", "index", feed, "--dir", tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith('error: line 1: record "rflood" makes ')
    assert "more than the 1000 one record may have" in done.stderr
    assert knowledge_files(tmp_path) == []


# --------------------------------------------------------------------------- streaming


class ForgetfulChunker(FakeChunker):
    """The fake chunker without its call log (which would grow with the feed itself)."""

    def chunk_document(self, path: str, content: str, budget: int):
        sections = super().chunk_document(path, content, budget)
        self.calls.clear()
        return sections


def _peak_bytes(tmp_path: Path, records: int) -> int:
    root = tmp_path / f"n{records}"
    root.mkdir()
    body = "Some runbook text about deploys and rollbacks. " * 20
    feed = feed_of(root, [record(i, body) for i in range(records)])
    tracemalloc.start()
    try:
        ingest_file(feed, root, chunker=ForgetfulChunker())
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kstore.load_store(root).records == records
    return peak


def test_ingest_memory_does_not_grow_with_the_feed(tmp_path: Path) -> None:
    _peak_bytes(tmp_path, 3)  # warm up: imports and caches are not the feed's cost
    small, large = _peak_bytes(tmp_path, 100), _peak_bytes(tmp_path, 800)
    # Holding every record, section and vector costs tens of KB a record (each section's vector alone is
    # about 3 KB of JSON); a streamed build keeps only the record ids it checks for duplicates.
    per_record = (large - small) / 700
    assert per_record < 1_000, f"peak {large:,} bytes for 800 records vs {small:,} for 100"


def test_the_streamed_store_is_byte_identical_to_the_in_memory_one(tmp_path: Path) -> None:
    store = fixture_store()
    assert b"".join(kstore.store_chunks(store.schema, store.snapshot, store.records, store.chunks)) == \
        store.to_bytes()
    empty = kstore.KnowledgeStore("cce.knowledge/v1", "e3b0c44298fc1c14", 0, [])
    assert empty.to_bytes() == (json.dumps({"schema": "cce.knowledge/v1", "snapshot": "e3b0c44298fc1c14",
                                            "records": 0, "chunks": []}, indent=2) + "\n").encode()


def test_a_feed_that_changes_while_it_is_indexed_is_refused(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import cce_core.knowledge.ingest as ingest

    feed = feed_of(tmp_path, [record(1), record(2)])
    real = ingest.verify_manifest_if_given

    def rewrite_between_passes(*args, **kwargs):
        real(*args, **kwargs)
        feed.write_text(json.dumps(record(3)) + "\n" + json.dumps(record(4)) + "\n", encoding="utf-8")

    monkeypatch.setattr(ingest, "verify_manifest_if_given", rewrite_between_passes)
    with pytest.raises(CceError) as caught:
        ingest_file(feed, tmp_path, chunker=FakeChunker())
    assert str(caught.value) == f"{feed} changed while it was being indexed — run the command again"
    assert knowledge_files(tmp_path) == []


def test_the_snapshot_is_still_the_hash_of_the_feed_bytes(tmp_path: Path) -> None:
    feed = feed_of(tmp_path, [record(1), record(2)])
    summary = ingest_file(feed, tmp_path, chunker=FakeChunker())
    assert summary.snapshot == hashlib.sha256(feed.read_bytes()).hexdigest()[:16]
    assert summary.records == 2 and summary.chunks == 2

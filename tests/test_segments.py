"""The segmented store: a re-index writes only what changed and answers exactly like a fresh index.

Incremental runs add a segment with the changed files and the paths they
supersede; fresh runs write one segment per batch of text; compaction folds
everything back into one. Whatever the history, the store reads its live
files in path order, so chunks, vectors, postings and every ranking equal a
fresh build of the same tree — compared here field by field and query by
query, with both ranking kernels.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import OLD_MTIME, age_tree, assert_same_store, index_with_hash, sample_corpus, store_answers

from cce_core.indexing import indexer as indexer_module
from cce_core.indexing.store import load_store, segments_dir
from cce_core.plugins.host import default_host
from cce_core.retrieval.searcher import Searcher


def _edit(root: Path) -> None:
    """Edit three files, add two, delete two."""
    for name in ("indexing/bm25.py", "retrieval/searcher.py", "python.py"):
        path = root / name
        path.write_text(path.read_text(encoding="utf-8") + "\n\ndef appended_helper_for_segments():\n    return 42\n",
                        encoding="utf-8")
    (root / "indexing" / "added_module.py").write_text("def brand_new_function(x):\n    return x * 2\n",
                                                       encoding="utf-8")
    (root / "zz_added.py").write_text("import indexing.bm25\n\nclass AddedThing:\n    pass\n", encoding="utf-8")
    (root / "indexing" / "graph.py").unlink()
    (root / "retrieval" / "single_signal.py").unlink()


def test_an_incremental_index_answers_exactly_like_a_fresh_one(tmp_path):
    root = sample_corpus(tmp_path, 'indexing', 'retrieval')
    store = tmp_path / "inc.cce"
    index_with_hash(root, store)
    assert len(load_store(store).segments) == 1
    _edit(root)
    data, stats = index_with_hash(root, store)
    assert len(data.segments) == 2  # one segment added, nothing rewritten
    assert data.total_rows > data.rows  # the superseded rows are still there, unread
    assert stats.reused_files == len(data.files) - 5  # three edited and two added files were read and chunked
    reopened = load_store(store)
    assert (stats.files_indexed, stats.total_chunks) == (len(reopened.files), len(reopened.chunks))
    fresh = tmp_path / "fresh.cce"
    index_with_hash(root, fresh, reuse=False)
    assert_same_store(store, fresh)


def test_an_unchanged_tree_is_recognised_without_reading_a_file(tmp_path, monkeypatch):
    root = sample_corpus(tmp_path, 'indexing', 'retrieval')
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    before = store.read_bytes()
    reads: list[str] = []
    real = indexer_module.read_listed

    def counting(result, listed):
        reads.append(listed.path)
        return real(result, listed)

    monkeypatch.setattr(indexer_module, "read_listed", counting)
    _data, stats = index_with_hash(root, store)
    assert reads == []
    assert store.read_bytes() == before
    assert stats.reused_files == stats.files_indexed

    # A touched file (new time, same bytes) is read and hashed once, never chunked again ...
    os.utime(root / "python.py", (OLD_MTIME + 10, OLD_MTIME + 10))
    data, stats = index_with_hash(root, store)
    assert reads == ["python.py"]
    assert len(data.segments) == 2 and data.segments[-1].rows == 0  # only its new metadata was written
    # ... and its new metadata is trusted from then on.
    reads.clear()
    index_with_hash(root, store)
    assert reads == []


def test_a_recently_written_file_is_not_trusted_by_its_metadata(tmp_path, monkeypatch):
    root = sample_corpus(tmp_path, 'indexing', 'retrieval')
    (root / "python.py").write_text("def fresh_from_the_editor():\n    pass\n", encoding="utf-8")
    fresh_ns = (OLD_MTIME + 500) * 10**9
    os.utime(root / "python.py", ns=(fresh_ns, fresh_ns))
    store = tmp_path / "s.cce"
    index_with_hash(root, store, clock=lambda: fresh_ns + 10**9)  # read one second after it was written
    entry = next(f for f in load_store(store).files if f.path == "python.py")
    assert entry.mtime_ns == fresh_ns  # the real time is recorded, whenever the indexer ran
    reads: list[str] = []
    real = indexer_module.read_listed
    monkeypatch.setattr(indexer_module, "read_listed", lambda result, listed: reads.append(listed.path)
                        or real(result, listed))
    index_with_hash(root, store, clock=lambda: fresh_ns + 60 * 10**9)
    assert reads == ["python.py"]  # read inside the window last time: hashed again, not trusted


def test_batches_become_segments_that_answer_as_one(tmp_path, monkeypatch):
    root = sample_corpus(tmp_path, 'indexing', 'retrieval')
    single = tmp_path / "single.cce"
    index_with_hash(root, single)
    monkeypatch.setattr(indexer_module, "BATCH_BYTES", 8192)
    batched = tmp_path / "batched.cce"
    data, _stats = index_with_hash(root, batched)
    assert len(data.segments) > 5
    assert data.identity  # batches follow path order: positions map by offset alone
    assert_same_store(batched, single)
    # Compacted, the batches make exactly the segment a single batch writes.
    index_with_hash(root, batched, compact=True)
    (one,) = segments_dir(batched).iterdir()
    (reference,) = segments_dir(single).iterdir()
    assert one.read_bytes() == reference.read_bytes()


def test_compaction_after_edits_writes_the_fresh_segment(tmp_path):
    root = sample_corpus(tmp_path, 'indexing', 'retrieval')
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    _edit(root)
    index_with_hash(root, store)
    data, _stats = index_with_hash(root, store, compact=True)
    assert len(data.segments) == 1 and data.total_rows == data.rows
    fresh = tmp_path / "fresh.cce"
    index_with_hash(root, fresh, reuse=False)
    (compacted,) = segments_dir(store).iterdir()  # the superseded segments are gone
    (reference,) = segments_dir(fresh).iterdir()
    assert compacted.read_bytes() == reference.read_bytes()


def test_many_superseded_rows_trigger_a_compaction(tmp_path):
    root = sample_corpus(tmp_path, 'indexing', 'retrieval')
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    for path in sorted((root / "indexing").glob("*.py")):
        path.write_text(path.read_text(encoding="utf-8") + "\n# touched\n", encoding="utf-8")
    for path in sorted((root / "retrieval").glob("*.py")):
        path.write_text(path.read_text(encoding="utf-8") + "\n# touched\n", encoding="utf-8")
    data, _stats = index_with_hash(root, store)
    assert len(data.segments) == 1 and data.total_rows == data.rows


def test_leftover_temporaries_and_unnamed_segments_are_removed(tmp_path):
    root = sample_corpus(tmp_path, 'indexing', 'retrieval')
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    directory = segments_dir(store)
    (directory / ".seg-abandoned.tmp").write_bytes(b"half a segment")
    (directory / "seg-000000000000000000000000.cces").write_bytes(b"an orphan")
    (root / "python.py").write_text("def changed():\n    pass\n", encoding="utf-8")
    index_with_hash(root, store)
    names = sorted(p.name for p in directory.iterdir())
    # Two segments and the live view of the re-indexed store; nothing else.
    assert len(names) == 3 and all(n.startswith("seg-") and n.endswith(".cces") for n in names[:2])
    assert names[2].startswith("view-") and names[2].endswith(".ccev")
    assert "seg-000000000000000000000000.cces" not in names


def test_a_store_with_no_files_opens_and_answers_nothing(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    store = tmp_path / "s.cce"
    data, _stats = index_with_hash(root, store)
    assert len(data.chunks) == 0 and data.files == []
    assert Searcher(load_store(store), default_host().embedder("hash")).search("anything") == []


# -- kill -9 ------------------------------------------------------------------

_RUNNER = """
import sys
from pathlib import Path
from cce_core.indexing import compaction
from cce_core.indexing.indexer import index_directory
from cce_core.indexing.store import load_store
from cce_core.plugins.host import default_host
if sys.argv[3] == "merge":  # the first segment counts as large; the two small ones after it are too many
    compaction.SMALL_SEGMENT_BYTES = load_store(Path(sys.argv[2])).refs[0].bytes
    compaction.MERGE_TAIL_SEGMENTS = 1
host = default_host()
index_directory(sys.argv[1], Path(sys.argv[2]), host, host.embedder("hash"), compact=sys.argv[3] == "compact",
                reuse=sys.argv[3] != "fresh")
"""


def _run(root: Path, store: Path, mode: str) -> subprocess.Popen:
    env = {**os.environ, "CCE_WORKERS": "2"}
    return subprocess.Popen([sys.executable, "-c", _RUNNER, str(root), str(store), mode], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fresh", "incremental", "compact", "merge"])
def test_kill_9_leaves_the_old_store_or_the_new_one(tmp_path, mode):
    """Killed at random points, a run leaves the store as it was before it or as after it, never a mix."""
    root = sample_corpus(tmp_path, 'indexing', 'retrieval')
    template = tmp_path / "template"
    template.mkdir()
    store_name = "s.cce"
    index_with_hash(root, template / store_name)
    _edit(root)
    age_tree(root)
    if mode in ("compact", "merge"):
        index_with_hash(root, template / store_name)  # two segments to fold into one
    if mode == "merge":  # and a third, small one, that the run writes and merges with the second
        target = root / "indexing" / "bm25.py"
        target.write_text(target.read_text(encoding="utf-8") + "\n\ndef one_more():\n    return 3\n",
                          encoding="utf-8")
        age_tree(root)
    before = ((template / store_name).read_bytes(), store_answers(template / store_name))
    after_dir = tmp_path / "after"
    shutil.copytree(template, after_dir)
    started = time.perf_counter()
    assert _run(root, after_dir / store_name, mode).wait() == 0
    duration = time.perf_counter() - started
    after = ((after_dir / store_name).read_bytes(), store_answers(after_dir / store_name))
    if mode == "merge":
        assert len(load_store(after_dir / store_name).segments) == 2  # the run merged its segment
    assert after[0] != before[0]
    rng = random.Random(f"kill-{mode}")
    for round_number in range(4):
        work = tmp_path / f"round{round_number}"
        shutil.copytree(template, work)
        proc = _run(root, work / store_name, mode)
        time.sleep(rng.uniform(0.05, duration))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        state = ((work / store_name).read_bytes(), store_answers(work / store_name))  # never an error
        assert state in (before, after), f"round {round_number}: a mix of the old and the new store"
        assert _run(root, work / store_name, mode).wait() == 0  # and the next run succeeds
        assert store_answers(work / store_name) == after[1]


def test_the_gitignore_quick_check_agrees_with_pattern_by_pattern_matching():
    """One combined regex per .gitignore decides only that no pattern matches; it must never disagree."""
    import pathspec

    from cce_core.indexing.walker import _any_pattern

    lines = ["*.log", "/tmp/", "!keep.log", "node_modules", "doc/**/x", "a?b[ch].txt", "build/", "*.min.*",
             "!important.min.js", "\\#odd", "logs/**", "**/cache", "[Dd]ebug/", "*~", "vendor/*.rb"]
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    quick = _any_pattern(spec)
    assert quick is not None
    rng = random.Random(7)
    parts = ["a", "tmp", "doc", "x", "keep.log", "y.log", "node_modules", "abc.txt", "aXbh.txt", "build", "m.min.js",
             "important.min.js", "#odd", "logs", "cache", "Debug", "f.rb~", "vendor", "z.rb", "src", "README.md"]
    for _ in range(3000):
        path = "/".join(rng.choice(parts) for _ in range(rng.randint(1, 4))) + rng.choice(["", "/"])
        any_match = any(p.include is not None and p.match_file(path) is not None for p in spec.patterns)
        assert (quick.match(path) is not None) == any_match, path


def test_graph_neighbours_read_from_the_mapped_segment_equal_the_whole_map(tmp_path):
    from cce_core.indexing.graph import neighbours

    root = sample_corpus(tmp_path, 'indexing', 'retrieval')
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    data = load_store(store)
    whole = neighbours(data.edges)
    assert whole  # the corpus has imports between its files
    paths = [f.path for f in data.files]
    assert data.neighbours_of(paths) == {p: whole[p] for p in paths if p in whole}
    assert data.neighbours_of(["not/a/file.py"]) == {}


def test_an_edit_that_keeps_every_import_reuses_the_graph(tmp_path):
    root = sample_corpus(tmp_path, 'indexing', 'retrieval')
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    target = root / "indexing" / "bm25.py"
    target.write_text(target.read_text(encoding="utf-8") + "\n\ndef another_helper():\n    return 1\n",
                      encoding="utf-8")
    data, _stats = index_with_hash(root, store)
    assert len(data.segments) == 2 and not data.segments[-1].carries_edges()  # the first segment's graph holds
    fresh = tmp_path / "fresh.cce"
    index_with_hash(root, fresh, reuse=False)
    assert load_store(store).edges == load_store(fresh).edges
    assert_same_store(store, fresh)
    # An edit that changes an import rebuilds the graph.
    target.write_text("import indexing.graph\n" + target.read_text(encoding="utf-8"), encoding="utf-8")
    data, _stats = index_with_hash(root, store)
    assert data.segments[-1].carries_edges()
    index_with_hash(root, fresh, reuse=False)
    assert load_store(store).edges == load_store(fresh).edges


def test_a_compaction_rewrites_in_the_batches_a_fresh_index_writes(tmp_path, monkeypatch):
    """Memory stays bounded by a batch: compaction writes the same path-ordered batches as a fresh index."""
    from cce_core.indexing.compaction import compact_store

    root = sample_corpus(tmp_path, 'indexing', 'retrieval')
    monkeypatch.setattr(indexer_module, "BATCH_BYTES", 8192)
    store = tmp_path / "s.cce"
    monkeypatch.setattr(indexer_module, "BATCH_BYTES", 1 << 30)
    index_with_hash(root, store)  # one segment ...
    _edit(root)
    age_tree(root)
    index_with_hash(root, store)  # ... plus the edits
    monkeypatch.setattr(indexer_module, "BATCH_BYTES", 8192)
    rebuilt = tmp_path / "rebuilt.cce"
    index_with_hash(root, rebuilt, reuse=False)
    compacted = compact_store(load_store(store), store, batch_bytes=8192)
    assert len(compacted.segments) > 5 and compacted.ordered
    assert [r.name for r in compacted.refs] == [r.name for r in load_store(rebuilt).refs]
    assert_same_store(store, rebuilt)

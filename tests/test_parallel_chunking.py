"""Parallel chunking: same results as serial, balanced shards, and worker failures as clear errors."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest
from helpers import REPO_ROOT, PackPlugin, decoded_tokens

from cce_core.foundation.errors import CceError
from cce_core.hookspecs import hookimpl
from cce_core.indexing import parallel_chunking
from cce_core.indexing.bm25 import TokenIdEncoder
from cce_core.indexing.walker import walk
from cce_core.plugins.host import PluginHost, default_host


def _items() -> list[tuple[str, str]]:
    walked = walk(str(REPO_ROOT / "cce_core"), protect_secrets=True)
    return [(f.path, f.text) for f in walked.files]


def _with_tokens(results: list, encoder: TokenIdEncoder) -> list:
    """The results with each chunk's token ids read back as its tokens (ids depend on who numbered them)."""
    return [(chunks, imports, estimate, decoded_tokens(encoder.vocab, *ids), redacted, symbols)
            for chunks, imports, estimate, ids, redacted, symbols in results]


def _serial_results(monkeypatch, host: PluginHost, items: list[tuple[str, str]]) -> list:
    """What one process makes of ``items``, tokens read back (the reference the parallel runs must equal)."""
    monkeypatch.setenv("CCE_WORKERS", "1")
    encoder = TokenIdEncoder()
    return _with_tokens(parallel_chunking.chunk_files(host, items, True, None, encoder=encoder), encoder)


@pytest.mark.parametrize("workers", ["2", "3"])
def test_parallel_results_equal_serial_results_in_order(monkeypatch, workers):
    items = _items()
    host = default_host()
    serial = _serial_results(monkeypatch, host, items)
    seen: list[int] = []
    progress: list[tuple[int, int]] = []
    monkeypatch.setenv("CCE_WORKERS", workers)
    parallel_ids = TokenIdEncoder()
    parallel = _with_tokens(parallel_chunking.chunk_files(host, items, True, lambda d, t: progress.append((d, t)),
                                                 lambda k, _result: seen.append(k), encoder=parallel_ids), parallel_ids)
    assert parallel == serial  # chunks, imports, token counts and every chunk's tokens
    assert sorted(seen) == list(range(len(items)))  # each result reported once
    assert progress[-1] == (len(items), len(items))


def test_claims_hand_every_item_out_once_largest_first_across_processes():
    import multiprocessing

    context = multiprocessing.get_context("fork")
    items = [(f"f{i}", "x" * size) for i, size in enumerate([900, 10, 500, 400, 30, 20, 300, 5])]
    claims = parallel_chunking._Claims(context, items, children=1)
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=lambda: send.send(list(claims.of_child(0))))
    child.start()
    mine = list(claims)
    theirs = receive.recv()
    child.join()
    assert theirs[0] == 0  # the child's own first file: the largest
    assert sorted(mine + theirs) == list(range(len(items)))
    assert mine == sorted(mine, key=lambda k: -len(items[k][1]))  # claimed largest first


class _BrokenGrammarPlugin:
    def __init__(self, pack):
        self.pack = pack

    @hookimpl
    def cce_register_packs(self, register):
        register(self.pack)


def test_a_failure_inside_a_worker_is_one_clear_error(monkeypatch):
    python_pack = next(p for p in default_host().packs.packs if p.name == "python")

    def no_grammar():
        raise RuntimeError("grammar library missing")

    host = PluginHost([(_BrokenGrammarPlugin(replace(python_pack, grammar=no_grammar)), "broken")],
                      entry_points=False)
    items = _items()
    monkeypatch.setenv("CCE_WORKERS", "2")
    with pytest.raises(CceError, match=r"\[pack:python\] cannot be used \(RuntimeError: grammar library missing\)"):
        parallel_chunking.chunk_files(host, items, True, None, encoder=TokenIdEncoder())


def test_a_worker_that_dies_is_reported_not_hung(monkeypatch):
    def die(*_args):
        os._exit(3)

    monkeypatch.setattr(parallel_chunking, "_child_shard", die)
    monkeypatch.setenv("CCE_WORKERS", "2")
    with pytest.raises(CceError, match="worker process died"):
        parallel_chunking.chunk_files(default_host(), _items(), True, None, encoder=TokenIdEncoder())


@pytest.mark.parametrize(("raised", "message"), [(CceError("boom in the child"), "boom in the child"),
                                                 (ValueError("odd file"), "ValueError: odd file")])
def test_an_error_raised_only_in_a_child_reaches_the_parent(monkeypatch, raised, message):
    parent = os.getpid()
    real = parallel_chunking._chunk_text

    def fails_in_children(*args, **kwargs):
        if os.getpid() != parent:
            raise raised
        return real(*args, **kwargs)

    monkeypatch.setattr(parallel_chunking, "_chunk_text", fails_in_children)
    monkeypatch.setenv("CCE_WORKERS", "2")
    with pytest.raises(CceError, match=message):
        parallel_chunking.chunk_files(default_host(), _items(), True, None, encoder=TokenIdEncoder())


def _mixed_items() -> list[tuple[str, str]]:
    """Mostly Python, a few small C and JavaScript files, and text no pack claims."""
    python = [(f.path, f.text) for f in walk(str(REPO_ROOT / "cce_core" / "indexing"), protect_secrets=True).files]
    # part0.c is the largest file of all, so it is the one a child would be given first.
    largest = max(len(text) for _path, text in python)
    c_files = [(f"native/part{i}.c", f"int part{i}(int x) {{ return x + {i}; }}\n" * (20 if i else largest // 30 + 1))
               for i in range(3)]
    script = [("web/app.js", "function hello(name) { return 'hi ' + name; }\n" * 10)]
    notes = [("NOTES.txt", "plain words\n" * 50)]
    return [*python, *c_files, *script, *notes]


def test_the_parent_alone_chunks_the_few_files_of_minor_languages():
    items = _mixed_items()
    own = parallel_chunking._parent_only_items(default_host(), items)
    assert sorted(items[k][0] for k in own) == ["native/part0.c", "native/part1.c", "native/part2.c", "web/app.js"]
    # A language above the share (with the smaller ones) stays shared, and so does the largest.
    big_c = [(f"native/big{i}.c", "int f(void) { return 0; }\n" * 2000) for i in range(8)]
    own = parallel_chunking._parent_only_items(default_host(), [*items, *big_c])
    assert [items[k][0] for k in own] == ["web/app.js"]
    assert parallel_chunking._parent_only_items(default_host(), [("a.py", "x = 1\n"), ("b.txt", "words\n")]) == []


@pytest.mark.parametrize("workers", ["2", "3"])
def test_parallel_results_with_parent_only_languages_equal_serial_results(monkeypatch, workers):
    items = _mixed_items()
    host = default_host()
    serial = _serial_results(monkeypatch, host, items)
    monkeypatch.setenv("CCE_WORKERS", workers)
    parent = os.getpid()
    real_chunk, real_parser = parallel_chunking._chunk_text, parallel_chunking.Chunker._parser_for

    def only_shared_in_children(chunker, path, text, redaction):
        if os.getpid() != parent and path.endswith((".c", ".js")):
            raise AssertionError(f"a child chunked {path}")  # reaches the parent as its error
        return real_chunk(chunker, path, text, redaction)

    def compiled_before_the_fork_unless_minor(self, pack):
        if os.getpid() != parent and id(pack) not in self._parsers:
            raise AssertionError(f"a child compiled {pack.name}")
        return real_parser(self, pack)

    monkeypatch.setattr(parallel_chunking, "_chunk_text", only_shared_in_children)
    monkeypatch.setattr(parallel_chunking.Chunker, "_parser_for", compiled_before_the_fork_unless_minor)
    parallel_chunking._idle_chunker = None  # else the serial run's chunker, with every language compiled, is reused
    parallel_ids = TokenIdEncoder()
    parallel = _with_tokens(parallel_chunking.chunk_files(host, items, True, None, encoder=parallel_ids), parallel_ids)
    assert parallel == serial


def test_the_parent_claims_one_file_at_a_time_so_the_child_gets_its_share(monkeypatch, tmp_path):
    # Each process notes its pid per file it chunks (O_APPEND: one small write is never interleaved).
    log = tmp_path / "who"
    real = parallel_chunking._chunk_text

    def noted(chunker, path, text, redaction):
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()}\n")
        return real(chunker, path, text, redaction)

    monkeypatch.setattr(parallel_chunking, "_chunk_text", noted)
    monkeypatch.setenv("CCE_WORKERS", "2")
    items = _items()
    parallel_chunking.chunk_files(default_host(), items, True, None, encoder=TokenIdEncoder())
    pids = log.read_text(encoding="utf-8").split()
    assert len(pids) == len(items)
    by_child = [pid for pid in pids if pid != str(os.getpid())]
    # The child starts with one file of its own; claiming lazily, the parent leaves it many more.
    assert len(by_child) > 1, f"the child chunked {len(by_child)} of {len(items)} files"


def test_the_next_call_reuses_the_parsers_and_queries_built_for_its_host(monkeypatch):
    built: list[object] = []

    class CountedChunker(parallel_chunking.Chunker):
        def __init__(self, host: PluginHost) -> None:
            super().__init__(host)
            built.append(self)

    monkeypatch.setattr(parallel_chunking, "Chunker", CountedChunker)
    monkeypatch.setattr(parallel_chunking, "_idle_chunker", None)
    host = default_host()
    items = _mixed_items()
    first = _serial_results(monkeypatch, host, items)
    monkeypatch.setenv("CCE_WORKERS", "2")
    encoder = TokenIdEncoder()
    second = _with_tokens(parallel_chunking.chunk_files(host, items, True, None, encoder=encoder), encoder)
    assert second == first
    assert len(built) == 1  # one chunker for both calls: its queries were compiled once
    python_pack = next(p for p in host.packs.packs if p.name == "python")
    other_host = PluginHost([(PackPlugin(python_pack), "python-only")], entry_points=False)
    _serial_results(monkeypatch, other_host, items[:3])
    assert len(built) == 2  # another host gets its own, and only the last one is kept:
    assert parallel_chunking._idle_chunker is built[1]  # a long-lived process keeps no host it dropped


def test_a_chunker_is_lent_to_one_caller_at_a_time(monkeypatch):
    monkeypatch.setattr(parallel_chunking, "_idle_chunker", None)
    host = default_host()
    with parallel_chunking._borrowed_chunker(host) as first, parallel_chunking._borrowed_chunker(host) as second:
        assert first is not second  # parsers are not shared between concurrent callers
    with parallel_chunking._borrowed_chunker(host) as again:
        assert again in (first, second)


def test_a_second_process_starts_from_the_measured_amount_of_text(monkeypatch):
    """Below ~256 KB (or 16 files) one process; from there on, two or more (benchmarks/parallel_crossover.py)."""
    monkeypatch.delenv("CCE_WORKERS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    kilobyte_line = "x" * 1023 + "\n"
    just_under = [(f"f{i}.py", kilobyte_line * 15) for i in range(17)]  # 255 KB in 17 files
    assert parallel_chunking._worker_count(just_under) == 1
    enough = [*just_under, ("g.py", kilobyte_line)]  # 256 KB
    assert parallel_chunking._worker_count(enough) == 2
    few_large = [(f"big{i}.py", kilobyte_line * 100) for i in range(15)]  # 1.5 MB in 15 files
    assert parallel_chunking._worker_count(few_large) == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert parallel_chunking._worker_count(enough) == 4  # never more than four processes
    monkeypatch.setenv("CCE_WORKERS", "1")
    assert parallel_chunking._worker_count(enough) == 1  # the user's setting wins either way
    monkeypatch.setenv("CCE_WORKERS", "3")
    assert parallel_chunking._worker_count(just_under) == 3



def test_a_child_ends_without_flushing_what_it_inherited(monkeypatch):
    """A chunking child ends at once after its last message, without the exit flush of stdout.

    In a process with other threads (an MCP server, a watching index), a stream lock another thread
    took between the parent's pre-fork flush and the fork stays held in the child for ever, and
    ``multiprocessing`` would end the child by flushing that stream. A stdout whose flush never
    returns in a child stands for that lock here: without ``end_child`` the child would hang there
    until the parent killed it (exit code -9).
    """
    import io
    import multiprocessing
    import sys
    import threading

    parent = os.getpid()

    class FlushHangsInAChild(io.StringIO):
        def flush(self) -> None:
            if os.getpid() != parent:
                threading.Event().wait()  # for ever
            super().flush()

    monkeypatch.setattr(sys, "stdout", FlushHangsInAChild())
    started: list[multiprocessing.process.BaseProcess] = []
    fork = multiprocessing.get_context("fork")

    class RecordedProcess(fork.Process):  # type: ignore[name-defined,misc]
        def start(self) -> None:
            started.append(self)
            super().start()

    monkeypatch.setattr(fork, "Process", RecordedProcess)
    monkeypatch.setenv("CCE_WORKERS", "2")
    parallel_chunking.chunk_files(default_host(), _items(), True, None, encoder=TokenIdEncoder())
    assert started and [child.exitcode for child in started] == [0] * len(started)

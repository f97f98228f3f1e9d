"""Redact, chunk and tokenize a batch's files, on both cores when the batch is large enough.

The indexer hands this module the (path, text) pairs of a batch and gets back,
in the same order, each file's chunks, imports, token estimate, token ids,
redaction counts and symbol record. Large batches are split between this
process and forked children that take files from a shared counter
(:class:`_Claims`) and send their results back in installments on a channel
read outside the GIL (:mod:`.result_channel`); which process chunks a file
changes nothing in its result, so a store is the same whatever the worker count.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import chain
from typing import Any

import numpy as np

from cce_core.foundation.errors import CceError
from cce_core.foundation.forked_child import children_leave_ctrl_c_to_parent, die_with_parent, end_child
from cce_core.foundation.textrules import estimate_tokens_bytes, tokenize_bytes
from cce_core.indexing.bm25 import TokenIdEncoder
from cce_core.indexing.chunk import Chunk
from cce_core.indexing.chunker import Chunker
from cce_core.indexing.result_channel import ChannelClosed, channel_pair, receive_message, send_message
from cce_core.plugins.host import PluginHost
from cce_core.secrets.redactor import DEFAULT_PROFILE, scrub

# chunks, imports, whole-file token estimate, each chunk's tokens (for BM25 and the embedder), redactions by label,
# the file's encoded symbols (cce_core.symbols.model; None when its language has none)
ChunkedFile = tuple[list[Chunk], list[str], int, list[list[bytes]], dict[str, int], bytes | None]
# The same with each chunk's tokens as ids into a TokenIdEncoder: (flat ids, tokens per chunk).
EncodedTokens = tuple[np.ndarray, np.ndarray]
EncodedChunkedFile = tuple[list[Chunk], list[str], int, EncodedTokens, dict[str, int], bytes | None]
# One installment of a child's results (see _child_shard): the item indices, their results without
# tokens, the child's vocabulary tokens new since its previous installment (space-joined, first-seen
# order), every token's id into that vocabulary (int32, chunk after chunk) and the tokens per chunk.
Installment = tuple[list[int], list[tuple[list[Chunk], list[str], int, None, dict[str, int], bytes | None]], bytes,
                    np.ndarray, np.ndarray]

# What the user is told when a worker process is gone (killed, crashed, or its channel broken).
WORKER_DIED = "a chunking worker process died — re-run with CCE_WORKERS=1 to index in one process"

# Parallel chunking: worth a second process from about 200 KB of text. Measured by
# benchmarks/parallel_crossover.py on jq, zod, flask and rails (C, TypeScript, Python, Ruby):
# one process wins below ~60 KB, 110-170 KB is within 8 % either way, and two processes win in every
# slice from 190-250 KB on (by 1-13 % there, by 16-44 % from about 500 KB). The file minimum is
# reasoning, not measured: files are handed out whole, so with a handful of large files one of
# them decides when the batch ends.
PARALLEL_MIN_FILES = 16
PARALLEL_MIN_BYTES = 256 << 10


def _chunk_text(chunker: Chunker, path: str, text: str, redaction: str | bool | None) -> ChunkedFile:
    """Redact, chunk and tokenize one file."""
    profile = DEFAULT_PROFILE if redaction is True else redaction  # True: the old boolean flag
    scrubbed = scrub(text, profile) if profile else None
    clean = scrubbed.text if scrubbed is not None else text
    result = chunker.chunk_file(path, clean)
    contents = [c.content.encode("utf-8") for c in result.chunks]
    chunks, imports = result.chunks, list(result.imports)
    estimate = estimate_tokens_bytes(len(clean.encode("utf-8")))
    redacted = scrubbed.counts if scrubbed is not None else {}
    return chunks, imports, estimate, [tokenize_bytes(c) for c in contents], redacted, result.symbols


def _worker_count(items: list[tuple[str, str]]) -> int:
    configured = os.environ.get("CCE_WORKERS", "").strip()
    if configured.isdigit() and int(configured) >= 1:
        return int(configured)
    if len(items) < PARALLEL_MIN_FILES or sum(len(t) for _, t in items) < PARALLEL_MIN_BYTES:
        return 1
    return min(os.cpu_count() or 1, 4)


# The chunker of the last call of chunk_files, with the parsers and queries it built (None while lent).
_idle_chunker: Chunker | None = None
_idle_lock = threading.Lock()


@contextmanager
def _borrowed_chunker(host: PluginHost) -> Iterator[Chunker]:
    """The chunker the last call left, when it was made for ``host``, else a new one; kept afterwards.

    Compiling a language's tags and chunk queries costs 10-40 ms, and a
    fresh index calls :func:`chunk_files` once per batch (rails: 49 ms of
    queries before each fork), as a watching or MCP process does on every
    re-index; the compiled queries do not depend on the files, so they are
    built once per host and process. One chunker is kept, the last one used:
    it holds its host, so keeping one per host would keep every host a
    long-lived process ever made. It is lent to one caller at a time (its
    parsers are not safe to share between threads): a concurrent caller
    builds its own.
    """
    global _idle_chunker
    with _idle_lock:
        chunker, _idle_chunker = _idle_chunker, None
    if chunker is None or chunker.host is not host:
        chunker = Chunker(host)
    try:
        yield chunker
    finally:
        with _idle_lock:
            if _idle_chunker is None or _idle_chunker.host is not host:
                _idle_chunker = chunker


class _Claims:
    """Item indices, largest text first, handed out one at a time to whichever process asks next.

    Shared across ``fork`` (a counter in shared memory under a lock held for a
    few microseconds), so the parent and its children finish within about one
    small file of each other whatever each file costs: the bytes of a shard
    predict its time badly (measured on the same machine with equal shards,
    zod's parent finished ~45 ms after its child and jq's ~40 ms before), and a
    process the machine's load delays simply takes fewer files. Each child is
    given one file of its own first, so every worker chunks at least one.
    """

    LOCK_TIMEOUT = 10.0  # seconds; the lock is only ever held for a few microseconds

    def __init__(self, context: Any, items: list[tuple[str, str]], children: int,
                 among: Iterable[int] | None = None) -> None:
        # ``among``: the item indices handed out (all of them by default).
        self._order = sorted(range(len(items)) if among is None else among, key=lambda k: -len(items[k][1]))
        self._reserved = children
        self._next = context.RawValue("q", children)
        self._lock = context.Lock()

    def first_of_child(self, child: int) -> int | None:
        return self._order[child] if child < min(self._reserved, len(self._order)) else None

    def __iter__(self) -> Iterator[int]:
        while True:
            if not self._lock.acquire(timeout=self.LOCK_TIMEOUT):  # its holder died holding it
                raise CceError(WORKER_DIED)
            try:
                taken = self._next.value
                self._next.value = taken + 1
            finally:
                self._lock.release()
            if taken >= len(self._order):
                return
            yield self._order[taken]

    def close(self) -> None:
        """Hand nothing more out (the parent failed: its children stop after the file they are on)."""
        if self._lock.acquire(timeout=self.LOCK_TIMEOUT):
            self._next.value = len(self._order)
            self._lock.release()

    def of_child(self, child: int) -> Iterator[int]:
        """What child number ``child`` works: its own first file, then claims."""
        first = self.first_of_child(child)
        if first is not None:
            yield first
        yield from self


# A language whose files hold at most this share of a batch's text (with the other such languages)
# is chunked by the parent alone (see _parent_only_items).
PARENT_ONLY_SHARE = 0.2


def _parent_only_items(host: PluginHost, items: list[tuple[str, str]]) -> list[int]:
    """The items of the languages with a small share of the text, which the parent chunks alone.

    Compiling a language's queries costs 10-35 ms whatever its number of files
    (jq: 19 ms of Python queries for 5 files, 22 ms of JavaScript for one), and
    is done before forking for a language that every process chunks. A
    language with only a few files is left to the parent, which compiles it
    on first use while the children already chunk: the compile moves off the
    serial path, and no child pays it twice. The largest language, and any
    language above :data:`PARENT_ONLY_SHARE` of the text together with the
    smaller ones, stays shared.
    """
    by_pack: dict[int, list[int]] = {}
    text_of: dict[int, int] = {}
    total = 0
    for k, (path, text) in enumerate(items):
        total += len(text)
        pack = host.packs.pack_for(path)
        if pack is not None:
            by_pack.setdefault(id(pack), []).append(k)
            text_of[id(pack)] = text_of.get(id(pack), 0) + len(text)
    if len(by_pack) < 2:
        return []
    smallest_first = sorted(by_pack, key=lambda language: (text_of[language], by_pack[language][0]))[:-1]
    chosen: list[int] = []
    share = 0
    for language in smallest_first:
        share += text_of[language]
        if share > PARENT_ONLY_SHARE * total:
            break
        chosen.extend(by_pack[language])
    return sorted(chosen)


# A child sends its results in installments of this many files, so its last message is small and
# the parent takes in the earlier ones while it still chunks (see _child_shard).
CHILD_INSTALLMENT_FILES = 16


def _child_shard(chunker: Chunker, items: list[tuple[str, str]], shard: Iterable[int], redaction: str | None,
                 conn: Any, parent: int) -> None:
    """Body of a forked child: chunk the items ``shard`` yields, sending the results back in installments.

    Each installment is ``("part", (item indices in the order worked, their
    results without tokens, the vocabulary tokens new since the previous
    installment, space-joined, every token's id as int32, tokens per chunk))``
    — the tokens are numbered against a vocabulary of the child's own, so the
    parent's serial work per child token is one array lookup, and per distinct
    token one dict lookup (``TokenIdEncoder.absorb``). ``("done", None)`` ends
    the stream; ``("error", CceError)`` replaces whatever is left of it.
    Sending as it goes, not once at the end, means the parent receives (in a
    thread) and maps the earlier installments while the last files are still
    being chunked, so what is left to hand over when chunking ends is small.
    """
    die_with_parent(parent)
    try:
        local = TokenIdEncoder()
        known_vocab = 0
        worked: list[int] = []
        results: list[tuple[list[Chunk], list[str], int, None, dict[str, int], bytes | None]] = []
        token_lists: list[list[bytes]] = []

        def send_installment() -> None:
            nonlocal known_vocab, worked, results, token_lists
            flat, lengths = local.encode(token_lists)
            vocab = local.vocab
            send_message(conn, ("part", (worked, results, b" ".join(vocab[known_vocab:]), flat.astype(np.int32),
                                         lengths)))
            known_vocab = len(vocab)
            worked, results, token_lists = [], [], []

        for k in shard:
            chunks, imports, estimate, tokens, redacted, symbols = _chunk_text(chunker, *items[k], redaction)
            worked.append(k)
            results.append((chunks, imports, estimate, None, redacted, symbols))
            token_lists.extend(tokens)
            if len(worked) >= CHILD_INSTALLMENT_FILES:
                send_installment()
        if worked:
            send_installment()
        send_message(conn, ("done", None))
    except BaseException as exc:  # reported by the parent, which owns the error line
        send_message(conn, ("error", exc if isinstance(exc, CceError) else CceError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()
        end_child()  # every way out, a failed last send included: no exit work (see forked_child)


class _Installments:
    """What one child sends, received by a thread of this process while its main thread chunks.

    A whole message is read outside the GIL (:mod:`.result_channel`), so the
    child's messages leave its socket as they come (the child does not wait
    on this process's main thread) and are unpickled here in the gaps of
    the main thread's work. :meth:`take` hands over what has
    arrived so far; :meth:`finish` waits for the end of the stream.
    """

    def __init__(self, receive: Any) -> None:
        import threading

        self._receive = receive
        self._arrived: list[tuple[str, Any]] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._listen, name="cce-child-results", daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        while True:
            try:
                message = receive_message(self._receive)
            except (ChannelClosed, OSError, pickle.UnpicklingError, EOFError):
                message = ("died", None)
            with self._lock:
                self._arrived.append(message)
            if message[0] != "part":
                return

    def take(self) -> list[tuple[str, Any]]:
        """The messages received since the last call, in order."""
        with self._lock:
            arrived, self._arrived = self._arrived, []
        return arrived

    def finish(self, timeout: float | None = None) -> None:
        """Wait until the child's stream has ended (done, error, or its death)."""
        self._thread.join(timeout)


def chunk_files(host: PluginHost, items: list[tuple[str, str]], redaction: str | None,
                 progress: Callable[[int, int], None] | None,
                 on_result: Callable[[int, EncodedChunkedFile], None] | None = None, *,
                 encoder: TokenIdEncoder) -> list[EncodedChunkedFile]:
    """Redact, chunk and tokenize ``items`` in order, on several processes when it pays off.

    In parallel, this process and forked children (which inherit the loaded
    plugins and the texts) take the files one at a time from a shared counter
    (:class:`_Claims`), each child sending its results back in installments
    that a thread here receives while this process chunks (:class:`_Installments`):
    no task queue, and exactly as many busy processes as workers. Which
    process chunks a file changes nothing in its result.

    Each result carries its chunks' tokens as ids into ``encoder``
    (:data:`EncodedTokens`): this process's files are encoded as they are
    done, a child's tokens are numbered in the child and mapped here once per
    distinct token. Which id a token gets never shows in
    a store (see :class:`TokenIdEncoder`). The parsers and queries are those
    an earlier call built for ``host``, when there was one (:func:`_borrowed_chunker`).
    """
    with _borrowed_chunker(host) as chunker:
        return _chunk_with(chunker, items, redaction, progress, on_result, encoder)


def _chunk_with(chunker: Chunker, items: list[tuple[str, str]], redaction: str | None,
                progress: Callable[[int, int], None] | None,
                on_result: Callable[[int, EncodedChunkedFile], None] | None,
                encoder: TokenIdEncoder) -> list[EncodedChunkedFile]:
    """:func:`chunk_files` with ``chunker`` (whose host decides the languages)."""
    import multiprocessing

    workers = _worker_count(items)
    total = len(items)
    out: list[Any] = [None] * total
    done = 0

    def finished(k: int, result: Any) -> None:
        nonlocal done
        out[k] = result
        done += 1
        if on_result is not None:
            on_result(k, result)
        if progress is not None:
            progress(done, total)

    def chunk_here(chunker: Chunker, k: int) -> None:
        chunks, imports, tokens, token_lists, redacted, symbols = _chunk_text(chunker, *items[k], redaction)
        finished(k, (chunks, imports, tokens, encoder.encode(token_lists), redacted, symbols))

    def take_installment(child_ids: list[np.ndarray], payload: Installment) -> None:
        worked, results, new_vocab, local_ids, lengths = payload
        # One lookup per token new to the child, then one array take for all the installment's tokens.
        child_ids.append(encoder.absorb(new_vocab.split()))
        mapping = child_ids[-1] if len(child_ids) == 1 else np.concatenate(child_ids)
        child_ids[:] = [mapping]
        ids = mapping[local_ids] if len(local_ids) else np.zeros(0, dtype=np.int64)
        token_at = [0, *np.cumsum(lengths).tolist()]  # where each chunk's tokens start in ``ids``
        first = 0
        for k, (chunks, imports, tokens, _none, redacted, symbols) in zip(worked, results, strict=True):
            last = first + len(chunks)
            finished(k, (chunks, imports, tokens, (ids[token_at[first]:token_at[last]], lengths[first:last]),
                         redacted, symbols))
            first = last

    def take_arrived(streams: list[tuple[_Installments, list[np.ndarray]]]) -> None:
        """Map what the children sent so far; a child's error, or its death, is raised here."""
        for stream, child_ids in streams:
            for status, payload in stream.take():
                if status == "part":
                    take_installment(child_ids, payload)
                elif status == "error":
                    raise payload
                elif status != "done":
                    raise CceError(WORKER_DIED)

    if workers > 1 and total > 1 and "fork" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("fork")
        # This process and the children take the files one at a time from a shared counter,
        # largest first, so all of them finish together (see _Claims).
        # The few files of minor languages are the parent's own (it compiles their queries after
        # the fork); the rest are claimed by every process.
        own = _parent_only_items(chunker.host, items)
        shared = sorted(set(range(total)).difference(own))
        claims = _Claims(context, items, min(workers, len(shared)) - 1, among=shared)
        # The shared languages' parsers and queries are built before forking (if no earlier batch
        # built them), and inherited by the children.
        chunker.prepare(items[k][0] for k in shared)
        children = []
        streams: list[tuple[_Installments, list[np.ndarray]]] = []
        all_received = False
        try:
            with children_leave_ctrl_c_to_parent():  # a Ctrl-C meanwhile is raised once all are listed
                for number in range(min(workers, len(shared)) - 1):
                    receive, send = channel_pair()
                    child = context.Process(target=_child_shard, args=(chunker, items, claims.of_child(number),
                                                                       redaction, send, os.getpid()), daemon=True)
                    child.start()
                    send.close()
                    children.append((child, receive))
            # The receiving threads start once every child is forked: no fork while they run.
            streams = [(_Installments(receive), []) for _child, receive in children]
            for k in chain(own, claims):  # lazily: each claim is taken only when this process is free
                chunk_here(chunker, k)
                take_arrived(streams)  # between files: the children's installments so far
            for stream, _ids in streams:
                stream.finish()  # every stream ends with "done", an error or the child's death
            take_arrived(streams)
            all_received = True
        finally:
            claims.close()
            for child, _receive in children:
                if not all_received:
                    # Failed here: no result is wanted, and a child would go on chunking (or wait on
                    # a full channel nobody reads any more) until the timeout below.
                    child.kill()
                child.join(timeout=5)
                if child.is_alive():
                    child.kill()
            for stream, _ids in streams:
                stream.finish(timeout=5)  # its child is gone: the channel is at its end
            for _child, receive in children:
                receive.close()
        return out  # every slot is filled
    for k in range(total):
        chunk_here(chunker, k)
    return out

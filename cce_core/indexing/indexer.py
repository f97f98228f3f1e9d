"""Turn a directory into a store: walk, redact, chunk, embed, and save.

A re-index reuses the chunks and vectors of every file whose bytes are
unchanged since the previous store (same embedder, packs and secret policy),
so only changed files are parsed and embedded; the result is identical to a
full rebuild because the store is always assembled in path order.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cce_core import __version__
from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import estimate_tokens_bytes, token_separated, tokenize_bytes
from cce_core.hookspecs import Embedder, EmbedderError
from cce_core.indexing.bm25 import TokenIdEncoder, TokenIds, build_bm25
from cce_core.indexing.chunker import Chunk, Chunker
from cce_core.indexing.fingerprint import disowns, record_fingerprint
from cce_core.indexing.graph import build_edges
from cce_core.indexing.redactor import DEFAULT_PROFILE, scrub
from cce_core.indexing.store import FileEntry, StoreData, load_store, save_store
from cce_core.indexing.walker import walk
from cce_core.plugins.host import PluginHost

SPEC_VERSION = "1.0"
EMBED_BATCH = 512


@dataclass
class IndexStats:
    files_indexed: int
    files_skipped: int
    sensitive_skipped: int
    total_chunks: int
    reused_files: int
    store_bytes: int
    seconds: float
    # Directories whose files the walk never saw, and every walker skip by reason (SkipReason value → count).
    walk_errors: int = 0
    skip_counts: dict[str, int] = field(default_factory=dict)
    # Values the redactor replaced in the files read this run (label → count); reused files are not re-read.
    redactions: dict[str, int] = field(default_factory=dict)


def store_meta(host: PluginHost, embedder: Embedder, protect_secrets: bool, dim: int,
               secrets_profile: str = "strict") -> dict[str, object]:
    packs = host.packs.packs
    return {
        "engine": "cce-python",
        "engine_version": __version__,
        "spec_version": SPEC_VERSION,
        "embedder": embedder.name,
        "embed_model": str(embedder.model or ""),
        "embed_dim": dim,
        "pack_set": host.packs.pack_set_id,
        "pack_versions": {p.name: host.distribution_version(p.distribution) if p.distribution else "?" for p in packs},
        # Any installed plugin can change chunks (an import override, say): reuse needs the same set.
        "plugins": host.plugin_versions(),
        "redaction": protect_secrets,
        "secrets_profile": secrets_profile if protect_secrets else "off",  # reuse needs the same profile
    }


def _configured_profile(root: str | os.PathLike[str]) -> str:
    """The secrets profile ``root/.cce/config`` chooses (strict unless it says ``family``)."""
    from cce_core.foundation.config import load_config

    return load_config(Path(root)).secrets_profile


def _reusable(previous: StoreData | None, meta: dict[str, object]) -> dict[str, tuple[FileEntry, StoreData]]:
    if previous is None:
        return {}
    keys = ("embedder", "embed_model", "pack_set", "pack_versions", "plugins", "redaction", "secrets_profile",
            "engine_version")
    same = all(previous.meta.get(k) == meta[k] for k in keys)
    if not same:
        return {}
    return {f.path: (f, previous) for f in previous.files}


def build_index(
    root: str | os.PathLike[str],
    host: PluginHost,
    embedder: Embedder,
    *,
    protect_secrets: bool = True,
    previous: StoreData | None = None,
    progress: Callable[[int, int], None] | None = None,
    secrets_profile: str | None = None,
) -> tuple[StoreData, IndexStats]:
    """Build the store of ``root``; ``secrets_profile`` None means the one ``root/.cce/config`` sets."""
    started = time.perf_counter()
    walked = walk(str(root), protect_secrets=protect_secrets)
    profile = secrets_profile or _configured_profile(root)
    probe_meta = store_meta(host, embedder, protect_secrets, 0, profile)
    reusable = _reusable(previous, probe_meta)
    digests = [hashlib.sha256(wf.raw).hexdigest() for wf in walked.files]
    to_chunk = [i for i, wf in enumerate(walked.files)
                if (prior := reusable.get(wf.path)) is None or prior[0].sha256 != digests[i]]
    if previous is not None and reusable and not to_chunk and [f.path for f in previous.files] == [
            wf.path for wf in walked.files]:
        dim = previous.embeddings.shape[1] if previous.embeddings.ndim == 2 else 0
        if store_meta(host, embedder, protect_secrets, dim, profile) == previous.meta:
            # Nothing changed: a rebuild would be byte-identical to the store we have.
            return previous, IndexStats(len(previous.files), walked.skipped, walked.sensitive_skipped,
                                        len(previous.chunks), len(previous.files), previous.size_bytes,
                                        time.perf_counter() - started, walked.walk_errors,
                                        {r.value: n for r, n in walked.skip_counts.items()})

    # One tokenization serves BM25 and, when the embedder can use it, the vectors. Each
    # chunked file's tokens get their ids as its result arrives, while the workers go on.
    encoder = TokenIdEncoder()
    encoded: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def encode_result(k: int, result: ChunkedFile) -> None:
        encoded[to_chunk[k]] = encoder.encode(result[3])

    items = [(walked.files[i].path, walked.files[i].text) for i in to_chunk]
    redaction = profile if protect_secrets else None
    fresh = dict(zip(to_chunk, _chunk_files(host, items, redaction, progress, encode_result), strict=True))
    redactions: dict[str, int] = {}
    for result in fresh.values():
        for label, count in result[4].items():
            redactions[label] = redactions.get(label, 0) + count

    chunks: list[Chunk] = []
    files: list[FileEntry] = []
    reused_rows: list[tuple[int, np.ndarray]] = []  # (first new row, block of old vectors)
    new_rows: list[int] = []
    id_parts: list[tuple[np.ndarray, np.ndarray]] = []
    reused_files = 0
    for n, wf in enumerate(walked.files):
        digest = digests[n]
        first = len(chunks)
        if n not in fresh:
            entry, old = reusable[wf.path]
            block = old.chunks[entry.first_chunk : entry.first_chunk + entry.chunk_count]
            chunks.extend(block)
            id_parts.append(encoder.encode([tokenize_bytes(c.content.encode("utf-8")) for c in block]))
            reused_rows.append((first, old.embeddings[entry.first_chunk : entry.first_chunk + entry.chunk_count]))
            files.append(FileEntry(wf.path, digest, entry.tokens, first, len(block), list(entry.imports)))
            reused_files += 1
        else:
            file_chunks, imports, tokens, _chunk_tokens, _redacted = fresh[n]
            chunks.extend(file_chunks)
            id_parts.append(encoded[n])
            new_rows.extend(range(first, len(chunks)))
            files.append(FileEntry(wf.path, digest, tokens, first, len(file_chunks), imports))

    tids = encoder.token_ids(id_parts)
    try:
        new_vectors = _embed(embedder, [chunks[i].content for i in new_rows], new_rows, tids)
    except EmbedderError as exc:
        raise CceError(f"embedding failed, nothing was written: {exc}") from exc
    dims = {block.shape[1] for _first, block in reused_rows}
    if new_rows:
        dims.add(new_vectors.shape[1])
    if len(dims) > 1:
        raise CceError("the previous store's vectors have another dimension; delete it and re-index")
    dim = dims.pop() if dims else int(embedder.dim or 0)
    if not reused_rows and len(new_rows) == len(chunks) and new_vectors.shape == (len(chunks), dim):
        embeddings = np.ascontiguousarray(new_vectors)  # a fresh index: every row is new, in order
    else:
        embeddings = np.zeros((len(chunks), dim), dtype=np.float64)
        if new_rows:
            embeddings[np.asarray(new_rows, dtype=np.int64)] = new_vectors
        for first, block in reused_rows:
            embeddings[first : first + block.shape[0]] = block

    bm25 = build_bm25(tids)
    suffixes = [s for p in host.packs.packs for s in p.module_suffixes]
    paths = [f.path for f in files]
    edges = build_edges({f.path: f.imports for f in files}, paths, suffixes)
    meta = store_meta(host, embedder, protect_secrets, dim, profile)
    data = StoreData(meta, chunks, embeddings, files, edges, bm25)
    stats = IndexStats(len(files), walked.skipped, walked.sensitive_skipped, len(chunks), reused_files, 0,
                       time.perf_counter() - started, walked.walk_errors,
                       {r.value: n for r, n in walked.skip_counts.items()})
    stats.redactions = dict(sorted(redactions.items()))
    return data, stats


# chunks, imports, whole-file token estimate, each chunk's tokens (for BM25 and the embedder), redactions by label
ChunkedFile = tuple[list[Chunk], list[str], int, list[list[bytes]], dict[str, int]]

# Parallel chunking: worth a second process only for a sizeable amount of text.
PARALLEL_MIN_FILES = 48
PARALLEL_MIN_BYTES = 1 << 20


def _chunk_text(chunker: Chunker, path: str, text: str, redaction: str | bool | None, *,
                pack_tokens: bool = False) -> tuple[list[Chunk], list[str], int, list[Any]]:
    """Redact, chunk and tokenize one file.

    With ``pack_tokens`` each chunk's tokens come as one bytes object whose
    ``.split()`` gives them (``textrules.token_separated``): that is how a child
    process ships them, since one object pickles far faster than hundreds.
    """
    profile = DEFAULT_PROFILE if redaction is True else redaction  # True: the old boolean flag
    scrubbed = scrub(text, profile) if profile else None
    clean = scrubbed.text if scrubbed is not None else text
    result = chunker.chunk_file(path, clean)
    tokens_of = token_separated if pack_tokens else tokenize_bytes
    chunk_tokens = [tokens_of(c.content.encode("utf-8")) for c in result.chunks]
    return (result.chunks, list(result.imports), estimate_tokens_bytes(len(clean.encode("utf-8"))), chunk_tokens,
            scrubbed.counts if scrubbed is not None else {})


def _worker_count(items: list[tuple[str, str]]) -> int:
    configured = os.environ.get("CCE_WORKERS", "").strip()
    if configured.isdigit() and int(configured) >= 1:
        return int(configured)
    if len(items) < PARALLEL_MIN_FILES or sum(len(t) for _, t in items) < PARALLEL_MIN_BYTES:
        return 1
    return min(os.cpu_count() or 1, 4)


def _shards(items: list[tuple[str, str]], count: int) -> list[list[int]]:
    """Split item indices into ``count`` shards of about equal text, largest files placed first.

    Greedy: each file, biggest first, goes to the lightest shard so far, so no
    shard is left with a big file at its end while the others are done.
    """
    shards: list[list[int]] = [[] for _ in range(count)]
    loads = [0] * count
    for k in sorted(range(len(items)), key=lambda k: -len(items[k][1])):
        lightest = loads.index(min(loads))
        shards[lightest].append(k)
        loads[lightest] += len(items[k][1]) + 1
    for shard in shards:
        shard.sort()
    return shards


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent() -> None:
    """Make this forked worker end as soon as the process that forked it does (no orphan after kill -9).

    On Linux the kernel is asked for SIGKILL on the parent's death
    (``prctl(PR_SET_PDEATHSIG)``); elsewhere, or if that call fails, a daemon
    thread polls the parent id. A parent already gone by now ends the worker at once.
    """
    import multiprocessing
    import signal
    import sys
    import threading

    parent_process = multiprocessing.parent_process()
    if parent_process is None or parent_process.pid is None:
        return
    parent = parent_process.pid
    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            armed = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError, TypeError):
            armed = False
    if os.getppid() != parent:
        os._exit(1)
    if not armed:
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.2)
            os._exit(1)

        threading.Thread(target=watch, name="cce-parent-watch", daemon=True).start()


def _child_shard(chunker: Chunker, items: list[tuple[str, str]], shard: list[int], redaction: str | None,
                 conn: Any) -> None:
    """Body of a forked child: chunk its shard and send every result back in one message."""
    _die_with_parent()
    try:
        packed = [_chunk_text(chunker, *items[k], redaction, pack_tokens=True) for k in shard]
        conn.send(("ok", packed))
    except BaseException as exc:  # reported by the parent, which owns the error line
        conn.send(("error", exc if isinstance(exc, CceError) else CceError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


def _chunk_files(host: PluginHost, items: list[tuple[str, str]], redaction: str | None,
                 progress: Callable[[int, int], None] | None,
                 on_result: Callable[[int, ChunkedFile], None] | None = None) -> list[ChunkedFile]:
    """Redact, chunk and tokenize ``items`` in order, on several processes when it pays off.

    In parallel, this process works one shard itself and forked children
    (which inherit the loaded plugins and the texts) work the others, each
    sending its results back in one message at the end: no task queue and no
    helper threads, and exactly as many busy processes as workers.
    """
    import multiprocessing

    workers = _worker_count(items)
    total = len(items)
    out: list[ChunkedFile | None] = [None] * total
    done = 0

    def finished(k: int, result: ChunkedFile) -> None:
        nonlocal done
        out[k] = result
        done += 1
        if on_result is not None:
            on_result(k, result)
        if progress is not None:
            progress(done, total)

    if workers > 1 and total > 1 and "fork" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("fork")
        # Equal shares: measured on jq and zod, this process (which also numbers the tokens)
        # finishes its shard within a few tens of milliseconds of the children.
        own, *others = _shards(items, min(workers, total))
        # Parsers and queries are built once, before forking, and inherited by the children.
        chunker = Chunker(host)
        chunker.prepare(path for path, _text in items)
        children = []
        for shard in others:
            receive, send = context.Pipe(duplex=False)
            child = context.Process(target=_child_shard, args=(chunker, items, shard, redaction, send),
                                    daemon=True)
            child.start()
            send.close()
            children.append((child, receive, shard))
        try:
            for k in own:
                finished(k, _chunk_text(chunker, *items[k], redaction))
            for _child, receive, shard in children:
                try:
                    status, payload = receive.recv()
                except EOFError:
                    raise CceError("a chunking worker process died — re-run with CCE_WORKERS=1 to "
                                   "index in one process") from None
                if status != "ok":
                    raise payload
                for k, (chunks, imports, tokens, packed, redacted) in zip(shard, payload, strict=True):
                    finished(k, (chunks, imports, tokens, [separated.split() for separated in packed], redacted))
        finally:
            for child, receive, _shard in children:
                receive.close()
                child.join(timeout=5)
                if child.is_alive():
                    child.kill()
        return out  # type: ignore[return-value]  # every slot is filled
    chunker = Chunker(host)
    for k, (path, text) in enumerate(items):
        finished(k, _chunk_text(chunker, path, text, redaction))
    return out  # type: ignore[return-value]


def _embed(embedder: Embedder, texts: list[str], rows: list[int], tids: TokenIds) -> np.ndarray:
    if not texts:
        return np.zeros((0, 0), dtype=np.float64)
    # Token-based embedders reuse the ids BM25 needs instead of re-tokenizing; others decline with None.
    tokenized = embedder.embed_tokenized(tids.vocab, tids.flat, tids.lengths)
    if tokenized is not None:
        vectors = np.asarray(tokenized, dtype=np.float64)
        if len(rows) == vectors.shape[0]:
            return vectors  # rows are every chunk, in order (ascending and complete)
        return vectors[np.asarray(rows, dtype=np.int64)]
    parts = [np.asarray(embedder.embed_batch(texts[i : i + EMBED_BATCH]), dtype=np.float64)
             for i in range(0, len(texts), EMBED_BATCH)]
    dims = {p.shape[1] for p in parts}
    if len(dims) != 1:
        raise EmbedderError(f"the embedder returned vectors of different lengths {sorted(dims)}")
    return np.vstack(parts)


def index_directory(
    root: str | os.PathLike[str],
    store_path: Path,
    host: PluginHost,
    embedder: Embedder,
    *,
    protect_secrets: bool = True,
    progress: Callable[[int, int], None] | None = None,
    reuse: bool = True,
    secrets_profile: str | None = None,
) -> tuple[StoreData, IndexStats]:
    """Build (reusing what is unchanged, unless ``reuse`` is off) and atomically save the index of ``root``."""
    started = time.perf_counter()
    previous = None
    if reuse and store_path.is_file() and not disowns(store_path):  # a store changed behind our back is rebuilt
        try:
            previous = load_store(store_path)
        except CceError:
            previous = None  # a corrupt store is simply rebuilt
    data, stats = build_index(root, host, embedder, protect_secrets=protect_secrets, previous=previous,
                              progress=progress, secrets_profile=secrets_profile)
    if data is not previous:  # an unchanged tree keeps its store as it is
        stats.store_bytes = save_store(data, store_path)
    record_fingerprint(store_path, data.meta)  # after the store: a kill in between leaves a detectable drift
    stats.seconds = time.perf_counter() - started
    data.path = store_path
    data.size_bytes = stats.store_bytes
    return data, stats

"""A pulled artifact becomes a store on two cores: BM25 is rebuilt in a forked child while this process decodes.

A pull stands in for ``cce index`` on every machine but CI's, so it has to be
the faster way to get an index. Nearly all of its time is decoding the
family's text format (a JSON line per chunk, its vector as base64) and
rebuilding BM25 from the chunk texts; ``cce index`` gets both cores, a pull
would otherwise get one. The BM25 rebuild needs only the chunk texts in store
order, which a child can take from the same artifact bytes while this process
validates and decodes them.

The child never decides anything. Its result is used only when it covers the
very chunks this process decoded, in the same order (compared by a digest of
their ids); if it fails, disagrees, or the artifact is small, BM25 is built
here as before. Verdicts, error texts and store bytes are the same either way.

The child never outlives the pull. It closes its copy of the pipe's read end
at once (holding it, a child whose parent was killed would block for ever
writing its answer into a pipe only it could read), and on Linux it asks the
kernel to kill it when its parent dies (``PR_SET_PDEATHSIG``), checking right
after that its parent is still the one that forked it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from cce_core.foundation.forked_child import children_leave_ctrl_c_to_parent, die_with_parent, end_child
from cce_core.sync.artifact import (
    Artifact,
    ArtifactRequest,
    artifact_to_store,
    bm25_of,
    check_head,
    import_artifact,
)
from cce_core.sync.codec import stream_lines

if TYPE_CHECKING:  # pragma: no cover - typing only
    from cce_core.hookspecs import Embedder
    from cce_core.indexing.chunk import Chunk
    from cce_core.indexing.store import Bm25Arrays, StoreData

# Below this a fork costs about what it saves (jq's 6.8 MB artifact still gains).
PARALLEL_MIN_BYTES = 4 << 20
# The child is a helper for a sub-second job; past this the parent stops waiting and builds BM25 itself.
CHILD_WAIT_SECONDS = 30.0


def _ids_digest(ids: Sequence[str]) -> bytes:
    return hashlib.sha256("\n".join(ids).encode("utf-8")).digest()


def _child_bm25(raw: bytes, conn: Any) -> None:
    """Forked child: BM25 of the artifact's chunk lines in store order, with the digest of their ids."""
    try:
        lines = stream_lines(raw)
        values = orjson.loads(b"[" + b",".join(lines[1:-1]) + b"]")
        # The store order (artifact._chunk_order): file path, start line, id.
        values.sort(key=lambda v: (v["file_path"], v["start_line"], v["id"]))
        digest = _ids_digest([v["id"] for v in values])
        from cce_core.foundation.textrules import tokenize_bytes
        from cce_core.indexing.bm25 import build_bm25

        conn.send((digest, build_bm25([tokenize_bytes(v["content"].encode("utf-8")) for v in values])))
    except BaseException:
        # The parent may be gone or have stopped listening: then nobody needs the answer.
        with contextlib.suppress(OSError):
            conn.send(None)
    finally:
        conn.close()


def _child_main(raw: bytes, send: Any, receive: Any, parent: int) -> None:
    """Forked child's entry: drop the inherited read end, tie its life to the parent's, then do the work."""
    receive.close()  # held here, the pipe would never report the parent gone, and a send could block for ever
    die_with_parent(parent)
    try:
        _child_bm25(raw, send)
    finally:
        end_child()


class _Bm25Child:
    """A forked child building BM25 from the artifact bytes; ``bm25_for`` adopts its result or replaces it."""

    def __init__(self, raw: bytes) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")  # which flushes the standard streams before forking
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(target=_child_main, args=(raw, send, self._receive, os.getpid()),
                                        daemon=True)
        with children_leave_ctrl_c_to_parent():
            self._process.start()
        send.close()

    def bm25_for(self, chunks: Sequence[Chunk]) -> Bm25Arrays:
        result = None
        try:
            if self._receive.poll(CHILD_WAIT_SECONDS):
                result = self._receive.recv()
        except (EOFError, OSError):
            result = None  # the child died: build it here
        finally:
            self.close()
        if result is not None and result[0] == _ids_digest([c.chunk_id for c in chunks]):
            return result[1]
        return bm25_of(chunks)

    def close(self) -> None:
        self._receive.close()
        self._process.join(timeout=1)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods() and (os.cpu_count() or 1) > 1


def decode_to_store(raw: bytes, embedder: Embedder,
                    request: ArtifactRequest | None = None) -> tuple[Artifact, StoreData]:
    """Validate and decode ``raw`` (:func:`import_artifact`, against the pull's ``request``) and turn it into a
    store (:func:`artifact_to_store`)."""
    parallel = len(raw) >= PARALLEL_MIN_BYTES and _can_fork()
    if parallel:
        check_head(raw, request)  # never hand a child an artifact whose manifest or line lengths are refused
    child = _Bm25Child(raw) if parallel else None
    if child is None:
        artifact = import_artifact(raw, request)
        return artifact, artifact_to_store(artifact, embedder)
    try:
        artifact = import_artifact(raw, request)
        return artifact, artifact_to_store(artifact, embedder, bm25_for=child.bm25_for)
    finally:
        child.close()  # a no-op once bm25_for has run; reaps the child when decoding failed

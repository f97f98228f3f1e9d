"""Where the WordLlama weights are and how to read them, without importing the ``wordllama`` package.

Why it exists: the plugin's one install command pulls the ``wordllama``
distribution from PyPI only for the two files its wheel carries — the
``l2_supercat`` token table at 256 dimensions (``weights/l2_supercat_256.safetensors``,
32 000 × 256 float16) and its Llama-2 tokenizer
(``tokenizers/l2_supercat_tokenizer_config.json``). Importing ``wordllama``
itself would load its Cython helpers, pydantic and requests for nothing, and
its loader fetches other sizes from the Hugging Face hub; this module only
locates the package folder (``importlib.util.find_spec`` does not execute
it) and maps the safetensors file into memory, so no code path here can
reach the network.
"""

from __future__ import annotations

import importlib.util
import json
import os
import struct
from pathlib import Path

import numpy as np

WEIGHTS_DISTRIBUTION = "wordllama"
WEIGHTS_PACKAGE = "wordllama"
WEIGHTS_FILE = "weights/l2_supercat_256.safetensors"
TOKENIZER_FILE = "tokenizers/l2_supercat_tokenizer_config.json"
TENSOR_KEY = "embedding.weight"
MODEL_DIR_ENV = "CCE_WORDLLAMA_MODEL_DIR"


class WeightsMissing(Exception):
    """The weights or the tokenizer cannot be found (``wordllama`` is not installed)."""


def model_root() -> Path:
    """The folder holding ``weights/…safetensors`` and ``tokenizers/…json``.

    ``CCE_WORDLLAMA_MODEL_DIR`` wins (a folder laid out like the package);
    otherwise the installed ``wordllama`` package folder, found without
    importing it.
    """
    configured = os.environ.get(MODEL_DIR_ENV)
    if configured:
        root = Path(configured)
    else:
        spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise WeightsMissing(f"the WordLlama weights are not installed — run "
                                 f"`pip install {WEIGHTS_DISTRIBUTION}` (or set {MODEL_DIR_ENV})")
        root = Path(next(iter(spec.submodule_search_locations)))
    for name in (WEIGHTS_FILE, TOKENIZER_FILE):
        if not (root / name).is_file():
            raise WeightsMissing(f"{root / name} is missing — reinstall {WEIGHTS_DISTRIBUTION} "
                                 f"or fix {MODEL_DIR_ENV}")
    return root


def read_table(path: Path) -> np.ndarray:
    """The token table of a safetensors file as a read-only float16 array over a memory map."""
    with open(path, "rb") as handle:
        (header_len,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(header_len))
    info = header.get(TENSOR_KEY)
    if not info or info.get("dtype") != "F16" or len(info.get("shape", ())) != 2:
        raise WeightsMissing(f"{path} does not hold a float16 {TENSOR_KEY!r} matrix")
    start, end = info["data_offsets"]
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + header_len)
    return np.frombuffer(data[start:end], dtype=np.float16).reshape(info["shape"])

"""The encoding every Sync artifact shares: LF-separated lines of canonical JSON, base64 vectors, a SHA-256 stamp.

The `.cce` code artifact and the `.cck` knowledge artifact carry different
fields but the same stream discipline, which every engine of the family must
reproduce byte for byte: compact JSON with sorted keys, one object per line,
an LF after every line, vectors as standard base64 of little-endian float64
bytes, and a ``checksum`` on line 1 that is the SHA-256 of the stream rendered
with ``"checksum":""``. Reading is the reference parser's reading (no NaN, no
±1e400, no lone surrogates, integers only where integers belong), and bad
UTF-8 is reported at its place in the whole stream.

One module for both, so the two artifacts cannot drift apart in how they
spell a line; what each line holds stays in ``artifact`` and
``knowledge_artifact``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
import struct
from collections.abc import Iterable, Sequence
from typing import Any

from cce_core.sync.artifact_limits import ArtifactError

# The exclusive upper bound of the format's unsigned integers (the reference's u64).
U64_LIMIT = 1 << 64

# A \uD800-\uDFFF escape: Python's parser accepts a lone one, the reference's refuses it.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89abcdefABCDEF]")


# -- lines -------------------------------------------------------------------


def stream_lines(raw: bytes) -> list[bytes]:
    """The lines of an artifact stream, split at LF only, without the empty string after the final LF.

    LF only: JSON leaves U+2028, U+0085 and the like raw inside strings, and
    ``splitlines()`` would cut a line there. Split as bytes: a 20 MB artifact
    is split many times faster than its decoded text.
    """
    lines = raw.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def joined_lines(lines: Iterable[str]) -> bytes:
    """``lines`` as UTF-8, each followed by an LF."""
    return "".join(line + "\n" for line in lines).encode("utf-8")


def not_utf8_error(exc: UnicodeDecodeError) -> ArtifactError:
    """The reference's wording for a stream that is not UTF-8, at the offset ``exc`` names."""
    if exc.reason == "unexpected end of data":
        detail = f"incomplete utf-8 byte sequence from index {exc.start}"
    else:
        detail = f"invalid utf-8 sequence of {exc.end - exc.start} bytes from index {exc.start}"
    return ArtifactError(f"artifact is not UTF-8: {detail}")


def utf8_text(whole: bytes, part: bytes) -> str:
    """``part`` of the stream ``whole`` as text; invalid UTF-8 is reported at its place in the whole stream."""
    try:
        return part.decode("utf-8")
    except UnicodeDecodeError:
        try:
            whole.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise not_utf8_error(exc) from None
        raise  # unreachable: a part of valid UTF-8 split at LF bytes is valid UTF-8


# -- canonical JSON ----------------------------------------------------------


def dumps_canonical(value: Any) -> str:
    """``value`` as one artifact line (without its LF)."""
    # Compact, sorted keys, non-ASCII kept raw: serde_json's `to_string` of a BTreeMap-backed
    # value. With ensure_ascii off both escape exactly `"`, `\` and C0 controls (\b \f \n \r \t
    # short, the rest \u00XX lowercase); neither escapes `/`, DEL or U+2028/U+2029.
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number out of range: {text}")
    return value


def _json_int(text: str) -> int | float:
    # The reference's parser reads `-0` as the float -0.0, which no integer field accepts.
    return -0.0 if text == "-0" else int(text)


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


def parse_json_line(line: str, what: str) -> Any:
    """One line as JSON, read as the reference's parser reads it (no NaN, ±1e400 or lone surrogates)."""
    try:
        value = json.loads(line, parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_json_int)
    except (ValueError, RecursionError) as exc:
        raise ArtifactError(f"bad {what} JSON: {exc}") from None
    if _SURROGATE_ESCAPE.search(line) and _has_surrogate(value):
        raise ArtifactError(f"bad {what} JSON: unpaired surrogate escape")
    return value


def may_hold_surrogate_escape(data: bytes) -> bool:
    """Whether ``data`` spells a ``\\uD800``-``\\uDFFF`` escape, which only :func:`parse_json_line` judges."""
    return _SURROGATE_ESCAPE_BYTES.search(data) is not None


def as_unsigned(value: Any) -> int | None:
    """``value`` if it is a JSON integer in u64 range (not a bool, not ``3.0``, not negative)."""
    if type(value) is int and 0 <= value < U64_LIMIT:
        return value
    return None


# -- embeddings --------------------------------------------------------------


def float64_bytes(vector: Sequence[float]) -> bytes:
    """The little-endian float64 bytes of ``vector`` (``struct.error`` or ``OverflowError`` when one is no float)."""
    return struct.pack(f"<{len(vector)}d", *vector)


def float64s(raw: bytes) -> list[float]:
    """The vector whole little-endian float64 bytes stand for."""
    return list(struct.unpack(f"<{len(raw) // 8}d", raw))


def encode_embedding_bytes(raw: bytes) -> str:
    """The artifact spelling of a vector already held as little-endian float64 bytes."""
    return base64.b64encode(raw).decode("ascii")


def encode_embedding(vector: Sequence[float]) -> str:
    """Standard base64 (padded) of the little-endian float64 bytes of ``vector``; ``[]`` gives ``""``."""
    return encode_embedding_bytes(float64_bytes(vector))


def embedding_bytes(text: str) -> bytes:
    """The raw little-endian float64 bytes a base64 embedding stands for, strictly checked."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ArtifactError(f"bad embedding base64: {exc}") from None
    # The reference's decoder also refuses non-zero bits in the last symbol and any
    # other spelling that is not the one its encoder writes; re-encoding finds those.
    if base64.b64encode(raw).decode("ascii") != text:
        raise ArtifactError("bad embedding base64: not the canonical padded encoding")
    if len(raw) % 8:
        raise ArtifactError(f"embedding byte length {len(raw)} is not a multiple of 8")
    return raw


def decode_embedding(text: str) -> list[float]:
    """The vector ``encode_embedding`` made; refuses bad base64 and a length that is not whole float64s."""
    return float64s(embedding_bytes(text))


# -- the checksum ------------------------------------------------------------


def manifest_line(manifest_json: dict[str, Any]) -> bytes:
    """Line 1 of an artifact, with its LF."""
    return (dumps_canonical(manifest_json) + "\n").encode("utf-8")


def stream_checksum(unstamped_manifest: dict[str, Any], body: bytes) -> str:
    """SHA-256 (lowercase hex) of the stream: the manifest rendered with ``"checksum":""``, then ``body``."""
    digest = hashlib.sha256(manifest_line(unstamped_manifest))
    digest.update(body)
    return digest.hexdigest()


def check_checksum(declared: str, recomputed: str) -> None:
    """Refuse an artifact whose manifest's checksum is not the one its content gives."""
    if recomputed != declared:
        raise ArtifactError(f"checksum mismatch: manifest says {declared}, recomputed {recomputed}")

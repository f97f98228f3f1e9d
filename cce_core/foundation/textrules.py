"""Byte-level text rules that every engine of the family must apply identically.

Scores, ids and token counts are compared byte-for-byte across engines, so the
few primitives they depend on live here and nowhere else: the tokenizer, the
``cce.tokens/v1`` estimator, FNV-1a, chunk ids, half-away-from-zero rounding and
left-to-right float sums.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

TOKEN_ESTIMATOR_ID = "cce.tokens/v1"

# Unicode White_Space: the set the other engines trim and split on. Python's
# argument-less str.strip() and str.split() also take U+001C..U+001F, which the
# family keeps, so byte-pinned trims pass this set explicitly.
UNICODE_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
# The same set as the inside of a regular-expression character class.
UNICODE_WHITESPACE_CLASS = "".join(re.escape(ch) for ch in UNICODE_WHITESPACE)
BYTES_PER_TOKEN = 4

# A token is a maximal run of ASCII word bytes ([A-Za-z0-9_]); everything else separates.
# One translate() both lowercases A-Z and turns every other byte into a space, so
# splitting on whitespace yields exactly the runs (several times faster than a regex).
_WORD_BYTES = b"0123456789_abcdefghijklmnopqrstuvwxyz"
_TOKEN_TABLE = bytes(
    b + 32 if 65 <= b <= 90 else b if b in _WORD_BYTES else 32 for b in range(256)
)

FNV_OFFSET_BASIS = 0xCBF29CE484222325
FNV_PRIME = 0x00000100000001B3
_U64 = 0xFFFFFFFFFFFFFFFF
# fnv1a64_many finishes in Python the bytes that at most this many items still have.
_FNV_FEW_ITEMS = 16


# bytes.join keeps a buffer record (80 bytes) per piece while it works: joined a slice of this many at a
# time, a whole vocabulary's worth of pieces costs kilobytes of fresh memory instead of megabytes.
_JOIN_SLICE = 1024


def join_in_slices(pieces: Sequence[bytes], separator: bytes = b"") -> bytes:
    """``separator.join(pieces)``, built a slice at a time: fewer page faults for tens of thousands of pieces."""
    if len(pieces) <= _JOIN_SLICE:
        return separator.join(pieces)
    return separator.join([separator.join(pieces[i : i + _JOIN_SLICE]) for i in range(0, len(pieces), _JOIN_SLICE)])


def node_text(node: Any, source: bytes) -> str:
    """The text of a syntax node's byte span in ``source``; a span that is not UTF-8 reads as empty.

    Empty, not replaced: an identifier cut from undecodable bytes must match
    nothing, as in the other engines, rather than a name full of U+FFFD.
    """
    try:
        return source[node.start_byte : node.end_byte].decode("utf-8")
    except UnicodeDecodeError:
        return ""


def tokenize_bytes(data: bytes) -> list[bytes]:
    """Tokens of raw UTF-8 bytes, ASCII-lowercased, in order (no dedupe)."""
    return data.translate(_TOKEN_TABLE).split()


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` as strings (only ASCII bytes can be in a token)."""
    return [t.decode("ascii") for t in tokenize_bytes(text.encode("utf-8"))]


def estimate_tokens_bytes(byte_length: int) -> int:
    """``cce.tokens/v1``: max(1, floor(bytes / 4))."""
    return max(1, byte_length // BYTES_PER_TOKEN)


def estimate_tokens(text: str) -> int:
    return estimate_tokens_bytes(len(text.encode("utf-8")))


def fnv1a64(data: bytes) -> int:
    """64-bit FNV-1a of ``data``."""
    h = FNV_OFFSET_BASIS
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & _U64
    return h


def fnv1a64_many(items: Sequence[bytes]) -> np.ndarray:
    """:func:`fnv1a64` of every item at once, as a uint64 array in the same order.

    Hashing a whole vocabulary byte by byte in Python costs a fresh index run
    tens of milliseconds; here the loop runs over byte positions instead, each
    step one vectorised xor-and-multiply over the items still that long
    (uint64 arithmetic wraps modulo 2**64 exactly as the mask does). Once only
    a few items are that long, a numpy step per byte costs more than Python
    does per byte, so those few finish in Python: one 4,000-byte token (a
    base64 blob in a test file) must not cost 4,000 array operations.
    """
    import numpy as np

    n = len(items)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    # Few arrays, each reused in place: a vocabulary-sized temporary is fresh memory, and its page
    # faults cost more than the arithmetic.
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=n)
    by_length = np.argsort(lengths)
    order = by_length[::-1]  # longest first: the items still active at a position are a prefix
    ascending = lengths[by_length]
    longest = int(ascending[-1])
    starts = np.cumsum(lengths)
    starts -= lengths
    cursor = starts[order]  # where each item's next byte is in ``data``
    data = np.frombuffer(join_in_slices(items), dtype=np.uint8)
    # How many items are longer than each byte position; numpy steps while more than a few are.
    active_at = n - np.searchsorted(ascending, np.arange(longest), side="right")
    vector_positions = int(np.count_nonzero(active_at > _FNV_FEW_ITEMS))
    prime = np.uint64(FNV_PRIME)
    running = np.full(n, FNV_OFFSET_BASIS, dtype=np.uint64)
    byte = np.empty(n, dtype=np.uint8)
    for active in active_at[:vector_positions].tolist():
        step, at, current = running[:active], cursor[:active], byte[:active]
        np.take(data, at, out=current, mode="clip")  # "clip": unbuffered; every cursor is in range
        np.bitwise_xor(step, current, out=step)
        np.multiply(step, prime, out=step)
        np.add(at, 1, out=at)
    rest = int(active_at[vector_positions]) if vector_positions < longest else 0
    if rest:
        finished = running[:rest].tolist()
        for k, i in enumerate(order[:rest].tolist()):
            h = finished[k]
            for b in items[i][vector_positions:]:
                h = ((h ^ b) * FNV_PRIME) & _U64
            finished[k] = h
        running[:rest] = finished
    hashes = np.empty(n, dtype=np.uint64)
    hashes[order] = running
    return hashes


def chunk_id(file_path: str, start_line: int, end_line: int, content: bytes) -> str:
    """First 16 hex chars of SHA-256 over ``path:start:end:`` + 100 content bytes."""
    digest = hashlib.sha256(f"{file_path}:{start_line}:{end_line}:".encode() + content[:100])
    return digest.hexdigest()[:16]


def round_half_away(x: float) -> float:
    """Round to an integer, halves away from zero (Python's round() is banker's)."""
    a = abs(x)
    f = math.floor(a)
    r = f + 1.0 if a - f >= 0.5 else f
    return math.copysign(r, x) if r != 0 else 0.0


def score_key(x: float) -> int:
    """The integer a score is compared and sorted by: round(x * 1e6)."""
    return int(round_half_away(x * 1_000_000.0))


def round6(x: float) -> float:
    return round_half_away(x * 1_000_000.0) / 1_000_000.0


def round2(x: float) -> float:
    return round_half_away(x * 100.0) / 100.0


def format6(x: float) -> str:
    """Fixed six-decimal string, rounded half away from zero."""
    scaled = int(round_half_away(abs(x) * 1_000_000.0))
    sign = "-" if x < 0 and scaled != 0 else ""
    return f"{sign}{scaled // 1_000_000}.{scaled % 1_000_000:06d}"


def plain_sum(values: Iterable[float]) -> float:
    """Left-to-right float sum; built-in sum() is compensated on Python 3.12+."""
    total = 0.0
    for v in values:
        total += v
    return total


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only, stripping one trailing ``\\r``; no phantom last line."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


_ASCII_WHITESPACE = frozenset("\t\n\x0c\r ")  # Rust's is_ascii_whitespace: no \x0b


def collapse_ascii_whitespace(text: str) -> str:
    """Trim ASCII whitespace and collapse every inner run of it to one space; other characters stay."""
    out: list[str] = []
    pending = False
    for ch in text:
        if ch in _ASCII_WHITESPACE:
            pending = bool(out)
        else:
            if pending:
                out.append(" ")
                pending = False
            out.append(ch)
    return "".join(out)


def fields_once_hook(fields: frozenset[str]) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """A ``json.loads`` object_pairs_hook that rejects a declared field given twice.

    The reference's typed readers refuse such a line; an undeclared key given
    twice keeps its first value, as they do.
    """

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out and key in fields:
                raise ValueError(f"duplicate field {key}")
            out.setdefault(key, value)
        return out

    return hook

"""Layer 2 of secret protection: scrub credentials out of file text before indexing.

A file with a harmless name can still hard-code an API key. :func:`redact` runs
over every indexed file's text *before* chunking, so what is chunked, embedded,
hashed and stored is the scrubbed text and the secret never reaches the store.

Nine provider-specific patterns run first, in a fixed order, each replacing its
whole match with ``[REDACTED:<LABEL>]``. A generic ``key = value`` pattern runs
last and replaces only the value with ``[REDACTED:SECRET]``, unless the value is
shorter than 8 UTF-8 bytes or looks like a placeholder (documentation examples,
interpolations, literals, a value already redacted).

The output must equal the reference engine's byte for byte, which uses Rust's
``regex`` crate. Python's ``re`` disagrees with it in three places this module
works around explicitly:

* ``\\s`` — Python counts ``\\x1c``-``\\x1f`` as whitespace, Rust does not; the
  patterns spell out Rust's White_Space set instead.
* ``(?i)`` — Python lets ``i`` match ``ı``/``İ``; Rust's simple case folding only
  adds ``ſ`` for ``s`` and the Kelvin sign for ``k``. The key words are written
  with explicit per-letter classes instead of a flag.
* ``\\b`` — the word-character sets differ outside ASCII (combining marks,
  connector punctuation, superscript digits, ...). The boundary before a key is
  checked with an ASCII look-behind plus :func:`_is_rust_word_char` for the rare
  non-ASCII neighbour. (The boundary after a key is implied: the operator that
  must follow is whitespace, ``:`` or ``=``, never a word character.)

That family set is one of two *profiles*. The default, ``strict``
(:mod:`cce_core.secrets.scanner`), recognises many more formats and
closes the family's known leaks; ``family`` reproduces the other engines' bytes
for users who need cross-engine identical stores and Sync artifacts (chosen in
``.cce/config`` as ``secrets.profile``). :func:`scrub` runs either and also
reports how many values it replaced, by label.
"""

from __future__ import annotations

import bisect
import re
import string
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from cce_core.foundation.textrules import UNICODE_WHITESPACE_CLASS
from cce_core.secrets.scanner import MARKER_RE, redact_strict

STRICT = "strict"
FAMILY = "family"
PROFILES = (STRICT, FAMILY)
DEFAULT_PROFILE = STRICT

_PLACEHOLDER = "[REDACTED:{}]"
_SECRET_PLACEHOLDER = "[REDACTED:SECRET]"
_GUARD_MARKER = "[REDACTED:"
_MIN_SECRET_BYTES = 8

# (label, regex, literals of which at least one must occur for the regex to match).
_SPECIFIC_TABLE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "PRIVATE_KEY",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
        ("-----BEGIN ",),
    ),
    ("ANTHROPIC_KEY", r"sk-ant-[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
    ("OPENAI_KEY", r"sk-[A-Za-z0-9]{32,}", ("sk-",)),
    ("STRIPE_KEY", r"sk_live_[A-Za-z0-9]{16,}", ("sk_live_",)),
    ("GITHUB_TOKEN", r"gh[pousr]_[A-Za-z0-9]{36,}", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    ("SLACK_TOKEN", r"xox[baprs]-[A-Za-z0-9-]{10,}", ("xox",)),
    ("AWS_ACCESS_KEY", r"AKIA[0-9A-Z]{16}", ("AKIA",)),
    ("GOOGLE_API_KEY", r"AIza[0-9A-Za-z_-]{35}", ("AIza",)),
    ("JWT", r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", ("eyJ",)),
)

_SPECIFIC: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = tuple(
    (re.compile(regex), _PLACEHOLDER.format(label), literals) for label, regex, literals in _SPECIFIC_TABLE
)

# Key words of the generic assignment, in the reference's alternation order.
_KEY_WORDS = (
    "password",
    "passwd",
    "secret[_-]?key",
    "secret",
    "api[_-]?key",
    "access[_-]?key",
    "auth[_-]?token",
    "private[_-]?key",
    "token",
)

# Every character Rust's case-insensitive matching accepts for a key letter.
_FOLDS = {"k": "kK\u212a", "s": "sS\u017f"}


def _caseless(word: str) -> str:
    """Spell ``word`` with one character class per letter (Rust simple case folding)."""
    return re.sub(r"[a-z]", lambda m: "[" + _FOLDS.get(m[0], m[0] + m[0].upper()) + "]", word)


def _generic_pattern() -> re.Pattern[str]:
    """Compile the generic assignment regex; only the value is captured (group 1).

    The key alternation is regrouped by first letter so the pattern opens with a
    plain character class, which lets ``re`` skip ahead to candidate positions
    (several times faster on ordinary source). Each group re-checks its first
    letter with a one-character look-behind; keys sharing a first letter keep
    their reference order. The two-character look-behind is the word boundary
    before the key, for ASCII neighbours.
    """
    groups: dict[str, list[str]] = {}
    for word in _KEY_WORDS:
        groups.setdefault(word[0], []).append(_caseless(word[1:]))
    first_letters = "".join(_caseless(letter)[1:-1] for letter in groups)
    branches = "|".join(f"(?<={_caseless(letter)})(?:{'|'.join(rests)})" for letter, rests in groups.items())
    parts = (
        f"[{first_letters}]",
        "(?<![A-Za-z0-9_][\\s\\S])",  # no ASCII word character before the key
        f"(?:{branches})",
        f"[{UNICODE_WHITESPACE_CLASS}]*[:=][{UNICODE_WHITESPACE_CLASS}]*",  # the operator
        "[\"']?",  # an optional opening quote
        f"([^{UNICODE_WHITESPACE_CLASS}\"']+)",  # the value
    )
    return re.compile("".join(parts))


_GENERIC = _generic_pattern()

# Cheap necessary conditions for a generic match: after str.lower() (which maps
# every A-Z and the Kelvin sign to ASCII) each key word contains one of these.
# A long s (U+017F) survives lower(), so its presence disables the shortcut.
_KEY_HINTS = ("passw", "secret", "api", "access", "private", "token")

_PLACEHOLDER_PREFIXES = ("your", "my-", "the-", "example", "changeme", "placeholder", "dummy", "test", "sample", "xxx")
_LITERAL_VALUES = frozenset({"null", "nil", "none", "true", "false"})

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)

# Rust's `\w` is Alphabetic + Mark + Nd + Pc + Join_Control. Categories cover all
# of it except Other_Alphabetic symbols (circled / squared Latin letters) ...
_OTHER_ALPHABETIC_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))
# ... and word characters assigned after the Unicode version Python 3.11 ships
# (14.0) up to the one the reference's regex crate uses (16.0), as
# inclusive ranges, sorted.
_NEWER_WORD_RANGES = (
    (0x0897, 0x0897), (0x0CF3, 0x0CF3), (0x0ECE, 0x0ECE), (0x1C89, 0x1C8A), (0xA7CB, 0xA7CD),
    (0xA7DA, 0xA7DC), (0x105C0, 0x105F3), (0x10D40, 0x10D65), (0x10D69, 0x10D6D), (0x10D6F, 0x10D85),
    (0x10EC2, 0x10EC4), (0x10EFC, 0x10EFF), (0x1123F, 0x11241), (0x11380, 0x11389), (0x1138B, 0x1138B),
    (0x1138E, 0x1138E), (0x11390, 0x113B5), (0x113B7, 0x113C0), (0x113C2, 0x113C2), (0x113C5, 0x113C5),
    (0x113C7, 0x113CA), (0x113CC, 0x113D3), (0x113E1, 0x113E2), (0x116D0, 0x116E3), (0x11BC0, 0x11BE0),
    (0x11BF0, 0x11BF9), (0x11F00, 0x11F10), (0x11F12, 0x11F3A), (0x11F3E, 0x11F42), (0x11F50, 0x11F5A),
    (0x1342F, 0x1342F), (0x13440, 0x13455), (0x13460, 0x143FA), (0x16100, 0x16139), (0x16D40, 0x16D6C),
    (0x16D70, 0x16D79), (0x18CFF, 0x18CFF), (0x1B132, 0x1B132), (0x1B155, 0x1B155), (0x1CCF0, 0x1CCF9),
    (0x1DF25, 0x1DF2A), (0x1E030, 0x1E06D), (0x1E08F, 0x1E08F), (0x1E4D0, 0x1E4F9), (0x1E5D0, 0x1E5FA),
    (0x2B739, 0x2B739), (0x2EBF0, 0x2EE5D), (0x31350, 0x323AF),
)  # fmt: skip
_NEWER_WORD_STARTS = tuple(start for start, _ in _NEWER_WORD_RANGES)


def _is_rust_word_char(ch: str) -> bool:
    """Whether the reference regex engine counts ``ch`` as a word character."""
    category = unicodedata.category(ch)
    if category[0] in "LM" or category in ("Nd", "Nl", "Pc") or ch in "\u200c\u200d":
        return True
    code = ord(ch)
    if any(start <= code <= end for start, end in _OTHER_ALPHABETIC_SYMBOLS):
        return True
    i = bisect.bisect_right(_NEWER_WORD_STARTS, code) - 1
    return i >= 0 and code <= _NEWER_WORD_RANGES[i][1]


def _is_placeholder(value: str) -> bool:
    """Whether a generic-assignment value must be left alone (the guard)."""
    if value.startswith(_GUARD_MARKER):
        return True
    lowered = value.translate(_ASCII_LOWER)
    if lowered.startswith(_PLACEHOLDER_PREFIXES):
        return True
    if (
        (lowered.startswith("<") and lowered.endswith(">"))
        or (lowered.startswith("${") and lowered.endswith("}"))
        or (lowered.startswith("{{") and lowered.endswith("}}"))
    ):
        return True
    if lowered in _LITERAL_VALUES:
        return True
    return value.count(value[0]) == len(value)


def _too_short(value: str) -> bool:
    """Shorter than the minimum secret length, counted in UTF-8 bytes."""
    # A string of n code points is at least n bytes long, so only short ones need encoding.
    return len(value) < _MIN_SECRET_BYTES and len(value.encode("utf-8", "surrogatepass")) < _MIN_SECRET_BYTES


def _may_hold_assignment(text: str) -> bool:
    """False only when the generic pattern provably cannot match ``text``."""
    if "=" not in text and ":" not in text:
        return False
    if "\u017f" in text:
        return True
    lowered = text.lower()
    return any(hint in lowered for hint in _KEY_HINTS)


def _redact_assignments(text: str) -> str:
    """Apply the generic ``key = value`` pattern (left to right, non-overlapping)."""
    pieces: list[str] = []
    copied_to = 0
    pos = 0
    while (match := _GENERIC.search(text, pos)) is not None:
        start = match.start()
        if start and text[start - 1] > "\x7f" and _is_rust_word_char(text[start - 1]):
            # No word boundary before the key: the reference would not match here.
            pos = start + 1
            continue
        pos = match.end()
        value = match[1]
        if _too_short(value) or _is_placeholder(value):
            continue
        pieces.append(text[copied_to : match.start(1)])
        pieces.append(_SECRET_PLACEHOLDER)
        copied_to = pos
    if not pieces:
        return text
    pieces.append(text[copied_to:])
    return "".join(pieces)


def redact(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by a ``[REDACTED:...]`` marker."""
    for pattern, placeholder, literals in _SPECIFIC:
        if any(literal in text for literal in literals):
            text = pattern.sub(placeholder, text)
    if _may_hold_assignment(text):
        text = _redact_assignments(text)
    return text


@dataclass(frozen=True)
class Scrubbed:
    """A text after redaction, with how many values each label replaced."""

    text: str
    counts: dict[str, int] = field(default_factory=dict)


def redact_with(text: str, profile: str = DEFAULT_PROFILE) -> str:
    """Redact ``text`` under ``profile`` (``strict`` or ``family``)."""
    if profile == FAMILY:
        return redact(text)
    if profile == STRICT:
        return redact_strict(text)
    raise ValueError(f"unknown secrets profile: {profile!r}")


def _labels(text: str) -> Counter[str]:
    if _GUARD_MARKER not in text:
        return Counter()
    return Counter(m[0][len(_GUARD_MARKER) : -1] for m in MARKER_RE.finditer(text))


def scrub(text: str, profile: str = DEFAULT_PROFILE) -> Scrubbed:
    """Redact ``text`` under ``profile`` and count the markers the redaction added, by label.

    Markers the text already held (a doc quoting ``[REDACTED:SECRET]``) are not
    counted; a value the strict pass re-scrubbed after a provider marker counts
    once, under the label that remains in the output.
    """
    clean = redact_with(text, profile)
    if clean == text:
        return Scrubbed(text)
    added = _labels(clean) - _labels(text)
    return Scrubbed(clean, dict(sorted(added.items())))

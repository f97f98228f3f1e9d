"""The strict secrets profile: find credentials the family redactor misses, and scrub them.

The family redactor (:func:`cce_core.secrets.redactor.redact`) is kept byte for
byte identical with the other engines, and so keeps their gaps: ``DB_PASSWORD=``
(the key word must stand alone), ``"password":`` in JSON (the quote before the
colon), values with spaces or quotes, most provider formats, passwords inside
connection strings. :func:`redact_strict` closes them in four passes:

1. provider formats (:data:`secret_rules.PROVIDER_RULES`), each match replaced by
   ``[REDACTED:<LABEL>]``;
2. the password of a ``scheme://user:password@host`` URL, replaced by
   ``[REDACTED:SECRET]``;
3. credentials marked by where they sit, with neither a key operator nor a
   prefix (:mod:`cce_core.secrets.contexts`: YAML block scalars,
   Dockerfile ``ENV K v``, XML elements, ``curl -u``, ``mysql -p``, netrc,
   htpasswd and pgpass lines, HTTP auth pairs, known clients' positional
   tokens), judged by :func:`is_credential_value`;
4. keyed values: any identifier with a credential part (``DB_PASSWORD``,
   ``clientSecret``, ``"api_key"``, ``_authToken``, ``define('DB_PASSWORD', …)``)
   followed by ``=``, ``:``, ``:=``, ``=>`` or ``?=``; the value's extent follows
   the quoting rules of the reference's later fixes (#104, #142): a quoted value
   runs to its real closing quote through escapes, doubled and glued inner
   quotes, never past the line; an unquoted one runs to the end of the line
   (passwords with spaces), minus a trailing comment. The value becomes
   ``[REDACTED:SECRET]`` unless it is code (``get_password()``,
   ``request.token``, a bare variable), a documentation placeholder made only of
   placeholder words and interpolations, or shorter than 5 (quoted) / 8
   (unquoted) characters. A value that merely *starts* with a redaction marker
   is scrubbed again (#142), so no tail survives.

Everything fails toward over-redaction: a value that cannot be told apart from
code is treated as code only in the narrow shapes above.

The profile runs over every indexed file, so each pass skips what it can prove
useless (issue #24): long runs are found on a byte mask, provider literals are
looked for per first character before per rule, rules that open with a
look-behind are rewritten so ``re`` can scan for their prefix, and the keyed
pass tries its pattern only where a credential word starts. Every shortcut is a
necessary condition or an exact rewrite (``tests/test_secrets_prefilters.py``
checks each against the plain form): the output does not depend on them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from cce_core.secrets.contexts import ValueJudge, redact_contexts
from cce_core.secrets.rules import (
    KEY_QUALIFIERS,
    NON_SECRET_LAST_PARTS,
    PLACEHOLDER_WORDS,
    PROVIDER_RULES,
    SECRET_PART_SUFFIXES,
    SECRET_PARTS_EXACT,
)

SECRET_MARKER = "[REDACTED:SECRET]"
MARKER_RE = re.compile(r"\[REDACTED:[A-Z0-9_]+\]")

_MIN_QUOTED = 5
_MIN_UNQUOTED = 8
_QUOTES = "\"'`"
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_SPACE = " \t"
_LINE_END = "\r\n"


# A negative look-behind in front of a fixed-width prefix: ``(?<![A-Za-z0-9_])SK`` or
# ``(?<![A-Z0-9])(?:ASIA|ABIA)`` (the prefix is group 2 when it is an alternation, group 3 when a word).
_LEADING_GUARD = re.compile(r"\(\?<!(\[[^\]]+\])\)(?:\(\?:([^()]+)\)|([A-Za-z0-9_]+))(?![*+?{])")
_FIXED_WIDTH = re.compile(r"(?:\[[^\]]+\]|\\[^A-Za-z0-9]|[A-Za-z0-9_~:.-])+")


def _scannable(regex: str) -> str:
    """``regex`` rewritten so that ``re`` can skip ahead to its prefix, matching exactly the same spans.

    A pattern that opens with a look-behind gives ``re`` no prefix to search for,
    so it runs its matcher at every position of the text (the slowest rules of
    the table by far). Moving the guard after each fixed-width alternative of
    the prefix, ``SK(?<![A-Za-z0-9_]SK)``, checks the same character (the one
    before the prefix) once the prefix has matched, and lets ``re`` look for
    the prefix's first characters instead.
    """
    match = _LEADING_GUARD.match(regex)
    if match is None:
        return regex
    guard, alternation, word = match.groups()
    alternatives = alternation.split("|") if alternation is not None else [word]
    if not all(_FIXED_WIDTH.fullmatch(alternative) for alternative in alternatives):
        return regex
    moved = "|".join(f"{alternative}(?<!{guard}{alternative})" for alternative in alternatives)
    return f"(?:{moved}){regex[match.end():]}"


_PROVIDERS = tuple((re.compile(_scannable(rule.regex)), rule) for rule in PROVIDER_RULES)

# Every provider token (after its prefix) is a run of at least 20 of these characters,
# so the literals are looked for only in the text's long runs, not in all of it ...
_MIN_RUN = 20
_RUN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+/=.~:")
# The UTF-8 bytes of a text mapped to `r` (a run character) or a space (anything else, including
# every byte of a non-ASCII character): long runs are then found with `bytes.find`, several
# times faster than a regular expression that has to start a match at every run character.
_RUN_MASK = bytes(ord("r") if chr(byte) in _RUN_CHARS else ord(" ") for byte in range(256))
_LONG_RUN_MASK = b"r" * _MIN_RUN
# ... except for rules whose literal has other characters (``PRIVATE KEY``): those check the text.
_TEXT_RULES = frozenset(i for i, rule in enumerate(PROVIDER_RULES)
                        if any(ch not in _RUN_CHARS for literal in rule.literals for ch in literal))
assert all(PROVIDER_RULES[i].literals == ("PRIVATE KEY",) for i in _TEXT_RULES)


def _by_first_character(literals: Iterable[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for literal in literals:
        groups.setdefault(literal[0], []).append(literal)
    return groups


def _finder(literals: list[str]) -> re.Pattern[str]:
    """A pattern that matches a text exactly when one of ``literals`` (sharing a first character) occurs in it.

    It opens with the literals' common prefix (``gl(?:pat-|dt-|...)``): ``re``
    scans for a literal prefix about as fast as ``in`` does, so one scan answers
    for the whole group instead of one scan per literal.
    """
    prefix = min(literals, key=len)
    while not all(literal.startswith(prefix) for literal in literals):
        prefix = prefix[:-1]
    rests = sorted({literal[len(prefix) :] for literal in literals})
    if "" in rests:
        return re.compile(re.escape(prefix))  # the prefix is itself a literal: the longer ones add nothing
    return re.compile(f"{re.escape(prefix)}(?:{'|'.join(map(re.escape, rests))})")


def _run_finders() -> tuple[tuple[Callable[[str], object], tuple[tuple[Callable[[str], object], int], ...]], ...]:
    """The literal finders of the rules looked for in the long runs, in two levels.

    Per first character: one finder for the literals of every rule that start
    with it, then, per rule, a finder for its own literals with that first
    character. Most first characters are ruled out by the first scan alone.
    """
    per_rule: dict[str, list[tuple[Callable[[str], object], int]]] = {}
    for index, rule in enumerate(PROVIDER_RULES):
        if index in _TEXT_RULES:
            continue
        for first, literals in _by_first_character(rule.literals).items():
            per_rule.setdefault(first, []).append((_finder(literals).search, index))
    every_literal = _by_first_character(literal for index, rule in enumerate(PROVIDER_RULES)
                                        if index not in _TEXT_RULES for literal in rule.literals)
    return tuple((_finder(every_literal[first]).search, tuple(finders)) for first, finders in per_rule.items())


_RUN_FINDERS = _run_finders()

# After `scheme://`: user:password@host — the password (group 1) runs to the last `@` of the run.
_URL_USERINFO = re.compile(r"[^\s:/?#@'\"<>\[\]]*:([^\s'\"<>]+)@(?=[A-Za-z0-9\[_.-])")
_PORT_PATH = re.compile(r"[0-9]{1,5}/")  # `host:8080/path/@x` is a port and a path, not a password
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")

# A credential word, the rest of its identifier, an optional closing quote and an
# operator — searched in the ASCII-lowercased text, confirmed in Python.
_KEY_HIT = re.compile(r"(?:pass|pwd|pw|secret|token|key|cred|auth)[a-z0-9_.\-]*+[\"'`]?[ \t]*+(?:=>|:=|\?=|[:=,])")
# The words a `_KEY_HIT` match starts with (`pwd` starts with `pw`). A plain `find` for each
# lists every place a match can start far faster than `re` tries the alternation at every
# `p`, `s`, `t`, `k`, `c` and `a` of the text.
_KEY_WORDS = ("pass", "pw", "secret", "token", "key", "cred", "auth")
# Past one word start per this many characters, trying each start from Python costs more than the search.
_DENSE_KEY_WORDS = 40
assert all(alternative.startswith(_KEY_WORDS)
           for alternative in _KEY_HIT.pattern[3 : _KEY_HIT.pattern.index(")")].split("|"))

_PART_SPLIT = re.compile(r"[_.\-]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CAMEL_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_INTERPOLATION = re.compile(
    r"\$\{[^}\n]*\}|\{\{[^}\n]*\}\}|#\{[^}\n]*\}|%\([A-Za-z_][A-Za-z0-9_]*\)[sdr]|\{[A-Za-z_][\w.\[\]'\"]*\}|\{\}"
    r"|%[sd]|\$[A-Za-z_][A-Za-z0-9_]*|<[^<>\n]*>|\[REDACTED:[A-Z0-9_]+\]"
)
_CODE_HEAD = re.compile(
    r"(?:new[ \t]+|await[ \t]+|[!&*])?[@$:]?[A-Za-z_][A-Za-z0-9_$]*((?:(?:\.|::|->|\?\.)[A-Za-z_$][A-Za-z0-9_$]*)*)"
)
# Words that open an expression, never a password: `token = if cond`, `key = lambda do`.
_EXPRESSION_WORDS = frozenset({
    "if", "unless", "case", "begin", "lambda", "proc", "function", "fn", "new", "await", "yield", "not", "typeof",
    "require", "import", "match", "switch", "do", "try", "sizeof", "this", "self", "async", "func", "def",
})
_CONTINUATION_WORDS = frozenset({"do", "if", "unless", "and", "or", "rescue", "else", "then", "||", "&&", "?"})
_PATH_LIKE = re.compile(r"(?:~|\.{1,2})?/[A-Za-z0-9_./-]*")
# After a bare variable, these mean the value is an expression, not a password with spaces.
_OPERATOR_STARTS = frozenset("=|&?:+-*/%<>!.,;)]}#")
_QUALIFIED_ONLY = frozenset({"pass", "pw"})
_PASSWORD_PARTS = frozenset({"password", "passwd", "passphrase", "passwrd", "pwd", "pass", "pw"})
_PASSWORD_SUFFIXES = ("password", "passwd", "passphrase")
_AUTH_SCHEMES = frozenset({"basic", "bearer", "token", "digest", "apikey", "hmac", "negotiate", "ntlm", "sharedkey"})
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


# --------------------------------------------------------------------------- pass 1: providers


def _replace_group(placeholder: str) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        whole, start = match.group(0), match.start(0)
        return whole[: match.start(1) - start] + placeholder + whole[match.end(1) - start :]

    return replace


def long_runs(text: str) -> str:
    """The distinct maximal runs of at least 20 run characters of ``text``, in order, one per line.

    Only whether a literal or a token occurs in some run matters to the callers,
    so a run repeated in the text is listed once.
    """
    raw = text.encode("utf-8", "surrogatepass")
    mask = raw.translate(_RUN_MASK)
    runs: dict[bytes, None] = {}
    # Searching from a non-run position, the first window of 20 run characters starts a maximal run.
    start = mask.find(_LONG_RUN_MASK)
    while start >= 0:
        end = mask.find(b" ", start + _MIN_RUN)
        end = len(mask) if end < 0 else end
        runs[raw[start:end]] = None
        start = mask.find(_LONG_RUN_MASK, end)
    return b"\n".join(runs).decode("ascii")


def _redact_providers(text: str) -> str:
    runs = long_runs(text)
    # A rule runs when one of its literals occurs in a long run (a text rule: in the text as it is then).
    candidates: set[int] = set()
    if runs:
        for any_of_them, finders in _RUN_FINDERS:
            if any_of_them(runs) is not None:
                candidates.update(index for search, index in finders if search(runs) is not None)
    candidates.update(_TEXT_RULES)
    in_text: dict[tuple[str, ...], bool] = {}  # whether a text rule's literals occur in `text` as it is now
    for index in sorted(candidates):
        pattern, rule = _PROVIDERS[index]
        if index in _TEXT_RULES:
            if rule.literals not in in_text:
                in_text[rule.literals] = any(literal in text for literal in rule.literals)
            if not in_text[rule.literals]:
                continue
        if rule.within_runs and pattern.search(runs) is None:
            continue
        placeholder = f"[REDACTED:{rule.label}]"
        scrubbed = pattern.sub(_replace_group(placeholder) if rule.group else placeholder, text)
        if scrubbed is not text:  # `re` returns its input when nothing matched; any other result may differ
            in_text.clear()
            text = scrubbed
    return text


# --------------------------------------------------------------------------- value judgements


def is_placeholder(value: str) -> bool:
    """Whether a value is documentation, not a credential.

    True for a value made only of placeholder words (``your-api-key-here``,
    ``CHANGE_ME``, ``null``), interpolations (``${DB_PASSWORD}``, ``{{token}}``,
    ``$TOKEN``, ``<secret>``), redaction markers and punctuation, or one
    character repeated. A value that continues past a marker with more
    value characters (``[REDACTED:AWS_ACCESS_KEY]tail``) is not a placeholder.
    """
    if not value:
        return True
    if len(set(value)) == 1:
        return True
    for marker in MARKER_RE.finditer(value):
        after = value[marker.end() : marker.end() + 1]
        if after and (after.isalnum() or after in "_-+/="):
            return False
    rest = _INTERPOLATION.sub(" ", value)
    for chunk in re.split(r"[^A-Za-z0-9]+", rest):
        if not chunk:
            continue
        for word in _CAMEL_WORDS.findall(chunk):
            lowered = word.lower()
            if lowered not in PLACEHOLDER_WORDS and not (len(lowered) >= 3 and len(set(lowered)) == 1):
                return False
    return True


def _marker_then_structure(value: str) -> bool:
    """A value that is a marker followed by structure (``[REDACTED:X];Endpoint=...``): already done."""
    match = MARKER_RE.match(value)
    if match is None:
        return False
    after = value[match.end() : match.end() + 1]
    return not after or not (after.isalnum() or after in "_-+/=")


def _looks_like_code(value: str) -> bool:
    """An unquoted value that is an expression: a call, an index, an attribute chain, a bare variable."""
    if (value[:1] in "[{(" and not MARKER_RE.match(value)) or value.startswith("->"):
        return True  # a literal list, map or tuple, a lambda: structure, not a credential
    match = _CODE_HEAD.match(value)
    if match is None:
        return False
    head, rest = match.group(0), value[match.end() :]
    if head in _EXPRESSION_WORDS or head.startswith(":"):
        return True  # an expression keyword, or a symbol
    if rest[:1] in ("(", "["):
        return True
    if any(ch.isdigit() for ch in head):
        return False
    if match.group(1):
        return True
    if _random_looking(head):
        return False
    if rest[:1] in ("?", "!") and rest[1:2] in ("", " ", "\t"):
        rest = rest[1:]  # a predicate method: `enabled? && ...`
    if not rest or rest[0] in ",;)]}":
        return True  # a bare variable
    if rest[0] not in _SPACE:
        return False  # glued to more characters (`abc/def+ghi`): part of the value
    after = rest.lstrip(_SPACE)
    if after.split(" ", 1)[0] in _CONTINUATION_WORDS:
        return True  # `helper do |x|`, `value if cond`, `a or b`
    return not after or after[0] in _OPERATOR_STARTS or after[0] == "("  # `F (x)`: a call


def _random_looking(word: str) -> bool:
    """A long letters-only word with many capitals is a generated string, not a variable name."""
    if len(word) < 16 or "_" in word:
        return False
    upper = sum(1 for ch in word if ch.isupper())
    return 0.25 <= upper / len(word) <= 0.75


def key_kind(identifier: str) -> str | None:
    """``"password"``, ``"token"`` or None: what kind of credential an identifier names.

    Only the last dotted segment counts (``spring.datasource.password`` yes,
    ``auth.py`` no). A password may hold spaces; a token never does, so a
    token-kind value ends at the first space unless it is ``<scheme> <credential>``.
    """
    parts = [p.lower() for p in _PART_SPLIT.split(identifier.rsplit(".", 1)[-1]) if p]
    if parts[-3:] == ["private", "key", "id"]:
        return "token"  # a service account's key id (GCP `private_key_id`): it names the key to revoke
    if not parts or parts[-1] in NON_SECRET_LAST_PARTS:
        return None
    kind = None
    for i, part in enumerate(parts):
        if part in _QUALIFIED_ONLY and (len(parts) == 1 or i != len(parts) - 1):
            continue  # `pass:` in prose, `pass_block`; only a qualified last part (`DB_PASS=`) is a key
        if part in _PASSWORD_PARTS or part.endswith(_PASSWORD_SUFFIXES):
            return "password"
        if (part in SECRET_PARTS_EXACT or part.endswith(SECRET_PART_SUFFIXES)
                or (part == "key" and i and parts[i - 1] in KEY_QUALIFIERS)
                or (part.endswith("key") and part[:-3] in KEY_QUALIFIERS)):
            kind = "token"
    return kind


def is_secret_key(identifier: str) -> bool:
    """Whether an identifier names a credential (``DB_PASSWORD`` yes, ``token_url`` no)."""
    return key_kind(identifier) is not None


def _token_value_end(value: str) -> int:
    """Where a token-kind value ends: its first word, or ``<scheme> <credential>``."""
    words = value.split()
    if not words:
        return 0
    first = value.find(words[0]) + len(words[0])
    if len(words) > 1 and words[0].lower() in _AUTH_SCHEMES:
        return value.find(words[1], first) + len(words[1])
    return first


# --------------------------------------------------------------------------- value extents


def _punctuation_closes(text: str, quote_at: int, quote: str, end: int) -> bool:
    """After a quote followed by punctuation: a real close unless the same quote follows with no space first."""
    nxt = text[quote_at + 1]
    if nxt in ",;:)]}":
        after = text[quote_at + 2 : quote_at + 3]
        if not after or after in " \t\r\n\"'`{[]})," :
            return True  # structure: `"a","b"`, `"a"}`, `"a");`
    j = quote_at + 1
    while j < end:
        c = text[j]
        if c in " \t\r\n":
            return True
        if c == quote:
            return False
        j += 1
    return True


def _scan_quoted(text: str, open_at: int, end: int) -> int:
    """The index of the value's closing quote, or of the line end when it is never closed."""
    quote = text[open_at]
    i = open_at + 1
    while i < end:
        c = text[i]
        if c in _LINE_END:
            break
        if c == "\\":
            i += 1
            if i < end and text[i] not in _LINE_END:
                i += 1
            continue
        if c == quote:
            nxt = text[i + 1] if i + 1 < end else ""
            if nxt == quote:
                i += 2  # a doubled quote is a literal quote
                continue
            if not nxt or nxt in " \t\r\n":
                return i
            if nxt.isalnum() or nxt in "_-" or nxt > "\x7f":
                i += 1  # glued to more value characters: an inner quote
                continue
            if _punctuation_closes(text, i, quote, end):
                return i
            i += 1
            continue
        i += 1
    return i


def _unquoted_end(text: str, start: int, end: int) -> int:
    """Where an unquoted value ends: the line end, before a trailing comment, trailing `,;` and unmatched closers."""
    line_end = start
    while line_end < end and text[line_end] not in _LINE_END:
        line_end += 1
    value = text[start:line_end]
    for comment in (" #", "\t#", " //", "\t//", " ;", "\t;", " /*", "\t/*"):
        cut = value.find(comment)
        if cut >= 0:
            value = value[:cut]
    return start + len(_trim_tail(value))


def _trim_tail(value: str) -> str:
    """Drop what closes the surrounding code: trailing `,;`, unmatched closers, a lone closing quote."""
    while True:
        trimmed = value.rstrip(" \t,;")
        if trimmed and trimmed[-1] in ")]}":
            opener = {")": "(", "]": "[", "}": "{"}[trimmed[-1]]
            if trimmed.count(opener) < trimmed.count(trimmed[-1]):
                trimmed = trimmed[:-1]
        if trimmed and trimmed[-1] in _QUOTES and trimmed.count(trimmed[-1]) == 1:
            trimmed = trimmed[:-1]
        if trimmed == value:
            return value
        value = trimmed


# --------------------------------------------------------------------------- passes 2 and 3


def _redact_url_credentials(text: str) -> str:
    if "@" not in text:
        return text
    pieces: list[str] = []
    cursor = 0
    at = text.find("://")
    while at >= 0:
        start = at
        while start > 0 and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        match = _URL_USERINFO.match(text, at + 3) if start < at and text[start].isalpha() else None
        if match is not None:
            password = match.group(1)
            if not (is_placeholder(password) or _marker_then_structure(password) or _PORT_PATH.match(password)):
                pieces.append(text[cursor : match.start(1)])
                pieces.append(SECRET_MARKER)
                cursor = match.end(1)
            at = text.find("://", match.end())
        else:
            at = text.find("://", at + 3)
    if not pieces:
        return text
    pieces.append(text[cursor:])
    return "".join(pieces)


def _lowered(text: str) -> str:
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


def _key_span(text: str, hit: int) -> tuple[int, int]:
    start = hit
    while start > 0 and text[start - 1] in _IDENT_CHARS:
        start -= 1
    stop = hit
    while stop < len(text) and text[stop] in _IDENT_CHARS:
        stop += 1
    return start, stop


def _operator_ok(text: str, key_start: int, key_stop: int, op_start: int, op_end: int) -> bool:
    op = text[op_start:op_end]
    nxt = text[op_end : op_end + 1]
    if op == ":" and nxt == ":":
        return False
    if op == "=" and nxt in ("=", "~"):
        return False
    if op == ",":
        # Only as a call argument pair: define('DB_PASSWORD', '...'), setenv("TOKEN", "...").
        quote = text[key_start - 1 : key_start]
        if not quote or quote not in _QUOTES or text[key_stop : key_stop + 1] != quote:
            return False
        before = text[: key_start - 1].rstrip(_SPACE)
        return before.endswith("(")
    return True


def _key_word_starts(lowered: str) -> list[int] | None:
    """Every position where a credential word starts, ascending: the only places `_KEY_HIT` can match.

    None when the words are so dense (more than one per `_DENSE_KEY_WORDS`
    characters: ``key key key …``) that `re` searching the text itself is cheaper.
    """
    limit = len(lowered) // _DENSE_KEY_WORDS + 16
    starts: list[int] = []
    for word in _KEY_WORDS:
        at = lowered.find(word)
        while at >= 0:
            starts.append(at)
            if len(starts) > limit:
                return None
            at = lowered.find(word, at + 1)
    starts.sort()
    return starts


def _next_key_hit(lowered: str, starts: list[int] | None, index: int, pos: int) -> tuple[re.Match[str] | None, int]:
    """What ``_KEY_HIT.search(lowered, pos)`` finds, and where to go on in ``starts`` next time.

    Trying `_KEY_HIT.match` at each word start from `pos` on, in order, finds the
    first position from `pos` where the pattern matches, as the search would.
    """
    if starts is None:
        return _KEY_HIT.search(lowered, pos), index
    while index < len(starts):
        start = starts[index]
        index += 1
        if start >= pos and (hit := _KEY_HIT.match(lowered, start)) is not None:
            return hit, index
    return None, index


def _redact_keyed(text: str, lowered: str | None = None) -> str:
    """The keyed pass; ``lowered`` is ``_lowered(text)`` when the caller already has it."""
    if lowered is None:
        lowered = _lowered(text)
    end = len(text)
    pieces: list[str] = []
    cursor = 0
    pos = 0
    starts = _key_word_starts(lowered)
    next_start = 0
    while True:
        hit, next_start = _next_key_hit(lowered, starts, next_start, pos)
        if hit is None:
            break
        pos = hit.start() + 1
        if hit.start() < cursor:
            continue
        key_start, key_stop = _key_span(text, hit.start())
        kind = key_kind(text[key_start:key_stop].strip(".-"))
        if kind is None:
            pos = max(pos, key_stop)
            continue
        pos = max(pos, hit.end())
        op_end = hit.end()
        op_start = op_end - (2 if lowered[op_end - 2 : op_end] in ("=>", ":=", "?=") else 1)
        if op_start < key_stop or not _operator_ok(text, key_start, key_stop, op_start, op_end):
            continue
        i = op_end
        while i < end and text[i] in _SPACE:
            i += 1
        if i >= end or text[i] in _LINE_END:
            continue
        open_at = i
        if text[i] not in _QUOTES and text[i] in "rRbBuUfF":
            j = i + 1 if text[i + 1 : i + 2] not in ("r", "R", "b", "B") else i + 2
            if text[j : j + 1] in tuple(_QUOTES):
                open_at = j
        if text[open_at] not in _QUOTES and text[op_start] == ",":
            continue  # the call form takes a literal only: `define('DB_PASSWORD', '…')`
        if text[open_at] in _QUOTES:
            close_at = _scan_quoted(text, open_at, end)
            inner = text[open_at + 1 : close_at]
            if kind == "token" and _token_value_end(inner.strip()) < len(inner.strip()):
                continue  # prose or code in a string (`AUTH = "def f(): ..."`), not a token
            if len(inner) < _MIN_QUOTED or _marker_then_structure(inner) or _PATH_LIKE.fullmatch(inner) or (
                    is_placeholder(inner) and not _KEY_HIT.search(inner.lower())):
                pos = max(pos, close_at)
                continue
            pieces.append(text[cursor : open_at + 1])
            pieces.append(SECRET_MARKER)
            cursor = close_at
            pos = max(pos, close_at + 1)
            continue
        value_end = _unquoted_end(text, i, end)
        enclosing = text[key_start - 1 : key_start]
        if enclosing and enclosing in _QUOTES and text[key_stop : key_stop + 1] != enclosing:
            # `"Authorization: Bearer …"`: the value ends where the enclosing string does.
            inside = text.find(enclosing, i, value_end)
            if inside >= 0:
                value_end = inside
        if kind == "token":
            value_end = i + len(_trim_tail(text[i : i + _token_value_end(text[i:value_end])]))
        value = text[i:value_end]
        if (len(value) < _MIN_UNQUOTED or _marker_then_structure(value) or _looks_like_code(value)
                or _PATH_LIKE.fullmatch(value)
                or (is_placeholder(value) and not _KEY_HIT.search(value.lower()))):
            continue
        pieces.append(text[cursor:i])
        pieces.append(SECRET_MARKER)
        cursor = value_end
        pos = max(pos, value_end)
    if not pieces:
        return text
    pieces.append(text[cursor:])
    return "".join(pieces)


def is_credential_value(value: str) -> bool:
    """Whether a value found by its context (a netrc ``password``, a ``curl -u`` pair) is a credential.

    Its place already says it is one, so only what can never be a credential is
    refused: a placeholder or interpolation, a redaction marker, and values
    shorter than a quoted keyed value may be.
    """
    return len(value) >= _MIN_QUOTED and not _marker_then_structure(value) and not is_placeholder(value)


_CONTEXT_JUDGE = ValueJudge(key_kind, is_credential_value)


def redact_strict(text: str) -> str:
    """Return ``text`` with every credential the strict profile recognises replaced by a marker."""
    text = _redact_providers(text)
    text = _redact_url_credentials(text)
    lowered = _lowered(text)
    in_context = redact_contexts(text, _CONTEXT_JUDGE, lowered)
    # The lowercased copy still fits when the context pass replaced nothing (it then returns its input).
    return _redact_keyed(in_context, lowered if in_context is text else None)

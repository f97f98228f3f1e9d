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
"""

from __future__ import annotations

import re
from collections.abc import Callable

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

_PROVIDERS = tuple((re.compile(rule.regex), rule) for rule in PROVIDER_RULES)


def _by_prefix() -> dict[str, tuple[int, ...]]:
    """Rule indices keyed by the first two characters of their literals: one cheap scan per prefix, not per literal."""
    table: dict[str, set[int]] = {}
    for index, rule in enumerate(PROVIDER_RULES):
        for literal in rule.literals:
            table.setdefault(literal[:2], set()).add(index)
    return {prefix: tuple(sorted(indices)) for prefix, indices in table.items()}


_RULES_BY_PREFIX = _by_prefix()

# Every provider token (after its prefix) is a run of at least 20 of these characters,
# so the literals are looked for only in the text's long runs, not in all of it ...
_LONG_RUN = re.compile(r"[A-Za-z0-9_\-+/=.~:]{20,}+")  # possessive: no re-scan inside short runs
_RUN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+/=.~:")
# ... except for rules whose literal has other characters (``PRIVATE KEY``): those check the text.
_TEXT_RULES = tuple(i for i, rule in enumerate(PROVIDER_RULES)
                    if any(ch not in _RUN_CHARS for literal in rule.literals for ch in literal))
assert all(PROVIDER_RULES[i].literals == ("PRIVATE KEY",) for i in _TEXT_RULES)

# After `scheme://`: user:password@host — the password (group 1) runs to the last `@` of the run.
_URL_USERINFO = re.compile(r"[^\s:/?#@'\"<>\[\]]*:([^\s'\"<>]+)@(?=[A-Za-z0-9\[_.-])")
_PORT_PATH = re.compile(r"[0-9]{1,5}/")  # `host:8080/path/@x` is a port and a path, not a password
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")

# A credential word, the rest of its identifier, an optional closing quote and an
# operator — searched in the ASCII-lowercased text, confirmed in Python.
_KEY_HIT = re.compile(r"(?:pass|pwd|pw|secret|token|key|cred|auth)[a-z0-9_.\-]*+[\"'`]?[ \t]*+(?:=>|:=|\?=|[:=,])")

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


def _redact_providers(text: str) -> str:
    runs = "\n".join(_LONG_RUN.findall(text))
    candidates = {i for prefix, indices in _RULES_BY_PREFIX.items() if prefix in runs for i in indices}
    if "PRIVATE KEY" in text:  # the only literal outside the run characters (asserted below)
        candidates.update(_TEXT_RULES)
    for index in sorted(candidates):
        pattern, rule = _PROVIDERS[index]
        where = text if index in _TEXT_RULES else runs
        if not any(literal in where for literal in rule.literals):
            continue
        if rule.within_runs and pattern.search(runs) is None:
            continue
        placeholder = f"[REDACTED:{rule.label}]"
        text = pattern.sub(_replace_group(placeholder) if rule.group else placeholder, text)
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


def _redact_keyed(text: str) -> str:
    lowered = _lowered(text)
    end = len(text)
    pieces: list[str] = []
    cursor = 0
    pos = 0
    while (hit := _KEY_HIT.search(lowered, pos)) is not None:
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
    text = redact_contexts(text, _CONTEXT_JUDGE)
    return _redact_keyed(text)

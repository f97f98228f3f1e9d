"""The strict profile's context pass: credentials recognised by where they sit, not by a key operator or a prefix.

The keyed pass of :mod:`cce_core.secrets.scanner` needs a credential
word *followed by an operator* (``password = …``); the provider pass needs a
known prefix. Issue #23 found passwords that have neither, because the place
they sit is what marks them:

* YAML block scalars: ``password: |`` (or ``>-``) and the more-indented lines under it;
* Dockerfile ``ENV KEY value`` (the space form);
* XML: ``<password>…</password>`` (Maven ``settings.xml``), and an element
  *named* like a credential by an attribute — ``<property
  name="hibernate.connection.password">…</property>``, ``<property
  name="password" value="…"/>``, ``<add key="SmtpPassword" value="…"/>``,
  Android ``<string name="api_key">…</string>``;
* command lines: ``curl -u user:pw`` (``--user``), ``mysql -pPW`` (and the other
  MySQL/MariaDB clients), ``sqlplus user/pw@db`` and SQL*Plus
  ``CONNECT user/pw``, ``docker login -p PW``, and any long option whose last
  word is a credential followed by its value (``--password PW``, ``--api-token T``);
* file formats found in files not named for them: netrc (``machine H login U
  password P``, on one line or over several), htpasswd and shadow lines
  (``user:$apr1$…``, ``{SHA}…``, bcrypt), ``.pgpass`` lines
  (``host:port:db:user:password``);
* literal pairs handed to HTTP auth: ``auth=('admin', "pw")``,
  ``HTTPBasicAuth('u', 'pw')``;
* positional tokens of known clients: Twilio ``Client("AC…", "<token>")``,
  Discord ``client.login('<token>')``.

Each rule finds the value only where its context is unambiguous, then asks
the scanner's judgement (:class:`ValueJudge`) whether the value is a
credential at all — placeholders (``$DB_PASSWORD``, ``<password>``,
``${{ secrets.X }}``), redaction markers and too-short values are left alone —
so the pass adds no false positives where there is no credential, and running
it twice changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

SECRET = "[REDACTED:SECRET]"
PASSWORD_HASH = "[REDACTED:PASSWORD_HASH]"
TWILIO = "[REDACTED:TWILIO_KEY]"


@dataclass(frozen=True)
class ValueJudge:
    """What the scanner decides for the contexts: what a key names, and whether a value is a credential."""

    key_kind: Callable[[str], str | None]
    is_credential: Callable[[str], bool]


Replacement = tuple[int, int, str]  # (start, end, marker)


def _apply(text: str, spans: list[Replacement]) -> str:
    """``text`` with each non-overlapping span replaced (spans in any order; a later overlap is dropped)."""
    if not spans:
        return text
    out: list[str] = []
    cursor = 0
    for start, end, marker in sorted(spans):
        if start < cursor:
            continue
        out.append(text[cursor:start])
        out.append(marker)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def _strip_quotes(value: str) -> tuple[int, int]:
    """The (start, end) of ``value`` inside one pair of matching quotes, or of all of it."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return 1, len(value) - 1
    return 0, len(value)


# --------------------------------------------------------------------------- YAML block scalars

_YAML_BLOCK_HINT = re.compile(r":[ \t]*[|>]")
# A whole line `key: |` (or `- key: >-`, a quoted key, a trailing comment), matched from the line's start.
_YAML_BLOCK_KEY = re.compile(
    r"([ \t]*)(?:-[ \t]+)?([\"']?)([A-Za-z_][A-Za-z0-9_.\-]*)\2[ \t]*:[ \t]*[|>][+-]?[1-9]?[+-]?[ \t]*(?:#[^\n]*)?$",
    re.M,
)


def _yaml_blocks(text: str, judge: ValueJudge, spans: list[Replacement]) -> None:
    for hint in _YAML_BLOCK_HINT.finditer(text):
        match = _YAML_BLOCK_KEY.match(text, text.rfind("\n", 0, hint.start()) + 1)
        if match is None or judge.key_kind(match.group(3)) is None:
            continue
        indent = len(match.group(1).expandtabs())
        lines: list[tuple[int, int]] = []  # (start, end) of each content line's text, indentation excluded
        pos = match.end() + 1
        while pos < len(text):
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            line = text[pos:end]
            body = line.lstrip(" \t")
            if body.strip():
                if len(line[: len(line) - len(body)].expandtabs()) <= indent:
                    break  # back at the key's level: the block is over
                lines.append((end - len(body), end - (len(body) - len(body.rstrip()))))
            pos = end + 1
        content = "\n".join(text[s:e] for s, e in lines)
        if lines and judge.is_credential(content):
            spans.extend((s, e, SECRET) for s, e in lines)


# --------------------------------------------------------------------------- Dockerfile ENV KEY value

_ENV_WORD = re.compile(r"ENV[ \t]")
# After `ENV `: the key, a space (not `=`), and the value to the end of the line (group 2).
_DOCKER_ENV = re.compile(r"[ \t]*([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]+([^\s=\\][^\n]*?)[ \t]*\\?[ \t]*$", re.M)


def _dockerfile_env(text: str, judge: ValueJudge, spans: list[Replacement]) -> None:
    for word in _ENV_WORD.finditer(text):  # a scan for its literal `ENV` (as fast as `in`), no pre-check
        if text[text.rfind("\n", 0, word.start()) + 1 : word.start()].strip(" \t"):
            continue  # `ENV` opens a Dockerfile instruction's line
        match = _DOCKER_ENV.match(text, word.end())
        if match is None or judge.key_kind(match.group(1)) is None:
            continue
        value = match.group(2)
        start, end = _strip_quotes(value)
        if judge.is_credential(value[start:end]):
            spans.append((match.start(2) + start, match.start(2) + end, SECRET))


# --------------------------------------------------------------------------- XML

_XML_ELEMENT = re.compile(r"<([A-Za-z_][\w.:\-]*)(?:[ \t][^<>]*)?>([^<>\n]{1,1024})</\1[ \t]*>")
# A tag with attributes (group 2), self-closing or not (group 3).
_XML_NAMED = re.compile(
    r"<([A-Za-z_][\w.:\-]*)((?:[ \t\r\n]+[\w.:\-]+[ \t]*=[ \t]*(?:\"[^\"<>]*\"|'[^'<>]*'))+)[ \t\r\n]*(/?)>")
_XML_ATTR = re.compile(r"([\w.:\-]+)[ \t]*=[ \t]*(?:\"([^\"<>]*)\"|'([^'<>]*)')")
# A closing tag whose name holds a credential word: an element is judged only when its tag holds
# one, and its closing tag repeats the name. (That check lowercases the tag; `re`'s case folding
# covers it and more, the Kelvin sign for `k` included, so this can only say yes too often.)
_CREDENTIAL_CLOSING_TAG = re.compile(r"</[\w.:\-]*?(?:pass|pwd|secret|token|key|cred|auth)", re.IGNORECASE)
_NAMING_ATTRIBUTES = frozenset({"name", "key", "id", "property", "param", "field", "setting", "android:name"})
_VALUE_ATTRIBUTES = frozenset({"value", "val", "content", "default", "defaultvalue"})


def _xml(text: str, judge: ValueJudge, spans: list[Replacement]) -> None:
    if "<" not in text:
        return
    elements = _XML_ELEMENT.finditer(text) if _CREDENTIAL_CLOSING_TAG.search(text) else ()
    for match in elements:  # <password>…</password>
        tag = match.group(1).rsplit(":", 1)[-1]
        lowered = tag.lower()
        if not any(word in lowered for word in _CREDENTIAL_WORDS) or judge.key_kind(tag) is None:
            continue
        inner = match.group(2)
        stripped = inner.strip()
        if judge.is_credential(stripped):
            start = match.start(2) + (len(inner) - len(inner.lstrip()))
            spans.append((start, start + len(stripped), SECRET))
    for match in _XML_NAMED.finditer(text):  # <property name="…password" value="…"/>, or >…</property>
        lowered = match.group(2).lower()
        if not any(word in lowered for word in _CREDENTIAL_WORDS):
            continue  # the common case, decided without parsing the attributes
        attributes = list(_XML_ATTR.finditer(match.group(2)))
        names = [a for a in attributes if a.group(1).lower() in _NAMING_ATTRIBUTES]
        if not any(judge.key_kind(a.group(2) if a.group(2) is not None else a.group(3) or "") for a in names):
            continue
        base = match.start(2)
        values = [a for a in attributes if a.group(1).lower() in _VALUE_ATTRIBUTES]
        for a in values:
            group = 2 if a.group(2) is not None else 3
            if judge.is_credential(a.group(group)):
                spans.append((base + a.start(group), base + a.end(group), SECRET))
        if values or match.group(3):
            continue
        close = text.find("</", match.end())
        if close < 0:
            continue
        inner = text[match.end() : close]
        if "<" in inner or "\n" in inner.strip() or len(inner) > 1024:
            continue
        stripped = inner.strip()
        if judge.is_credential(stripped):
            start = match.end() + (len(inner) - len(inner.lstrip()))
            spans.append((start, start + len(stripped), SECRET))


# --------------------------------------------------------------------------- command lines

# A substring test per command (each a fast scan) decides which command rules read the text at all: a
# regex that looks for every command word at once costs more than the whole keyed pass.
_CURL_WORD = re.compile(r"curl[ \t]")
_MYSQL_WORD = re.compile(r"(?:mysql(?:dump|admin|import|show|check|pump|sh)?|mariadb(?:-dump|-admin)?)[ \t]")
_DOCKER_WORD = re.compile(r"docker[ \t]+login[ \t]")
_SQLPLUS_SPELLINGS = ("sqlplus", "SQLPLUS", "CONNECT ", "CONN ", "conn ")  # `connect ` alone is prose
# In the lowercased text, each spelling holds one of these: two scans rule all five out.
_SQLPLUS_LOWERED_HINTS = ("sqlplus", "conn")
_MYSQL_HINT = re.compile(r"m(?:ysql|ariadb)")  # one scan for the two client names
_SQLPLUS_WORD = re.compile(r"(?:sqlplus|SQLPLUS|conn|CONN|CONNECT)[ \t]")
# curl: -u/--user user:password (group 2), or -u :token (group 4).
_CURL_OPTION = re.compile(
    r"[ \t](?:-u|--user|--proxy-user|-U)(?:[ \t]+|=)([\"']?)[^\s:\"'-][^\s:\"']*:([^\s\"']+)\1(?=[\s;|&)]|$)"
    r"|[ \t](?:-u|--user)(?:[ \t]+|=)([\"']?):([^\s\"']+)\3(?=[\s;|&)]|$)")
_MYSQL_OPTION = re.compile(r"[ \t]-p(?![\s-])([\"']?)([^\s\"']+)\1")
_DOCKER_OPTION = re.compile(r"[ \t](?:-p|--password)[ \t]+([\"']?)([^\s\"'-][^\s\"']*)\1")
# After `sqlplus` (or a line-opening `CONNECT`): options, then user/password (group 1) up to `@`, a space or the end.
_SQLPLUS_LOGIN = re.compile(r"[ \t]+(?:-[A-Za-z]+[ \t]+)*[\"']?[A-Za-z0-9_$#.]+/([^\s@/\"';]+)(?=[@\s\"';]|$)")
# A long option, then its value after a space (the name is judged in Python).
_LONG_OPTION = re.compile(r"--([A-Za-z][A-Za-z0-9_-]*+)[ \t]+([\"']?)([^\s\"'-][^\s\"']*)\2")
_CREDENTIAL_WORDS = ("pass", "pwd", "secret", "token", "key", "cred", "auth")


def _command_words(text: str, word: re.Pattern[str]) -> Iterator[tuple[re.Match[str], int]]:
    """Each match of ``word`` that starts a word, with the end of its line."""
    for match in word.finditer(text):
        at = match.start()
        if at and (text[at - 1].isalnum() or text[at - 1] in "_.-"):
            continue  # inside a longer word (`reconnect `, `mysqlx `)
        line_end = text.find("\n", at)
        yield match, len(text) if line_end < 0 else line_end


def _may_hold_sqlplus(text: str, lowered: str | None) -> bool:
    """Whether a SQL*Plus spelling occurs in ``text``; ``lowered``, its lowercased copy, rules most texts out faster."""
    if lowered is not None and not any(hint in lowered for hint in _SQLPLUS_LOWERED_HINTS):
        return False
    return any(spelling in text for spelling in _SQLPLUS_SPELLINGS)


def _command_lines(text: str, judge: ValueJudge, spans: list[Replacement], lowered: str | None = None) -> None:
    found: list[tuple[int, int]] = []
    # `curl[ \t]` and `docker[ \t]+login` open with a literal that `re` scans for as fast as `in` does.
    for word, line_end in _command_words(text, _CURL_WORD):
        for match in _CURL_OPTION.finditer(text, word.end() - 1, line_end):
            found.append(match.span(2) if match.group(2) is not None else match.span(4))
    if _MYSQL_HINT.search(text) is not None:
        for word, line_end in _command_words(text, _MYSQL_WORD):
            found.extend(m.span(2) for m in _MYSQL_OPTION.finditer(text, word.end() - 1, line_end))
    for word, line_end in _command_words(text, _DOCKER_WORD):
        found.extend(m.span(2) for m in _DOCKER_OPTION.finditer(text, word.end() - 1, line_end))
    if _may_hold_sqlplus(text, lowered):
        for word, line_end in _command_words(text, _SQLPLUS_WORD):
            if word.group(0)[0] in "cC" and text[text.rfind("\n", 0, word.start()) + 1 : word.start()].strip(" \t"):
                continue  # SQL*Plus `CONNECT` opens its line
            login = _SQLPLUS_LOGIN.match(text, word.end() - 1, line_end)
            if login is not None:
                found.append(login.span(1))
    spans.extend((start, stop, SECRET) for start, stop in found if judge.is_credential(text[start:stop]))
    if "--" in text:
        _long_options(text, judge, spans)


def _long_options(text: str, judge: ValueJudge, spans: list[Replacement]) -> None:
    for match in _LONG_OPTION.finditer(text):
        before = text[match.start() - 1 : match.start()]
        if before and (before.isalnum() or before in "_-"):
            continue  # inside a word or a run of dashes, not an option
        name = match.group(1).lower()
        if not any(word in name for word in _CREDENTIAL_WORDS):
            continue
        last = re.split(r"[-_]", name)[-1]
        # The option's *last* word must be a credential (`--db-pass`, `--api-token`): `--password-stdin host`
        # passes no password. (`pass` alone names a credential only as a qualified last part.)
        if judge.key_kind(match.group(1)) is not None and (last in ("pass", "pw") or judge.key_kind(last)) \
                and judge.is_credential(match.group(3)):
            spans.append((match.start(3), match.end(3), SECRET))


# --------------------------------------------------------------------------- netrc, htpasswd, pgpass

_NETRC_INLINE = re.compile(
    r"(?<![\w.-])machine[ \t]+[^\s\"']+[ \t]+login[ \t]+[^\s\"']+[ \t]+password[ \t]+([^\s\"'`]+)")
_NETRC_HEAD = re.compile(r"^[ \t]*(?:machine[ \t]+\S+|default)(?:[ \t]+(?:login|password|account|port)[ \t]+\S+)*"
                         r"[ \t]*$")
_NETRC_BODY = re.compile(r"^[ \t]*(?:(?:login|password|account|port)[ \t]+\S+[ \t]*)+$")
_NETRC_SECRET = re.compile(r"(?<![\w-])(?:password|account)[ \t]+(\S+)")


def _netrc(text: str, judge: ValueJudge, spans: list[Replacement]) -> None:
    if "machine" not in text or "password" not in text or "login" not in text:
        return
    for match in _NETRC_INLINE.finditer(text):
        if judge.is_credential(match.group(1)):
            spans.append((match.start(1), match.end(1), SECRET))
    pos = 0
    in_entry = False
    while pos <= len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end]
        if _NETRC_HEAD.match(line):
            in_entry = True
        elif not (in_entry and _NETRC_BODY.match(line)):
            in_entry = False
        if in_entry:
            for secret in _NETRC_SECRET.finditer(line):
                if judge.is_credential(secret.group(1)):
                    spans.append((pos + secret.start(1), pos + secret.end(1), SECRET))
        pos = end + 1


_HTPASSWD = re.compile(
    r"^[ \t]*[A-Za-z0-9._@\-]{1,64}:(\$(?:apr1|2[abxy]?|1|5|6|y|gy|7)\$[./A-Za-z0-9$=+]{8,}"
    r"|\{SHA\}[A-Za-z0-9+/]{27}=|\{SSHA\}[A-Za-z0-9+/]{20,}={0,2})[ \t]*(?=:|$)", re.M)
# host:port:database:user:password, exactly five fields (a colon inside one is escaped as `\:`).
_PGPASS = re.compile(r"^[ \t]*([^\s:#][^\s:]*):([0-9]{1,5}|\*):([^\s:]+):([^\s:]+):((?:\\.|[^\s\\:])+)[ \t]*$", re.M)
_HEX_FIELD = re.compile(r"[0-9A-Fa-f]{0,4}")


_HTPASSWD_HINT = re.compile(r":(?:\$(?:apr1|2[abxy]?|[1567]|y|gy)\$|\{S?SHA\})")
_PGPASS_HINT = re.compile(r":(?:[0-9]{1,5}|\*):[^\s:]+:[^\s:]+:[^\s:]")


# The YAML block, htpasswd and pgpass hints in one scan (each opens with `:`, which `re` factors
# out): when it finds none of them, none of the three rules can match.
_COLON_HINTS = re.compile("|".join(hint.pattern for hint in (_YAML_BLOCK_HINT, _HTPASSWD_HINT, _PGPASS_HINT)))


def _htpasswd(text: str, spans: list[Replacement]) -> None:
    if _HTPASSWD_HINT.search(text) is None:
        return
    spans.extend((m.start(1), m.end(1), PASSWORD_HASH) for m in _HTPASSWD.finditer(text))


def _pgpass(text: str, judge: ValueJudge, spans: list[Replacement]) -> None:
    if _PGPASS_HINT.search(text) is None:
        return
    for match in _PGPASS.finditer(text):
        fields = match.groups()
        host = fields[0]
        if all(_HEX_FIELD.fullmatch(f) for f in fields):
            continue  # an IPv6 address or a MAC, not a password file line
        if not (host == "*" or any(c.isalpha() for c in host) or host.count(".") == 3):
            continue
        if not (any(c.isalpha() for c in fields[2]) or fields[2] == "*") or not (
                any(c.isalpha() for c in fields[3]) or fields[3] == "*"):
            continue
        if judge.is_credential(fields[4]):
            spans.append((match.start(5), match.end(5), SECRET))


# --------------------------------------------------------------------------- HTTP auth literals, known clients

# `auth=(` / `auth=[` and the HTTP auth helpers' `(`: where a (user, password) pair of literals may follow.
_AUTH_OPENER = re.compile(r"auth[ \t]*=[ \t]*[(\[]|Auth[ \t]*\(")
_AUTH_HELPERS = ("HTTPBasic", "HTTPDigest", "HTTPProxy", "Basic", "Digest")
# Two string literals: a user, then the password (group 4).
_AUTH_PAIR = re.compile(
    r"[ \t]*[rbuRBU]?([\"'])((?:\\.|(?!\1)[^\\\n])*)\1[ \t]*,[ \t]*[rbuRBU]?([\"'])((?:\\.|(?!\3)[^\\\n])*)\3")
# A Twilio account SID literal, then the auth token literal (group 2).
_TWILIO_PAIR = re.compile(r"AC[0-9a-fA-F]{32}([\"'])[ \t]*,[ \t]*([\"'])([0-9a-fA-F]{32})\2")
_LOGIN_CALL = re.compile(r"\.login\([ \t]*([\"'`])([A-Za-z0-9_.\-]{50,100})\1[ \t]*\)")


def _name_char_before(text: str, at: int) -> bool:
    """Whether the character before ``at`` continues an identifier (``myauth=`` is another name than ``auth=``)."""
    return at > 0 and (text[at - 1].isalnum() or text[at - 1] == "_")


# Each spelling that lets the HTTP auth rule run holds one of these: one scan instead of three.
_AUTH_HINT = re.compile(r"uth(?:=| =|\()")


def _client_literals(text: str, judge: ValueJudge, spans: list[Replacement]) -> None:
    if _AUTH_HINT.search(text) is not None and ("auth=" in text or "auth =" in text or "Auth(" in text):
        for opener in _AUTH_OPENER.finditer(text):
            at = opener.start()
            if opener.group(0).startswith("Auth"):
                head = text[max(0, at - 10) : at]
                helper = next((h for h in _AUTH_HELPERS if head.endswith(h)), None)
                if helper is None or _name_char_before(text, at - len(helper)):
                    continue  # `FooBasicAuth(`: another class
            elif _name_char_before(text, at):
                continue  # `myauth=`: another name (`session.auth =` is the attribute, and counts)
            pair = _AUTH_PAIR.match(text, opener.end())
            if pair is not None and judge.is_credential(pair.group(4)):
                spans.append((pair.start(4), pair.end(4), SECRET))
    for match in _TWILIO_PAIR.finditer(text):  # a scan for its literal `AC`, no pre-check
        quote = text[match.start() - 1 : match.start()]
        if quote == match.group(1):
            spans.append((match.start(3), match.end(3), TWILIO))
    for match in _LOGIN_CALL.finditer(text):  # a scan for its literal `.login(`, no pre-check
        if judge.is_credential(match.group(2)):
            spans.append((match.start(2), match.end(2), SECRET))


# --------------------------------------------------------------------------- the pass


def redact_contexts(text: str, judge: ValueJudge, lowered: str | None = None) -> str:
    """``text`` with every credential found by its context replaced by a marker.

    ``lowered``, the caller's copy of ``text`` with (at least) its ASCII letters
    lowercased, if it has one, lets some rules rule a text out with fewer scans. ``text`` itself is returned when
    nothing is replaced.
    """
    spans: list[Replacement] = []
    colon_hint = _COLON_HINTS.search(text) is not None
    if colon_hint:
        _yaml_blocks(text, judge, spans)
    _dockerfile_env(text, judge, spans)
    _xml(text, judge, spans)
    _command_lines(text, judge, spans, lowered)
    _netrc(text, judge, spans)
    if colon_hint:
        _htpasswd(text, spans)
        _pgpass(text, judge, spans)
    _client_literals(text, judge, spans)
    return _apply(text, spans)

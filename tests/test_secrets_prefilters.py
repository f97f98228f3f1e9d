"""The strict scrub's shortcuts change its speed, never its output (issue #24).

The strict profile runs over every indexed file, so its passes skip work they
can prove useless: a pass is not run when a cheap scan finds none of its
triggers, long runs are found on a byte mask instead of with a regex, provider
literals are looked for in two levels, rules that open with a look-behind are
rewritten so ``re`` can scan for their prefix, and the keyed pass tries its
pattern only where a credential word starts.

Each test here checks one shortcut against the plain form it replaces, on
deterministic pseudo-random texts spliced from credential-shaped fragments
(every fake value is generated at run time), and fails if the shortcut ever
skips a change the plain form makes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest

from cce_core.secrets import contexts, scanner
from cce_core.secrets.rules import PROVIDER_RULES

ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
HEX = "0123456789abcdef"
# Characters around a spliced fragment: boundaries of every kind the rules look at.
SEPARATORS = ("", " ", "\n", "\t", "=", ":", "'", '"', "x", "_", "-", ".", "/", "(", ")", "<", ">", "\r\n", "é",
              "\u017f", "\u212a", "\u0130", "\udc80", "    ")
LONG_RUN_RE = re.compile(r"[A-Za-z0-9_\-+/=.~:]{20,}+")


def _value(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _fragments(rng: random.Random) -> list[str]:
    """Credential-shaped fragments: provider tokens, URLs, keyed values and every context the passes know."""
    v = lambda n=12, a=ALNUM: _value(rng, n, a)  # noqa: E731
    fragments = [literal + v(rng.choice((8, 20, 36, 48, 70))) for rule in PROVIDER_RULES for literal in rule.literals]
    fragments += [
        "SK" + v(32, HEX), "MT" + v(24) + "." + v(6) + "." + v(30), "123456789:AA" + v(33), "abc1Q~" + v(32),
        "https://" + v(32, HEX) + "@o1.ingest.example.io/123", "AccountKey=" + v(40) + "==", "?sig=" + v(30),
        "-----BEGIN RSA PRIVATE KEY-----\n" + v(64) + "\n-----END RSA PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----",
        "postgres://admin:" + v() + "@db.example.com/x", "redis://:" + v(16) + "@cache:6379",
        "DB_PASSWORD=" + v(14), 'password = "' + v() + '"', '"api_key": "' + v(24) + '"', "token: " + v(20),
        "clientSecret => '" + v(16) + "'", "define('DB_PASSWORD', '" + v() + "');", "secret_key = " + v(20) + "  # x",
        "<password>" + v() + "</password>", "<db:Password>" + v() + "</db:Password>", "<X_TOKEN>" + v() + "</X_TOKEN>",
        "<api\u212aey>" + v() + "</api\u212aey>", '<property name="db.password" value="' + v() + '"/>',
        '<add key="SmtpPassword" value="' + v() + '"/>', '<string name="api_key">' + v(20) + "</string>",
        "password: |\n  " + v(20) + "\n  " + v(8) + "\n", "api_token: >-\n    " + v(20) + "\n",
        "ENV DB_PASSWORD " + v(16), "curl -u admin:" + v() + " https://x", "curl --user :" + v(20) + " x",
        "mysql -uroot -p" + v() + " db", "mysqldump -p'" + v(10) + "' x", "mariadb -p" + v(9), "mariadb-dump -p" + v(9),
        "sqlplus scott/" + v(10) + "@orcl", "SQLPLUS scott/" + v(10), "CONNECT scott/" + v(10) + "@db",
        "CONN u/" + v(8), "conn " + v(5) + "/" + v(8), "docker login -p " + v(14) + " reg", "run --api-token " + v(20),
        "--db-pass " + v(10), "machine h.com login u password " + v(),
        "machine h.com\n  login u\n  password " + v() + "\n",
        "admin:$apr1$" + v(8) + "$" + v(22), "user:{SHA}" + v(27, ALNUM + "+/") + "=", "u:{SSHA}" + v(24),
        "db.host:5432:mydb:alice:" + v(), "*:*:*:postgres:" + v(), "auth=('admin', '" + v() + "')",
        "s.auth = ('u', \"" + v() + "\")", "auth =[\"u\", \"" + v(10) + "\"]", "HTTPBasicAuth('u', '" + v() + "')",
        "DigestAuth('a', '" + v(10) + "')", "'AC" + v(32, HEX) + "', '" + v(32, HEX) + "'",
        "client.login('" + v(60) + "')", "[REDACTED:SECRET]" + v(10), "password=[REDACTED:SECRET]",
        "\u017fecret=" + v(), "\u212aey=" + v(), "PASSWORD=" + v(), "Password: " + v(9) + " " + v(5),
        "pwd='" + v(8) + "'",
    ]
    filler = ["def f(x):\n    return x\n", "const a = b ? c : d;", "x: int = 1", "// ---------------- //",
              "key: value", "if (a < b && c > d) {}", "import os", "<div class=\"a\">t</div>", "a -- b", "<T>"]
    return fragments + filler


def _texts(seed: int, count: int) -> Iterator[str]:
    """``count`` deterministic texts, each one to eight fragments (sometimes cut, recased) between separators."""
    rng = random.Random(seed)
    fragments: list[str] = []
    for i in range(count):
        if i % 40 == 0:
            fragments = _fragments(rng)  # fresh values now and then (building them is the slow part)
        pieces = []
        for _ in range(rng.randint(1, 8)):
            fragment = rng.choice(fragments)
            roll = rng.random()
            if roll < 0.15:
                fragment = fragment.upper()
            elif roll < 0.3:
                fragment = fragment.lower()
            elif roll < 0.45:
                fragment = fragment[: rng.randint(1, len(fragment))]
            pieces.append(rng.choice(SEPARATORS) + fragment + rng.choice(SEPARATORS))
        yield "".join(pieces)


# --------------------------------------------------------------------------- the provider pass


def test_rules_opening_with_a_look_behind_are_rewritten_to_the_same_matches():
    rewritten = [(re.compile(rule.regex), pattern, rule) for pattern, rule in scanner._PROVIDERS
                 if pattern.pattern != rule.regex]
    assert len(rewritten) >= 8  # TWILIO, MAILGUN, NPM, DISCORD, AWS, ...: the shortcut is in use
    rng = random.Random(24)
    matches = 0
    for plain, fast, rule in rewritten:
        for _ in range(300):
            pieces = []
            for _ in range(rng.randint(1, 4)):
                literal = rng.choice(rule.literals)
                body = _value(rng, rng.randint(16, 60), rng.choice((ALNUM, HEX, ALNUM.upper(), ALNUM + "_-.")))
                dots = "." + _value(rng, 6) + "." + _value(rng, 30) if rng.random() < 0.3 else ""
                pieces.append(rng.choice(SEPARATORS) + literal + body + dots + rng.choice(SEPARATORS))
            text = "".join(pieces)
            expected = [m.span() for m in plain.finditer(text)]
            assert [m.span() for m in fast.finditer(text)] == expected, (rule.label, text)
            matches += len(expected)
    assert matches > 100


def test_long_runs_are_the_regex_runs():
    rng = random.Random(7)
    alphabet = ALNUM + "_-+/=.~:" + " \n\t()<>'\"é\u212a\udc80,;@"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) if rng.random() < 0.2 else rng.choice(ALNUM + "_-.:")
                       for _ in range(rng.randint(0, 300)))
        assert scanner.long_runs(text) == "\n".join(dict.fromkeys(LONG_RUN_RE.findall(text))), text


def test_literal_finders_find_exactly_the_rules_with_a_literal():
    run_rules = [(index, rule) for index, rule in enumerate(PROVIDER_RULES) if index not in scanner._TEXT_RULES]
    literals = [literal for _, rule in run_rules for literal in rule.literals]
    rng = random.Random(11)
    for _ in range(3000):
        pieces = [rng.choice(literals) for _ in range(rng.randint(0, 4))]
        pieces = [p[: rng.randint(1, len(p))] if rng.random() < 0.4 else p for p in pieces]  # near misses
        runs = "\n".join(_value(rng, rng.randint(0, 6)) + p + _value(rng, rng.randint(0, 6)) for p in pieces)
        found = {index for any_of_them, finders in scanner._RUN_FINDERS if any_of_them(runs) is not None
                 for search, index in finders if search(runs) is not None}
        assert found == {index for index, rule in run_rules if any(lit in runs for lit in rule.literals)}, runs


def _providers_by_definition(text: str) -> str:
    """The provider pass as specified: a rule runs when one of its literals occurs in a long run of the
    original text (a rule with a literal outside the run characters: in the text as it is then), and a
    ``within_runs`` rule only when its regex matches in those runs."""
    runs = "\n".join(LONG_RUN_RE.findall(text))
    for rule in PROVIDER_RULES:
        in_text = any(ch not in scanner._RUN_CHARS for literal in rule.literals for ch in literal)
        if not any(literal in (text if in_text else runs) for literal in rule.literals):
            continue
        pattern = re.compile(rule.regex)
        if rule.within_runs and pattern.search(runs) is None:
            continue
        placeholder = f"[REDACTED:{rule.label}]"
        text = pattern.sub(scanner._replace_group(placeholder) if rule.group else placeholder, text)
    return text


def test_provider_pass_equals_its_definition():
    changed = 0
    for text in _texts(seed=1, count=3000):
        expected = _providers_by_definition(text)
        assert scanner._redact_providers(text) == expected, text
        changed += expected != text
    assert changed > 500


# --------------------------------------------------------------------------- the keyed pass


def test_keyed_pass_tries_every_place_a_key_can_start(monkeypatch):
    texts = list(_texts(seed=2, count=3000))
    for text in texts:
        lowered = scanner._lowered(text)
        starts = set(scanner._key_word_starts(lowered))
        assert all(p in starts for p in range(len(lowered)) if scanner._KEY_HIT.match(lowered, p)), text
    fast = [scanner._redact_keyed(text) for text in texts]
    assert sum(a != b for a, b in zip(fast, texts, strict=True)) > 500
    monkeypatch.setattr(scanner, "_key_word_starts", lambda lowered: list(range(len(lowered))))
    assert [scanner._redact_keyed(text) for text in texts] == fast
    monkeypatch.setattr(scanner, "_key_word_starts", lambda lowered: None)  # dense words: `re` searches the text
    assert [scanner._redact_keyed(text) for text in texts] == fast


def test_dense_credential_words_fall_back_to_searching():
    assert scanner._key_word_starts("key " * 1000) is None
    assert scanner._key_word_starts("a key = value\n" * 10) == [2 + 14 * i for i in range(10)]
    dense = "key key token=" + "x9" * 8 + "\n" + "keyboard " * 500 + 'password: "' + "q7" * 6 + '"\n'
    assert scanner._redact_keyed(dense).count("[REDACTED:SECRET]") == 2


# --------------------------------------------------------------------------- the context pass

# Each pre-check of the context pass, and a stand-in that always says "maybe": with it, the rules always run.
ALWAYS = re.compile("")
CONTEXT_PRECHECKS = [
    ("_COLON_HINTS", ALWAYS),
    ("_CREDENTIAL_CLOSING_TAG", ALWAYS),
    ("_MYSQL_HINT", ALWAYS),
    ("_AUTH_HINT", ALWAYS),
    ("_SQLPLUS_LOWERED_HINTS", ("",)),
]


@pytest.mark.parametrize(("name", "always"), CONTEXT_PRECHECKS, ids=[name for name, _ in CONTEXT_PRECHECKS])
def test_context_prechecks_skip_only_texts_their_rules_leave_alone(monkeypatch, name, always):
    texts = list(_texts(seed=3, count=4000))
    judge = scanner._CONTEXT_JUDGE
    checked = [contexts.redact_contexts(text, judge, scanner._lowered(text)) for text in texts]
    monkeypatch.setattr(contexts, name, always)
    unchecked = [contexts.redact_contexts(text, judge, scanner._lowered(text)) for text in texts]
    for text, fast, plain in zip(texts, checked, unchecked, strict=True):
        assert fast == plain, text
    assert sum(a != b for a, b in zip(checked, texts, strict=True)) > 300


def test_context_pass_without_a_lowered_copy_is_the_same():
    judge = scanner._CONTEXT_JUDGE
    for text in _texts(seed=4, count=2000):
        assert contexts.redact_contexts(text, judge) == contexts.redact_contexts(text, judge, scanner._lowered(text))


def test_strict_profile_is_its_passes_in_order():
    for text in _texts(seed=5, count=2000):
        step = scanner._redact_url_credentials(scanner._redact_providers(text))
        expected = scanner._redact_keyed(contexts.redact_contexts(step, scanner._CONTEXT_JUDGE))
        assert scanner.redact_strict(text) == expected, text

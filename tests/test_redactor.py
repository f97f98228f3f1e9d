"""Layer 2: secret redaction must match the reference engine byte for byte.

Secret-shaped inputs are joined from fragments at run time so this file never
holds a contiguous, real-format credential (push-protection scanners block those).
"""

from __future__ import annotations

import pytest

from cce_core.secrets import redactor
from cce_core.secrets.redactor import redact

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
STRIPE_KEY = "sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
GH_TOKEN = "ghp" + "_" + "0123456789abcdefghijklmnopqrstuvwx01"
OPENAI_KEY = "sk-" + "abcdefghijklmnopqrstuvwxyz012345ABCD"
ANTHROPIC_KEY = "sk-ant-" + "api03_abcdefghijklmnopqrstuvwxyz0123"
SLACK_TOKEN = "xoxb-" + "1234567890-abcdefABCDEF"
GOOGLE_KEY = "AIza" + "SyA1234567890abcdefghijklmnopqrstuv"
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0" + "." + "abcDEF123456"
PRIVATE_KEY_BLOCK = "-----BEGIN RSA PRIVATE " + "KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE " + "KEY-----"

GOLDEN = [
    (f'AWS = "{AWS_KEY}"', 'AWS = "[REDACTED:AWS_ACCESS_KEY]"'),
    (f'key = "{STRIPE_KEY}"', 'key = "[REDACTED:STRIPE_KEY]"'),
    # The specific label survives: the generic pass must not turn it into SECRET.
    (f'token = "{GH_TOKEN}"', 'token = "[REDACTED:GITHUB_TOKEN]"'),
    (f"OPENAI={OPENAI_KEY}", "OPENAI=[REDACTED:OPENAI_KEY]"),
    # The Anthropic pattern runs before the broader OpenAI one.
    (f"A={ANTHROPIC_KEY}", "A=[REDACTED:ANTHROPIC_KEY]"),
    (f"SLACK={SLACK_TOKEN}", "SLACK=[REDACTED:SLACK_TOKEN]"),
    (f"G={GOOGLE_KEY}", "G=[REDACTED:GOOGLE_API_KEY]"),
    (JWT, "[REDACTED:JWT]"),
    (PRIVATE_KEY_BLOCK, "[REDACTED:PRIVATE_KEY]"),
    ('password = "hunter2secret"', 'password = "[REDACTED:SECRET]"'),
    ("api_key: s3cr3tvalue", "api_key: [REDACTED:SECRET]"),
]

PLACEHOLDER_SECRETS = [
    "your-token-here",
    "changeme",
    "placeholder",
    "dummy-value",
    "test-secret",
    "sample-key",
    "xxxxxxxx",
    "example-value",
]
PLACEHOLDER_PASSWORDS = [
    "${DB_PASSWORD}",
    "<your-secret>",
    "{{token}}",
    "null",
    "nil",
    "none",
    "true",
    "false",
    "--------",
]

UNCHANGED = [
    'key = "your-api-key"',
    "password = short12",
    'token = "abc"',
    "DATABASE_URL=postgres://user:password@localhost/app",
    *(f'secret = "{v}"' for v in PLACEHOLDER_SECRETS),
    *(f"password = {v}" for v in PLACEHOLDER_PASSWORDS),
]


@pytest.mark.parametrize(("text", "expected"), GOLDEN)
def test_golden_vectors(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("text", UNCHANGED)
def test_guarded_and_short_values_are_left_alone(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("text", [t for t, _ in GOLDEN] + UNCHANGED)
def test_redaction_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


def test_value_length_counts_utf8_bytes() -> None:
    # 7 code points but 11 bytes: long enough to be a secret.
    assert redact("password=ééééabc") == "password=[REDACTED:SECRET]"
    assert redact("password=abcdefg") == "password=abcdefg"
    assert redact("password=abcdefgh") == "password=[REDACTED:SECRET]"


def test_info_separator_is_not_whitespace() -> None:
    # Python's \s would treat \x1c as whitespace and leave it outside the value.
    assert redact("password=\x1cabcdefghij") == "password=[REDACTED:SECRET]"


def test_unicode_whitespace_around_the_operator() -> None:
    assert redact("secret\u3000:\u00a0'abcdefghij'") == "secret\u3000:\u00a0'[REDACTED:SECRET]'"
    assert redact("password:\n  hunter2hunter2") == "password:\n  [REDACTED:SECRET]"


def test_word_boundary_before_the_key() -> None:
    # `_` is a word character, so prefixed env names are not generic matches.
    assert redact("DB_PASSWORD=abcdefghijkl") == "DB_PASSWORD=abcdefghijkl"
    assert redact("AWS_SECRET_ACCESS_KEY=abcdefghijkl") == "AWS_SECRET_ACCESS_KEY=abcdefghijkl"
    assert redact('export SECRET_KEY="abcdefghijk"') == 'export SECRET_KEY="[REDACTED:SECRET]"'
    assert redact('API_KEY = "abcdefghijk"') == 'API_KEY = "[REDACTED:SECRET]"'


# Expected values below were checked against the reference engine's own regexes.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("épassword=abcdefghij", "épassword=abcdefghij"),  # letter: word character
        ("a\u0301password=abcdefghij", "a\u0301password=abcdefghij"),  # combining mark: word character
        ("\u203fpassword=abcdefghij", "\u203fpassword=abcdefghij"),  # connector punctuation
        ("\u24b6password=abcdefghij", "\u24b6password=abcdefghij"),  # circled letter (Other_Alphabetic)
        ("\U00011380password=abcdefghij", "\U00011380password=abcdefghij"),  # letter new in Unicode 16
        ("²password=abcdefghij", "²password=[REDACTED:SECRET]"),  # superscript digit: not a word character
        # A key rejected for its neighbour must not hide a later match.
        ("étoken=abc-password=abcdefghij", "étoken=abc-password=[REDACTED:SECRET]"),
    ],
)
def test_unicode_word_boundary_matches_reference(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_case_insensitive_keys_use_rust_folding() -> None:
    assert redact("PASSWORD=abcdefghij") == "PASSWORD=[REDACTED:SECRET]"
    # Long s folds to s and the Kelvin sign to k ...
    assert redact("\u017fecret=abcdefghij") == "\u017fecret=[REDACTED:SECRET]"
    assert redact("api_\u212aey=abcdefghij") == "api_\u212aey=[REDACTED:SECRET]"
    # ... but dotless i does not fold to i (Python's re.IGNORECASE would match it).
    assert redact("ap\u0131_key=abcdefghij") == "ap\u0131_key=abcdefghij"
    assert redact("pr\u0130vate_key=abcdefghij") == "pr\u0130vate_key=abcdefghij"


def test_guard_details() -> None:
    assert redact("password = [REDACTED:whatever]") == "password = [REDACTED:whatever]"
    assert redact('secret: "xXxXxXxX"') == 'secret: "xXxXxXxX"'  # prefix check is case-insensitive
    assert redact("TOKEN: YOUR_TOKEN_HERE") == "TOKEN: YOUR_TOKEN_HERE"
    assert redact("token: aaaaaaaaaaaa") == "token: aaaaaaaaaaaa"  # one repeated character
    assert redact("token: ababababab") == "token: [REDACTED:SECRET]"
    # Interpolation must start AND end the value.
    assert redact("passwd=${X}abcdefgh") == "passwd=[REDACTED:SECRET]"


def test_private_key_blocks_are_matched_lazily() -> None:
    second = "-----BEGIN EC PRIVATE " + "KEY-----\nb\n-----END EC PRIVATE " + "KEY-----"
    text = f"{PRIVATE_KEY_BLOCK}\nkeep me\n{second}\n"
    assert redact(text) == "[REDACTED:PRIVATE_KEY]\nkeep me\n[REDACTED:PRIVATE_KEY]\n"


def test_config_module_from_the_fixture() -> None:
    text = f'module Config\n  AWS = "{AWS_KEY}"\n  API_KEY = "your-api-key-here"\n  STRIPE = "{STRIPE_KEY}"\nend\n'
    expected = (
        'module Config\n  AWS = "[REDACTED:AWS_ACCESS_KEY]"\n  API_KEY = "your-api-key-here"\n'
        '  STRIPE = "[REDACTED:STRIPE_KEY]"\nend\n'
    )
    assert redact(text) == expected


def test_text_without_triggers_is_returned_unchanged() -> None:
    assert redact("") == ""
    plain = "def add(a, b):\n    return a + b\n"
    assert redact(plain) == plain


@pytest.mark.parametrize(
    "text",
    [t for t, _ in GOLDEN]
    + UNCHANGED
    + ["\u017fecret=abcdefghij", "api_\u212aey=abcdefghij", "no operator password here", "x:\n"],
)
def test_fast_path_never_changes_the_result(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = redact(text)
    monkeypatch.setattr(redactor, "_may_hold_assignment", lambda _text: True)
    slow_specific = [(pattern, placeholder, ("",)) for pattern, placeholder, _ in redactor._SPECIFIC]
    monkeypatch.setattr(redactor, "_SPECIFIC", tuple(slow_specific))
    assert redact(text) == fast

"""The two secrets profiles: strict (default) closes the family's leaks; family keeps the other engines' bytes.

Unit level: every one of the 99 corpus formats is scrubbed in process with the
label it should get; the reference's later leak fixes (#104 quotes inside
values, #142 same-delimiter tails and specific-prefix tails) hold; ordinary code
is not mangled; ``scrub`` counts what it replaced. Profile level: the setting
is parsed from ``.cce/config``; the goldens (Sync artifact checksum of the
samples fixture, conformance) are identical under both profiles because their
fixtures hold no secrets.
"""

from __future__ import annotations

import pytest
from secret_formats import FORMATS, tail

from cce_core.foundation.config import parse_config
from cce_core.secrets.redactor import FAMILY, STRICT, redact, redact_with, scrub
from cce_core.secrets.scanner import is_placeholder, is_secret_key, redact_strict

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"

EXPECTED_LABEL = {
    "aws access key id (ini)": "AWS_ACCESS_KEY", "aws session key id (code)": "AWS_ACCESS_KEY",
    "github fine-grained pat": "GITHUB_TOKEN", "gitlab glpat": "GITLAB_TOKEN", "slack webhook": "SLACK_WEBHOOK",
    "stripe restricted key": "STRIPE_KEY", "stripe webhook secret": "STRIPE_KEY", "openai project key": "OPENAI_KEY",
    "openai service account key": "OPENAI_KEY", "pgp private key block": "PRIVATE_KEY",
    "service account private key (json \\n)": "PRIVATE_KEY", "azure storage account key": "AZURE_KEY",
    "azure client secret": "AZURE_KEY", "azure sas sig": "AZURE_SAS", "twilio api key": "TWILIO_KEY",
    "sendgrid key": "SENDGRID_KEY", "mailgun key": "MAILGUN_KEY", "hugging face token": "HUGGINGFACE_TOKEN",
    "shopify access token": "SHOPIFY_TOKEN", "npmrc _authToken npm_": "NPM_TOKEN", "password in json": "SECRET",
    "DB_PASSWORD in envrc": "SECRET", "ENV DB_PASSWORD in Dockerfile": "SECRET",
    "password with spaces (yaml)": "SECRET", "password starting with test": "SECRET",
    "php define DB_PASSWORD": "SECRET", "postgres url": "SECRET", "mongodb+srv url": "SECRET",
    "redis url": "SECRET", "mysql url": "SECRET", "client_secret in json": "SECRET",
    "terraform.tfvars password": "SECRET", "docker config.json auths": "SECRET",
    "authorization basic (http file)": "SECRET", "authorization bearer (curl in docs)": "SECRET",
    "generic token single-quoted": "SECRET",
    # issue #23: found by where they sit
    "yaml block scalar after password: |": "SECRET", "dockerfile ENV space form": "SECRET",
    "maven settings.xml password element": "SECRET", "hibernate connection password property": "SECRET",
    "spring bean password property value": "SECRET", ".NET appSettings key/value password": "SECRET",
    "curl -u user:password": "SECRET", "mysql -pPASSWORD": "SECRET", "sqlplus user/password@host": "SECRET",
    "netrc lines in another file": "SECRET", "netrc block in a heredoc": "SECRET",
    "htpasswd apr1 line": "PASSWORD_HASH", "htpasswd bcrypt line": "PASSWORD_HASH",
    "htpasswd sha line": "PASSWORD_HASH",
    "pgpass line": "SECRET", "pgpass wildcard line": "SECRET", "requests auth tuple": "SECRET",
    "twilio client positional token": "TWILIO_KEY", "discord client.login token": "DISCORD_TOKEN",
    "gcp private_key_id": "SECRET", "sentry dsn key (js)": "SENTRY_DSN",
    "sentry dsn key (python, self-hosted)": "SENTRY_DSN",
}


# --------------------------------------------------------------------------- every format


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.name for f in FORMATS])
def test_strict_scrubs_every_corpus_format(fmt):
    result = scrub(fmt.text, STRICT)
    assert fmt.secret not in result.text and tail(fmt.secret) not in result.text, result.text
    assert sum(result.counts.values()) >= 1
    if fmt.name in EXPECTED_LABEL:
        assert EXPECTED_LABEL[fmt.name] in result.counts, result.counts
    assert redact_strict(result.text) == result.text  # idempotent


def test_the_family_set_still_leaks_most_of_the_corpus():
    leaks = [f.name for f in FORMATS if f.secret in redact(f.text) or tail(f.secret) in redact(f.text)]
    assert len(leaks) >= 35  # why strict is the default (issue #15 counted 41 of 70)


# --------------------------------------------------------------------------- reference fixes #104 and #142

FIX_VECTORS = [
    # #104: a quote inside the value must not cut it short.
    ("password = don't-tell-anyone-secretvalue", "password = [REDACTED:SECRET]"),
    ('password = "abcdefghij\'tail-super-secret"', 'password = "[REDACTED:SECRET]"'),
    ("api_key='qwertyuiop-secret'", "api_key='[REDACTED:SECRET]'"),
    ("password = 'abcdefghij\"tail-super-secret'", "password = '[REDACTED:SECRET]'"),
    ('password = "correct horse battery staple"', 'password = "[REDACTED:SECRET]"'),
    ('password = "a1b2c3d4e5" token = "f6g7h8i9j0"', 'password = "[REDACTED:SECRET]" token = "[REDACTED:SECRET]"'),
    ('password = "abcdefghij\ntoken = "klmnopqrst"', 'password = "[REDACTED:SECRET]\ntoken = "[REDACTED:SECRET]"'),
    # #142: same-style inner quotes, escapes, doubled quotes, glued tails.
    ("password = 'abcdefghij'tail-super-secret'", "password = '[REDACTED:SECRET]'"),
    ('password = "abcdefghij\\"tail-super-secret"', 'password = "[REDACTED:SECRET]"'),
    ("password = 'abcdefgh'mid'tail-super-secret'", "password = '[REDACTED:SECRET]'"),
    ("password = `abcdefghij`tail-super-secret`", "password = `[REDACTED:SECRET]`"),
    ("password = 'abcdefghij''tail-super-secret'", "password = '[REDACTED:SECRET]'"),
    ("password = 'abc''realsecret-here'", "password = '[REDACTED:SECRET]'"),
    ('password = "abcdefghij""tail-super-secret"', 'password = "[REDACTED:SECRET]"'),
    ('password = "changeme", token = "realsecrettail123"', 'password = "changeme", token = "[REDACTED:SECRET]"'),
    ('{password: "abcdefghij", host: "publicdb"}', '{password: "[REDACTED:SECRET]", host: "publicdb"}'),
    ('password = "abcdefghij".freeze', 'password = "[REDACTED:SECRET]".freeze'),
    ('password = "x".freeze', 'password = "x".freeze'),
    ('password = "p@ss,realsecret,longenough"', 'password = "[REDACTED:SECRET]"'),
    ('password="changeme"token="ZmaskH-mergesecret42"', 'password="[REDACTED:SECRET]"'),
    ("password = 'abcdefghij'.ZdotM-tailsecret42'", "password = '[REDACTED:SECRET]'"),
    ("password = 'abcdefghij'\u00e9ZuniE-leaksecret777'", "password = '[REDACTED:SECRET]'"),
    # #142: a value that only begins with a provider marker is scrubbed again.
    (f'password = "{AWS_KEY}suffix-secret"', 'password = "[REDACTED:SECRET]"'),
    (f"password = {AWS_KEY}suffix-secret", "password = [REDACTED:SECRET]"),
]


@pytest.mark.parametrize(("text", "expected"), FIX_VECTORS)
def test_reference_leak_fixes(text, expected):
    assert redact_strict(text) == expected


@pytest.mark.parametrize("text", ['password = ""', "password = ''", 'password = "', "password =",
                                  'password = "changeme"', 'api_key = "<your-api-key>"', 'secret = "${VAULT_SECRET}"'])
def test_empty_and_placeholder_values_are_untouched(text):
    assert redact_strict(text) == text


# --------------------------------------------------------------------------- no false positives

ORDINARY_CODE = [
    "password = get_password()",
    "token = request.token",
    "self.token = token",
    'api_key = os.environ["API_KEY"]',
    "secret = config.secret_key",
    "token: string;",
    "password: str = Field(...)",
    "secret: SecretStr = Field(default=None)",
    "const token = await getToken();",
    "if token == expected_token:",
    "def check(password: str) -> bool:",
    "tokens = tokenize(text)",
    'token_url = "https://example.com/oauth/token"',
    "max_tokens = 4096",
    "apiKey: process.env.API_KEY,",
    'headers = {"Authorization": f"Bearer {token}"}',
    "headers: { Authorization: `Bearer ${token}` }",
    "password: ${{ secrets.DB_PASSWORD }}",
    'token_type = "Bearer"',
    "auth = HTTPBasicAuth(user, pw)",
    "// First pass: collect every schema",
    "pass_block = returned_pass_block if returned_pass_block",
    "token = if path && method",
    "yytoken = YYTRANSLATE (yychar);",
    "ls->t.token = 0;  /* remove the token */",
    "get '/admin', :auth => :admin do",
    "DATABASE_URL=postgres://user:password@localhost/app",
    "url = 'http://localhost:8080/@me'",
    "password = user.password",
    "api_key = settings.API_KEY",
    "skip_secret_key_base: environment_specified? && %w[development test].include?(environment),",
    "username, password = authenticate_with_http_basic do |username, password|",
    'verifier = ActiveSupport::MessageVerifier.new("secret", serializer: JSON)',
    'secret_generator = -> { salt + "!" }',
    'self.primary_key = "id_column"',
    'AUTH = "def hash_password(pw):\n    return pw"',
    " 1. [0.878300] auth.py:3-4 (function/function_definition)",
    'Question("q1", "Q q1", ("auth.py", "hash_password"))',
    "# no token: no result at all, so a miss with no savings",
    # issue #23's contexts, where they hold no credential
    "ENV PATH /usr/local/bin:$PATH",
    "ENV DB_PASSWORD_FILE /run/secrets/db_password",
    "ENV API_TOKEN ${API_TOKEN}",
    "ENV=production node server.js",
    "the ENV variable decides, e.g. ENV production",
    "password: |\n  ${DB_PASSWORD}\nuser: app",
    "description: |\n  Rotate the password every 90 days.\n",
    "<password>${db.password}</password>",
    "<password></password>",
    '<property name="hibernate.connection.username">app_user_name</property>',
    '<input type="password" name="password" value="" />',
    '<input name="password" value="{{ form.password }}">',
    '<column name="password_hash" type="varchar(255)"/>',
    '<label for="token">Paste your token here</label>',
    "curl -u $USER:$API_TOKEN https://api.example.com",
    "curl -u user:password https://example.com",
    "curl -fsSL https://get.example.sh | sh -s -- -u admin",
    "mysql -u root -p shop",
    "mysql -u root -p$MYSQL_ROOT_PASSWORD shop",
    "sqlplus / as sysdba",
    "sqlplus $DB_USER/$DB_PASS@$DB_HOST",
    "we connect to/from the server",
    "docker login -u $USER -p $TOKEN registry.example.com",
    "echo $TOKEN | docker login --password-stdin registry.example.com",
    "cli --token-file /run/secrets/token --api-key-env API_KEY",
    "  --secret-name my-app-secret \\",
    "machine learning models log in with a password reset flow",
    "machine example.com login anonymous password $NETRC_PASSWORD",
    "fe80:1:ab:cd:ef12",
    "12:30:45:67:89",
    "host:5432:db:user:${PGPASSWORD}",
    "session.auth = (user, password)",
    'auth=("user", os.environ["PASSWORD"])',
    "client = Client(account_sid, auth_token)",
    "client.login(process.env.DISCORD_TOKEN);",
    '"private_key_id": "your-private-key-id"',
    'dsn: "https://public@sentry.example.com/1"',
    "time 12:00:00 price $1$ each",
]


@pytest.mark.parametrize("text", ORDINARY_CODE)
def test_ordinary_code_is_not_mangled(text):
    assert redact_strict(text) == text


@pytest.mark.parametrize(("identifier", "secret"), [
    ("DB_PASSWORD", True), ("AWS_SECRET_ACCESS_KEY", True), ("clientSecret", True), ("_authToken", True),
    ("api_key", True), ("accessKey", True), ("secret_key_base", True), ("DB_PASS", True), ("identitytoken", True),
    ("token_url", False), ("tokenizer", False), ("max_tokens", False), ("pass", False), ("pass_block", False),
    ("session_key", False), ("password_file", False), ("user", False),
])
def test_secret_key_names(identifier, secret):
    assert is_secret_key(identifier) is secret


@pytest.mark.parametrize(("value", "placeholder"), [
    ("your-api-key-here", True), ("CHANGE_ME", True), ("${DB_PASSWORD}", True), ("<secret>", True),
    ("********", True), ("[REDACTED:SECRET]", True), ("Bearer {token}", True), ("test-secret", True),
    ("testPassw0rd!", False), ("hunter2secret", False), ("[REDACTED:AWS_ACCESS_KEY]suffix-secret", False),
])
def test_placeholders(value, placeholder):
    assert is_placeholder(value) is placeholder


# --------------------------------------------------------------------------- profiles and counts


def test_family_profile_is_the_family_redactor_byte_for_byte():
    samples = [f.text for f in FORMATS] + ORDINARY_CODE + [t for t, _ in FIX_VECTORS]
    for text in samples:
        assert redact_with(text, FAMILY) == redact(text)
        assert scrub(text, FAMILY).text == redact(text)


def test_scrub_counts_added_markers_by_label():
    text = f'AWS = "{AWS_KEY}"\npassword = "hunter2secret"\nnote = "[REDACTED:SECRET] already"\n'
    assert scrub(text, STRICT).counts == {"AWS_ACCESS_KEY": 1, "SECRET": 1}
    assert scrub(text, FAMILY).counts == {"AWS_ACCESS_KEY": 1, "SECRET": 1}
    assert scrub("nothing here", STRICT).counts == {}


def test_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="unknown secrets profile"):
        redact_with("x", "lenient")


@pytest.mark.parametrize(("text", "profile"), [
    ("", "strict"), ("secrets:\n  profile: family\n", "family"), ("secrets:\n  profile: FAMILY\n", "family"),
    ("secrets:\n  profile: strict\n", "strict"), ("secrets:\n  profile: lenient\n", "strict"),
    ("secrets: [1, 2]\n", "strict"), ("secrets:\n  profile: [x]\n", "strict"),
])
def test_config_secrets_profile(text, profile):
    assert parse_config(text).secrets_profile == profile


def test_goldens_are_the_same_under_both_profiles(host):
    """The samples fixture holds no secrets: the Sync golden checksum does not depend on the profile."""
    import json

    from test_sync_artifact import GOLDEN_SAMPLES_CHECKSUM, ZERO_SHA, _lines, _reference_fixture

    from cce_core.indexing.indexer import build_index
    from cce_core.sync.artifact import export_artifact, pack_module_suffixes

    suffixes = pack_module_suffixes(host)
    embedder = host.embedder("hash")
    for profile in (FAMILY, STRICT):
        data, stats = build_index(_reference_fixture("samples"), host, embedder, secrets_profile=profile)
        raw = export_artifact(data, "cce/demo", ZERO_SHA, suffixes)
        assert json.loads(_lines(raw)[0])["checksum"] == GOLDEN_SAMPLES_CHECKSUM, profile
        assert stats.redactions == {}


def test_conformance_uses_the_family_redactor():
    from cce_core.evaluation import conformance

    assert conformance.redact is redact

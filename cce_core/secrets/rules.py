"""The strict secrets profile's rule table: provider token formats and the words of keyed secrets.

The family redactor (``redactor.redact``) knows nine provider formats and one
``key = value`` shape. The strict profile (the default) adds the token formats
that well-kept scanners recognise by their fixed prefixes (the rule families of
gitleaks and detect-secrets, taken as facts and written out here), plus the
vocabulary its keyed-value scanner needs: which identifier parts name a secret,
which last parts mean "this is about a secret, not the secret" (``token_url``),
and which words make a value a documentation placeholder.

This module is data only; :mod:`cce_core.secrets.scanner` applies it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProviderRule:
    """One provider format: ``regex`` is replaced by ``[REDACTED:<label>]``.

    ``group`` 0 replaces the whole match; 1 replaces only the first group (the
    value after a key that stays readable, e.g. ``AccountKey=``). The regex runs
    only when one of ``literals`` occurs in the text (a cheap pre-check).
    ``within_runs``: the whole token is made of run characters, so the regex
    is first tried on the text's long runs alone (for a rule whose literals
    are too common to pre-check anything).
    """

    label: str
    regex: str
    literals: tuple[str, ...]
    group: int = 0
    within_runs: bool = False


_B64 = "A-Za-z0-9+/"
_NOT_TOKEN_BEFORE = r"(?<![A-Za-z0-9_])"
_NOT_TOKEN_AFTER = r"(?![A-Za-z0-9_])"

# Order matters where formats nest: Anthropic (sk-ant-) before OpenAI (sk-),
# whole private-key blocks before everything that could match inside them.
PROVIDER_RULES: tuple[ProviderRule, ...] = (
    ProviderRule(
        "PRIVATE_KEY",
        r"-----BEGIN[A-Z0-9 _-]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END[A-Z0-9 _-]*PRIVATE KEY(?: BLOCK)?-----",
        ("PRIVATE KEY",),
    ),
    # A block cut off before its END line (a truncated paste, a key split across files).
    ProviderRule(
        "PRIVATE_KEY",
        r"-----BEGIN[A-Z0-9 _-]*PRIVATE KEY(?: BLOCK)?-----(?:[ \t]*(?:\\n|\r?\n)?[A-Za-z0-9+/=:,. \t-]*)*",
        ("PRIVATE KEY",),
    ),
    ProviderRule("PRIVATE_KEY", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", ("AGE-SECRET-KEY-",)),
    ProviderRule("ANTHROPIC_KEY", r"sk-ant-[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
    ProviderRule("OPENAI_KEY", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}",
                 ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-")),
    ProviderRule("OPENAI_KEY", r"sk-[A-Za-z0-9]{32,}", ("sk-",)),
    ProviderRule("STRIPE_KEY", r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}",
                 ("sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_")),
    ProviderRule("STRIPE_KEY", r"whsec_[A-Za-z0-9+/=]{20,}", ("whsec_",)),
    ProviderRule("GITHUB_TOKEN", r"gh[pousr]_[A-Za-z0-9]{36,}", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    ProviderRule("GITHUB_TOKEN", r"github_pat_[A-Za-z0-9_]{40,}", ("github_pat_",)),
    ProviderRule("GITLAB_TOKEN", r"gl(?:pat|dt|rt|ptt|ft|imt|soat|cbt|ffct|agent)-[A-Za-z0-9_-]{20,}",
                 ("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glimt-", "glsoat-", "glcbt-", "glffct-",
                  "glagent-")),
    ProviderRule("GITLAB_TOKEN", r"GR1348941[A-Za-z0-9_-]{20,}", ("GR1348941",)),
    ProviderRule("SLACK_WEBHOOK", r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}",
                 ("hooks.slack.com/",)),
    ProviderRule("SLACK_TOKEN", r"xox[abeprs]-[A-Za-z0-9-]{10,}", ("xox",)),
    ProviderRule("SLACK_TOKEN", r"xapp-[A-Za-z0-9-]{20,}", ("xapp-",)),
    ProviderRule("DISCORD_WEBHOOK", r"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{30,}",
                 ("/api/webhooks/",)),
    ProviderRule("AWS_ACCESS_KEY", r"AKIA[0-9A-Z]{16}", ("AKIA",)),
    ProviderRule("AWS_ACCESS_KEY", r"(?<![A-Z0-9])(?:A3T[A-Z0-9]|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])",
                 ("A3T", "ASIA", "ABIA", "ACCA")),
    ProviderRule("GOOGLE_API_KEY", r"AIza[0-9A-Za-z_-]{35}", ("AIza",)),
    ProviderRule("GOOGLE_OAUTH", r"GOCSPX-[A-Za-z0-9_-]{20,}", ("GOCSPX-",)),
    ProviderRule("GOOGLE_OAUTH", r"ya29\.[A-Za-z0-9_-]{30,}", ("ya29.",)),
    ProviderRule("JWT", r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", ("eyJ",)),
    ProviderRule("TWILIO_KEY", _NOT_TOKEN_BEFORE + r"SK[0-9a-fA-F]{32}" + _NOT_TOKEN_AFTER, ("SK",)),
    ProviderRule("SENDGRID_KEY", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", ("SG.",)),
    ProviderRule("MAILGUN_KEY", _NOT_TOKEN_BEFORE + r"key-[0-9a-zA-Z]{32}" + _NOT_TOKEN_AFTER, ("key-",)),
    ProviderRule("HUGGINGFACE_TOKEN", _NOT_TOKEN_BEFORE + r"(?:hf_|api_org_)[A-Za-z0-9]{30,}", ("hf_", "api_org_")),
    ProviderRule("SHOPIFY_TOKEN", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", ("shpat_", "shpca_", "shppa_", "shpss_")),
    ProviderRule("NPM_TOKEN", _NOT_TOKEN_BEFORE + r"npm_[A-Za-z0-9]{36}" + _NOT_TOKEN_AFTER, ("npm_",)),
    ProviderRule("PYPI_TOKEN", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", ("pypi-AgEIcHlwaS5vcmc",)),
    ProviderRule("AZURE_KEY", r"(?i:AccountKey|SharedAccessKey)[ \t]*=[ \t]*([" + _B64 + r"]{20,}={0,2})",
                 ("ccountKey", "ccessKey", "CCOUNTKEY", "CCESSKEY", "ccountkey", "ccesskey"), 1),
    ProviderRule("AZURE_KEY", r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
                 ("Q~",)),
    ProviderRule("AZURE_SAS", r"[?&;]sig=([A-Za-z0-9%+/=]{16,})", ("sig=",), 1),
    ProviderRule("DIGITALOCEAN_TOKEN", r"do[opr]_v1_[a-f0-9]{64}", ("dop_v1_", "doo_v1_", "dor_v1_")),
    ProviderRule("VAULT_TOKEN", _NOT_TOKEN_BEFORE + r"hv[sb]\.[A-Za-z0-9_-]{24,}", ("hvs.", "hvb.")),
    ProviderRule("DOCKER_TOKEN", r"dckr_pat_[A-Za-z0-9_-]{20,}", ("dckr_pat_",)),
    ProviderRule("POSTMAN_KEY", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", ("PMAK-",)),
    ProviderRule("DATABRICKS_TOKEN", _NOT_TOKEN_BEFORE + r"dapi[a-f0-9]{32}(?:-[0-9])?" + _NOT_TOKEN_AFTER, ("dapi",)),
    ProviderRule("GRAFANA_TOKEN", r"glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
                 ("glc_", "glsa_")),
    ProviderRule("LINEAR_KEY", r"lin_api_[A-Za-z0-9]{40}", ("lin_api_",)),
    ProviderRule("ATLASSIAN_TOKEN", r"ATATT3[A-Za-z0-9_=-]{50,}", ("ATATT3",)),
    ProviderRule("SQUARE_TOKEN", r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", ("sq0atp-", "sq0csp-")),
    ProviderRule("SENTRY_TOKEN", r"sntry[su]_[A-Za-z0-9+/=_]{40,}", ("sntrys_", "sntryu_")),
    ProviderRule("PLANETSCALE_TOKEN", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,}", ("pscale_",)),
    ProviderRule("GROQ_KEY", r"gsk_[A-Za-z0-9]{48,}", ("gsk_",)),
    ProviderRule("REPLICATE_TOKEN", _NOT_TOKEN_BEFORE + r"r8_[A-Za-z0-9]{37}" + _NOT_TOKEN_AFTER, ("r8_",)),
    ProviderRule("PERPLEXITY_KEY", r"pplx-[A-Za-z0-9]{48}", ("pplx-",)),
    ProviderRule("XAI_KEY", r"xai-[A-Za-z0-9]{70,}", ("xai-",)),
    ProviderRule("FIGMA_TOKEN", r"figd_[A-Za-z0-9_-]{40,}", ("figd_",)),
    ProviderRule("RUBYGEMS_KEY", r"rubygems_[a-f0-9]{48}", ("rubygems_",)),
    ProviderRule("ALIBABA_KEY", _NOT_TOKEN_BEFORE + r"LTAI[A-Za-z0-9]{20}" + _NOT_TOKEN_AFTER, ("LTAI",)),
    ProviderRule("NEWRELIC_KEY", r"NRAK-[A-Z0-9]{27}", ("NRAK-",)),
    ProviderRule("MAPBOX_TOKEN", r"sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}", ("sk.eyJ",)),
    ProviderRule("TELEGRAM_TOKEN", _NOT_TOKEN_BEFORE + r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}" + _NOT_TOKEN_AFTER,
                 (":AA",)),
    ProviderRule("DOPPLER_TOKEN", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", ("dp.",)),
    # A Discord bot token: the base64 of the bot's numeric id (so its first two characters are one of
    # these), a timestamp and an HMAC, dot-separated.
    ProviderRule("DISCORD_TOKEN",
                 _NOT_TOKEN_BEFORE + r"(?:M[TjzQ]|N[DTjz]|O[DT])[A-Za-z0-9_-]{22,26}\.[A-Za-z0-9_-]{6}\."
                 r"[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])",
                 ("MT", "Mj", "Mz", "MQ", "ND", "NT", "Nj", "Nz", "OD", "OT"), within_runs=True),
    # The key (and the legacy secret) of a Sentry DSN: https://<32 hex>[:<32 hex>]@<host>/<project id>.
    ProviderRule("SENTRY_DSN",
                 r"https?://([0-9a-f]{32}(?::[0-9a-f]{32})?)@[A-Za-z0-9.-]+(?::[0-9]{1,5})?/(?:[A-Za-z0-9._-]+/)*"
                 r"[0-9]+(?![A-Za-z0-9_.-])",
                 ("https://", "http://"), 1),
)

# Credential slots the keyed scanner recognises: an identifier part equal to
# one of these (or, for the first set, ending in it: ``clientsecret``,
# ``authtoken``) makes the identifier a secret key.
SECRET_PARTS_EXACT: frozenset[str] = frozenset({
    "password", "passwd", "passphrase", "passwrd", "pwd", "pass", "pw", "secret", "token", "apikey",
    "credential", "credentials", "creds", "auth", "authorization", "authkey", "privatekey", "secretkey",
    "accesskey", "accountkey", "clientsecret", "sharedkey", "masterkey", "signingkey", "encryptionkey",
})
SECRET_PART_SUFFIXES: tuple[str, ...] = ("password", "passwd", "secret", "token", "apikey", "passphrase")
# "<part> key" pairs (``api_key``, ``accessKey``, ``ACCOUNT-KEY``) that name a secret.
KEY_QUALIFIERS: frozenset[str] = frozenset({
    "api", "access", "private", "secret", "encryption", "signing", "master", "account", "client", "app",
    "license", "licence", "service", "subscription", "storage", "shared", "consumer", "admin", "auth", "crypt",
    "crypto", "hmac", "webhook", "deploy", "jwt", "aes", "rsa",
})
# A last identifier part that says the value is *about* a secret, not the secret.
NON_SECRET_LAST_PARTS: frozenset[str] = frozenset({
    "url", "uri", "urls", "endpoint", "path", "paths", "file", "files", "filename", "dir", "name", "names",
    "type", "types", "id", "ids", "length", "len", "count", "size", "ttl", "expiry", "expires", "expiration",
    "timeout", "header", "headers", "field", "fields", "param", "params", "prefix", "suffix", "label",
    "format", "regex", "pattern", "policy", "hint", "min", "max", "enabled", "required", "mode", "version",
    "env", "var", "rotation", "lifetime", "age", "algorithm", "alg", "method", "scheme", "kind", "index",
    "position", "valid", "validator", "validation", "strength", "reset", "store", "manager", "provider",
    "class", "cls", "module", "column", "table", "arn", "ref", "source", "location", "at",
    "created", "updated", "changed", "set", "used", "limit", "usage", "page", "cache", "parser", "tokenizer",
    "identifier", "block", "callback", "handler", "fn", "func", "function", "check", "checker",
})

# Words that, alone or joined by punctuation, make a value a documentation placeholder.
PLACEHOLDER_WORDS: frozenset[str] = frozenset({
    "your", "my", "the", "a", "an", "of", "for", "to", "with", "here", "example", "examples", "sample",
    "changeme", "change", "me", "placeholder", "dummy", "test", "fake", "mock", "demo", "todo", "fixme",
    "replace", "replaceme", "insert", "enter", "put", "set", "fill", "in", "this", "value", "values",
    "key", "keys", "secret", "secrets", "token", "tokens", "password", "passwords", "passwd", "pass",
    "pwd", "pw", "api", "apikey", "access", "auth", "id", "string", "str", "redacted", "hidden", "none",
    "null", "nil", "true", "false", "undefined", "empty", "env", "var", "bearer", "basic", "user",
    "username", "db", "database", "private", "public", "client", "app", "service", "account", "default",
    "local", "dev", "development", "prod", "production", "staging", "secure", "new", "old", "some",
    "foo", "bar", "baz", "qux", "xxx", "xxxx", "notset", "unset", "required", "optional",
    "goes", "real", "actual", "webhook", "signing", "encryption", "credential", "credentials", "tbd",
})

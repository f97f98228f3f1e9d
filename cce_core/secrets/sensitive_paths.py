"""Layer 1 of secret protection: which files must never be read at all.

Some files are dangerous to open even for redaction — private keys, credential
dumps, live ``.env`` files — because their bytes would pass through memory on
their way to the store. The walker therefore asks :func:`is_sensitive` about each
file's *basename* before reading it and, if the answer is yes, skips the file and
counts it as ``sensitive_skipped``. The decision uses the name only; this module
never touches the filesystem.

Three rules, tried in order on the ASCII-lowercased basename:

1. an exact credential-file name (``id_rsa``, ``.netrc``, ``secrets.yml``, ...);
2. a key-material extension (``pem``, ``key``, ``p12``, ...), found the way Rust's
   ``Path::extension`` finds it: a name whose only dot is its first character
   (``.key``) has no extension, while ``..key`` has the extension ``key``;
3. the dotenv rule: ``.env`` and ``.env.*`` are sensitive unless they end in a
   template suffix (``.example``, ``.sample``, ``.template``, ``.dist``).
"""

from __future__ import annotations

import string

SENSITIVE_BASENAMES: frozenset[str] = frozenset(
    {
        "credentials.json",
        "credentials.yml",
        "credentials.yaml",
        "secrets.json",
        "secrets.yml",
        "secrets.yaml",
        ".netrc",
        ".pgpass",
        ".htpasswd",
        ".dockercfg",
        "kubeconfig",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
    }
)

SENSITIVE_EXTENSIONS: frozenset[str] = frozenset({"pem", "key", "p12", "pfx", "keystore", "jks", "ppk", "der", "asc"})

DOTENV_SAFE_SUFFIXES: tuple[str, ...] = (".example", ".sample", ".template", ".dist")

# Only A-Z change; str.lower() would also fold non-ASCII letters (e.g. the
# Kelvin sign to "k"), which the reference engine does not do.
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _extension(name: str) -> str | None:
    """The text after the last dot, unless that dot opens the name (no extension)."""
    dot = name.rfind(".")
    if dot <= 0:
        return None
    return name[dot + 1 :]


def is_sensitive(basename: str) -> bool:
    """True when a file called ``basename`` must be skipped unread (Layer 1)."""
    name = basename.translate(_ASCII_LOWER)
    if name in SENSITIVE_BASENAMES:
        return True
    if _extension(name) in SENSITIVE_EXTENSIONS:
        return True
    if name == ".env" or name.startswith(".env."):
        return not name.endswith(DOTENV_SAFE_SUFFIXES)
    return False

"""Layer 1: the basename policy that keeps credential files out of the index unread."""

from __future__ import annotations

import pytest

from cce_core.secrets.sensitive_paths import (
    DOTENV_SAFE_SUFFIXES,
    SENSITIVE_BASENAMES,
    SENSITIVE_EXTENSIONS,
    is_sensitive,
)

# Golden vectors shared with the reference engine.
GOLDEN_SENSITIVE = [
    "server.pem",
    "private.KEY",
    "store.p12",
    "cert.PFX",
    "a.keystore",
    "a.jks",
    "putty.ppk",
    "cert.der",
    "key.asc",
    "CREDENTIALS.YML",
    "ID_DSA",
    ".env",
    ".ENV",
    ".env.local",
    ".env.production",
    ".env.local.secret",
]
GOLDEN_NOT_SENSITIVE = [
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    ".env.local.example",
    ".env.EXAMPLE",
    "config.rb",
    "main.rs",
    "auth.py",
    "README.md",
    "notes.txt",
    "foo.env",
    "envfile",
    "keys.go",
    "monkey.js",
    ".key",
    ".pem",
]


@pytest.mark.parametrize("name", GOLDEN_SENSITIVE)
def test_golden_sensitive_names(name: str) -> None:
    assert is_sensitive(name)


@pytest.mark.parametrize("name", GOLDEN_NOT_SENSITIVE)
def test_golden_safe_names(name: str) -> None:
    assert not is_sensitive(name)


def test_constant_tables_have_the_specified_sizes() -> None:
    assert len(SENSITIVE_BASENAMES) == 15
    assert len(SENSITIVE_EXTENSIONS) == 9
    assert DOTENV_SAFE_SUFFIXES == (".example", ".sample", ".template", ".dist")


@pytest.mark.parametrize("name", sorted(SENSITIVE_BASENAMES))
def test_every_exact_basename_in_any_ascii_case(name: str) -> None:
    assert is_sensitive(name)
    assert is_sensitive(name.upper())
    assert not is_sensitive(name + "x")
    assert not is_sensitive("x" + name)


@pytest.mark.parametrize("ext", sorted(SENSITIVE_EXTENSIONS))
def test_every_extension_in_any_ascii_case(ext: str) -> None:
    assert is_sensitive(f"file.{ext}")
    assert is_sensitive(f"FILE.{ext.upper()}")
    assert is_sensitive(f"archive.tar.{ext}")
    assert not is_sensitive(f"file.{ext}.bak")  # only the final extension counts
    assert not is_sensitive(f"file{ext}")
    assert not is_sensitive(ext)


def test_extension_follows_rust_path_semantics() -> None:
    # A name whose only dot is the leading one has no extension ...
    assert not is_sensitive(".key")
    assert not is_sensitive(".PEM")
    # ... but a second leading dot makes the rest an extension.
    assert is_sensitive("..key")
    assert is_sensitive("a..pem")
    assert not is_sensitive("x.")
    assert not is_sensitive(".")
    assert not is_sensitive("..")


def test_dotenv_rule() -> None:
    assert is_sensitive(".env.")
    assert is_sensitive(".Env.Local")
    assert is_sensitive(".env.dist.local")  # the safe suffix must be at the end
    assert is_sensitive(".env.sample.x")
    assert not is_sensitive(".env.Template")
    assert not is_sensitive(".env.local.dist")
    assert not is_sensitive(".envrc")
    assert not is_sensitive("prod.env")
    assert not is_sensitive("")


def test_lowercasing_is_ascii_only() -> None:
    # U+212A KELVIN SIGN lowercases to "k" under str.lower(); the reference keeps it.
    assert not is_sensitive("\u212aubeconfig")
    assert not is_sensitive("id_rsa.\u212aey")
    # U+0130 (capital I with dot) lowercases to two code points under str.lower().
    assert not is_sensitive("\u0130D_RSA")

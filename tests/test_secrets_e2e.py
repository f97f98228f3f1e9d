"""Secret protection end to end: the installed ``cce index`` on a generated secrets corpus.

The corpus is written into a temp directory at run time; every secret is joined
from fragments so no committed file holds a contiguous, real-format credential.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import run_cce, store_bytes

from cce_core.foundation.textrules import estimate_tokens
from cce_core.indexing.store import default_store_path, load_store

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
STRIPE_KEY = "sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
SSH_KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAA"
RAW_SECRETS = (AWS_KEY, STRIPE_KEY, SSH_KEY_BODY, "hunter2")

CONFIG_RB = f'module Config\n  AWS = "{AWS_KEY}"\n  API_KEY = "your-api-key-here"\n  STRIPE = "{STRIPE_KEY}"\nend\n'
REDACTED_CONFIG_RB = (
    'module Config\n  AWS = "[REDACTED:AWS_ACCESS_KEY]"\n  API_KEY = "your-api-key-here"\n'
    '  STRIPE = "[REDACTED:STRIPE_KEY]"\nend\n'
)


def write_secrets_corpus(root: Path) -> Path:
    root.mkdir()
    files = {
        ".env": f"AWS_ACCESS_KEY_ID={AWS_KEY}\nDATABASE_URL=postgres://user:hunter2@localhost/app\n",
        ".env.example": (
            "AWS_ACCESS_KEY_ID=your-access-key-here\nDATABASE_URL=postgres://user:password@localhost/app\n"
        ),
        "id_rsa": (
            "-----BEGIN OPENSSH PRIVATE " + "KEY-----\n" + SSH_KEY_BODY + "\n-----END OPENSSH PRIVATE " + "KEY-----\n"
        ),
        "config.rb": CONFIG_RB,
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8", newline="")
    return root


@dataclass
class IndexRun:
    stdout: str
    stderr: str
    store_bytes: bytes
    contents: dict[str, list[str]]  # file_path -> stored chunk contents, in store order
    file_tokens: dict[str, int]


def index_corpus(root: Path, *flags: str) -> IndexRun:
    """Run ``cce index`` as a separate process, then read back what it stored."""
    proc = run_cce("index", root, *flags)
    assert proc.returncode == 0, proc.stderr
    store_path = default_store_path(root)
    data = load_store(store_path)
    contents: dict[str, list[str]] = {}
    for chunk in data.chunks:
        contents.setdefault(chunk.file_path, []).append(chunk.content)
    return IndexRun(proc.stdout, proc.stderr, store_bytes(store_path), contents, data.file_tokens)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_secrets_corpus(tmp_path / "secrets")


def test_protected_index_skips_sensitive_files_and_redacts_secrets(corpus: Path) -> None:
    run = index_corpus(corpus)

    assert "  sensitive skipped : 2\n" in run.stdout
    assert "  files indexed     : 2\n" in run.stdout
    assert "--allow-secrets" not in run.stderr
    assert sorted(run.contents) == [".env.example", "config.rb"]

    config = run.contents["config.rb"]
    joined = "\n".join(config)
    assert "[REDACTED:AWS_ACCESS_KEY]" in joined
    assert "[REDACTED:STRIPE_KEY]" in joined
    assert "your-api-key-here" in joined  # placeholder guard
    assert all(content in REDACTED_CONFIG_RB for content in config)
    # The Config module spans the whole file; the whole-file baseline counts the redacted text.
    assert REDACTED_CONFIG_RB.rstrip("\n") in config
    assert run.file_tokens["config.rb"] == estimate_tokens(REDACTED_CONFIG_RB)

    template = "\n".join(run.contents[".env.example"])
    assert "your-access-key-here" in template

    for secret in RAW_SECRETS:
        assert secret not in joined
        assert secret.encode("utf-8") not in run.store_bytes


def test_allow_secrets_bypasses_both_layers(corpus: Path) -> None:
    run = index_corpus(corpus, "--allow-secrets")

    assert "--allow-secrets" in run.stderr
    assert "  sensitive skipped : 0\n" in run.stdout
    assert "  files indexed     : 4\n" in run.stdout
    assert sorted(run.contents) == [".env", ".env.example", "config.rb", "id_rsa"]

    everything = "\n".join(content for contents in run.contents.values() for content in contents)
    assert "[REDACTED:" not in everything
    assert b"[REDACTED:" not in run.store_bytes
    assert CONFIG_RB.rstrip("\n") in run.contents["config.rb"]
    assert run.file_tokens["config.rb"] == estimate_tokens(CONFIG_RB)
    for secret in RAW_SECRETS:
        assert secret in everything
        assert secret.encode("utf-8") in run.store_bytes


def test_protection_comes_back_on_the_next_plain_index(corpus: Path) -> None:
    index_corpus(corpus, "--allow-secrets")
    run = index_corpus(corpus)
    assert "  sensitive skipped : 2\n" in run.stdout
    assert sorted(run.contents) == [".env.example", "config.rb"]
    for secret in RAW_SECRETS:
        assert secret.encode("utf-8") not in run.store_bytes


@pytest.fixture
def walker_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "walk"
    root.mkdir()
    (root / "keep.py").write_text("def keep():\n    return 1\n", encoding="utf-8")
    (root / ".env").write_text("SECRET=1\n", encoding="utf-8")
    (root / "id_rsa").write_text("not really a key\n", encoding="utf-8")
    (root / "server.pem").write_text("not really a certificate\n", encoding="utf-8")
    (root / ".env.example").write_text("SECRET=\n", encoding="utf-8")
    return root


def test_sensitive_files_are_skipped_and_tallied_separately(walker_corpus: Path) -> None:
    run = index_corpus(walker_corpus)
    assert "  sensitive skipped : 3\n" in run.stdout
    assert "  files skipped     : 0\n" in run.stdout
    assert sorted(run.contents) == [".env.example", "keep.py"]


def test_allow_secrets_disables_layer_one(walker_corpus: Path) -> None:
    run = index_corpus(walker_corpus, "--allow-secrets")
    assert "  sensitive skipped : 0\n" in run.stdout
    assert sorted(run.contents) == [".env", ".env.example", "id_rsa", "keep.py", "server.pem"]

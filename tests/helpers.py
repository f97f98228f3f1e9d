"""Helpers the tests import: where the reference goldens live, how to run the installed ``cce``, small fixtures' bodies.

They live here, not in ``conftest.py``, so a test imports them as an ordinary
module (``from helpers import run_cce``) under any ``--import-mode``
(``tests/`` is on ``pythonpath`` in ``pyproject.toml``); ``conftest.py`` keeps
only pytest's hooks and fixtures.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cce_core.hookspecs import hookimpl

REPO_ROOT = Path(__file__).resolve().parent.parent


def reference_dir() -> Path:
    return Path(os.environ.get("CCE_REFERENCE_DIR", REPO_ROOT.parent / "shared" / "reference"))


def cce_executable() -> str:
    beside = Path(sys.executable).with_name("cce")
    if beside.exists():
        return str(beside)
    found = shutil.which("cce")
    if not found:
        pytest.skip("the cce command is not installed (pip install -r requirements.txt)")
    return found


def run_cce(*args: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None,
            env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    merged = {**os.environ, **(env or {})}
    merged.pop("CCE_DEBUG", None)
    return subprocess.run([cce_executable(), *map(str, args)], cwd=cwd, env=merged, capture_output=True,
                          text=True, timeout=timeout)


def installed_pack(host, name: str):
    """The installed pack called ``name`` (the test fails, saying how to install it, if it is missing)."""
    by_name = {p.name: p for p in host.packs.packs}
    assert name in by_name, f"pack {name!r} is not installed; pip install -e packs/{name}"
    return by_name[name]


class PackPlugin:
    """A plugin object that registers the packs it is given (for hosts built in a test)."""

    def __init__(self, *packs) -> None:
        self._packs = packs

    @hookimpl
    def cce_register_packs(self, register):
        for pack in self._packs:
            register(pack)


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".cce"))
    for p in dst.rglob("*"):
        p.chmod(p.stat().st_mode | 0o200)
    dst.chmod(dst.stat().st_mode | 0o200)
    return dst


def store_bytes(store_path: Path) -> bytes:
    """Every byte a store keeps on disk — its manifest, then each segment it names — followed by the
    segments' chunk texts decompressed (they are stored zlib-compressed), so a search for a leaked
    value in the result cannot miss one."""
    from cce_core.indexing.store import load_store

    data = load_store(store_path)
    raw = store_path.read_bytes() + b"".join(segment.path.read_bytes() for segment in data.segments)
    texts = "".join(text for segment in data.segments for text in segment.contents())
    return raw + texts.encode("utf-8")


def hermetic_env(tmp_path: Path) -> dict[str, str]:
    """An environment for process-level tests: its own CCE_HOME and HOME, and a git that reads only
    a throwaway identity (no system or user configuration, ``main`` as the default branch)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = t\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n",
                         encoding="utf-8")
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("CCE_", "GIT_")) or k in ("CCE_CACHE_DIR", "CCE_RANKING_PROFILE")}
    # CCE_MCP_COMMAND: `cce init` writes plain `cce` (the family's bytes) wherever the cce under test is installed.
    return {**keep, "CCE_HOME": str(tmp_path / "ccehome"), "HOME": str(home), "GIT_CONFIG_GLOBAL": str(gitconfig),
            "GIT_CONFIG_NOSYSTEM": "1", "CCE_MCP_COMMAND": "cce"}


def git(env: dict[str, str], cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with ``env``; its stripped stdout (a failure fails the test with git's stderr)."""
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


# A modification time far outside the racy window: files aged to it are trusted by (size, time) at once.
OLD_MTIME = 1_600_000_000


def age_tree(root: Path) -> None:
    """Set every file below ``root`` (the store's ``.cce`` aside) to :data:`OLD_MTIME`."""
    for path in root.rglob("*"):
        if path.is_file() and ".cce" not in path.parts:
            os.utime(path, (OLD_MTIME, OLD_MTIME))


def sample_corpus(tmp_path: Path, *core_packages: str) -> Path:
    """``samples/`` plus copies of the named ``cce_core`` subpackages (real code to index), aged."""
    root = copy_tree(REPO_ROOT / "samples", tmp_path / "corpus")
    for package in core_packages:
        shutil.copytree(REPO_ROOT / "cce_core" / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    age_tree(root)
    return root


def index_with_hash(root: Path, store: Path, **kwargs: object):
    """``index_directory`` of ``root`` into ``store`` with the installed plugins and the hash embedder."""
    from cce_core.indexing.indexer import index_directory
    from cce_core.plugins.host import default_host

    host = default_host()
    return index_directory(root, store, host, host.embedder("hash"), **kwargs)  # type: ignore[arg-type]


def decoded_tokens(vocab: list[bytes], flat, lengths) -> list[list[bytes]]:
    """Each chunk's tokens, read back from ids into ``vocab`` (``flat``: every id, ``lengths``: ids per chunk)."""
    tokens = [vocab[i] for i in flat.tolist()]
    out, at = [], 0
    for n in lengths.tolist():
        out.append(tokens[at : at + n])
        at += n
    return out


# Queries that touch most of a sample corpus of cce_core's own code (see sample_corpus), for comparing stores.
STORE_QUERIES = [
    "load the configuration file", "parse JSON", "segment manifest", "def search", "class Searcher",
    "walk the tree and skip ignored files", "hash embedder buckets", "bm25 postings", "import graph edges",
    "redact secrets", "fingerprint of the store", "plugin host entry points", "watch files", "token count",
    "chunk_id", "zzzz_not_a_word", "error line", "atomic write rename", "workspace members", "sync pull",
]


def store_answers(store_path: Path, kernel: str = "numpy") -> list:
    """The top ten (chunk id, score, rank) of every query in :data:`STORE_QUERIES` on the store at ``store_path``."""
    from cce_core.indexing.store import load_store
    from cce_core.plugins.host import default_host
    from cce_core.retrieval.searcher import Searcher

    searcher = Searcher(load_store(store_path), default_host().embedder("hash"), kernel=kernel)
    return [[(r.chunk.chunk_id, r.score, r.rank) for r in searcher.search(q, top_k=10)] for q in STORE_QUERIES]


def assert_same_store(a_path: Path, b_path: Path) -> None:
    """Two stores hold the same files, chunks, vectors, postings and graph, and answer alike with both kernels."""
    import numpy as np

    from cce_core.indexing.store import load_store

    a, b = load_store(a_path), load_store(b_path)
    assert a.files == b.files
    assert list(a.chunks) == list(b.chunks)
    assert np.array_equal(a.embeddings, b.embeddings)
    assert list(a.bm25.vocab) == list(b.bm25.vocab)
    for name in ("ptr", "docs", "tfs", "doc_len"):
        assert np.array_equal(getattr(a.bm25, name), getattr(b.bm25, name)), name
    assert a.edges == b.edges
    for kernel in ("numpy", "lean"):
        assert store_answers(a_path, kernel) == store_answers(b_path, kernel)

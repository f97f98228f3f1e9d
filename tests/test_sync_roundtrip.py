"""A pull reproduces exactly what was pushed, for any tree (issue #19 defect 1, the reference's #115).

The graph line carries resolved file → file edges only. Reading them back as
the stems of their targets and resolving those stems again loses information:
an import that resolved through a pack's suffix rule (``./b`` → ``z/lib.js``)
re-resolves by stem to another file of the same stem (``a/lib.md``), the
re-rendered graph line differs, and every pull of a valid artifact failed with
a checksum mismatch. The edges are now taken as published.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from helpers import git
from test_sync_cli import bare_remote, cce, env, ok, source_repo

from cce_core.foundation.textrules import estimate_tokens, tokenize_bytes
from cce_core.indexing.bm25 import build_bm25
from cce_core.indexing.chunker import module_chunk
from cce_core.indexing.store import FileEntry, StoreData, load_store
from cce_core.sync.artifact import artifact_to_store, build_artifact, import_artifact
from cce_core.sync.knowledge_artifact import export_knowledge, import_knowledge

__all__ = ["env"]  # fixtures, imported so that pytest finds them here

REPO_ID = "example.com__acme__demo"
# The issue's tree: `./b` resolves only through the `.js` suffix rule, to z/lib.js; by stem,
# `lib` resolves to a/lib.md, which sorts first.
ISSUE_TREE = {
    "a/lib.md": "# Lib\n\nSome words about the library.\n",
    "z/lib.js": "export function ub() { return 2; }\n",
    "main.js": "import { ub } from './b';\nconsole.log(ub());\n",
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_the_issue_tree_pushes_and_pulls(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    src = source_repo(env, tmp_path / "src", tree=_write(tmp_path / "tree", ISSUE_TREE))
    ok(cce(env, src, "sync", "init", "--remote", url, "--no-lfs"))
    ok(cce(env, src, "sync", "push"))
    sha = git(env, src, "rev-parse", "HEAD")
    check = tmp_path / "check"
    git(env, tmp_path, "clone", "-q", url, str(check))
    pushed = (check / "hash" / "2.3" / REPO_ID / f"{sha}.cce").read_bytes()
    graph = json.loads(pushed.decode().rstrip("\n").rsplit("\n", 1)[-1])
    assert graph["edges"] == [{"source": "main.js", "target": "z/lib.js", "type": "import"}]

    consumer = tmp_path / "consumer"
    git(env, tmp_path, "clone", "-q", str(src), str(consumer))
    ok(cce(env, consumer, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", REPO_ID))
    pulled = ok(cce(env, consumer, "sync", "pull"))
    assert pulled.startswith(f"Pulled {REPO_ID}@{sha}\n")
    # The installed store carries the published edge, not the stem's re-resolution.
    assert load_store(consumer / ".cce" / "index.cce").edges == [("main.js", "z/lib.js")]
    assert ok(cce(env, consumer, "sync", "verify")).startswith(f"verify OK: {REPO_ID}@{sha}\n")
    # Pulled twice (a second consumer, the same bytes): the same store.
    again = tmp_path / "again"
    again.mkdir()
    ok(cce(env, again, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", REPO_ID))
    ok(cce(env, again, "sync", "pull", "--latest"))
    assert load_store(again / ".cce" / "index.cce").edges == [("main.js", "z/lib.js")]


# --------------------------------------------------------------------------- any tree, in process


STEMS = ["lib", "util", "b", "ib", "index", "a.b", "x"]
DIRS = ["", "a/", "z/", "a/b/", "lib/", "sub/lib/"]
EXTENSIONS = [".js", ".py", ".md", ".ts", ".rb", ""]


def _random_store(rng: random.Random, embedder) -> StoreData:
    """Files whose stems and endings collide on purpose, importing names that resolve every way there is."""
    paths = sorted({rng.choice(DIRS) + rng.choice(STEMS) + rng.choice(EXTENSIONS) for _ in range(rng.randint(2, 9))})
    chunks = [module_chunk(p, f"text of {p}\n") for p in paths]
    vectors = np.asarray(embedder.embed_batch([c.content for c in chunks]), dtype=np.float64)
    modules = [*STEMS, "lib/b", "b/x", "sub/lib", "nothing", "index"]
    files = [FileEntry(c.file_path, "x", estimate_tokens(c.content), i, 1,
                       rng.sample(modules, rng.randint(0, 4))) for i, c in enumerate(chunks)]
    bm25 = build_bm25([tokenize_bytes(c.content.encode()) for c in chunks])
    return StoreData({"embedder": "hash", "pack_set": "p"}, chunks, vectors, files, [], bm25)


@pytest.mark.parametrize("seed", range(40))
def test_every_artifact_reads_back_to_its_own_bytes_and_edges(seed: int, host) -> None:
    embedder = host.embedder("hash")
    suffixes = [".py", ".js", ".ts", ".rb"]
    built = build_artifact(_random_store(random.Random(seed), embedder), "r", "0" * 40, suffixes)
    raw = built.to_bytes()
    read = import_artifact(raw)
    assert read.to_bytes() == raw
    assert read.edges == built.edges
    assert artifact_to_store(read, embedder).edges == built.edges


def test_a_tree_with_odd_file_names_pushes_what_a_pull_accepts(host, tmp_path: Path) -> None:
    # The checks a pull makes must never refuse what `cce index` builds from a real tree: a submodule's
    # `.git` file, a newline or a colon in a name, a name starting with dots.
    from cce_core.indexing.indexer import build_index
    from cce_core.sync.artifact import ArtifactRequest, pack_module_suffixes

    tree = _write(tmp_path / "odd", {"sub/.git": "gitdir: ../.git/modules/sub\n", "we\nird.py": "def w():\n    pass\n",
                                     "C:drive.py": "def c():\n    pass\n", "x/..y.py": "def d():\n    pass\n"})
    data, _ = build_index(tree, host, host.embedder("hash"), protect_secrets=True)
    assert {f.path for f in data.files} >= {"sub/.git", "we\nird.py", "C:drive.py"}
    raw = build_artifact(data, REPO_ID, "a" * 40, pack_module_suffixes(host)).to_bytes()
    assert import_artifact(raw, ArtifactRequest(REPO_ID, "a" * 40)).to_bytes() == raw


def test_a_knowledge_corpus_reads_back_to_its_own_bytes(host) -> None:
    # The same class of bug for `.cck`: every field a store can hold must survive the round trip.
    from cce_core.knowledge.store import KnowledgeChunk, KnowledgeStore

    rng = random.Random(7)
    chunks = []
    for i in range(30):
        chunks.append(KnowledgeChunk(
            chunk_id=f"kn:{i}", record_id=f"r{i % 4}", kind=rng.choice(["section", "record"]), name=f"n\u2028{i}",
            start_line=i, end_line=i + rng.randint(0, 3), token_count=rng.randint(1, 9),
            content=rng.choice(["plain", "tab\tand\nnewline", "é😀\x00\x7f", ""]), source="s",
            url=rng.choice([None, "https://x/\u0085"]), state=rng.choice([None, "open"]), state_reason=None,
            updated_at=rng.choice([None, "2026-01-01T00:00:00Z"]), group=rng.choice([None, "g"]),
            labels=rng.sample(["a", "b", "c\u2029"], rng.randint(0, 3)), title=f"T{i}",
            links=rng.sample(["l1", "l2"], rng.randint(0, 2)),
            embedding=[rng.uniform(-1, 1) for _ in range(8)] if i % 2 else [1e-310, -0.0, 5e-324, 1.0]))
    store = KnowledgeStore("cce.knowledge/v1", "0123456789abcdef", 4, chunks)
    raw = export_knowledge(store, "corpus").to_bytes()
    back = import_knowledge(raw)
    assert back.to_bytes() == raw
    assert back.to_store().to_bytes() == store.to_bytes()


def test_identical_chunks_with_one_id_push_and_pull(host, tmp_path: Path) -> None:
    # Two `struct bc` specifiers on one line are two identical chunks with one id (jq's bytecode.c,
    # zod's sources): `cce index` builds them, so a pull must accept them. A duplicate id whose
    # chunk differs is still refused (tests/test_sync_hostile.py).
    from cce_core.indexing.indexer import build_index
    from cce_core.sync.artifact import ArtifactRequest, pack_module_suffixes

    tree = _write(tmp_path / "c", {"a.c": "struct bc { int n; };\nstatic struct bc* up(struct bc* b, int l) {\n"
                                          "  return b;\n}\n"})
    data, _ = build_index(tree, host, host.embedder("hash"), protect_secrets=True)
    ids = [c.chunk_id for c in data.chunks]
    assert len(ids) > len(set(ids)), "the tree no longer makes a repeated chunk; pick another"
    raw = build_artifact(data, REPO_ID, "a" * 40, pack_module_suffixes(host)).to_bytes()
    assert import_artifact(raw, ArtifactRequest(REPO_ID, "a" * 40)).to_bytes() == raw

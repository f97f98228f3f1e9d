"""A pull checks what an artifact claims before it believes it (issue #23 items 7 and 8).

Every artifact here carries a valid checksum: whoever can write to the cache
can compute one. What must stop them is the format and the pull's own
request: the repo id and sha asked for, the format's identity, finite
vectors, paths inside the tree, unique chunk ids, and size limits that are
checked before anything is decoded at scale. Each refusal is one clear line.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import git
from test_sync_cli import bare_remote, cce, env, ok, one_error, published, seed

from cce_core.foundation.textrules import estimate_tokens, tokenize_bytes
from cce_core.indexing.bm25 import build_bm25
from cce_core.indexing.chunker import module_chunk
from cce_core.indexing.store import FileEntry, StoreData
from cce_core.sync import artifact_limits as limits
from cce_core.sync.artifact import ArtifactError, ArtifactRequest, export_artifact, import_artifact
from cce_core.sync.knowledge_artifact import export_knowledge
from cce_core.sync.remote import READ_BLOCK_BYTES, GitRemote

__all__ = ["env", "published"]  # fixtures, imported so that pytest finds them here

REPO = "acme__demo"
SHA = "0123456789abcdef0123456789abcdef01234567"
REQUEST = ArtifactRequest(REPO, SHA)


def _store(files: dict[str, str], embedder, imports: dict[str, list[str]] | None = None) -> StoreData:
    chunks = [module_chunk(path, text) for path, text in files.items()]
    vectors = np.asarray(embedder.embed_batch([c.content for c in chunks]), dtype=np.float64)
    entries = [FileEntry(c.file_path, "x", estimate_tokens(c.content), i, 1, (imports or {}).get(c.file_path, []))
               for i, c in enumerate(chunks)]
    bm25 = build_bm25([tokenize_bytes(c.content.encode()) for c in chunks])
    return StoreData({"embedder": "hash", "pack_set": "c,javascript,python,ruby,rust,typescript"}, chunks, vectors,
                     entries, [], bm25)


@pytest.fixture(scope="module")
def embedder(host):
    return host.embedder("hash")


@pytest.fixture(scope="module")
def valid(embedder) -> bytes:
    files = {"app.py": "import util\n\ndef main():\n    return util.run()\n", "util.py": "def run():\n    return 1\n"}
    return export_artifact(_store(files, embedder, {"app.py": ["util"]}), REPO, SHA, [".py"])


def parts(raw: bytes) -> tuple[dict, list[dict], dict]:
    lines = raw.decode("utf-8").rstrip("\n").split("\n")
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:-1]], json.loads(lines[-1])


def _compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=True)


def forge(manifest: dict, chunks: list, graph: dict | str) -> bytes:
    """Canonical lines (or raw text for the graph) stamped with the checksum they hash to: a forger's artifact."""
    rest = "".join((c if isinstance(c, str) else _compact(c)) + "\n" for c in chunks)
    rest += (graph if isinstance(graph, str) else _compact(graph)) + "\n"
    manifest = {**manifest, "chunk_count": len(chunks), "checksum": ""}
    digest = hashlib.sha256((_compact(manifest) + "\n" + rest).encode("utf-8")).hexdigest()
    return (_compact({**manifest, "checksum": digest}) + "\n" + rest).encode("utf-8")


def refused(raw: bytes, request: ArtifactRequest | None = REQUEST) -> str:
    with pytest.raises(ArtifactError) as info:
        import_artifact(raw, request)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message, message
    return message


def vector(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}d", *values)).decode("ascii")


# --------------------------------------------------------------------------- the pull's own request


def test_a_valid_artifact_passes_with_its_request(valid: bytes) -> None:
    assert import_artifact(valid, REQUEST).to_bytes() == valid


def test_another_repo_or_sha_is_refused_before_any_chunk_is_read(valid: bytes) -> None:
    manifest, _chunks, graph = parts(valid)
    # Chunk lines a parser would choke on: the request is checked first, on the manifest alone.
    junk = ["{not json"] * 2
    other_repo = forge({**manifest, "repo_id": "evil__repo"}, junk, graph)
    assert refused(other_repo) == (f"the artifact is for evil__repo@{SHA}, but the pull asked for {REPO}@{SHA}")
    other_sha = forge({**manifest, "sha": "f" * 40}, junk, graph)
    assert refused(other_sha) == f"the artifact is for {REPO}@{'f' * 40}, but the pull asked for {REPO}@{SHA}"


@pytest.mark.parametrize(("field", "value", "message"), [
    ("cce_version", "9.9", "the artifact's format is `9.9`, this engine reads format 2.3"),
    ("embedder", "ollama", "the artifact was embedded with `ollama`; only `hash` artifacts can be installed"),
    ("pack_set_id", "python,c", "manifest pack_set_id \"python,c\" is not a sorted list of pack names"),
    ("pack_set_id", "c,c", "manifest pack_set_id \"c,c\" is not a sorted list of pack names"),
    ("pack_set_id", "C++", "manifest pack_set_id \"C++\" is not a sorted list of pack names"),
    ("checksum", "ABC", "manifest checksum \"ABC\" is not 64 lowercase hex digits"),
])
def test_manifest_fields_are_checked_against_the_format(valid: bytes, field: str, value: str, message: str) -> None:
    manifest, chunks, graph = parts(valid)
    raw = forge({**manifest, field: value}, chunks, graph)
    if field == "checksum":  # a forger stamps a real digest; here the field itself is malformed
        raw = valid.replace(manifest["checksum"].encode(), b"ABC", 1)
    assert refused(raw) == message


# --------------------------------------------------------------------------- paths, ids, vectors


@pytest.mark.parametrize(("path", "problem"), [
    ("../../etc/PWNED.txt", "a '..' segment"),
    ("a/../../x.py", "a '..' segment"),
    ("/etc/passwd", "an absolute path"),
    ("C:/Windows/x.py", "an absolute path"),
    ("\\\\server\\share\\x.py", "an absolute path"),
    ("a\\..\\..\\x.py", "a '..' segment"),
    (".git/config", "git's own directory"),
    ("sub/.GIT/hooks/x", "git's own directory"),
    ("a\x00b.py", "a NUL character"),
    ("a//b.py", "an empty segment"),
    ("./a.py", "a '.' segment"),
    ("", "an empty path"),
])
def test_paths_must_stay_inside_the_tree(valid: bytes, path: str, problem: str) -> None:
    manifest, chunks, graph = parts(valid)
    tokens = dict(manifest["file_tokens"])
    tokens[path] = tokens.pop("util.py")
    chunks[1]["file_path"] = path
    raw = forge({**manifest, "file_tokens": tokens}, chunks, {**graph, "edges": []})
    message = refused(raw)
    assert message.startswith("unsafe file path ") and message.endswith(problem), message
    assert not any(ord(ch) < 32 for ch in message), message


@pytest.mark.parametrize("path", ["sub/.git", ".git", "we\nird.py", "C:foo.py", "a\\b.py", "..x/y.py"])
def test_odd_but_real_file_names_are_kept(valid: bytes, path: str) -> None:
    # Names a real tree can hold (a submodule's `.git` file, a newline in a name): refusing them would make
    # the tree unpushable. Printing them safely is the job of whatever prints a path.
    manifest, chunks, graph = parts(valid)
    tokens = dict(manifest["file_tokens"])
    tokens[path] = tokens.pop("util.py")
    chunks[1]["file_path"] = path
    chunks.sort(key=lambda c: (c["file_path"], c["start_line"], c["id"]))
    graph = {"edges": [], "nodes": [{"id": p} for p in sorted(tokens)]}
    raw = forge({**manifest, "file_tokens": tokens}, chunks, graph)
    assert import_artifact(raw, REQUEST).to_bytes() == raw


def test_a_chunk_of_an_unlisted_file_is_refused_on_import(valid: bytes) -> None:
    manifest, chunks, graph = parts(valid)
    chunks[1]["file_path"] = "elsewhere.py"
    chunks.sort(key=lambda c: (c["file_path"], c["start_line"], c["id"]))
    assert refused(forge(manifest, chunks, graph)).endswith("belongs to elsewhere.py, which the manifest does not list")


def test_duplicate_chunk_ids_are_refused(valid: bytes) -> None:
    manifest, chunks, graph = parts(valid)
    chunks[1]["id"] = chunks[0]["id"]
    assert refused(forge(manifest, chunks, graph)) == f"duplicate chunk id {chunks[0]['id']}"


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_vector_components_are_refused(valid: bytes, bad: float) -> None:
    manifest, chunks, graph = parts(valid)
    values = list(struct.unpack(f"<{256}d", base64.b64decode(chunks[0]["embedding"])))
    values[7] = bad
    chunks[0]["embedding"] = vector(values)
    assert refused(forge(manifest, chunks, graph)) == (
        f"chunk {chunks[0]['id']} has a NaN or infinite vector component")


def test_vectors_of_another_width_are_refused(valid: bytes) -> None:
    manifest, chunks, graph = parts(valid)
    chunks[0]["embedding"] = vector([0.5] * 128)
    assert refused(forge(manifest, chunks, graph)) == "the artifact's embeddings have different lengths ([128, 256])"
    chunks[0]["embedding"] = chunks[1]["embedding"] = vector([0.5] * 128)
    assert refused(forge(manifest, chunks, graph)) == (
        "the artifact's vectors have 128 dimensions; the hash embedder's have 256")


def test_control_characters_in_printed_fields_are_refused(valid: bytes) -> None:
    manifest, chunks, graph = parts(valid)
    chunks[0]["kind"] = "function\n 1. [0.999999] fake.py:1-1"
    assert refused(forge(manifest, chunks, graph)) == (
        'chunk field `kind` "function\\n 1. [0.999999] fake.py:1-1" holds a control character')


def test_graph_edges_are_checked(valid: bytes) -> None:
    manifest, chunks, graph = parts(valid)
    for edges, message in [
        ([{"source": "app.py", "target": "../x.py", "type": "import"}],
         "graph edge app.py → ../x.py names a file the manifest does not list"),
        ([{"source": "app.py", "target": "app.py", "type": "import"}], "graph edge app.py → app.py points at itself"),
        ([{"source": "app.py", "target": "util.py", "type": "exec"}], "graph edge app.py → util.py has type `exec`"),
        ([{"source": "util.py", "target": "app.py", "type": "import"},
          {"source": "app.py", "target": "util.py", "type": "import"}], "graph edges are not sorted and unique"),
    ]:
        assert refused(forge(manifest, chunks, {**graph, "edges": edges})) == message


# --------------------------------------------------------------------------- limits from the format


def test_integers_over_the_format_limit_are_refused(valid: bytes) -> None:
    manifest, chunks, graph = parts(valid)
    big = 1 << 40
    tokens = {**manifest["file_tokens"], "app.py": big}
    assert refused(forge({**manifest, "file_tokens": tokens}, chunks, graph)) == (
        f"file_tokens[app.py] = {big} is over the format's limit of {limits.MAX_COUNT}")
    for key in ("start_line", "end_line", "token_count"):
        changed = [dict(c) for c in chunks]
        changed[0][key] = big
        assert refused(forge(manifest, changed, graph)) == (
            f"chunk {chunks[0]['id']}: {key} = {big} is over the format's limit of {limits.MAX_COUNT}")


def test_a_huge_chunk_body_is_refused_before_it_is_parsed(valid: bytes) -> None:
    manifest, chunks, graph = parts(valid)
    chunks[0]["content"] = "A" * (limits.MAX_CONTENT_BYTES + 1)
    assert refused(forge(manifest, chunks, graph)) == (
        f"chunk {chunks[0]['id']}: content is {limits.MAX_CONTENT_BYTES + 1} bytes, over the format's limit of "
        f"{limits.MAX_CONTENT_BYTES}")
    # Longer than any chunk line can be: refused on its length alone, before JSON is parsed.
    line = _compact(chunks[1])
    flood = line.replace('"content":"', '"content":"' + "\\u0000" * (limits.MAX_CHUNK_LINE_BYTES // 6 + 1), 1)
    message = refused(forge(manifest, [_compact(chunks[0]).replace("A" * 10, "B" * 10, 1), flood], graph))
    assert message.startswith("artifact line 3 is ") and message.endswith(
        f"bytes, over the format's limit of {limits.MAX_CHUNK_LINE_BYTES} for a chunk line")


def test_a_huge_vector_is_refused_before_it_is_decoded(valid: bytes) -> None:
    manifest, chunks, graph = parts(valid)
    chunks[0]["embedding"] = "AAAA" * (limits.MAX_DIM * 8 // 3 + 8)
    assert refused(forge(manifest, chunks, graph)) == (
        f"chunk {chunks[0]['id']}: its embedding is over the format's limit of {limits.MAX_DIM} dimensions")


def test_the_line_guard_stops_reading_a_long_line(tmp_path: Path) -> None:
    # What `GitRemote.get` feeds the guard while git writes: a long line is refused mid-read.
    guard = limits.LineGuard(first=16, rest=64)
    guard.feed(b'{"manifest":1}\n' + b"x" * 60)
    with pytest.raises(ArtifactError, match=r"^artifact line 2 is over 64 bytes"):
        guard.feed(b"x" * 10)
    guard = limits.LineGuard(first=16, rest=64)
    with pytest.raises(ArtifactError, match=r"^artifact line 1 is over 16 bytes"):
        guard.feed(b"y" * 17)


def test_get_reads_a_blob_through_the_guard_and_stops_early(env: dict[str, str], tmp_path: Path) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    seed(env, url, tmp_path, {"big.cce": b"x" * (8 << 20)})  # compresses to almost nothing on the remote
    remote = GitRemote.open(url, tmp_path / "clone", lfs=False)
    fed: list[int] = []

    class Counting(limits.LineGuard):
        def feed(self, block: bytes) -> None:
            fed.append(len(block))
            super().feed(block)

    with pytest.raises(ArtifactError, match="artifact line 1 is over 1048576 bytes"):
        remote.get("big.cce", guard=lambda: Counting(first=1 << 20, rest=1 << 20))
    assert sum(fed) <= (1 << 20) + READ_BLOCK_BYTES * 2


# --------------------------------------------------------------------------- knowledge keeps the same discipline


def test_knowledge_export_refuses_what_its_import_would_refuse() -> None:
    from cce_core.knowledge.store import KnowledgeChunk, KnowledgeStore

    chunk = KnowledgeChunk(chunk_id="kn:1", record_id="r", kind="section", name="n", start_line=1, end_line=1,
                           token_count=1, content="c", source="s", url=None, state=None, state_reason=None,
                           updated_at=None, group=None, labels=[], title="t", links=[], embedding=[1.0, math.inf])
    with pytest.raises(ArtifactError, match="non-finite"):
        export_knowledge(KnowledgeStore("cce.knowledge/v1", "0123456789abcdef", 1, [chunk]), "c")


# --------------------------------------------------------------------------- through the installed cce


def _publish(env: dict[str, str], url: str, tmp_path: Path, files: dict[str, bytes]) -> None:
    seed(env, url, tmp_path, files)


def _consumer(env: dict[str, str], tmp_path: Path, url: str, name: str = "consumer",
              repo_id: str = "example.com__acme__demo") -> Path:
    root = tmp_path / name
    root.mkdir()
    ok(cce(env, root, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", repo_id))
    return root


def test_a_pull_never_records_a_sha_it_did_not_ask_for(env: dict[str, str], tmp_path: Path, published) -> None:
    url, _src, sha = published
    key = f"hash/2.3/example.com__acme__demo/{sha}.cce"
    work = tmp_path / "look"
    git(env, tmp_path, "clone", "-q", url, str(work))
    real = (work / key).read_bytes()
    other = "e" * 40
    # The real artifact filed under another sha, and a pointer naming that sha.
    seed(env, url, tmp_path, {f"hash/2.3/example.com__acme__demo/{other}.cce": real,
                              "hash/2.3/example.com__acme__demo/refs/main": f"{other}\n".encode()})
    consumer = _consumer(env, tmp_path, url)
    error = one_error(cce(env, consumer, "sync", "pull", "--latest"))
    assert error == (f"error: the artifact is for example.com__acme__demo@{sha}, but the pull asked for "
                     f"example.com__acme__demo@{other}")
    assert not (consumer / ".cce" / "synced.json").exists() and not (consumer / ".cce" / "index.cce").exists()


@pytest.mark.parametrize(("pointer", "message"), [
    (b"sub/" + b"a" * 40 + b"\n", "the pointer hash/2.3/example.com__acme__demo/refs/main does not name a sha"),
    (b"a" * (1 << 20), "the pointer hash/2.3/example.com__acme__demo/refs/main is over 1024 bytes — not a sha"),
])
def test_a_pointer_must_name_a_sha(env: dict[str, str], tmp_path: Path, published, pointer: bytes,
                                   message: str) -> None:
    url, _src, _sha = published
    seed(env, url, tmp_path, {"hash/2.3/example.com__acme__demo/refs/main": pointer})
    consumer = _consumer(env, tmp_path, url)
    assert one_error(cce(env, consumer, "sync", "pull", "--latest")).startswith(f"error: {message}")
    # `--commit` is held to the same rule.
    bad = one_error(cce(env, consumer, "sync", "pull", "--commit", "sub/" + "a" * 40))
    assert bad == f"error: --commit sub/{'a' * 40} is not a commit sha (4 to 64 lowercase hex digits)"


def test_a_traversal_path_never_reaches_a_store(env: dict[str, str], tmp_path: Path, host) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    embedder = host.embedder("hash")
    sha = "1" * 40
    good = export_artifact(_store({"ok.py": "def ok():\n    return 1\n", "x.txt": "pwned\n"}, embedder),
                           "example.com__acme__demo", sha, [".py"])
    manifest, chunks, graph = parts(good)
    tokens = dict(manifest["file_tokens"])
    tokens["../../../../tmp/PWNED_path.txt"] = tokens.pop("x.txt")
    chunks[1]["file_path"] = "../../../../tmp/PWNED_path.txt"
    chunks.sort(key=lambda c: (c["file_path"], c["start_line"], c["id"]))
    bad = forge({**manifest, "file_tokens": tokens}, chunks, graph)
    seed(env, url, tmp_path, {f"hash/2.3/example.com__acme__demo/{sha}.cce": bad})
    consumer = _consumer(env, tmp_path, url)
    error = one_error(cce(env, consumer, "sync", "pull", "--commit", sha))
    assert error == ('error: unsafe file path "../../../../tmp/PWNED_path.txt" in the manifest: it has a \'..\' '
                     "segment")
    assert not (consumer / ".cce" / "index.cce").exists()


def test_a_nan_vector_is_refused_so_search_keeps_working(env: dict[str, str], tmp_path: Path, host) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    sha = "2" * 40
    good = export_artifact(_store({"ok.py": "def ok():\n    return 1\n"}, host.embedder("hash")),
                           "example.com__acme__demo", sha, [".py"])
    manifest, chunks, graph = parts(good)
    chunks[0]["embedding"] = vector([math.nan] * 256)
    seed(env, url, tmp_path, {f"hash/2.3/example.com__acme__demo/{sha}.cce": forge(manifest, chunks, graph)})
    consumer = _consumer(env, tmp_path, url)
    error = one_error(cce(env, consumer, "sync", "pull", "--commit", sha))
    assert error == f"error: chunk {chunks[0]['id']} has a NaN or infinite vector component"


def test_a_huge_body_on_the_remote_is_one_error_line(env: dict[str, str], tmp_path: Path, host) -> None:
    url = bare_remote(env, tmp_path / "cache.git")
    sha = "3" * 40
    good = export_artifact(_store({"ok.py": "def ok():\n    return 1\n"}, host.embedder("hash")),
                           "example.com__acme__demo", sha, [".py"])
    manifest, chunks, graph = parts(good)
    chunks[0]["content"] = "A" * (limits.MAX_CHUNK_LINE_BYTES + 10)
    seed(env, url, tmp_path, {f"hash/2.3/example.com__acme__demo/{sha}.cce": forge(manifest, chunks, graph)})
    consumer = _consumer(env, tmp_path, url)
    done = cce(env, consumer, "sync", "pull", "--commit", sha)
    # Refused by its length (over the longest line any artifact may hold, it would be refused while git still
    # writes it: see the line guard test above).
    error = one_error(done)
    assert error.startswith("error: artifact line 2 is ") and "over the format's limit" in error


def test_no_git_argument_can_be_too_long(env: dict[str, str], tmp_path: Path) -> None:
    # A huge sha was once handed to git whole ("Argument list too long … is git installed?").
    url = bare_remote(env, tmp_path / "cache.git")
    consumer = _consumer(env, tmp_path, url)
    error = one_error(cce(env, consumer, "sync", "pull", "--commit", "a" * 100_000))
    assert error.startswith("error: --commit aaaa") and "is not a commit sha" in error and len(error) < 300
    assert subprocess.run(["git", "--version"], capture_output=True).returncode == 0

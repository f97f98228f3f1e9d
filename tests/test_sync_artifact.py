"""The `.cce` sync artifact (format 2.3): family bytes, strict reading, pulled stores that search as local ones.

The acceptance point is the shared golden: the reference fixture
``test/fixture/samples`` indexed as ``cce index`` does, exported as
``cce/demo@000…0``, has the checksum every engine of the family reproduces.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from helpers import copy_tree, reference_dir

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import estimate_tokens, tokenize_bytes
from cce_core.indexing.bm25 import build_bm25
from cce_core.indexing.chunker import module_chunk
from cce_core.indexing.indexer import build_index, index_directory
from cce_core.indexing.store import FileEntry, StoreData, load_store, save_store, serialize_parts
from cce_core.retrieval.searcher import Searcher
from cce_core.sync.artifact import (
    PULLED_FILE_SHA256,
    SYNC_FORMAT_VERSION,
    Artifact,
    ArtifactError,
    Manifest,
    artifact_to_store,
    build_artifact,
    export_artifact,
    import_artifact,
    pack_module_suffixes,
)
from cce_core.sync.codec import decode_embedding, dumps_canonical, encode_embedding

GOLDEN_SAMPLES_CHECKSUM = "581cbd0ff682a38d7d1250f3eec44f4ce456bdd660d4cb29aaaadd9e95072f48"
ZERO_SHA = "0" * 40
BASE_REPO_ID = "example.com__acme__demo"
BASE_SHA = "0123456789abcdef0123456789abcdef01234567"

# A small tree with imports that resolve (by stem) and ones that do not, nested paths and a
# file no pack claims: enough for graph expansion to matter in the search comparison.
TREE = {
    "README.md": "# Tree\n\nLogin, sessions, payments and a small web handler.\n",
    "pkg/auth.py": (
        "import hashlib\nimport tokens\n\n"
        "def login(user, password):\n    \"\"\"Check a password against the stored hash.\"\"\"\n"
        "    return hashlib.sha256(password.encode()).hexdigest() == user.hash\n\n"
        "class Session:\n    def __init__(self, user):\n        self.user = user\n"
        "    def token(self):\n        return tokens.issue(self.user)\n"
    ),
    "pkg/payments.py": (
        "import auth\n\ndef charge(session, amount):\n    if not session.user:\n"
        "        raise ValueError(\"no user\")\n    return {\"amount\": amount, \"user\": auth.login}\n\n"
        "def refund(payment_id):\n    return {\"payment_id\": payment_id, \"status\": \"refunded\"}\n"
    ),
    "pkg/sub/tokens.py": (
        "import secrets\n\ndef issue(user):\n    return secrets.token_hex(16) + user.name\n\n"
        "def revoke(token):\n    return None\n"
    ),
    "web/app.js": (
        "import { connect, query } from 'db';\nexport function handler(req) {\n"
        "  const conn = connect(process.env.DB);\n"
        "  return query(conn, \"select * from users where id = \" + req.id);\n}\n"
    ),
    "web/lib/db.js": (
        "function connect(url) { return { url, open: true }; }\n"
        "function query(conn, sql) { return conn.open ? sql : null; }\n"
        "module.exports = { connect, query };\n"
    ),
}
QUERIES = [
    "login password hash",
    "charge payment amount",
    "where is the session token function",
    "connect database query",
    "def issue",
    "select users where id",
    "refund payment status",
    "process_payment currency",
    "class SessionManager",
    "hello world greeting",
    "verify_password digest",
    "web handler request",
]


def _reference_fixture(name: str) -> Path:
    path = reference_dir() / "test" / "fixture" / name
    if not path.is_dir():
        pytest.skip(f"reference fixture not found at {path} (set CCE_REFERENCE_DIR to the shared/reference folder)")
    return path


@pytest.fixture(scope="module")
def embedder(host):
    return host.embedder("hash")


@pytest.fixture(scope="module")
def suffixes(host):
    return pack_module_suffixes(host)


@pytest.fixture(scope="module")
def samples_store(host, embedder):
    # The family profile: the golden is the other engines' bytes (strict gives the same here, see test_secret_profiles).
    data, _ = build_index(_reference_fixture("samples"), host, embedder, protect_secrets=True, secrets_profile="family")
    return data


@pytest.fixture(scope="module")
def base_store(host, embedder):
    # The family profile: the golden is the other engines' bytes (strict gives the same here, see test_secret_profiles).
    data, _ = build_index(_reference_fixture("base"), host, embedder, protect_secrets=True, secrets_profile="family")
    return data


@pytest.fixture(scope="module")
def base_bytes(base_store, suffixes):
    return export_artifact(base_store, BASE_REPO_ID, BASE_SHA, suffixes)


@pytest.fixture(scope="module")
def tree_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("tree") / "tree"
    for rel, text in TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _lines(raw: bytes) -> list[str]:
    text = raw.decode("utf-8")
    assert text.endswith("\n")
    return text[:-1].split("\n")


def _join(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8")


def _compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _rejected(raw: bytes) -> str:
    with pytest.raises(ArtifactError) as info:
        import_artifact(raw)
    assert isinstance(info.value, CceError)
    return str(info.value)


# -- constants and the embedding codec -----------------------------------------


def test_format_version():
    assert SYNC_FORMAT_VERSION == "2.3"


def test_embedding_codec_round_trips_exactly():
    vector = [i * 0.001 - 0.123 for i in range(256)]
    encoded = encode_embedding(vector)
    assert len(encoded) == 2732  # 2048 bytes, padded base64
    assert encoded == base64.b64encode(struct.pack("<256d", *vector)).decode()
    assert decode_embedding(encoded) == vector


def test_empty_embedding_is_the_empty_string():
    assert encode_embedding([]) == ""
    assert decode_embedding("") == []


@pytest.mark.parametrize(("text", "message"), [
    ("!!!!", "bad embedding base64"),
    (base64.b64encode(bytes([1, 2, 3])).decode(), "embedding byte length 3 is not a multiple of 8"),
    ("AAAAAAAAAAA", "bad embedding base64"),  # padding missing
    ("AAAAAAAAAAB=", "bad embedding base64"),  # non-zero bits after the last byte
    ("AAAA\nAAAAAAA=", "bad embedding base64"),  # no line breaks or other characters
    ("AAAAAAAAAAA=AAAA", "bad embedding base64"),  # data after padding
    ("AAAAAAAAAAé=", "bad embedding base64"),
])
def test_embedding_decode_is_strict(text, message):
    with pytest.raises(ArtifactError, match=re.escape(message)):
        decode_embedding(text)


# -- the shared golden ------------------------------------------------------------


def test_shared_golden_checksum_for_samples(samples_store, suffixes, tmp_path):
    raw = export_artifact(samples_store, "cce/demo", ZERO_SHA, suffixes)
    (tmp_path / "cce_artifact_python.cce").write_bytes(raw)  # for a byte diff against another engine
    lines = _lines(raw)
    manifest = json.loads(lines[0])
    assert manifest["checksum"] == GOLDEN_SAMPLES_CHECKSUM
    assert manifest["chunk_count"] == 21 and len(lines) == 23
    assert manifest["repo_id"] == "cce/demo"  # a `/` is kept: repo ids are not sanitized here
    assert manifest["pack_set_id"] == "c,javascript,python,ruby,rust,typescript"
    graph = json.loads(lines[-1])
    assert graph["edges"] == []  # every import of the samples is external
    assert [n["id"] for n in graph["nodes"]] == [
        "c.c", "javascript.js", "notes.md", "python.py", "ruby.rb", "rust.rs", "typescript.ts"]
    assert hashlib.sha256(raw.replace(GOLDEN_SAMPLES_CHECKSUM.encode(), b"", 1)).hexdigest() == \
        GOLDEN_SAMPLES_CHECKSUM


def test_manifest_line_shape(samples_store, suffixes):
    raw = export_artifact(samples_store, "cce/demo", ZERO_SHA, suffixes)
    first = _lines(raw)[0]
    assert first.startswith('{"cce_version":"2.3","checksum":"')
    assert list(json.loads(first)) == ["cce_version", "checksum", "chunk_count", "embedder", "file_tokens",
                                       "pack_set_id", "repo_id", "sha"]
    assert ", " not in first and ": " not in first and "built_" not in first
    assert json.loads(first)["embedder"] == "hash"


def test_chunk_lines_are_canonical(samples_store, suffixes):
    raw = export_artifact(samples_store, "cce/demo", ZERO_SHA, suffixes)
    lines = _lines(raw)
    chunks = [json.loads(line) for line in lines[1:-1]]
    keys = ["chunk_type", "content", "embedding", "end_line", "file_path", "id", "kind", "language",
            "start_line", "token_count"]
    assert all(list(c) == keys for c in chunks)
    assert [(c["file_path"], c["start_line"], c["id"]) for c in chunks] == sorted(
        (c["file_path"], c["start_line"], c["id"]) for c in chunks)
    assert all(line == _compact(json.loads(line)) for line in lines[1:])
    assert all(len(c["embedding"]) == 2732 for c in chunks)
    by_id = {c.chunk_id: i for i, c in enumerate(samples_store.chunks)}
    for c in chunks:  # the vector is the store's row, bit for bit
        row = samples_store.embeddings[by_id[c["id"]]]
        assert decode_embedding(c["embedding"]) == row.tolist()


def test_export_is_deterministic_and_independent_of_store_order(samples_store, suffixes):
    raw = export_artifact(samples_store, "cce/demo", ZERO_SHA, suffixes)
    assert export_artifact(samples_store, "cce/demo", ZERO_SHA, suffixes) == raw
    reversed_store = StoreData(samples_store.meta, list(reversed(samples_store.chunks)),
                               samples_store.embeddings[::-1], list(reversed(samples_store.files)),
                               samples_store.edges, samples_store.bm25)
    assert export_artifact(reversed_store, "cce/demo", ZERO_SHA, suffixes) == raw


# -- the base fixture: one resolved edge -------------------------------------------


def test_base_fixture_has_exactly_the_resolved_edge(base_bytes):
    lines = _lines(base_bytes)
    graph = json.loads(lines[-1])
    assert graph["edges"] == [{"source": "payments.py", "target": "auth.py", "type": "import"}]
    assert lines[-1].startswith('{"edges":[{"source":"payments.py","target":"auth.py","type":"import"}],"nodes":[')
    assert [n["id"] for n in graph["nodes"]] == ["README.md", "auth.py", "payments.py"]
    assert re.fullmatch(r"[0-9a-f]{64}", json.loads(lines[0])["checksum"])


def test_base_fixture_round_trips_byte_for_byte(base_store, base_bytes):
    artifact = import_artifact(base_bytes)
    assert artifact.to_bytes() == base_bytes
    assert artifact.manifest.repo_id == BASE_REPO_ID and artifact.manifest.sha == BASE_SHA
    assert artifact.manifest.file_tokens == {f.path: f.tokens for f in base_store.files}
    assert artifact.file_imports == {"payments.py": ["auth"]}  # external hashlib leaves no trace
    assert artifact.edges == [("payments.py", "auth.py")]
    assert sorted(artifact.chunks, key=lambda c: c.chunk_id) == sorted(base_store.chunks, key=lambda c: c.chunk_id)


def test_a_missing_final_line_feed_is_tolerated(base_bytes):
    # The checksum covers the canonical rendering, as in the reference, so the last LF is not load-bearing.
    assert import_artifact(base_bytes[:-1]).to_bytes() == base_bytes


def test_suffix_resolution_is_the_packs(tree_dir, host, embedder, suffixes):
    data, _ = build_index(tree_dir, host, embedder)
    app = next(f for f in data.files if f.path == "web/app.js")
    app.imports = ["lib/db"]  # resolves only through a pack's suffix
    with_suffixes = build_artifact(data, "r", ZERO_SHA, suffixes)
    assert ("web/app.js", "web/lib/db.js") in with_suffixes.edges
    assert ("web/app.js", "web/lib/db.js") not in build_artifact(data, "r", ZERO_SHA, ()).edges
    # Read back, the import is the target's stem, which resolves to the same file.
    assert import_artifact(with_suffixes.to_bytes()).edges == with_suffixes.edges


# -- JSON text as serde_json writes it ------------------------------------------------


def _tiny_store(contents: dict[str, str], embedder) -> StoreData:
    chunks = [module_chunk(path, text) for path, text in contents.items()]
    vectors = np.asarray(embedder.embed_batch([c.content for c in chunks]), dtype=np.float64)
    files = [FileEntry(c.file_path, "x", estimate_tokens(c.content), i, 1, []) for i, c in enumerate(chunks)]
    bm25 = build_bm25([tokenize_bytes(c.content.encode()) for c in chunks])
    return StoreData({"embedder": "hash", "pack_set": "p"}, chunks, vectors, files, [], bm25)


def test_strings_are_escaped_as_serde_json_escapes_them(embedder):
    content = 'q"b\\s/d\x7f l\u2028p\u2029n\x85 é😀 \x00\x01\x1f\b\f\n\r\t'
    data = _tiny_store({"dir/naïve ✓.txt": content}, embedder)
    raw = export_artifact(data, "r", ZERO_SHA, ())
    chunk_line = _lines(raw)[1]
    expected = ('"content":"q\\"b\\\\s/d\x7f l\u2028p\u2029n\x85 é😀 '
                '\\u0000\\u0001\\u001f\\b\\f\\n\\r\\t"')
    assert expected in chunk_line
    assert '"file_path":"dir/naïve ✓.txt"' in chunk_line
    # Raw U+2028, U+0085 inside a string do not split a line: LF is the only separator.
    artifact = import_artifact(raw)
    assert artifact.chunks[0].content == content
    assert artifact.to_bytes() == raw


# -- rejections ----------------------------------------------------------------


def test_rejects_non_utf8():
    assert _rejected(bytes([0xFF, 0xFE, 0x00])).startswith("artifact is not UTF-8: ")
    # Worded as the reference words it: a sequence cut by the end of the input is "incomplete".
    assert _rejected(b"ok\n\xe2\x82") == "artifact is not UTF-8: incomplete utf-8 byte sequence from index 3"
    assert _rejected(b'{"a":"\xe2\x82"}\n') == "artifact is not UTF-8: invalid utf-8 sequence of 2 bytes from index 6"
    assert _rejected(b"ok\xe2\x82(\n") == "artifact is not UTF-8: invalid utf-8 sequence of 2 bytes from index 2"


@pytest.mark.parametrize("raw", [b"", b"\n", b"{}"])
def test_rejects_too_short(raw):
    assert _rejected(raw) == "artifact too short: need at least a manifest and a graph line"


def test_rejects_truncated(base_bytes):
    assert _rejected(b"{}\n") == "artifact too short: need at least a manifest and a graph line"
    assert _rejected(b'{}\n{"edges":[]}\n') == "manifest missing integer field `chunk_count`"
    half = _rejected(base_bytes[: len(base_bytes) // 2])
    assert half.startswith(("artifact line count", "bad chunk JSON", "bad graph JSON")), half
    assert _rejected(base_bytes[:-40]).startswith("bad graph JSON: ")


def test_rejects_wrong_line_count(base_bytes):
    lines = _lines(base_bytes)
    n = json.loads(lines[0])["chunk_count"]
    assert _rejected(_join(lines[:1] + lines[2:])) == (
        f"artifact line count {n + 1} does not match chunk_count {n} (expected {n + 2})")
    assert _rejected(base_bytes + b"\n").startswith(f"artifact line count {n + 3} does not match")


def test_rejects_a_flipped_content_byte(base_bytes):
    lines = _lines(base_bytes)
    target = next(i for i, line in enumerate(lines[1:-1], 1) if "def " in line)
    lines[target] = lines[target].replace("def ", "deg ", 1)
    message = _rejected(_join(lines))
    assert re.fullmatch(r"checksum mismatch: manifest says [0-9a-f]{64}, recomputed [0-9a-f]{64}", message)


def test_rejects_a_tampered_checksum(base_bytes):
    checksum = json.loads(_lines(base_bytes)[0])["checksum"]
    tampered = base_bytes.replace(checksum.encode(), b"0" * 64, 1)
    assert _rejected(tampered) == f"checksum mismatch: manifest says {'0' * 64}, recomputed {checksum}"


def test_the_checksum_covers_what_was_parsed_not_the_input_bytes(base_bytes):
    # As in the reference: the stream is re-rendered from what was parsed, so an unknown key,
    # another spacing or a different nodes list changes nothing that is kept, and is accepted.
    lines = _lines(base_bytes)
    chunk = json.loads(lines[1])
    chunk["extra"] = 1
    spaced = json.dumps(json.loads(lines[2]), ensure_ascii=False, sort_keys=True)
    graph = json.loads(lines[-1])
    graph["nodes"] = []
    variant = _join([lines[0], _compact(chunk), spaced, *lines[3:-1], _compact(graph)])
    assert variant != base_bytes
    assert import_artifact(variant).to_bytes() == base_bytes


def _with_manifest(raw: bytes, change) -> bytes:
    lines = _lines(raw)
    manifest = json.loads(lines[0])
    change(manifest)
    return _join([_compact(manifest), *lines[1:]])


@pytest.mark.parametrize("key", ["repo_id", "sha", "cce_version", "embedder", "pack_set_id", "checksum"])
def test_rejects_a_manifest_without_a_string_field(base_bytes, key):
    assert _rejected(_with_manifest(base_bytes, lambda m: m.pop(key))) == f"manifest missing string field `{key}`"
    assert _rejected(_with_manifest(base_bytes, lambda m: m.update({key: 1}))) == (
        f"manifest missing string field `{key}`")


def test_rejects_a_manifest_without_file_tokens():
    line = ('{"cce_version":"2.3","checksum":"x","chunk_count":0,"embedder":"hash","pack_set_id":"p",'
            '"repo_id":"r","sha":"s"}')
    assert _rejected(_join([line, '{"edges":[],"nodes":[]}'])) == "manifest missing object `file_tokens`"


@pytest.mark.parametrize("bad", [-1, 1.0, 2.5, True, None, "1", 1 << 64])
def test_rejects_counts_that_are_not_unsigned_integers(base_bytes, bad):
    assert _rejected(_with_manifest(base_bytes, lambda m: m.update(chunk_count=bad))) == (
        "manifest missing integer field `chunk_count`")
    assert _rejected(_with_manifest(base_bytes, lambda m: m["file_tokens"].update({"auth.py": bad}))) == (
        "file_tokens[auth.py] is not an integer")
    lines = _lines(base_bytes)
    for key in ("start_line", "end_line", "token_count"):
        chunk = json.loads(lines[1])
        chunk[key] = bad
        assert _rejected(_join([lines[0], _compact(chunk), *lines[2:]])) == f"chunk missing integer field `{key}`"


def test_minus_zero_is_not_an_integer(base_bytes):
    # serde_json reads `-0` as a float; re-rendered it would otherwise pass the checksum as `0`.
    lines = _lines(base_bytes)
    chunk = _compact(json.loads(lines[1]))
    assert '"start_line":1,' in chunk
    minus_zero = chunk.replace('"start_line":1,', '"start_line":-0,')
    assert _rejected(_join([lines[0], minus_zero, *lines[2:]])) == "chunk missing integer field `start_line`"
    variant = _with_manifest(base_bytes, lambda m: m.update(chunk_count="CC"))
    assert _rejected(variant.replace(b'"CC"', b"-0")) == "manifest missing integer field `chunk_count`"


@pytest.mark.parametrize("key", ["embedding", "id", "file_path", "chunk_type", "kind", "language", "content"])
def test_rejects_a_chunk_without_a_string_field(base_bytes, key):
    lines = _lines(base_bytes)
    chunk = json.loads(lines[1])
    del chunk[key]
    assert _rejected(_join([lines[0], _compact(chunk), *lines[2:]])) == f"chunk missing string field `{key}`"


@pytest.mark.parametrize(("embedding", "message"), [
    ("!!!!", "bad embedding base64"),
    (base64.b64encode(b"\0" * 12).decode(), "embedding byte length 12 is not a multiple of 8"),
])
def test_rejects_a_bad_chunk_embedding(base_bytes, embedding, message):
    lines = _lines(base_bytes)
    chunk = json.loads(lines[1])
    chunk["embedding"] = embedding
    assert _rejected(_join([lines[0], _compact(chunk), *lines[2:]])).startswith(message)


def test_rejects_bad_json(base_bytes):
    lines = _lines(base_bytes)
    assert _rejected(_join(["{not json", *lines[1:]])).startswith("bad manifest JSON: ")
    assert _rejected(_join([lines[0], "[1,", *lines[2:]])).startswith("bad chunk JSON: ")
    assert _rejected(_join([*lines[:-1], "{"])).startswith("bad graph JSON: ")
    # What serde_json refuses and Python's parser would take.
    nan_manifest = lines[0][:-1] + ',"x":NaN}'
    assert _rejected(_join([nan_manifest, *lines[1:]])).startswith("bad manifest JSON: ")
    huge = lines[0][:-1] + ',"x":1e400}'
    assert _rejected(_join([huge, *lines[1:]])).startswith("bad manifest JSON: ")
    surrogate = lines[1].replace('"content":"', '"content":"\\ud800', 1)
    assert _rejected(_join([lines[0], surrogate, *lines[2:]])).startswith("bad chunk JSON: ")


def test_a_surrogate_pair_escape_is_fine(embedder):
    raw = export_artifact(_tiny_store({"a.txt": "smile 😀"}, embedder), "r", ZERO_SHA, ())
    escaped = raw.replace("😀".encode(), b"\\ud83d\\ude00")
    assert import_artifact(escaped).to_bytes() == raw  # the same text, so the same checksum


def test_rejects_a_bad_graph_line(base_bytes):
    lines = _lines(base_bytes)
    assert _rejected(_join([*lines[:-1], '{"nodes":[]}'])) == "graph missing array `edges`"
    assert _rejected(_join([*lines[:-1], '{"edges":{}}'])) == "graph missing array `edges`"
    assert _rejected(_join([*lines[:-1], '{"edges":[{"target":"auth.py"}]}'])) == "edge missing string `source`"
    assert _rejected(_join([*lines[:-1], '{"edges":[{"source":"a","target":3}]}'])) == (
        "edge missing string `target`")


# -- export refusals ---------------------------------------------------------------


def test_export_refuses_a_non_hash_index(base_store, suffixes):
    other = StoreData({**base_store.meta, "embedder": "ollama"}, base_store.chunks, base_store.embeddings,
                      base_store.files, base_store.edges, base_store.bm25)
    with pytest.raises(ArtifactError, match="non-hash index"):
        export_artifact(other, "r", ZERO_SHA, suffixes)


# -- artifact → store → search ------------------------------------------------------


def _results(store: StoreData, embedder, kernel: str) -> list[list[tuple]]:
    """Every query's results; with top_k 2 the graph expansion adds neighbours' chunks too."""
    searcher = Searcher(store, embedder, kernel=kernel)
    return [[(r.rank, r.chunk.chunk_id, r.score, r.chunk.file_path, r.chunk.start_line, r.chunk.end_line)
             for r in searcher.search(q, top_k=top_k)] for q in QUERIES for top_k in (10, 2)]


@pytest.mark.parametrize("tree", ["samples", "base", "tree"])
def test_a_pulled_store_searches_exactly_as_a_local_build(tree, tree_dir, host, embedder, suffixes, tmp_path):
    root = tree_dir if tree == "tree" else _reference_fixture(tree)
    local, _ = build_index(root, host, embedder, protect_secrets=True)
    raw = export_artifact(local, "acme/x", ZERO_SHA, suffixes)
    pulled = artifact_to_store(import_artifact(raw), embedder)

    assert pulled.edges == local.edges
    assert [(f.path, f.tokens, f.chunk_count) for f in pulled.files] == [
        (f.path, f.tokens, f.chunk_count) for f in local.files]
    assert all(f.sha256 == PULLED_FILE_SHA256 for f in pulled.files)
    expected = _results(local, embedder, "numpy")
    assert any(expected)
    if tree != "samples":  # some answer needed the import graph
        assert any(len(results) > 2 for results in expected[1::2])
    assert _results(pulled, embedder, "numpy") == expected

    # Saved and re-opened, as `cce search` reads it, on both kernels.
    save_store(local, tmp_path / "local.cce")
    save_store(pulled, tmp_path / "pulled.cce")
    local_loaded, pulled_loaded = load_store(tmp_path / "local.cce"), load_store(tmp_path / "pulled.cce")
    for kernel in ("numpy", "lean"):
        assert _results(pulled_loaded, embedder, kernel) == _results(local_loaded, embedder, kernel) == expected
    # The pulled store exports to the artifact it came from.
    assert export_artifact(pulled_loaded, "acme/x", ZERO_SHA, suffixes) == raw


def test_pulled_store_meta(base_bytes, embedder):
    pulled = artifact_to_store(import_artifact(base_bytes), embedder)
    assert pulled.meta["embedder"] == "hash" and pulled.meta["embed_model"] == str(embedder.model or "")
    assert pulled.meta["embed_dim"] == 256 and pulled.meta["redaction"] is True
    assert pulled.meta["pack_set"] == "c,javascript,python,ruby,rust,typescript"
    assert pulled.meta["source"] == "sync-pull"
    assert pulled.meta["sync"]["repo_id"] == BASE_REPO_ID and pulled.meta["sync"]["sha"] == BASE_SHA
    assert pulled.files[-1].imports == ["auth"] and pulled.files[-1].path == "payments.py"


def test_a_later_index_rebuilds_instead_of_reusing_pulled_chunks(host, embedder, suffixes, tmp_path):
    root = copy_tree(_reference_fixture("base"), tmp_path / "base")
    local, _ = build_index(root, host, embedder)
    store_path = root / ".cce" / "index.cce"
    save_store(artifact_to_store(import_artifact(export_artifact(local, "r", ZERO_SHA, suffixes)), embedder),
               store_path)
    rebuilt, stats = index_directory(root, store_path, host, embedder)
    assert stats.reused_files == 0
    assert b"".join(serialize_parts(rebuilt)) == b"".join(serialize_parts(local))
    assert load_store(store_path).meta == local.meta


def test_artifact_to_store_refuses_foreign_artifacts(base_bytes, embedder):
    artifact = import_artifact(base_bytes)
    other = Artifact(Manifest(**{**artifact.manifest.__dict__, "embedder": "ollama"}), artifact.chunks,
                     artifact.embeddings, artifact.file_imports, artifact.edges)
    with pytest.raises(ArtifactError, match="only `hash` artifacts"):
        artifact_to_store(other, embedder)
    files = {k: v for k, v in artifact.manifest.file_tokens.items() if k != "auth.py"}
    orphan = Artifact(Manifest(**{**artifact.manifest.__dict__, "file_tokens": files}), artifact.chunks,
                      artifact.embeddings, artifact.file_imports, artifact.edges)
    with pytest.raises(ArtifactError, match=re.escape("auth.py, which the manifest does not list")):
        artifact_to_store(orphan, embedder)


def test_the_one_call_parse_of_a_canonical_artifact_equals_the_line_by_line_parse(samples_store, suffixes):
    from cce_core.sync.artifact import _parse_chunks

    lines = export_artifact(samples_store, "cce/demo", "0" * 40, suffixes).split(b"\n")[1:-2]
    fast, proven = _parse_chunks(lines, hashed=True, body=b"\n".join(lines))
    slow, slow_proven = _parse_chunks(lines, hashed=False)
    assert fast == slow and len(fast) == 21
    assert proven and not slow_proven  # only the fast path proves lines canonical
    # Two objects on one line and an object spread over two keep the count but not the segmentation:
    # only the line-by-line parse is used then, and it names the bad line.
    merged = [lines[0] + b"," + lines[1], b"{}"]
    with pytest.raises(ArtifactError, match="bad chunk JSON"):
        _parse_chunks(merged, hashed=True, body=b"\n".join(merged))
    # A canonical stream whose embedding is not the canonical spelling still gets the exact message.
    bad = [lines[0].replace(b'"embedding":"', b'"embedding":"!', 1)]
    with pytest.raises(ArtifactError, match="bad embedding base64"):
        _parse_chunks(bad, hashed=True, body=bad[0])
    # Valid but not canonical (another key order, an unknown key): parsed the same, never proven canonical.
    reversed_keys = dict(reversed(list(json.loads(lines[0]).items())))
    reordered = [json.dumps(reversed_keys, ensure_ascii=False, separators=(",", ":")).encode()]
    extra = [lines[0][:-1] + b',"zz":1}']
    for variant in (reordered, extra):
        parsed, canonical = _parse_chunks(variant, hashed=True, body=variant[0])
        assert parsed == fast[:1] and not canonical


def test_a_self_hashed_but_non_canonical_artifact_is_judged_as_the_reference_judges_it(base_bytes):
    # Someone writes an extra key into a chunk line and puts the hash of those very bytes in the
    # manifest. The reference re-renders what it parsed (without the key), so its checksum differs:
    # rejected. Hashing the bytes as sent must not let it through.
    lines = _lines(base_bytes)
    chunk = json.loads(lines[1])
    chunk["zz_extra"] = 1
    lines[1] = _compact(chunk)
    manifest = json.loads(lines[0])
    manifest["checksum"] = ""
    rest = _join(lines[1:])
    manifest["checksum"] = hashlib.sha256((_compact(manifest) + "\n").encode() + rest).hexdigest()
    forged = (_compact(manifest) + "\n").encode() + rest
    assert re.fullmatch(r"checksum mismatch: manifest says [0-9a-f]{64}, recomputed [0-9a-f]{64}", _rejected(forged))
    # The same for a graph line that is valid but not canonical (an empty nodes list).
    lines = _lines(base_bytes)
    graph = json.loads(lines[-1])
    graph["nodes"] = []
    lines[-1] = _compact(graph)
    manifest = json.loads(lines[0])
    manifest["checksum"] = ""
    rest = _join(lines[1:])
    manifest["checksum"] = hashlib.sha256((_compact(manifest) + "\n").encode() + rest).hexdigest()
    forged = (_compact(manifest) + "\n").encode() + rest
    assert _rejected(forged).startswith("checksum mismatch: ")


def test_orjson_renders_every_code_point_and_integer_as_the_canonical_writer_does():
    # The fast path proves a line canonical by rendering it with orjson; that is only sound
    # while orjson and the canonical writer agree byte for byte on strings and integers.
    import orjson

    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    value = {"b": text, "a": [0, 1, (1 << 64) - 1], "c": "\u2028\x7f/\\\""}
    assert orjson.dumps(value, option=orjson.OPT_SORT_KEYS) == dumps_canonical(value).encode("utf-8")



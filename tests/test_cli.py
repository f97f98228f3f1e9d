"""The installed ``cce`` command, end to end: goldens, persistence, and bad input."""

from __future__ import annotations

import json

import pytest
from helpers import REPO_ROOT, copy_tree, run_cce

from cce_core.indexing import store as store_module


def _without_impl_language(text: str) -> list[str]:
    return [line for line in text.splitlines() if "impl_language" not in line]


@pytest.mark.parametrize("which", ["repo samples", "reference samples"])
def test_conformance_is_byte_identical_to_the_reference(reference, tmp_path, which):
    fixture = REPO_ROOT / "samples" if which == "repo samples" else reference / "test" / "fixture" / "samples"
    out = tmp_path / "c.json"
    proc = run_cce("conformance", fixture, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"wrote {out}"
    expected = (reference / "conformance.json").read_text(encoding="utf-8")
    got = out.read_text(encoding="utf-8")
    assert _without_impl_language(got) == _without_impl_language(expected)
    assert got.endswith("}\n")
    assert json.loads(got)["impl_language"] == "python"


def test_conformance_is_deterministic(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run_cce("conformance", REPO_ROOT / "samples", "-o", a)
    run_cce("conformance", REPO_ROOT / "samples", "-o", b)
    assert a.read_bytes() == b.read_bytes()


@pytest.fixture
def base_index(reference, tmp_path):
    corpus = copy_tree(reference / "test" / "fixture" / "base", tmp_path / "base")
    proc = run_cce("index", corpus)
    assert proc.returncode == 0, proc.stderr
    return corpus, proc


def test_index_summary_lines(base_index):
    corpus, proc = base_index
    lines = proc.stdout.splitlines()
    assert lines[0] == f"Indexed {corpus}"
    assert lines[1:7] == [
        "  files indexed     : 3",
        "  files skipped     : 1",  # metrics_sample.jsonl
        "  sensitive skipped : 0",
        "  total chunks      : 7",
        "  embedder          : hash",
        f"  store             : {corpus / '.cce' / 'index.cce'}",
    ]
    assert lines[7].startswith("  elapsed           : ") and lines[7].endswith("s")


def test_base_queries_match_the_reference_exactly(reference, base_index):
    corpus, _ = base_index
    golden = json.loads((reference / "derived" / "base-queries.json").read_text(encoding="utf-8"))
    for q in golden["queries"]:
        proc = run_cce("search", q["query"], "--dir", corpus, "--top-k", "5", "--no-graph", "--json",
                       "--no-metrics")
        assert proc.returncode == 0, proc.stderr
        body = json.loads(proc.stdout)
        assert body["query_id"] is None  # present but null without a metrics event
        got = [(r["rank"], r["chunk_id"], r["file_path"], r["score"]) for r in body["results"]]
        want = [(r["rank"], r["chunk_id"], r["file_path"], r["score"]) for r in q["results"]]
        assert got == want, q["query"]
        assert list(body["results"][0]) == sorted(body["results"][0])  # keys in sorted order


def test_search_human_form(base_index):
    corpus, _ = base_index
    proc = run_cce("search", "hash password", "--dir", corpus, "--top-k", "2", "--no-graph", "--no-metrics")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        " 1. [0.878300] auth.py:3-4 (function/function_definition)",
        "    def hash_password(password):",
        " 2. [0.876031] auth.py:6-7 (function/function_definition)",
        "    def verify_password(password, digest):",
    ]


def test_graph_expansion_pulls_an_imported_file(base_index):
    corpus, _ = base_index
    data = store_module.load_store(corpus / ".cce" / "index.cce")
    assert ("payments.py", "auth.py") in data.edges
    plain = json.loads(run_cce("search", "refund", "--dir", corpus, "--top-k", "1", "--no-graph", "--json").stdout)
    graph = json.loads(run_cce("search", "refund", "--dir", corpus, "--top-k", "1", "--json").stdout)
    assert [r["file_path"] for r in plain["results"]] == ["payments.py"]
    assert [r["file_path"] for r in graph["results"][1:]] == ["auth.py", "auth.py"]


def test_stats_by_language_and_kind(base_index):
    corpus, _ = base_index
    proc = run_cce("stats", "--dir", corpus)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "  chunks         : 7\n" in out and "  files          : 3\n" in out
    assert "    python      : 6\n" in out and "    plaintext   : 1\n" in out
    assert "    function_definition : 5\n" in out and "    module              : 1\n" in out


def test_reindex_is_idempotent_and_incremental_equals_full(base_index, tmp_path):
    corpus, _ = base_index
    store_file = corpus / ".cce" / "index.cce"
    first = store_file.read_bytes()
    assert run_cce("index", corpus).returncode == 0
    assert store_file.read_bytes() == first  # unchanged files are reused, bytes identical

    (corpus / "payments.py").write_text("def pay(amount):\n    return amount\n", encoding="utf-8")
    (corpus / "README.md").unlink()
    assert run_cce("index", corpus).returncode == 0
    fresh = tmp_path / "fresh.cce"
    assert run_cce("index", corpus, "--store", fresh).returncode == 0
    incremental_store, fresh_store = store_module.load_store(store_file), store_module.load_store(fresh)
    assert list(incremental_store.chunks) == list(fresh_store.chunks)
    assert incremental_store.files == fresh_store.files and incremental_store.edges == fresh_store.edges
    assert (incremental_store.embeddings == fresh_store.embeddings).all()
    for query in ("pay amount", "hash password", "refund"):
        a = run_cce("search", query, "--dir", corpus, "--json", "--no-metrics").stdout
        b = run_cce("search", query, "--dir", corpus, "--store", fresh, "--json", "--no-metrics").stdout
        assert a == b
    data = store_module.load_store(store_file)
    assert sorted({c.file_path for c in data.chunks}) == ["auth.py", "payments.py"]


def test_atomic_write_keeps_the_old_store_when_the_rename_fails(tmp_path, monkeypatch):
    target = tmp_path / "index.cce"
    target.write_bytes(b"old store")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(store_module.os, "replace", broken_replace)
    with pytest.raises(OSError):
        store_module.atomic_write(target, b"new store")
    assert target.read_bytes() == b"old store"
    assert list(tmp_path.iterdir()) == [target]  # the temporary file was removed


def _one_error_line(proc) -> str:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_bad_input_gives_one_error_line(tmp_path):
    assert "no such directory" in _one_error_line(run_cce("index", tmp_path / "missing"))
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert "not a directory" in _one_error_line(run_cce("index", a_file))
    assert "no index" in _one_error_line(run_cce("search", "anything", "--dir", tmp_path))
    assert "no index" in _one_error_line(run_cce("stats", "--dir", tmp_path))
    assert "no searchable words" in _one_error_line(run_cce("search", "", "--dir", tmp_path))
    assert "no searchable words" in _one_error_line(run_cce("search", " ...;; ", "--dir", tmp_path))
    assert "unknown embedder" in _one_error_line(run_cce("index", REPO_ROOT / "samples", "--store",
                                                         tmp_path / "s.cce", "--embedder", "nope"))
    assert not (tmp_path / "s.cce").exists()
    assert _one_error_line(run_cce("search")).startswith("error: ")  # missing argument (usage error)
    assert run_cce("search").returncode == 2
    assert _one_error_line(run_cce("index", tmp_path, "--bogus")).startswith("error: ")


def test_corrupt_store_is_reported_and_rebuilt(tmp_path):
    corpus = copy_tree(REPO_ROOT / "samples", tmp_path / "s")
    store_file = corpus / ".cce" / "index.cce"
    store_file.parent.mkdir()
    store_file.write_bytes(b"CCEPYIX\x01garbage that is not a store")
    assert "corrupt" in _one_error_line(run_cce("search", "config", "--dir", corpus))
    store_file.write_bytes(b"")
    assert "corrupt" in _one_error_line(run_cce("stats", "--dir", corpus))
    assert run_cce("index", corpus).returncode == 0  # a corrupt store is simply rebuilt
    assert run_cce("search", "config", "--dir", corpus).returncode == 0


def test_empty_directory_indexes_to_an_empty_store(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cce("index", empty)
    assert proc.returncode == 0, proc.stderr
    assert "  total chunks      : 0" in proc.stdout
    search = run_cce("search", "anything", "--dir", empty, "--no-metrics")
    assert search.returncode == 0 and search.stdout.strip() == "(no results)"


def test_version_and_help():
    assert run_cce("--version").stdout.startswith("cce ")
    helptext = run_cce("--help").stdout
    for command in ("index", "search", "stats", "packs", "conformance", "bench"):
        assert command in helptext


def test_packs_lists_all_six_with_pack_set_id():
    proc = run_cce("packs")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "pack_set_id: c,javascript,python,ruby,rust,typescript"
    assert "Registered language packs (6):" in proc.stdout
    validate = run_cce("packs", "--validate")
    assert validate.returncode == 0, validate.stdout
    assert validate.stdout.splitlines()[-1] == "all 6 packs passed validation"


def test_packs_say_where_each_languages_symbols_come_from():
    proc = run_cce("packs")
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[0]: line for line in proc.stdout.splitlines() if " node kinds) · " in line}
    assert set(lines) == {"c", "javascript", "python", "ruby", "rust", "typescript"}
    # Python extends the grammar's shipped tags.scm; Ruby replaces it (its last pattern reads locals as calls).
    assert " · symbols tags.scm + pack · from cce-pack-python " in lines["python"]
    assert " · symbols pack · from cce-pack-ruby " in lines["ruby"]
    as_json = json.loads(run_cce("packs", "--json").stdout)
    assert {p["name"]: p["symbols"] for p in as_json["packs"]}["python"] == "tags.scm + pack"


def test_walker_rules(tmp_path):
    root = tmp_path / "r"
    (root / "src").mkdir(parents=True)
    (root / "src" / "keep.py").write_text("def keep():\n    return 1\n")
    (root / "src" / "gen.py").write_text("def gen():\n    return 2\n")
    (root / ".gitignore").write_text("src/gen.py\n*.log\n")
    (root / "sub").mkdir()
    (root / "sub" / ".gitignore").write_text("local.txt\n")
    (root / "sub" / "local.txt").write_text("ignored below sub")
    (root / "local.txt").write_text("kept at the root")
    (root / "app.log").write_text("log")
    (root / "events.jsonl").write_text("{}\n")
    (root / "big.txt").write_bytes(b"a" * (2 * 1024 * 1024 + 1))
    (root / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    for pruned in ("node_modules", "dist", "build", "__pycache__", ".hidden", "venv"):
        (root / pruned).mkdir()
        (root / pruned / "x.py").write_text("def x():\n    pass\n")
    (root / ".dotfile").write_text("dotfiles are indexed")
    (root / "link.py").symlink_to(root / "src" / "keep.py")
    (root / ".git").mkdir()
    (root / ".git" / "info").mkdir()
    (root / ".git" / "info" / "exclude").write_text("local.txt\n")
    from cce_core.indexing.walker import walk

    result = walk(str(root))
    assert [f.path for f in result.files] == [".dotfile", ".gitignore", "local.txt", "src/keep.py",
                                              "sub/.gitignore"]
    assert result.skipped == 3  # events.jsonl, big.txt, latin1.txt


def test_parallel_chunking_writes_the_same_store_as_serial(tmp_path):
    serial, parallel = tmp_path / "serial.cce", tmp_path / "parallel.cce"
    assert run_cce("index", REPO_ROOT / "samples", "--store", serial, env={"CCE_WORKERS": "1"}).returncode == 0
    proc = run_cce("index", REPO_ROOT / "samples", "--store", parallel, env={"CCE_WORKERS": "2"})
    assert proc.returncode == 0, proc.stderr
    assert parallel.read_bytes() == serial.read_bytes()


def test_an_unchanged_tree_keeps_its_store_untouched(tmp_path):
    corpus = copy_tree(REPO_ROOT / "samples", tmp_path / "s")
    assert run_cce("index", corpus, "--no-metrics").returncode == 0
    store_file = corpus / ".cce" / "index.cce"
    before = store_file.stat()
    again = run_cce("index", corpus, "--no-metrics")
    assert again.returncode == 0
    assert "  total chunks      : 21" in again.stdout
    after = store_file.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not rewritten
    (corpus / "notes.md").write_text("# Notes\nchanged\n", encoding="utf-8")
    assert run_cce("index", corpus, "--no-metrics").returncode == 0
    assert store_file.stat().st_ino != before.st_ino  # a change writes a new store

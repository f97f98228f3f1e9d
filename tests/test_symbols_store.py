"""Symbols in the store: recorded per segment at index time, exact after re-indexes and compaction.

An incremental store (a segment per re-index, superseded files left in older
segments) and a compacted one must answer every symbol query exactly as a
fresh index of the same tree does. Symbols hold no text redaction hides, and
a store without symbol records says so instead of answering nothing silently.
"""

from __future__ import annotations

from pathlib import Path

from helpers import index_with_hash, sample_corpus
from secret_formats import rand

from cce_core.indexing.indexer import build_index
from cce_core.indexing.store import load_store, save_store, segments_dir
from cce_core.plugins.host import default_host
from cce_core.symbols.index import SymbolIndex, open_symbols


def _edit(root: Path) -> None:
    """Edit two files (a call added, a function renamed), add one, delete one."""
    index = root / "symbols" / "index.py"
    index.write_text(index.read_text(encoding="utf-8").replace("def _fuzzy_rank(", "def _fuzzy_score(")
                     + "\n\ndef appended(store):\n    return open_symbols(store).files()\n", encoding="utf-8")
    chunker = root / "indexing" / "chunker.py"
    chunker.write_text("from indexing.bm25 import build_bm25\n" + chunker.read_text(encoding="utf-8"), encoding="utf-8")
    (root / "symbols" / "added.py").write_text("from .model import decode_file_symbols\n\n\ndef use(raw):\n"
                                               "    return decode_file_symbols(raw)\n", encoding="utf-8")
    (root / "indexing" / "graph.py").unlink()


def _answers(store: Path) -> dict[str, object]:
    """Every symbol query over every name the store defines or references."""
    index = open_symbols(store)
    names = sorted({d.name for d in index.all_definitions()} | {d.qualified_name for d in index.all_definitions()}
                   | {r.name for r in index.all_references()})
    return {
        "files": index.files(),
        "definitions": index.all_definitions(),
        "references": index.all_references(),
        "per_name": [(n, index.definitions(n), index.references(n), index.callers(n, depth=2), index.callees(n))
                     for n in names],
        "fuzzy": index.definitions("symb", fuzzy=True),
    }


def test_an_incremental_store_answers_every_symbol_query_like_a_fresh_one(tmp_path):
    root = sample_corpus(tmp_path, 'symbols', 'indexing')
    store = tmp_path / "inc.cce"
    index_with_hash(root, store)
    _edit(root)
    data, _stats = index_with_hash(root, store)
    assert len(data.segments) == 2  # the re-index added a segment; the old one still holds superseded files
    fresh = tmp_path / "fresh.cce"
    index_with_hash(root, fresh, reuse=False)
    answers = _answers(store)
    assert answers == _answers(fresh)
    # the edits are visible: the renamed function, the appended caller, the new file, the deleted one
    index = open_symbols(store)
    assert index.definitions("_fuzzy_rank") == [] and index.definitions("_fuzzy_score")
    assert [e.caller for e in index.callers("open_symbols") if e.file_path == "symbols/index.py"] == ["appended"]
    assert "symbols/added.py" in index.files() and "indexing/graph.py" not in index.files()


def test_a_compacted_store_answers_like_a_fresh_one_and_keeps_its_symbol_bytes(tmp_path):
    root = sample_corpus(tmp_path, 'symbols', 'indexing')
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    _edit(root)
    index_with_hash(root, store)
    data, _stats = index_with_hash(root, store, compact=True)
    assert len(data.segments) == 1
    fresh = tmp_path / "fresh.cce"
    index_with_hash(root, fresh, reuse=False)
    assert _answers(store) == _answers(fresh)
    (compacted,) = segments_dir(store).iterdir()
    (reference,) = segments_dir(fresh).iterdir()
    assert compacted.read_bytes() == reference.read_bytes()


def test_definitions_point_at_their_chunks(tmp_path):
    root = sample_corpus(tmp_path, 'symbols', 'indexing')
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    by_id = {c.chunk_id: c for c in load_store(store).chunks}
    index = open_symbols(store)
    (definition,) = index.definitions("SymbolIndex.callers")
    chunk = by_id[definition.chunk_id]
    assert (chunk.file_path, chunk.start_line, chunk.end_line) == \
        (definition.file_path, definition.line, definition.end_line)
    assert chunk.content.startswith("def callers(")


def test_symbols_never_hold_a_secret_redaction_hides(tmp_path):
    token = "ghp_" + rand("symbols-store", 36)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "client.py").write_text(f'def connect(token="{token}"):\n    return open_session(token)\n\n\n'
                                    f'API_TOKEN = "{token}"\n', encoding="utf-8")
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    index = open_symbols(store)
    (connect,) = index.definitions("connect")
    assert token not in connect.signature and connect.signature.startswith("def connect(token=")
    assert {d.name for d in index.all_definitions()} == {"connect", "API_TOKEN"}
    for segment in segments_dir(store).iterdir():  # nor anywhere in the stored bytes, compressed or not
        assert token.encode() not in segment.read_bytes()
        assert token.encode() not in b"".join(
            load_store(store).segments[0].symbol_payload(f.path) or b"" for f in load_store(store).files)


def test_a_store_without_symbol_records_says_how_to_get_them(tmp_path):
    root = sample_corpus(tmp_path, 'symbols', 'indexing')
    host = default_host()
    data, _stats = build_index(root, host, host.embedder("hash"))
    for entry in data.files:  # what a store pulled from a sync remote, or written before symbols, holds
        entry.symbols = None
    store = tmp_path / "pulled.cce"
    save_store(data, store)
    index = SymbolIndex.from_store(load_store(store))
    assert not index.available
    assert "cce index --rebuild" in index.unavailable_reason
    assert index.definitions("open_symbols") == [] and index.callers("open_symbols") == []
    assert sorted(index.missing) == sorted(f.path for f in data.files)


def test_no_format_of_the_adversarial_secrets_corpus_reaches_a_symbol(tmp_path):
    """The 99 planted formats (tests/secret_formats.py): none in any name, signature or module specifier."""
    from secret_formats import FORMATS, tail

    root = tmp_path / "repo"
    for fmt in FORMATS:
        path = root / fmt.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fmt.text, encoding="utf-8", newline="")
    store = tmp_path / "s.cce"
    index_with_hash(root, store)
    index = open_symbols(store)
    assert index.available and index.all_definitions()  # void unless the corpus's code has symbols
    seen = "\n".join([f"{d.name} {d.qualified_name} {d.signature}" for d in index.all_definitions()]
                     + [r.name for r in index.all_references()]
                     + [m for path in index.files() for m in index._modules.get(path, [])])
    assert [fmt.name for fmt in FORMATS if fmt.secret in seen or tail(fmt.secret) in seen] == []


def test_a_record_round_trips_and_a_damaged_one_is_refused():
    from cce_core.symbols.model import FileSymbols, ReferenceColumns, decode_file_symbols, encode_file_symbols

    symbols = FileSymbols([["größe", "function", 1, 3, -1, 0, "def größe(x):"]],
                          ReferenceColumns(["größe", "len"], "cC", [2, 3], [0, 0], [0, -1], [-1, 0]), ["os.path"])
    raw = encode_file_symbols(symbols)
    assert decode_file_symbols(raw) == symbols and encode_file_symbols(decode_file_symbols(raw)) == raw
    assert list(decode_file_symbols(raw).references) == [["größe", "c", 2, 0, 0], ["len", "C", 3, 0, -1, 0]]
    assert encode_file_symbols(FileSymbols()) == b"" and decode_file_symbols(b"") == FileSymbols()
    for damaged in (raw[:-3], b"XX" + raw[2:]):
        try:
            decode_file_symbols(damaged)
        except ValueError:
            continue
        raise AssertionError(f"accepted a damaged record: {damaged!r}")

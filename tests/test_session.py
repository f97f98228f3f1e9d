"""Layer 6: the per-session ledger and its byte-pinned digest."""

from __future__ import annotations

from cce_core.agents.ledger import MAX_ITEMS, SessionLedger, elision, short_label
from cce_core.agents.memory import record_decision
from cce_core.foundation.config import CceConfig

EMPTY = "CCE session digest\n(nothing recorded this session yet)"


def _golden_sequence() -> SessionLedger:
    led = SessionLedger()
    led.note_search("hash password", ["bbbb000000000000", "aaaa000000000000"], ["auth.py"])
    led.note_search("process payment", ["cccc000000000000"], ["payments.py", "auth.py"])
    led.note_search("hash password", ["aaaa000000000000"], ["auth.py"])
    led.note_expand("bbbb000000000000", "body")
    led.note_related("cccc000000000000")
    led.note_decision("1111222233334444", "use bcrypt for password hashing")
    return led


def test_empty_ledger_digest_for_every_scope():
    led = SessionLedger()
    for scope in ("all", "files", "queries", "decisions"):
        assert led.digest(scope) == EMPTY
    assert led.summarize({}) == (EMPTY, False)


def test_digest_is_byte_pinned_for_a_fixed_call_sequence():
    golden = ("CCE session digest\n"
              "files (2):\n- auth.py\n- payments.py\n"
              "chunks (3):\n- aaaa000000000000\n- bbbb000000000000\n- cccc000000000000\n"
              "queries (2):\n- hash password\n- process payment\n"
              "decisions (1):\n- #1111222233334444 use bcrypt for password hashing")
    assert _golden_sequence().digest("all") == golden
    assert _golden_sequence().summarize({"scope": "  "}) == (golden, False)
    assert len(_golden_sequence()) == 6


def test_scope_slices():
    led = SessionLedger()
    led.note_search("q1", ["aaaa000000000000"], ["a.py"])
    led.note_decision("deadbeefdeadbeef", "chose approach X")
    assert led.summarize({"scope": "queries"}) == ("CCE session digest\nqueries (1):\n- q1", False)
    assert led.summarize({"scope": "Files"}) == (
        "CCE session digest\nfiles (1):\n- a.py\nchunks (1):\n- aaaa000000000000", False)
    assert led.digest("decisions") == "CCE session digest\ndecisions (1):\n- #deadbeefdeadbeef chose approach X"


def test_a_slice_with_no_items_still_has_its_header():
    led = SessionLedger()
    led.note_search("only a query", [], [])
    assert led.digest("decisions") == "CCE session digest\ndecisions (0):"


def test_lists_are_capped_with_the_elision_marker():
    led = SessionLedger()
    for i in range(25):
        led.note_search(f"q{i:02d}", [], [])
    out = led.digest("queries")
    assert out.startswith("CCE session digest\nqueries (25):")
    assert "\n- q19" in out and "\n- q20" not in out
    assert out.endswith("\n… (+5 more)")
    assert out.count("\n- q") == MAX_ITEMS


def test_unknown_scope_is_a_tool_error():
    assert SessionLedger().summarize({"scope": "everything"}) == (
        'summarize_context: unknown scope "everything"; use "all", "files", "queries", or "decisions".', True)


def test_elision_and_short_label():
    assert elision(3) == "… (+3 more)" and elision(1) == "… (+1 more)"
    assert short_label("  use   bcrypt\tfor hashing\n") == "use bcrypt for hashing"
    assert short_label("你好  世界") == "你好 世界"
    assert short_label("a" * 80) == "a" * 60 + "…"
    assert short_label("b" * 60) == "b" * 60


def test_served_tokens_and_the_summarize_hint():
    led = SessionLedger()
    led.note_served("x" * 400)
    assert led.served_tokens == 100
    assert led.summarize_due(100) and not led.summarize_due(101) and not led.summarize_due(None)


def test_tiny_repo_session_digest_golden(tmp_path):
    # The reference's MCP digest golden, driven at the library level: two real
    # searches over the tiny repo, an expand, then a recorded decision.
    from cce_core.indexing.indexer import build_index
    from cce_core.plugins.host import default_host
    from cce_core.retrieval.searcher import Searcher

    (tmp_path / "auth.py").write_text("def hash_password(pw):\n    return pw + 'salt'\n")
    (tmp_path / "payments.py").write_text("import auth\n\ndef process_payment(amount):\n    return amount\n")
    host = default_host()
    embedder = host.embedder("hash")
    store, _ = build_index(tmp_path, host, embedder)
    searcher = Searcher(store, embedder)
    led = SessionLedger()
    for query in ("hash password", "process payment amount"):
        results = searcher.search(query, 8, graph=False)
        led.note_search(query, [r.chunk.chunk_id for r in results], [r.chunk.file_path for r in results])
    led.note_expand("039f8bd5b80a698e", "body")
    text, is_error = record_decision(tmp_path, {"text": "store password hashes with bcrypt", "area": "auth"},
                                     CceConfig(), led)
    assert (text, is_error) == ("Recorded decision #03774d8fa782583c. Retrieve it later with session_recall.", False)
    assert led.summarize({}) == ("CCE session digest\n"
                                 "files (2):\n- auth.py\n- payments.py\n"
                                 "chunks (2):\n- 039f8bd5b80a698e\n- 61707be0deb092a1\n"
                                 "queries (2):\n- hash password\n- process payment amount\n"
                                 "decisions (1):\n- #03774d8fa782583c store password hashes with bcrypt", False)
    assert led.summarize({"scope": "files"})[0] == ("CCE session digest\n"
                                                    "files (2):\n- auth.py\n- payments.py\n"
                                                    "chunks (2):\n- 039f8bd5b80a698e\n- 61707be0deb092a1")

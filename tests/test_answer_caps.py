"""Every MCP answer is bounded: a documented cap per tool and a tail that says how to get the rest.

A real ``cce mcp`` process serves a repository with one pathological chunk (a
function of about 90,000 characters) and a knowledge record whose one section
runs to about 6,000 characters. Normal answers are covered byte for byte by
the other MCP tests; here the capped ones must stay under their cap, say where
they stopped, and give back the whole text when asked with the argument the
tail names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import run_cce
from test_mcp import McpClient, index

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'mcp>=2.3,<3')")

from cce_core.agents.mcp_tools import ANSWER_CAPS, KNOWLEDGE_SECTION_MAX_CHARS

GIANT_LINES = 1500
GIANT = "def giant_ledger():\n" + "".join(
    f"    value_{i} = compute_balance({i})  # keep the giant ledger balanced\n" for i in range(GIANT_LINES))
USER = "import big\n\n\ndef use_giant_ledger():\n    return big.giant_ledger()\n"
PAGE_TAIL = re.compile(r"\n?… truncated at (\d+) of (\d+) characters; ask for more with offset=(\d+) "
                       r"\(same arguments\)\n\Z")
PAGE_LEAD = re.compile(r"\A… from character (\d+) of (\d+):\n")
SEARCH_TAIL = re.compile(r"… truncated at 40000 characters; ask for more with max_tokens=(\d+)\n")
LONG_SECTION = " ".join(f"Sentence {i} of the refund runbook explains one more step of the refund process."
                        for i in range(75))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("caps") / "repo"
    root.mkdir()
    (root / "big.py").write_text(GIANT, encoding="utf-8")
    (root / "user.py").write_text(USER, encoding="utf-8")
    index(root)
    feed = root / "feed.jsonl"
    feed.write_text(json.dumps({"id": "kn:refunds", "title": "Refund runbook", "body": "## Steps\n\n" + LONG_SECTION,
                                "source": "handbook"}) + "\n", encoding="utf-8")
    done = run_cce("knowledge", "index", feed, "--dir", root)
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture(scope="module")
def server(repo: Path) -> Iterator[McpClient]:
    client = McpClient("--dir", repo)
    yield client
    client.close()


def chunk_id_of(server: McpClient, query: str, path: str) -> str:
    text = server.text("context_search", {"query": query, "source": "code", "detail": "signature"})
    for line in text.split("\n"):
        if f"] {path}:" in line:
            return line.rsplit("#", 1)[1]
    raise AssertionError(text)


def read_all_pages(server: McpClient, args: dict[str, object]) -> tuple[str, int]:
    """The whole answer, put back together from its pages (the tail says where each stopped); and the page count."""
    tool = str(args["tool"])
    call = {k: v for k, v in args.items() if k != "tool"}
    whole, offset, pages = "", 0, 0
    while True:
        page = server.text(tool, {**call, **({"offset": offset} if offset else {})})
        pages += 1
        assert len(page) <= ANSWER_CAPS[tool], (pages, len(page))
        if offset:
            lead = PAGE_LEAD.match(page)
            assert lead and int(lead.group(1)) == offset, page[:80]
            page = page[lead.end():]
        tail = PAGE_TAIL.search(page)
        if tail is None:
            return whole + page, pages
        end = int(tail.group(1))
        assert int(tail.group(3)) == end > offset
        whole += page[:end - offset]
        offset = end


def test_the_caps_are_the_documented_ones() -> None:
    assert ANSWER_CAPS == {"context_search": 40_000, "index_status": 20_000, "record_feedback": 2_000,
                           "expand_chunk": 40_000, "related_context": 40_000, "set_output_compression": 2_000,
                           "record_decision": 2_000, "session_recall": 20_000, "summarize_context": 20_000}
    docs = (Path(__file__).resolve().parents[1] / "docs" / "mcp.md").read_text(encoding="utf-8")
    for tool, cap in ANSWER_CAPS.items():
        assert f"| `{tool}` | {cap:,} |" in docs, tool
    assert KNOWLEDGE_SECTION_MAX_CHARS == 2_000


def test_a_huge_body_is_paged_and_the_pages_rebuild_it(server: McpClient) -> None:
    giant = chunk_id_of(server, "giant_ledger", "big.py")
    first = server.text("expand_chunk", {"chunk_id": giant})
    assert len(first) <= 40_000
    tail = PAGE_TAIL.search(first)
    assert tail, first[-300:]
    assert int(tail.group(2)) == len(GIANT.rstrip("\n"))
    assert first.startswith("def giant_ledger():\n") and first[:int(tail.group(1))].endswith("balanced\n")
    whole, pages = read_all_pages(server, {"tool": "expand_chunk", "chunk_id": giant})
    assert whole == GIANT.rstrip("\n") and pages == 3


def test_neighbours_are_capped_with_the_same_tail(server: McpClient) -> None:
    user = chunk_id_of(server, "use_giant_ledger", "user.py")
    text = server.text("expand_chunk", {"chunk_id": user, "scope": "neighbors"})
    assert len(text) <= 40_000 and text.startswith("neighbours of user.py — 1 chunk(s):\n")
    assert PAGE_TAIL.search(text)
    whole, _ = read_all_pages(server, {"tool": "expand_chunk", "chunk_id": user, "scope": "neighbors"})
    assert whole.endswith(GIANT.rstrip("\n").rsplit("\n", 1)[1] + "\n")


def test_offset_errors_and_the_end_of_an_answer(server: McpClient) -> None:
    giant = chunk_id_of(server, "giant_ledger", "big.py")
    text, is_error = server.call("expand_chunk", {"chunk_id": giant, "offset": -3})
    assert is_error and text == ("expand_chunk: `offset` must be a non-negative integer "
                                 "(the offset=N a truncated answer's tail names).")
    past = server.text("expand_chunk", {"chunk_id": giant, "offset": 10**7})
    assert past == f"nothing left: the whole answer is {len(GIANT.rstrip(chr(10)))} characters (offset 10000000)."
    small = chunk_id_of(server, "use_giant_ledger", "user.py")
    assert server.text("expand_chunk", {"chunk_id": small}) == USER.split("\n\n\n")[1].rstrip("\n")


def test_a_full_search_is_capped_and_max_tokens_gets_the_rest(server: McpClient) -> None:
    capped = server.text("context_search", {"query": "giant ledger balance", "source": "code", "detail": "full"})
    assert len(capped) <= 40_000
    tail = SEARCH_TAIL.search(capped)
    assert tail, capped[-400:]
    assert re.search(r"query_id: [0-9a-f]{12}\n", capped)  # the trailer survives the cap
    assert "(context truncated to max_tokens)" not in capped
    whole = server.text("context_search", {"query": "giant ledger balance", "source": "code", "detail": "full",
                                           "max_tokens": int(tail.group(1))})
    assert GIANT.rstrip("\n") in whole and "truncated" not in whole


def test_long_knowledge_sections_are_bounded_unless_full(server: McpClient) -> None:
    compact = server.text("context_search", {"query": "refund runbook step", "source": "knowledge"})
    assert "[knowledge] Refund runbook" in compact
    served = "## Steps\n\n" + compact.split("\n## Steps\n\n", 1)[1].split("\n\n")[0]
    assert len(served) <= KNOWLEDGE_SECTION_MAX_CHARS + 40
    assert re.search(r"\n… \(\+\d+ lines\)$", served) or served.endswith("…")
    full = server.text("context_search", {"query": "refund runbook step", "source": "knowledge", "detail": "full"})
    assert LONG_SECTION in full


def test_echoed_arguments_are_bounded(server: McpClient) -> None:
    text = server.text("record_feedback", {"query_id": "q" * 10_000, "helpful": True})
    assert len(text) < 600 and "q" * 200 + "…" in text
    text, is_error = server.call("set_output_compression", {"level": "x" * 10_000})
    assert is_error and len(text) < 600
    text, is_error = server.call("expand_chunk", {"chunk_id": "z" * 10_000})
    assert not is_error and len(text) < 600

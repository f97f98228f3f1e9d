"""The nine MCP tools: their pinned definitions, argument parsing and result texts.

Agents bind to tool names, schemas and descriptions, and the family's engines
must serve the same result bytes, so every string an agent sees is fixed here.
The tools are plain functions of ``(session, arguments) -> (text, is_error)``;
the session (:mod:`cce_core.agents.mcp_session`) owns the cached index and the
per-session state, and the transport never sees anything but text.

A missing index, a stale chunk id or disabled memory are ordinary results that
carry guidance; ``is_error`` is reserved for a malformed call.

Two rules hold for every answer. A stored string (a path, a kind, a record
id, a marker's sha) is printed on one line
(:func:`~cce_core.foundation.safe_text.one_line`), so nothing a repository or
a feed holds can forge a result row; an argument echoed back is cut to 200
characters. And every answer has a size cap (:data:`ANSWER_CAPS`, the table
in docs/mcp.md): a longer one stops at a line boundary with a tail saying
where it stopped and the argument that gets the rest — ``max_tokens`` for
``context_search``, ``offset`` for the tools that only read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cce_core.foundation.safe_text import echo, one_line, shorten
from cce_core.foundation.textrules import UNICODE_WHITESPACE

if TYPE_CHECKING:
    from pathlib import Path

    from cce_core.agents.mcp_session import LoadedIndex, SessionState
    from cce_core.indexing.chunk import Chunk
    from cce_core.services.session_search import CodeSearch

ToolResult = tuple[str, bool]

DEFAULT_TOP_K = 8
BYTES_PER_TOKEN = 4

# --------------------------------------------------------------------------- pinned strings

CONTEXT_SEARCH_DESC = (
    "Search THIS project's code by meaning, across files. Use it FIRST for any cross-file question "
    '— "where is X", "how does Y work", "what calls Z" — or whenever you cannot already name the '
    'exact file to open. Returns the most relevant code chunks (file:line + kind) from a hybrid '
    "vector + BM25 index, so you don't pay tokens for whole files. Skip it only when you already "
    'know the single file you need — reading that path directly is fine; cce does not win there. '
    'Results are COMPACT and each carries a `chunk_id`; to read a full body call '
    '`expand_chunk(chunk_id)` — do NOT re-issue `context_search` for a target you already found. '
    'Widen to import-graph neighbours with `related_context(chunk_id)`.'
)
EXPAND_CHUNK_DESC = (
    'Read the FULL detail of a chunk `context_search` already returned, by its `chunk_id`. '
    '`context_search` serves COMPACT chunks (a header + members, or a signature + first line); when '
    'you need the real body, call this — do NOT re-run `context_search` for a chunk you already '
    'have. scope=body recovers the exact full body; scope=file returns every chunk in the same '
    'file; scope=neighbors returns chunks from import-graph-related files. A stale or unknown '
    '`chunk_id` returns a short, actionable error you can retry from, never a crash.'
)
RELATED_CONTEXT_DESC = (
    'Given a `chunk_id` from `context_search`, return the chunks connected to it through the import '
    'graph — both what it imports AND its consumers (reverse edges) — as compact entries. Use it to '
    'widen context on demand — trace how a symbol is used or what it depends on across files — '
    'instead of pre-loading whole neighbourhoods; expand any result with `expand_chunk(chunk_id)`. '
    'Pairs with `context_search` (find first) and `expand_chunk` (read the full body).'
)
SET_OUTPUT_COMPRESSION_DESC = (
    "Set how terse THIS session's answers should be — the output-compression level the agent "
    'applies to its OWN replies. Levels: `off` (no rules), `lite` (concise; drop '
    'filler/preamble/postamble), `standard` (fewest correct words; code as minimal diffs, never '
    'whole files; no preamble or postamble), `max` (standard + telegraphic prose; code as minimal '
    'diffs only). Use it to dial verbosity down when you want terse diffs, or up (`off`) when you '
    'want full explanations — mid-session, without editing CLAUDE.md. It sets a session preference '
    'only; it does not rewrite CLAUDE.md and resets when the server restarts.'
)
RECORD_DECISION_DESC = (
    'Remember a VALIDATED decision for future sessions — an explicit, deliberate note you or the '
    'user have confirmed is correct (an architecture choice, a convention, a resolved trade-off), '
    'so it need not be re-derived later. The text is secret-redacted before storage, '
    'content-addressed, and de-duplicated: recording the same decision twice is a no-op that '
    'returns the same id. Do NOT record raw model output, guesses, or unverified answers — memory '
    'that replays a bad answer POLLUTES future context. Optional `tags` and an `area` help recall. '
    "Returns the decision's id; retrieve later with `session_recall`."
)
SESSION_RECALL_DESC = (
    "Search THIS project's remembered decisions (recorded with `record_decision`) for ones relevant "
    "to `query`, so you don't re-derive what was already settled. Hybrid vector + BM25 search, "
    'PRECISION-FILTERED: it returns only high-confidence matches (a small top_k) as compact entries '
    'with ids, which you CHOOSE to use — it is never an auto-injected blob. Returning nothing when '
    'there is no confident match is normal and correct; proceed without it rather than forcing a '
    'weak memory into context.'
)
SUMMARIZE_CONTEXT_DESC = (
    'Get a compact, deterministic digest of what THIS session has done so far — the files and '
    'chunks you have touched, the queries you have run, and the decisions you have recorded — so '
    "you can compress a long session's history into a few lines instead of re-sending the raw "
    "transcript. It is a STRUCTURED digest built from the server's per-session ledger, NOT an "
    'LLM-written summary: the same sequence of tool calls always yields the same bytes. Optional '
    '`scope` narrows it: "all" (default), "files" (the files AND chunks touched), "queries", or '
    '"decisions". Long lists are bounded with a `… (+N more)` marker. An unknown `scope` returns a '
    'short, actionable error, never a crash.'
)
INDEX_STATUS_DESC = "Check whether this project is indexed and how fresh it is."
RECORD_FEEDBACK_DESC = (
    "Record whether a prior `context_search` result was helpful, to improve the quality signal on the dashboard."
)

MISSING_INDEX = (
    "This project is not indexed yet — run `cce index` (or `cce init`). No results are available until then."
)
MISSING_WORKSPACE_INDEX = (
    "This workspace is not indexed yet — run `cce index --workspace` (or `cce init`). "
    "No results are available until then."
)
NOT_A_WORKSPACE = (
    "not a workspace — no `.cce/workspace.yml`. Run `cce workspace init` then `cce index --workspace` "
    "(or `cce init`)."
)
COMPACT_HINT = (
    "Bodies shown compact. expand_chunk(chunk_id, scope=body|file|neighbors) for more; "
    "related_context(chunk_id) for import-graph neighbours.\n"
)
TRUNCATED_MARK = "… (context truncated to max_tokens)\n\n"

# --------------------------------------------------------------------------- answer caps

# The most characters each tool answers with (docs/mcp.md has the table). They sit far above a normal
# answer — a compact search of 8 results is 2-3k characters, a full one 10-25k, a body's 99th percentile
# on flask 11k — and below the 25k tokens at which Claude Code cuts a tool result on its own.
ANSWER_CAPS: dict[str, int] = {
    "context_search": 40_000,
    "index_status": 20_000,
    "record_feedback": 2_000,
    "expand_chunk": 40_000,
    "related_context": 40_000,
    "set_output_compression": 2_000,
    "record_decision": 2_000,
    "session_recall": 20_000,
    "summarize_context": 20_000,
}
# context_search keeps this much of its cap for what follows the rows (the cap tail, the hint, the query id,
# the usage footer, a notice or two), so the rows are cut and the whole answer stays within the cap.
SEARCH_TRAILER_RESERVE = 2_000
# A knowledge section served at signature or compact detail (sections have no compact form of their own).
KNOWLEDGE_SECTION_MAX_CHARS = 2_000
# Below this much room a cut row's body is not worth showing (the first row is always shown).
_MIN_PARTIAL_BODY = 500
SEARCH_CAP_MARK = "… truncated at {cap} characters; ask for more with max_tokens={tokens}\n\n"
PAGE_LEAD = "… from character {offset} of {total}:\n"
PAGE_TAIL = "… truncated at {end} of {total} characters; ask for more with offset={end} (same arguments)\n"
OFFSET_ERROR = "{tool}: `offset` must be a non-negative integer (the offset=N a truncated answer's tail names)."

_INT = {"type": "integer"}
_STR = {"type": "string"}

TOOL_DEFINITIONS: list[dict[str, Any]] = [
    {
        "name": "context_search",
        "description": CONTEXT_SEARCH_DESC,
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": dict(_STR),
                "top_k": {**_INT, "default": 8},
                "package": {**_STR, "description": "scope to one workspace member (optional)"},
                "no_graph": {"type": "boolean", "default": False},
                "max_tokens": {**_INT, "description": "cap the returned context (optional)"},
                "detail": {**_STR, "enum": ["signature", "compact", "full"],
                           "description": "chunk compression level (optional; default from config, usually compact)"},
                "source": {**_STR, "enum": ["code", "knowledge", "both"],
                           "description": "which pools to search (optional; default `both` when a knowledge store "
                                          "exists, else `code`)"},
            },
            "required": ["query"],
        },
    },
    {
        "name": "index_status",
        "description": INDEX_STATUS_DESC,
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "record_feedback",
        "description": RECORD_FEEDBACK_DESC,
        "inputSchema": {
            "type": "object",
            "properties": {"query_id": dict(_STR), "helpful": {"type": "boolean"}, "note": dict(_STR)},
            "required": ["query_id", "helpful"],
        },
    },
    {
        "name": "expand_chunk",
        "description": EXPAND_CHUNK_DESC,
        "inputSchema": {
            "type": "object",
            "properties": {
                "chunk_id": dict(_STR),
                "scope": {**_STR, "enum": ["body", "file", "neighbors"], "default": "body"},
            },
            "required": ["chunk_id"],
        },
    },
    {
        "name": "related_context",
        "description": RELATED_CONTEXT_DESC,
        "inputSchema": {
            "type": "object",
            "properties": {"chunk_id": dict(_STR), "top_k": {**_INT, "default": 8}},
            "required": ["chunk_id"],
        },
    },
    {
        "name": "set_output_compression",
        "description": SET_OUTPUT_COMPRESSION_DESC,
        "inputSchema": {
            "type": "object",
            "properties": {
                "level": {**_STR, "enum": ["off", "lite", "standard", "max"],
                          "description": "how terse THIS session's answers should be"},
            },
            "required": ["level"],
        },
    },
    {
        "name": "record_decision",
        "description": RECORD_DECISION_DESC,
        "inputSchema": {
            "type": "object",
            "properties": {
                "text": {**_STR, "description": "the validated decision to remember"},
                "tags": {"type": "array", "items": dict(_STR), "description": "optional labels"},
                "area": {**_STR, "description": "optional area/component this decision is about"},
            },
            "required": ["text"],
        },
    },
    {
        "name": "session_recall",
        "description": SESSION_RECALL_DESC,
        "inputSchema": {
            "type": "object",
            "properties": {"query": dict(_STR), "top_k": {**_INT, "default": 5}},
            "required": ["query"],
        },
    },
    {
        "name": "summarize_context",
        "description": SUMMARIZE_CONTEXT_DESC,
        "inputSchema": {
            "type": "object",
            "properties": {
                "scope": {**_STR, "enum": ["all", "files", "queries", "decisions"], "default": "all",
                          "description": "which slice of the session digest to return"},
            },
        },
    },
]

# --------------------------------------------------------------------------- argument parsing

_U64_MAX = (1 << 64) - 1


def trim(text: str) -> str:
    return text.strip(UNICODE_WHITESPACE)


def str_arg(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    return value if isinstance(value, str) else None


def u64_arg(args: Mapping[str, Any], key: str) -> int | None:
    value = args.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _U64_MAX:
        return value
    return None


def top_k_arg(args: Mapping[str, Any], default: int = DEFAULT_TOP_K) -> int:
    value = u64_arg(args, "top_k")
    return value if value else default


def bool_arg(args: Mapping[str, Any], key: str) -> bool | None:
    value = args.get(key)
    return value if isinstance(value, bool) else None


# --------------------------------------------------------------------------- rendering


def trim_to_tokens(content: str, max_tokens: int) -> tuple[str, bool]:
    """Cut ``content`` to about ``max_tokens`` tokens on a character boundary; (text, was_cut)."""
    from cce_core.foundation.textrules import estimate_tokens

    if max_tokens == 0:
        return "", True
    if estimate_tokens(content) <= max_tokens:
        return content, False
    raw = content.encode("utf-8")
    end = min(max_tokens * BYTES_PER_TOKEN, len(raw))
    while 0 < end < len(raw) and (raw[end] & 0xC0) == 0x80:
        end -= 1
    return raw[:end].decode("utf-8"), True


def format_rows(rows: Sequence[Any], bodies: Sequence[str], query_id: str | None, max_tokens: int | None,
                total_chunks: int, full: bool, found: str = "code", max_chars: int | None = None) -> str:
    """The context_search text: a compact header per result, its served body, then the hints.

    ``rows`` are :class:`~cce_core.observability.result_line.GrammarRow` values (or header lines
    already rendered, as knowledge rows are) and ``bodies`` the bodies served for them at the
    requested detail. ``found`` names what was searched in the no-result sentence.

    ``max_chars`` bounds the rows (headers, bodies, blank lines): the row that would cross it is
    cut at a line boundary (the first row always shows something), the rest are left out, and
    :data:`SEARCH_CAP_MARK` names the ``max_tokens`` that serves every body whole.
    """
    from cce_core.foundation.textrules import estimate_tokens
    from cce_core.observability.result_line import compact_line

    if not rows:
        text = f"No matching {found} found. The index has {total_chunks} chunk(s) — try broader or different terms."
        if query_id is not None:
            text += f"\n\nquery_id: {query_id}\n"
        return text
    out: list[str] = []
    used = 0
    used_chars = 0
    truncated = capped = False
    for i, (row, served) in enumerate(zip(rows, bodies, strict=True)):
        header = (row if isinstance(row, str) else compact_line(row)) + "\n"
        body = served
        if max_tokens is not None:
            body, cut = trim_to_tokens(served, max(0, max_tokens - used))
            truncated |= cut
        block = body if body.endswith("\n") else body + "\n"
        if max_chars is not None and used_chars + len(header) + len(block) + 1 > max_chars:
            capped = True
            room = max_chars - used_chars - len(header) - 1
            if room > 0 and (i == 0 or room >= _MIN_PARTIAL_BODY):
                out += [header, cut_at_line(block, room), "\n"]
            break
        out += [header, block, "\n"]
        used_chars += len(header) + len(block) + 1
        used += estimate_tokens(body)
        if max_tokens is not None and used >= max_tokens and i + 1 < len(rows):
            truncated = True
            break
    if truncated:
        out.append(TRUNCATED_MARK)
    if capped:
        # One token more than every body holds, so a last empty body cannot count as left out.
        tokens = sum(estimate_tokens(b) for b in bodies) + 1
        out.append(SEARCH_CAP_MARK.format(cap=ANSWER_CAPS["context_search"], tokens=tokens))
    if not full:
        out.append(COMPACT_HINT)
    if query_id is not None:
        out.append(f"query_id: {query_id}\n")
        out.append(f'Rate this with record_feedback (query_id="{query_id}", helpful=true|false).\n')
    return "".join(out)


def search_rows_budget(max_tokens: int | None) -> int | None:
    """The character bound on a context_search answer's rows: none when the caller set ``max_tokens``."""
    return None if max_tokens is not None else ANSWER_CAPS["context_search"] - SEARCH_TRAILER_RESERVE


def cut_at_line(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, cut back to a line end when one lies in their second half."""
    if len(text) <= limit:
        return text
    newline = text.rfind("\n", 0, limit)
    if newline >= limit // 2:
        return text[:newline + 1]
    return text[:limit] + "\n"


def page_answer(text: str, offset: int, cap: int) -> str:
    """The part of a tool's answer from character ``offset`` that fits in ``cap`` characters.

    A whole answer within the cap comes back unchanged. Otherwise the page
    ends at a line boundary (or mid-line when a line is longer than half the
    page) and :data:`PAGE_TAIL` says where, and that ``offset=<there>`` with the
    same arguments continues; a page after the first opens with
    :data:`PAGE_LEAD`. The answer is rebuilt per call, so pages line up as long
    as the index does not change in between.
    """
    total = len(text)
    if offset == 0 and total <= cap:
        return text
    if offset >= total:
        return f"nothing left: the whole answer is {total} characters (offset {offset})."
    lead = PAGE_LEAD.format(offset=offset, total=total) if offset else ""
    rest = text[offset:]
    if len(lead) + len(rest) <= cap:
        return lead + rest
    budget = cap - len(lead) - len(PAGE_TAIL.format(end=total, total=total)) - 1  # - 1: the tail's own line
    newline = rest.rfind("\n", 0, budget)
    keep = newline + 1 if newline >= budget // 2 else budget
    piece = rest[:keep]
    return lead + piece + ("" if piece.endswith("\n") else "\n") + PAGE_TAIL.format(end=offset + keep, total=total)


def offset_arg(args: Mapping[str, Any], tool: str) -> tuple[int, ToolResult | None]:
    """The ``offset`` a paged tool was called with (0 when absent), or the error for a bad one."""
    if args.get("offset") is None:
        return 0, None
    value = u64_arg(args, "offset")
    if value is None:
        return 0, (OFFSET_ERROR.format(tool=tool), True)
    return value, None


def paged(name: str, tool: Any, cap: int | None = None) -> Any:
    """``tool`` with its answer cut to ``cap`` (default ``ANSWER_CAPS[name]``) and paged by an ``offset`` argument.

    Only for tools that read: a page is the same call run again, so a tool that
    writes (a decision, a feedback event) must stay within its cap by itself.
    ``offset`` is not in the pinned tool schemas (the family's tool list stays
    byte-identical); the tail of a cut answer names it.
    """
    limit = ANSWER_CAPS[name] if cap is None else cap

    def run(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
        offset, error = offset_arg(args, name)
        if error is not None:
            return error
        text, is_error = tool(session, args)
        return page_answer(text, offset, limit), is_error

    run.__name__ = getattr(tool, "__name__", name)
    run.__doc__ = tool.__doc__
    return run


def footer_line(result_count: int, total_chunks: int, served: int, baseline: int, saved: int, ratio: float,
                session: tuple[int, int] | None = None) -> str:
    """The opt-in usage line appended to a context_search result (``mcp.result_footer``)."""
    from cce_core.foundation.textrules import round_half_away
    from cce_core.observability.usage import short_tokens, thousands

    pct = int(round_half_away(ratio * 100.0))
    line = (f"cce: {result_count} results from {thousands(total_chunks)} chunks · served ~{thousands(served)} tok "
            f"vs ~{thousands(baseline)} baseline · saved ~{thousands(saved)} ({pct}%)")
    if session is not None:
        searches, session_saved = session
        line += f" · session: {searches} searches, ~{short_tokens(session_saved)} saved"
    return line


def chunk_header(chunk: Chunk) -> str:
    return (f"{one_line(chunk.file_path)}:{chunk.start_line}-{chunk.end_line} "
            f"({one_line(chunk.chunk_type)}/{one_line(chunk.kind)}) #{one_line(chunk.chunk_id)}")


def render_group(title: str, blocks: Sequence[tuple[Chunk, str]]) -> str:
    out = [title, "\n"]
    for chunk, body in blocks:
        out.append("\n")
        out.append(chunk_header(chunk))
        out.append("\n")
        out.append(body if body.endswith("\n") else body + "\n")
    return "".join(out)


def stale_chunk_message(chunk_id: str) -> str:
    return f"no chunk with id {echo(chunk_id)} in the current index — it may be stale; re-run context_search."


# --------------------------------------------------------------------------- tools


def context_search(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    query = trim(str_arg(args, "query") or "")
    if not query:
        return "context_search requires a non-empty `query`.", True
    top_k = top_k_arg(args)
    graph = not (bool_arg(args, "no_graph") or False)
    max_tokens = u64_arg(args, "max_tokens")
    detail = session.detail(str_arg(args, "detail"))
    package = str_arg(args, "package")
    from cce_core.agents.mcp_knowledge import resolve_source

    source = resolve_source(session, str_arg(args, "source"))
    if source != "code":
        return _blended_search(session, query, source, top_k=top_k, graph=graph, max_tokens=max_tokens,
                               detail=detail, package=package)
    found = code_search(session, query, top_k, graph, package)
    if isinstance(found, str):
        return found, False
    from cce_core.retrieval.detail_views import FULL

    bodies, record, query_id = log_code_search(session, found, query=query, top_k=top_k, graph=graph, detail=detail)
    text = format_rows(found.rows, bodies, query_id, max_tokens, found.total, detail == FULL,
                       max_chars=search_rows_budget(max_tokens))
    return _finish_search(session, text, record, found.total, found.notice), False


def code_search(session: SessionState, query: str, top_k: int, graph: bool,
                package: str | None) -> CodeSearch | str:
    """Rank the code index (or the workspace union); a guidance text when there is nothing to search."""
    from cce_core.services.session_search import NothingToSearch, session_code_search

    found = session_code_search(session, query, top_k, graph, package)
    if isinstance(found, NothingToSearch):
        return {"index": MISSING_INDEX, "workspace": MISSING_WORKSPACE_INDEX}.get(found.reason, found.message)
    return found


def log_code_search(session: Any, found: CodeSearch, *, query: str, top_k: int, graph: bool,
                    detail: str, knowledge_results: int = 0) -> tuple[list[str], Any, str | None]:
    """Serve bodies at ``detail``, log the search event (source mcp), note it in the ledger.

    ``knowledge_results``: knowledge sections served beside these results (a ``both`` search).

    Returns (bodies, record, query_id).
    """
    from cce_core.retrieval.detail_views import FULL
    from cce_core.services.session_search import record_session_search

    results = found.results
    bodies = [session.compress(r.chunk.file_path, r.chunk.content, detail) for r in results]
    record, query_id = record_session_search(session, found, query=query, top_k=top_k, graph=graph,
                                             served_bodies=None if detail == FULL else bodies,
                                             knowledge_results=knowledge_results)
    session.note_search_usage(record.tokens_saved)
    session.ledger.note_search(query, [r.chunk.chunk_id for r in results],
                               [r.chunk.file_path for r in results])
    return bodies, record, query_id


def _blended_search(session: SessionState, query: str, source: str, *, top_k: int, graph: bool,
                    max_tokens: int | None, detail: str, package: str | None) -> ToolResult:
    """``context_search`` for ``source`` knowledge (no event, no query id) or both (the code event only)."""
    import dataclasses as dc

    from cce_core.agents.mcp_knowledge import (
        CODE_INDEX_LOAD_ERROR_NOTICE,
        knowledge_header,
        knowledge_hits,
        with_notice,
    )
    from cce_core.knowledge.blend import display_record_id
    from cce_core.retrieval.detail_views import FULL, bounded_view
    from cce_core.services.search_knowledge import blend
    from cce_core.services.session_search import CodeSearch

    hits, knowledge_notice, knowledge_total = knowledge_hits(session, query, top_k)
    found: CodeSearch | str | None = None
    if source == "both":
        found = code_search(session, query, top_k, graph, package)
    else:
        profile = session.config().secrets_profile
        session.ledger.note_search(query, [h.chunk_id for h in hits],
                                   [display_record_id(h.chunk.record_id, profile) for h in hits])
    code_notice = record = query_id = None
    served: dict[int, tuple[Any, str]] = {}  # by result object: two members may share a chunk id
    total = knowledge_total
    blended = blend(found.results if isinstance(found, CodeSearch) else [], hits, top_k)
    if isinstance(found, CodeSearch):
        bodies, record, query_id = log_code_search(session, found, query=query, top_k=top_k, graph=graph,
                                                   detail=detail, knowledge_results=blended.knowledge_shown)
        served = {id(r): (row, body) for r, row, body in zip(found.results, found.rows, bodies, strict=True)}
        code_notice, total = found.notice, total + found.total
    elif found is not None and not session.workspace and found == MISSING_INDEX and session.store_path.exists():
        code_notice = CODE_INDEX_LOAD_ERROR_NOTICE  # a code index on disk that cannot be loaded
    rows: list[Any] = []
    row_bodies: list[str] = []
    for rank, item in enumerate(blended.rows, start=1):
        if item.is_knowledge:
            rows.append(knowledge_header(rank, item.hit))
            # A section has no compact form: it is served whole, up to a bound below full detail.
            content = item.hit.chunk.content
            row_bodies.append(content if detail == FULL else bounded_view(content, KNOWLEDGE_SECTION_MAX_CHARS))
        else:
            row, body = served[id(item.hit)]
            rows.append(dc.replace(row, rank=rank))
            row_bodies.append(body)
    text = format_rows(rows, row_bodies, query_id, max_tokens, total, detail == FULL, found="context",
                       max_chars=search_rows_budget(max_tokens))
    if record is not None:
        text = _finish_search(session, text, record, total, None)
    return with_notice(code_notice, with_notice(knowledge_notice, text)), False


def _finish_search(session: SessionState, text: str, record: Any, total: int, notice: str | None) -> str:
    """Append the opt-in usage footer and put the degradation notice first."""
    mode = session.footer_mode
    if mode != "off":
        if not text.endswith("\n"):
            text += "\n"
        usage = session.session_usage() if mode == "session" else None
        text += footer_line(record.result_count, total, record.served_tokens, record.baseline_tokens,
                            record.tokens_saved, record.savings_ratio, usage) + "\n"
    if notice is not None:
        text = f"{notice}\n\n{text}"
    return text


LOCAL_SOURCE = "local (built by cce index)"
NO_REMOTE_LINE = "  remote  : (no sync remote configured — pure local)"
BEHIND_LINE = "  behind remote: yes — run `cce sync pull --latest`"
UNKNOWN_LATEST = "-"  # the remote could not be asked (offline, no pointer yet, no repo id)
SHORT_SHA = 12


def freshness_lines(root: Path) -> list[str]:
    """Where the served index came from and whether the sync remote has a newer one.

    ``source`` says pulled (with the sha ``.cce/synced.json`` records) or
    built locally. Without a sync remote that is all, and nothing touches the
    network. With one, the remote's latest ``main`` pointer is read; any
    failure there degrades to ``-`` / ``no`` (SPEC-SYNC-KNOWLEDGE §4.4: the
    code freshness lines are best effort and offline-safe), because
    ``index_status`` must always answer. ``behind remote`` is ``yes`` only
    when both shas are known and differ.
    """
    from cce_core.services.index_freshness import index_freshness

    fresh = index_freshness(root)
    source = (f"pulled via cce sync (sha {one_line(fresh.pulled_sha[:SHORT_SHA])})" if fresh.pulled_sha is not None
              else LOCAL_SOURCE)
    lines = [f"  source  : {source}"]
    if not fresh.remote_configured:
        return [*lines, NO_REMOTE_LINE]
    latest = fresh.remote_latest
    lines.append(f"  remote latest: {one_line(latest[:SHORT_SHA]) if latest is not None else UNKNOWN_LATEST}")
    lines.append(BEHIND_LINE if fresh.behind_remote else "  behind remote: no")
    return lines


def index_status(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    from cce_core.agents.mcp_knowledge import append_status

    text, is_error = _code_index_status(session)
    return append_status(session, text), is_error


def _code_index_status(session: SessionState) -> ToolResult:
    from collections import Counter

    if session.workspace:
        return _index_status_workspace(session)
    store = session.store_path
    loaded = session.load_index()
    if loaded is None:
        return f"not indexed — no store at {one_line(str(store))}. Run `cce index` (or `cce init`).", False
    chunks = loaded.data.chunks
    by_language = Counter(one_line(c.language) for c in chunks)
    by_kind = Counter(one_line(c.kind) for c in chunks)
    lines = [
        "Index status",
        f"  store   : {one_line(str(store))}",
        "  indexed : yes",
        f"  chunks  : {len(chunks)}",
        f"  files   : {len({c.file_path for c in chunks})}",
        f"  embedder: {one_line(loaded.data.embedder or 'hash')}",
        "  by language:",
        *(f"    {lang:<12}: {by_language[lang]}" for lang in sorted(by_language)),
        "  by kind:",
        *(f"    {kind:<22}: {by_kind[kind]}" for kind in sorted(by_kind)),
        *freshness_lines(session.root),
    ]
    return "\n".join(lines) + "\n", False


def _index_status_workspace(session: SessionState) -> ToolResult:
    from cce_core.foundation.errors import CceError
    from cce_core.services.workspace_stats import workspace_statistics

    try:
        manifest = session.manifest()
    except CceError:
        return NOT_A_WORKSPACE, False
    try:
        bundle = session.workspace_bundle(manifest, None)
    except CceError as exc:
        return str(exc), False
    stats = workspace_statistics(session.root, manifest, bundle.members)
    lines = [f"Workspace status: {one_line(stats.name)}"]
    lines += [f"  {one_line(s.name)} (package {one_line(s.package)}) — files {s.files}, chunks {s.chunks}"
              for s in stats.members]
    lines.append(f"  totals  : files {stats.total_files}, chunks {stats.total_chunks}")
    lines.append(f"  edges ({len(stats.edges)}):")
    lines += [f"    {one_line(e.source)} -> {one_line(e.target)} (via {one_line(e.via)})" for e in stats.edges]
    lines += freshness_lines(session.root)
    return "\n".join(lines) + "\n", False


def record_feedback(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    from cce_core.services.feedback import record_feedback as record

    query_id = trim(str_arg(args, "query_id") or "")
    if not query_id:
        return "record_feedback requires a `query_id` (the id from a prior context_search).", True
    helpful = bool_arg(args, "helpful")
    if helpful is None:
        return "record_feedback requires a boolean `helpful` (true or false).", True
    note = str_arg(args, "note") or ""
    if record(session.metrics_path, query_id, helpful, note).event_id is None:
        return "could not record feedback (the metrics log is not writable).", True
    verdict = "helpful" if helpful else "not helpful"
    return (f"Recorded feedback ({verdict}) for {echo(query_id)}. This feeds the dashboard's retrieval-quality "
            "signal (`cce dashboard`)."), False


def _chunk_id_or_error(args: Mapping[str, Any], tool: str) -> tuple[str, ToolResult | None]:
    chunk_id = trim(str_arg(args, "chunk_id") or "")
    if not chunk_id:
        return "", (f"{tool} requires a `chunk_id` (from a prior context_search result).", True)
    return chunk_id, None


def _working_index(session: SessionState) -> tuple[LoadedIndex | None, str]:
    """The index chunk ids resolve in: the store, or in a workspace the union of every member."""
    if not session.workspace:
        return session.load_index(), MISSING_INDEX
    from cce_core.foundation.errors import CceError

    try:
        manifest = session.manifest()
    except CceError:
        return None, MISSING_WORKSPACE_INDEX
    try:
        return session.workspace_bundle(manifest, None).union, ""
    except CceError as exc:
        return None, str(exc)


def _chunk_in_working_index(session: SessionState, chunk_id: str) -> tuple[Any, Any, str | None]:
    """(index, chunk, None), or a message saying why the chunk cannot be served (no index, stale id)."""
    loaded, missing = _working_index(session)
    if loaded is None:
        return None, None, missing
    target = loaded.chunk(chunk_id)
    if target is None:
        return loaded, None, stale_chunk_message(chunk_id)
    return loaded, target, None


EXPAND_SCOPES = ("body", "file", "neighbors")


def expand_chunk(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    chunk_id, error = _chunk_id_or_error(args, "expand_chunk")
    if error is not None:
        return error
    raw_scope = args.get("scope")
    scope = trim(raw_scope if isinstance(raw_scope, str) else "body")
    if scope not in EXPAND_SCOPES:
        from cce_core.observability.usage import debug_quote

        return f'expand_chunk: unknown scope {debug_quote(shorten(scope))}; use "body", "file", or "neighbors".', True
    session.ledger.note_expand(chunk_id, scope)
    text, _found = expand_answer(session, chunk_id, scope)
    return text, False


def expand_answer(session: SessionState, chunk_id: str, scope: str) -> tuple[str, bool]:
    """The whole expansion of a code chunk or knowledge section id at ``scope``: ``(text, found)``.

    When the id resolves nowhere, ``text`` is the guidance an agent gets (no
    index, a stale id). ``cce expand`` prints the same text as the tool.
    """
    loaded, target, problem = _chunk_in_working_index(session, chunk_id)
    if problem is not None:
        from cce_core.agents.mcp_knowledge import expand_knowledge

        knowledge = expand_knowledge(session, chunk_id, scope)
        return (problem, False) if knowledge is None else (knowledge, True)
    if scope == "body":
        return target.content, True
    shown = one_line(target.file_path)
    if scope == "file":
        chunks = loaded.chunks_in_file(target.file_path)
        return render_group(f"file {shown} — {len(chunks)} chunk(s):", [(c, c.content) for c in chunks]), True
    chunks = loaded.neighbour_chunks(target.file_path)
    if not chunks:
        return f"no import-graph neighbours for {shown} in the current index.", True
    return render_group(f"neighbours of {shown} — {len(chunks)} chunk(s):", [(c, c.content) for c in chunks]), True


@dataclasses.dataclass(frozen=True)
class Expansion:
    """``cce expand``'s answer: the tool's text, whether the id resolved, whether nothing is indexed at all."""

    text: str
    found: bool
    nothing_indexed: bool


def expand_in_project(root: Path, chunk_id: str, scope: str) -> Expansion:
    """What the ``expand_chunk`` tool answers for ``chunk_id``, from a fresh session over ``root``."""
    from cce_core.agents.mcp_session import SessionState

    session = SessionState(root)
    text, found = expand_answer(session, chunk_id, scope)
    # Only when the id resolved nowhere is it worth asking whether anything is indexed at all.
    nothing = not found and text == MISSING_INDEX and not session.load_knowledge().present
    return Expansion(text, found, nothing)


def related_context(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    chunk_id, error = _chunk_id_or_error(args, "related_context")
    if error is not None:
        return error
    top_k = top_k_arg(args)
    session.ledger.note_related(chunk_id)
    loaded, target, problem = _chunk_in_working_index(session, chunk_id)
    if problem is not None:
        from cce_core.agents.mcp_knowledge import related_knowledge

        knowledge = related_knowledge(session, chunk_id, top_k)
        return (problem if knowledge is None else knowledge), False
    shown = one_line(target.file_path)
    chunks = loaded.neighbour_chunks(target.file_path)[:top_k]
    if not chunks:
        return f"no import-graph neighbours for {shown}.", False
    from cce_core.retrieval.detail_views import COMPACT

    blocks = [(c, session.compress(c.file_path, c.content, COMPACT)) for c in chunks]
    title = f"related to {shown} via import graph — {len(blocks)} chunk(s):"
    return render_group(title, blocks), False


def set_output_compression(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    from cce_core.agents.output_level import apply_set_output_compression

    level, text, is_error = apply_set_output_compression(dict(args))
    if level is not None and not is_error:
        session.output_level = level
    return text, is_error


def record_decision(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    from cce_core.agents.memory import record_decision as record

    return record(session.root, dict(args), session.config(), ledger=session.ledger)


def session_recall(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    from cce_core.agents.memory import session_recall as recall

    return recall(session.root, dict(args), session.config(), member_roots=session.member_roots())


def summarize_context(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    return session.ledger.summarize(dict(args))


# context_search bounds its own rows (its continuation is max_tokens, never a re-run with an offset); the
# three tools that write stay within their caps by construction (fixed sentences, echoes cut to 200 characters).
TOOLS = {
    "context_search": context_search,
    "index_status": paged("index_status", index_status),
    "record_feedback": record_feedback,
    "expand_chunk": paged("expand_chunk", expand_chunk),
    "related_context": paged("related_context", related_context),
    "set_output_compression": set_output_compression,
    "record_decision": record_decision,
    "session_recall": paged("session_recall", session_recall),
    "summarize_context": paged("summarize_context", summarize_context),
}

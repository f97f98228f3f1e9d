"""The symbol navigation MCP tools: find_symbol, find_references, call_graph, change_impact, repo_map.

Kept apart from :mod:`cce_core.agents.mcp_tools`, whose nine tools are pinned
across the engine family (names, descriptions, schemas). These five are our
own: the server lists them after the nine unless the session ranks with the
``family`` profile, where the list stays the family's (see
:func:`listed_for`). In a workspace session they ask every member (or the
``package`` one) and each row names its member. Each tool parses its arguments, calls one function of
:mod:`cce_core.services.symbols` and renders the rows with
:mod:`cce_core.agents.symbol_texts`; its answer is capped like every other
tool's and paged with ``offset``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from cce_core.agents.mcp_session import SessionState
    from cce_core.services.symbols import Target

ToolResult = tuple[str, bool]

# The most characters each tool answers with; a longer answer is paged (offset=N), as the other read-only tools.
SYMBOL_ANSWER_CAPS: dict[str, int] = {
    "find_symbol": 20_000,
    "find_references": 40_000,
    "call_graph": 40_000,
    "change_impact": 40_000,
    "repo_map": 40_000,
}
DEFAULT_TOOL_LIMIT = 100
_INT = {"type": "integer"}
_STR = {"type": "string"}
_NAME = {**_STR, "description": "a name (render) or a qualified name (Flask.route, Class#method, a::b)"}
_LIMIT = {**_INT, "default": DEFAULT_TOOL_LIMIT, "description": "most rows to return"}
_PACKAGE = {**_STR, "description": "scope to one workspace member (optional)"}
BAD_PACKAGE = "`package` must be a workspace member's name"

SYMBOL_TOOL_DEFINITIONS: list[dict[str, Any]] = [
    {
        "name": "find_symbol",
        "description": ("Find where a function, method, class or other symbol is defined: kind, file:line and "
                        "signature of each definition. Use before reading files when you know a name. "
                        "fuzzy=true also matches parts of names. Bodies: expand_chunk with the chunk id."),
        "inputSchema": {"type": "object", "required": ["name"], "properties": {
            "name": _NAME, "fuzzy": {"type": "boolean", "default": False}, "limit": _LIMIT, "package": _PACKAGE}},
    },
    {
        "name": "find_references",
        "description": ("Every use of a symbol (calls, imports, mentions), grouped by file, with the function each "
                        "use sits in and how the name resolved (same-file, import, global). A qualified name "
                        "(Class.method) keeps the uses that resolve to that definition; include_uncertain=true adds "
                        "uses on receivers of unknown type that may mean it."),
        "inputSchema": {"type": "object", "required": ["name"], "properties": {
            "name": _NAME, "include_uncertain": {"type": "boolean", "default": False}, "limit": _LIMIT,
            "package": _PACKAGE}},
    },
    {
        "name": "call_graph",
        "description": ("Who calls a function (direction=callers), what it calls (callees), or both, to depth "
                        "hops (1-5). One row per call: where it is written, the function on the other end."),
        "inputSchema": {"type": "object", "required": ["name"], "properties": {
            "name": _NAME,
            "direction": {**_STR, "enum": ["callers", "callees", "both"], "default": "callers"},
            "depth": {**_INT, "default": 1}, "limit": _LIMIT, "package": _PACKAGE}},
    },
    {
        "name": "change_impact",
        "description": ("What a change can break: the definitions the uncommitted diff (or `diff` REV, or "
                        "staged=true) touches, their callers to depth hops, and the tests that use them. Run "
                        "before editing a widely used function or after a change, to know what to re-test."),
        "inputSchema": {"type": "object", "properties": {
            "diff": {**_STR, "description": "compare the working tree with this revision (default HEAD)"},
            "staged": {"type": "boolean", "default": False}, "depth": {**_INT, "default": 1}, "limit": _LIMIT,
            "package": _PACKAGE}},
    },
    {
        "name": "repo_map",
        "description": ("A first look at a repository: its most central files and their most used definitions "
                        "(PageRank over who-uses-what), as signatures within a token budget."),
        "inputSchema": {"type": "object", "properties": {"tokens": {**_INT, "default": 1024}, "package": _PACKAGE}},
    },
]


def listed_for(session: SessionState) -> list[dict[str, Any]]:
    """The symbol tools this session lists: none under the ``family`` ranking profile, else all five."""
    return [] if getattr(session, "ranking_profile", None) == "family" else SYMBOL_TOOL_DEFINITIONS


def lookup(session: SessionState, name: str) -> Callable[[SessionState, Mapping[str, Any]], ToolResult] | None:
    """The paged tool called ``name`` if this session lists it, else None."""
    if not any(d["name"] == name for d in listed_for(session)):
        return None
    return SYMBOL_TOOLS.get(name)


# --------------------------------------------------------------------------- arguments


def _name(args: Mapping[str, Any]) -> str | None:
    value = args.get("name")
    return value if isinstance(value, str) and value.strip() else None


def _int(args: Mapping[str, Any], key: str, default: int) -> int | None:
    value = args.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def _bool(args: Mapping[str, Any], key: str) -> bool | None:
    value = args.get(key, False)
    return value if isinstance(value, bool) else None


def _target(session: SessionState, args: Mapping[str, Any]) -> Target | None:
    """The session's store, or in a workspace session every member (or the ``package`` one); None: bad package."""
    from cce_core.services.symbols import WorkspaceTarget

    package = args.get("package")
    if package is not None and not (isinstance(package, str) and package.strip()):
        return None
    if not session.workspace:
        return session.store_path
    return WorkspaceTarget(session.root, package.strip() if isinstance(package, str) else None)


def _bad(tool: str, what: str) -> ToolResult:
    return f"{tool}: {what}", True


def _answer_text(notice: str, text: str, empty: bool) -> ToolResult:
    """A notice (no symbol data, files without it) goes first; with nothing else to say it is the error."""
    if notice and empty:
        return notice, True
    return (f"NOTICE: {notice}\n{text}" if notice else text), False


# --------------------------------------------------------------------------- the tools


def find_symbol(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    from cce_core.agents.symbol_texts import MCP_MORE, render_definitions
    from cce_core.services.symbols import find_symbol as find

    name, fuzzy, limit = _name(args), _bool(args, "fuzzy"), _int(args, "limit", DEFAULT_TOOL_LIMIT)
    if name is None:
        return _bad("find_symbol", "`name` must be a non-empty string")
    if fuzzy is None or limit is None:
        return _bad("find_symbol", "`fuzzy` must be a boolean and `limit` an integer")
    target = _target(session, args)
    if target is None:
        return _bad("find_symbol", BAD_PACKAGE)
    answer = find(target, name, fuzzy=fuzzy, limit=limit)
    return _answer_text(answer.notice, render_definitions(answer, MCP_MORE), not answer.rows)


def find_references(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    from cce_core.agents.symbol_texts import MCP_MORE, render_references
    from cce_core.services.symbols import find_references as find

    name, limit = _name(args), _int(args, "limit", DEFAULT_TOOL_LIMIT)
    if name is None:
        return _bad("find_references", "`name` must be a non-empty string")
    if limit is None:
        return _bad("find_references", "`limit` must be an integer")
    target = _target(session, args)
    if target is None:
        return _bad("find_references", BAD_PACKAGE)
    uncertain = args.get("include_uncertain", False)
    if not isinstance(uncertain, bool):
        return _bad("find_references", "`include_uncertain` must be a boolean")
    answer = find(target, name, limit=limit, include_uncertain=uncertain)
    return _answer_text(answer.notice, render_references(answer, MCP_MORE), not answer.rows)


def call_graph(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    from cce_core.agents.symbol_texts import MCP_MORE, render_call_graph
    from cce_core.services.symbols import call_graph as graph

    name, depth, limit = _name(args), _int(args, "depth", 1), _int(args, "limit", DEFAULT_TOOL_LIMIT)
    direction = args.get("direction", "callers")
    if name is None:
        return _bad("call_graph", "`name` must be a non-empty string")
    if depth is None or limit is None or not isinstance(direction, str):
        return _bad("call_graph", "`depth` and `limit` must be integers, `direction` callers, callees or both")
    target = _target(session, args)
    if target is None:
        return _bad("call_graph", BAD_PACKAGE)
    answer = graph(target, name, direction=direction, depth=depth, limit=limit)
    towards = "callers" if direction == "callers" else "callees" if direction == "callees" else "calls"
    return _answer_text(answer.notice, render_call_graph(answer, towards, MCP_MORE), not answer.rows)


def change_impact(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    from cce_core.agents.symbol_texts import MCP_MORE, render_impact
    from cce_core.services.symbols import change_impact as impact

    rev = args.get("diff")
    staged, depth, limit = _bool(args, "staged"), _int(args, "depth", 1), _int(args, "limit", DEFAULT_TOOL_LIMIT)
    if rev is not None and not isinstance(rev, str):
        return _bad("change_impact", "`diff` must be a revision such as HEAD~1")
    if staged is None or depth is None or limit is None:
        return _bad("change_impact", "`staged` must be a boolean, `depth` and `limit` integers")
    target = _target(session, args)
    if target is None:
        return _bad("change_impact", BAD_PACKAGE)
    answer = impact(session.root, target, rev=rev, staged=staged, depth=depth, limit=limit)
    return _answer_text(answer.notice, render_impact(answer, MCP_MORE), False)


def repo_map(session: SessionState, args: Mapping[str, Any]) -> ToolResult:
    from cce_core.agents.symbol_texts import render_map
    from cce_core.services.symbols import DEFAULT_MAP_TOKENS
    from cce_core.services.symbols import repo_map as outline

    tokens = _int(args, "tokens", DEFAULT_MAP_TOKENS)
    if tokens is None:
        return _bad("repo_map", "`tokens` must be an integer")
    target = _target(session, args)
    if target is None:
        return _bad("repo_map", BAD_PACKAGE)
    answer = outline(target, tokens=tokens)
    return _answer_text(answer.notice, render_map(answer, "ask with a larger tokens"), not answer.files)


def _paged(name: str, tool: Callable[[SessionState, Mapping[str, Any]], ToolResult]
           ) -> Callable[[SessionState, Mapping[str, Any]], ToolResult]:
    """``tool`` cut to its cap and paged by ``offset``, exactly as the family's read-only tools are."""
    from cce_core.agents.mcp_tools import paged

    return cast("Callable[[SessionState, Mapping[str, Any]], ToolResult]", paged(name, tool, SYMBOL_ANSWER_CAPS[name]))


SYMBOL_TOOLS: dict[str, Callable[[SessionState, Mapping[str, Any]], ToolResult]] = {
    "find_symbol": _paged("find_symbol", find_symbol),
    "find_references": _paged("find_references", find_references),
    "call_graph": _paged("call_graph", call_graph),
    "change_impact": _paged("change_impact", change_impact),
    "repo_map": _paged("repo_map", repo_map),
}

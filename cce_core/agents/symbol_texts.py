"""The texts of symbol navigation: rows grouped by file for a terminal or an agent, or one JSON object.

The MCP tools of :mod:`cce_core.agents.mcp_symbol_tools` and the commands
``cce symbols``, ``refs``, ``callers``, ``callees``, ``impact`` and ``map``
print the same rows (:class:`cce_core.services.symbols.SymbolRow`), so an
agent and a person read one format; ``--json`` gives the object a script
reads (every list's rows carry ``file_path``, ``line``, ``name`` and
``kind``). Stored text goes through ``safe_text.one_line`` so a name can
never break a line or the terminal.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from cce_core.foundation.safe_text import one_line

if TYPE_CHECKING:
    from cce_core.services.symbols import ImpactAnswer, RepoMap, SymbolAnswer, SymbolRow


def render_json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, indent=1, ensure_ascii=False) + "\n"


# How the reader asks for more rows: the CLI option, or the MCP argument.
CLI_MORE = "raise --limit"
MCP_MORE = "ask again with a larger limit"


def _more(shown: int, total: int, how: str) -> str:
    return f"… {total - shown} more ({how})\n" if total > shown else ""


def render_definition(row: SymbolRow) -> str:
    sig = f"  {one_line(row.signature)}" if row.signature else ""
    return f"{one_line(row.place())}:{row.line}  {row.kind}  {one_line(row.qualified_name or row.name)}{sig}\n"


def render_definitions(answer: SymbolAnswer, how: str = CLI_MORE) -> str:
    if not answer.rows:
        return f"no definition of {one_line(answer.query)} (try --fuzzy)\n"
    return "".join(render_definition(r) for r in answer.rows) + _more(len(answer.rows), answer.total, how)


def render_references(answer: SymbolAnswer, how: str = CLI_MORE) -> str:
    if not answer.rows:
        return f"no use of {one_line(answer.query)} in the index\n"
    out = [f"{answer.total} use(s) of {one_line(answer.query)}\n"]
    for path, rows in answer.by_file():
        out.append(f"{one_line(path)}\n")
        for r in rows:
            where = f"in {one_line(r.enclosing)}" if r.enclosing else "at module level"
            resolved = f", {r.confidence}" if r.confidence else ""
            out.append(f"  {r.line:>6}  {where}  ({r.kind}{resolved})\n")
    out.append(_more(len(answer.rows), answer.total, how))
    return "".join(out)


def render_edge(row: SymbolRow) -> str:
    indent = "  " * max((row.depth or 1) - 1, 0)
    if row.direction == "caller":
        what = f"{one_line(row.name)} calls {one_line(row.target or '')}"
    else:
        what = f"{one_line(row.enclosing or '<module>')} calls {one_line(row.target or row.name)}"
    return f"{indent}{one_line(row.place())}:{row.line}  {what}  [{row.confidence}]\n"


def render_call_graph(answer: SymbolAnswer, towards: str, how: str = CLI_MORE) -> str:
    if not answer.rows:
        return f"no {towards} of {one_line(answer.query)} in the index\n"
    return "".join(render_edge(r) for r in answer.rows) + _more(len(answer.rows), answer.total, how)


def render_impact(answer: ImpactAnswer, how: str = CLI_MORE) -> str:
    out = [f"{answer.diff}: {len(answer.changed_files)} changed file(s)\n"]
    out.append(f"touched ({answer.totals['touched']}):\n")
    out.extend("  " + render_definition(r) for r in answer.touched)
    out.append(f"callers ({answer.totals['callers']}):\n")
    out.extend("  " + render_edge(r) for r in answer.callers)
    out.append(f"tests ({answer.totals['tests']}):\n")
    out.extend(f"  {one_line(r.place())}:{r.line}  {one_line(r.name)}  uses {one_line(r.target or '')}\n"
               for r in answer.tests)
    if answer.truncated:
        out.append(f"… some lists were cut ({how})\n")
    return "".join(out)


def render_map(answer: RepoMap, how: str = "raise --tokens") -> str:
    from cce_core.services.symbols import render_map_header, render_map_row

    out = [render_map_header(f.file_path) + "".join(render_map_row(r) for r in f.rows) for f in answer.files]
    tail = (f"({len(answer.files)} of {answer.total_files} files, ~{answer.used_tokens} of {answer.tokens} "
            f"tokens; {how} for more)\n")
    return "".join(out) + tail

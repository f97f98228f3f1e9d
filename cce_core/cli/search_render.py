"""How ``cce search`` prints what the search service returned: result lines or the ``--json`` object.

Rendering only: every figure comes from the outcome; the formats are the
family's (6-decimal scores, the human row, the knowledge section lines).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from cce_core.foundation.safe_text import one_line

if TYPE_CHECKING:
    from cce_core.services.search import SearchOutcome
    from cce_core.services.search_knowledge import KnowledgeSearch


def render_search(outcome: SearchOutcome, *, as_json: bool, numeric_scores: bool) -> None:
    """Print ``outcome`` the way its kind of search prints."""
    from cce_core.services.search_knowledge import KnowledgeSearch
    from cce_core.services.search_workspace import WorkspaceSearch

    if isinstance(outcome, KnowledgeSearch):
        _render_knowledge(outcome, as_json, numeric_scores)
        return
    if as_json:
        body = json_body(outcome.query_id, [r.as_json() for r in outcome.results], outcome.profile, numeric_scores)
        sys.stdout.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
        return
    if not outcome.results:
        typer.echo("(no results)")
    if isinstance(outcome, WorkspaceSearch):
        for r in outcome.results:
            typer.echo(one_line(r.human_line()))  # one line: a member's file name cannot forge rows
        return
    from cce_core.foundation.textrules import format6
    from cce_core.observability.result_line import human_row

    for r in outcome.results:
        typer.echo(human_row(r.rank, format6(r.score), r.chunk))
    _rate_hint(outcome.query_id)


def with_score_values(results: list) -> list:
    """``--numeric-scores``: each result with ``score_value`` (the printed score as a number) after ``score``."""
    out = []
    for row in results:
        numbered: dict = {}
        for key, value in row.items():
            numbered[key] = value
            if key == "score":
                numbered["score_value"] = float(value)  # the 6-decimal string read back: the very same figure
        out.append(numbered)
    return out


def json_body(query_id: str | None, results: list, profile: str, numeric_scores: bool = False) -> dict:
    """The ``--json`` object; the family's output keeps exactly the other engines' keys."""
    if numeric_scores:
        results = with_score_values(results)
    body: dict = {"query_id": query_id, "results": results}
    if profile != "family":
        body["ranking"] = profile
    return body


def _rate_hint(query_id: str | None) -> None:
    if query_id is not None:
        typer.echo(f"query-id: {query_id}  ·  rate with: cce feedback {query_id} --helpful|--not-helpful")


def _render_knowledge(outcome: KnowledgeSearch, as_json: bool, numeric_scores: bool) -> None:
    """``--source knowledge|both``: code rows as usual, knowledge sections with their provenance."""
    from cce_core.foundation.textrules import format6
    from cce_core.knowledge.blend import display_record_id, section_snippet
    from cce_core.observability.result_line import human_row

    rows = outcome.rows
    if as_json:
        results: list[Any] = []
        for rank, row in enumerate(rows, start=1):
            if not row.is_knowledge:
                results.append({**row.hit.as_json(), "rank": rank})
                continue
            c = row.hit.chunk
            results.append({"chunk_id": c.chunk_id, "chunk_type": "knowledge", "end_line": c.end_line,
                            "file_path": display_record_id(c.record_id, outcome.secrets_profile), "kind": c.kind,
                            "rank": rank,
                            "score": format6(row.score), "start_line": c.start_line, "state": c.state,
                            "title": c.title, "updated_at": c.updated_at, "url": c.url})
        if numeric_scores:
            results = with_score_values(results)
        sys.stdout.write(json.dumps({"query_id": outcome.query_id, "results": results}, indent=2,
                                    ensure_ascii=False, sort_keys=True) + "\n")
        return
    if not rows:
        typer.echo("(no results)")
    expandable = None
    for rank, row in enumerate(rows, start=1):
        c = row.hit.chunk
        if not row.is_knowledge:
            typer.echo(human_row(rank, format6(row.score), c))
            continue
        # A section: its provenance, its heading, the first words of its text; `cce expand ID` prints it whole.
        expandable = expandable or c.chunk_id
        typer.echo(f"{rank:>2}. [{format6(row.score)}] {row.hit.provenance()} #{one_line(c.chunk_id)}\n"
                   f"    {one_line(c.name)}")
        snippet = section_snippet(c.content)
        if snippet:
            typer.echo(f"    {snippet}")
    if expandable is not None:
        where = "" if outcome.root == Path(".") else f" --dir {shlex.quote(one_line(str(outcome.root)))}"
        typer.echo(f"expand a knowledge hit: cce expand {one_line(expandable)}{where}")
    _rate_hint(outcome.query_id)

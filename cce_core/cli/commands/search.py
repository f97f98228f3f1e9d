"""``cce search QUERY``: parse the options, run the search service, print lines or JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cce_core.cli.options import (
    IndexedDirOption,
    StoreOverridesDirOption,
    no_metrics_flag,
    ranking_option,
    workspace_flag,
)
from cce_core.cli.shared import stderr_line
from cce_core.foundation.errors import CceError


def register(app: typer.Typer) -> None:
    app.command(name="search")(search)


def search(
    query: Annotated[str, typer.Argument(help="What to look for, in words or identifiers.")],
    directory: Annotated[Path | None, typer.Argument(help="Indexed directory, or the workspace root with "
                                                     "--workspace (same as --dir).")] = None,
    dir_: IndexedDirOption = None,
    store: StoreOverridesDirOption = None,
    top_k: Annotated[int, typer.Option("--top-k", min=0, help="How many results (0: none).")] = 10,
    no_graph: Annotated[bool, typer.Option("--no-graph", help="Skip import-graph expansion.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    numeric_scores: Annotated[
        bool, typer.Option("--numeric-scores", help="With --json: add score_value, the score as a JSON number "
                                                    "(score stays the other engines' 6-decimal string).")
    ] = False,
    no_metrics: Annotated[bool, no_metrics_flag("a search")] = False,
    workspace: Annotated[bool, workspace_flag("Search every member of the workspace at DIRECTORY as one "
                                              "index.")] = False,
    package: Annotated[
        str | None, typer.Option("--package", help="With --workspace: only these members (comma-separated names "
                                                   "or package: values).")
    ] = None,
    source: Annotated[
        str | None, typer.Option("--source", help="Which pools to search: code (the default; knowledge in a "
                                                  "project that has only a knowledge store), knowledge (the store "
                                                  "`cce knowledge index` built) or both, blended by one score.",
                                 show_default=False)
    ] = None,
    ranking: Annotated[str | None, ranking_option("Ranking profile: default, or family (the other engines' pinned "
                                                  "ranking). Else CCE_RANKING_PROFILE, then ranking.profile in "
                                                  ".cce/config.")] = None,
) -> None:
    """Rank the indexed chunks for QUERY."""
    from cce_core.cli.search_render import render_search
    from cce_core.services.search import SearchRequest
    from cce_core.services.search import search as run_search

    if numeric_scores and not as_json:
        raise CceError("--numeric-scores goes with --json")
    outcome = run_search(SearchRequest(query, directory=directory, dir_option=dir_, store=store, top_k=top_k,
                                       graph=not no_graph, record_event=not no_metrics, workspace=workspace,
                                       package=package, source=source, ranking=ranking), stderr_line)
    render_search(outcome, as_json=as_json, numeric_scores=numeric_scores)

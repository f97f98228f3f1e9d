"""``cce search QUERY``: rank the indexed chunks, log the search event, print lines or JSON."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from cce_core.cli.shared import command_host, open_searcher, store_for_read
from cce_core.foundation.errors import CceError
from cce_core.foundation.safe_text import one_line
from cce_core.observability.result_line import human_row
from cce_core.retrieval.store_embedder import embedder_for_store


def register(app: typer.Typer) -> None:
    app.command(name="search")(search)


def search(
    query: Annotated[str, typer.Argument(help="What to look for, in words or identifiers.")],
    directory: Annotated[Path | None, typer.Argument(help="Indexed directory, or the workspace root with "
                                                     "--workspace (same as --dir).")] = None,
    dir_: Annotated[Path | None, typer.Option("--dir", help="Indexed directory (default: .).")] = None,
    store: Annotated[Path | None, typer.Option(help="Store file (overrides --dir).")] = None,
    top_k: Annotated[int, typer.Option("--top-k", min=0, help="How many results (0: none).")] = 10,
    no_graph: Annotated[bool, typer.Option("--no-graph", help="Skip import-graph expansion.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    numeric_scores: Annotated[
        bool, typer.Option("--numeric-scores", help="With --json: add score_value, the score as a JSON number "
                                                    "(score stays the other engines' 6-decimal string).")
    ] = False,
    no_metrics: Annotated[
        bool, typer.Option("--no-metrics", help="Do not append a search event to the metrics log.")
    ] = False,
    workspace: Annotated[
        bool, typer.Option("--workspace", help="Search every member of the workspace at DIRECTORY as one index.")
    ] = False,
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
    ranking: Annotated[
        str | None, typer.Option("--ranking", help="Ranking profile: default, or family (the other engines' "
                                                   "pinned ranking). Else CCE_RANKING_PROFILE, then "
                                                   "ranking.profile in .cce/config.")
    ] = None,
) -> None:
    """Rank the indexed chunks for QUERY."""
    import time

    from cce_core.foundation.textrules import format6, tokenize

    if not tokenize(query):
        raise CceError("the query has no searchable words — give letters, digits or identifiers to look for")
    if numeric_scores and not as_json:
        raise CceError("--numeric-scores goes with --json")
    if package is not None and not workspace:
        raise CceError("--package scopes a workspace search — add --workspace")
    if source is None:
        from cce_core.knowledge.default_source import cli_default_source

        source = "code" if workspace or store is not None else cli_default_source(dir_ or directory or Path("."))
    if source not in ("code", "knowledge", "both"):
        raise CceError(f"unknown --source {source!r}: use code, knowledge or both")
    if source != "code":
        if workspace or store is not None:
            raise CceError("--source knowledge|both searches a project directory — drop --workspace and --store")
        root = dir_ or directory or Path(".")
        _search_with_knowledge(query, root, source, top_k, not no_graph, as_json, no_metrics, ranking,
                               numeric_scores)
        return
    if workspace:
        root = directory if directory is not None else dir_ if dir_ is not None else Path(".")
        _search_workspace(query, root, package, top_k, not no_graph, as_json, ranking, numeric_scores)
        return
    store_path = store_for_read(store, dir_ or directory)
    searcher = open_searcher(store_path, ranking)
    from cce_core.indexing.pack_drift import search_warning  # one line when the installed packs re-chunk files

    if (drift := search_warning(searcher.store)) is not None:
        sys.stderr.write(drift + "\n")
    started = time.perf_counter()
    results = searcher.search(query, top_k=top_k, graph=not no_graph)
    latency_ms = (time.perf_counter() - started) * 1000.0
    query_id = None
    if not no_metrics:
        query_id = _log_search_event(searcher.store, store_path, results, query, top_k, not no_graph, latency_ms,
                                     ranking=searcher.profile)
    if as_json:
        body = _json_body(query_id, [r.as_json() for r in results], searcher.profile, numeric_scores)
        sys.stdout.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
        return
    if not results:
        typer.echo("(no results)")
    for r in results:
        typer.echo(human_row(r.rank, format6(r.score), r.chunk))
    if query_id is not None:
        typer.echo(f"query-id: {query_id}  ·  rate with: cce feedback {query_id} --helpful|--not-helpful")


def _with_score_values(results: list) -> list:
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


def _json_body(query_id: str | None, results: list, profile: str, numeric_scores: bool = False) -> dict:
    """The ``--json`` object; the family's output keeps exactly the other engines' keys."""
    if numeric_scores:
        results = _with_score_values(results)
    body: dict = {"query_id": query_id, "results": results}
    if profile != "family":
        body["ranking"] = profile
    return body


def _search_with_knowledge(query: str, root: Path, source: str, top_k: int, graph: bool, as_json: bool,
                           no_metrics: bool, ranking: str | None = None, numeric_scores: bool = False) -> None:
    """``--source knowledge|both``: knowledge hits alone (no metrics event), or merged with the code results."""
    import time

    from cce_core.foundation.config import load_config
    from cce_core.foundation.textrules import format6
    from cce_core.indexing.store import default_store_path
    from cce_core.knowledge.blend import display_record_id, merge, search_knowledge, section_snippet
    from cce_core.knowledge.store import load_store

    config = load_config(root)
    if not config.knowledge_enabled:
        raise CceError("knowledge is disabled (knowledge.enabled: false in .cce/config)")
    hits = search_knowledge(load_store(root), query, top_k, config.knowledge_min_score)
    code_results: list = []
    query_id = None
    if source == "both":
        store_path = default_store_path(root)
        searcher = open_searcher(store_path, ranking)
        started = time.perf_counter()
        code_results = searcher.search(query, top_k=top_k, graph=graph)
        latency_ms = (time.perf_counter() - started) * 1000.0
    rows = merge(code_results, hits, top_k)
    if source == "both" and not no_metrics:
        shown = sum(1 for row in rows if row.is_knowledge)
        query_id = _log_search_event(searcher.store, store_path, code_results, query, top_k, graph, latency_ms,
                                     knowledge_results=shown, ranking=searcher.profile)
    if as_json:
        results = []
        for rank, row in enumerate(rows, start=1):
            if not row.is_knowledge:
                results.append({**row.hit.as_json(), "rank": rank})
                continue
            c = row.hit.chunk
            results.append({"chunk_id": c.chunk_id, "chunk_type": "knowledge", "end_line": c.end_line,
                            "file_path": display_record_id(c.record_id, config.secrets_profile), "kind": c.kind,
                            "rank": rank,
                            "score": format6(row.score), "start_line": c.start_line, "state": c.state,
                            "title": c.title, "updated_at": c.updated_at, "url": c.url})
        if numeric_scores:
            results = _with_score_values(results)
        sys.stdout.write(json.dumps({"query_id": query_id, "results": results}, indent=2, ensure_ascii=False,
                                    sort_keys=True) + "\n")
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
        where = "" if root == Path(".") else f" --dir {shlex.quote(one_line(str(root)))}"
        typer.echo(f"expand a knowledge hit: cce expand {one_line(expandable)}{where}")
    if query_id is not None:
        typer.echo(f"query-id: {query_id}  ·  rate with: cce feedback {query_id} --helpful|--not-helpful")


def _search_workspace(query: str, root: Path, package: str | None, top_k: int, graph: bool, as_json: bool,
                      ranking: str | None = None, numeric_scores: bool = False) -> None:
    """One ranking over the union of the members; like the reference, it records no metrics."""
    from cce_core.workspace.federation import (
        FederatedSearcher,
        check_same_embedder,
        combined_store,
        federated_search,
        load_member_stores,
        parse_scope,
    )
    from cce_core.workspace.manifest import load_graph_or_empty, load_manifest

    manifest = load_manifest(root)
    scope = parse_scope(package)
    members = load_member_stores(root, manifest, scope)
    check_same_embedder(members)
    ws_graph = load_graph_or_empty(root, manifest)
    union = combined_store(members)
    host = command_host()
    embedder = embedder_for_store(host, members[0].data) if members else host.embedder("hash")
    from cce_core.retrieval.profiles import resolve_profile

    profile = resolve_profile(ranking, root)
    results = federated_search(FederatedSearcher(union, embedder, ws_graph, profile=profile), members, query, top_k,
                               graph)
    if as_json:
        from cce_core.observability.metrics import new_event_id

        body = _json_body(new_event_id(), [r.as_json() for r in results], profile, numeric_scores)
        sys.stdout.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
        return
    if not results:
        typer.echo("(no results)")
    for r in results:
        typer.echo(one_line(r.human_line()))  # one line: a member's file name cannot forge rows


def _log_search_event(data, store_path: Path, results, query: str, top_k: int, graph: bool,
                      latency_ms: float, knowledge_results: int = 0, ranking: str = "family") -> str | None:
    """Append the search event beside the store; its id, or None when the write failed."""
    from cce_core.observability.metrics import MetricsWriter, metrics_beside
    from cce_core.observability.search_record import build_search_record

    record = build_search_record(results, data.file_tokens, query, top_k, graph, data.embedder or "hash",
                                 latency_ms, source="cli", knowledge_results=knowledge_results, ranking=ranking)
    return MetricsWriter(metrics_beside(store_path)).log_search(record)

"""``cce search QUERY``: rank the indexed chunks, log the search event, print lines or JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from cce_core.cli.shared import command_host, open_searcher, store_for_read
from cce_core.foundation.errors import CceError
from cce_core.retrieval.store_embedder import embedder_for_store


def register(app: typer.Typer) -> None:
    app.command(name="search")(search)


def search(
    query: Annotated[str, typer.Argument(help="What to look for, in words or identifiers.")],
    directory: Annotated[Path | None, typer.Argument(help="Indexed directory, or the workspace root with "
                                                     "--workspace (same as --dir).")] = None,
    dir_: Annotated[Path | None, typer.Option("--dir", help="Indexed directory (default: .).")] = None,
    store: Annotated[Path | None, typer.Option(help="Store file (overrides --dir).")] = None,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="How many results.")] = 10,
    no_graph: Annotated[bool, typer.Option("--no-graph", help="Skip import-graph expansion.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
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
        str, typer.Option("--source", help="Which pools to search: code (the default), knowledge (the store "
                                           "`cce knowledge index` built) or both, blended by one score.")
    ] = "code",
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
    if package is not None and not workspace:
        raise CceError("--package scopes a workspace search — add --workspace")
    if source not in ("code", "knowledge", "both"):
        raise CceError(f"unknown --source {source!r}: use code, knowledge or both")
    if source != "code":
        if workspace or store is not None:
            raise CceError("--source knowledge|both searches a project directory — drop --workspace and --store")
        root = dir_ or directory or Path(".")
        _search_with_knowledge(query, root, source, top_k, not no_graph, as_json, no_metrics, ranking)
        return
    if workspace:
        root = directory if directory is not None else dir_ if dir_ is not None else Path(".")
        _search_workspace(query, root, package, top_k, not no_graph, as_json, ranking)
        return
    store_path = store_for_read(store, dir_ or directory)
    searcher = open_searcher(store_path, ranking)
    started = time.perf_counter()
    results = searcher.search(query, top_k=top_k, graph=not no_graph)
    latency_ms = (time.perf_counter() - started) * 1000.0
    query_id = None
    if not no_metrics:
        query_id = _log_search_event(searcher.store, store_path, results, query, top_k, not no_graph, latency_ms,
                                     ranking=searcher.profile)
    if as_json:
        body = _json_body(query_id, [r.as_json() for r in results], searcher.profile)
        sys.stdout.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
        return
    if not results:
        typer.echo("(no results)")
    for r in results:
        c = r.chunk
        first_line = c.content.split("\n", 1)[0].removesuffix("\r")[:80].strip()
        typer.echo(f"{r.rank:>2}. [{format6(r.score)}] {c.file_path}:{c.start_line}-{c.end_line} "
                   f"({c.chunk_type}/{c.kind})\n    {first_line}")
    if query_id is not None:
        typer.echo(f"query-id: {query_id}  ·  rate with: cce feedback {query_id} --helpful|--not-helpful")


def _json_body(query_id: str | None, results: list, profile: str) -> dict:
    """The ``--json`` object; the family's output keeps exactly the other engines' keys."""
    body: dict = {"query_id": query_id, "results": results}
    if profile != "family":
        body["ranking"] = profile
    return body


def _search_with_knowledge(query: str, root: Path, source: str, top_k: int, graph: bool, as_json: bool,
                           no_metrics: bool, ranking: str | None = None) -> None:
    """``--source knowledge|both``: knowledge hits alone (no metrics event), or merged with the code results."""
    import time

    from cce_core.foundation.config import load_config
    from cce_core.foundation.textrules import format6
    from cce_core.indexing.store import default_store_path
    from cce_core.knowledge.blend import display_record_id, merge, search_knowledge
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
                            "file_path": display_record_id(c.record_id), "kind": c.kind, "rank": rank,
                            "score": format6(row.score), "start_line": c.start_line, "state": c.state,
                            "title": c.title, "updated_at": c.updated_at, "url": c.url})
        sys.stdout.write(json.dumps({"query_id": query_id, "results": results}, indent=2, ensure_ascii=False,
                                    sort_keys=True) + "\n")
        return
    if not rows:
        typer.echo("(no results)")
    for rank, row in enumerate(rows, start=1):
        if row.is_knowledge:
            c = row.hit.chunk
            head = f"{row.hit.provenance()} #{c.chunk_id}"
            content = c.content
        else:
            c = row.hit.chunk
            head = f"{c.file_path}:{c.start_line}-{c.end_line} ({c.chunk_type}/{c.kind})"
            content = c.content
        first_line = content.split("\n", 1)[0].removesuffix("\r")[:80].strip()
        typer.echo(f"{rank:>2}. [{format6(row.score)}] {head}\n    {first_line}")
    if query_id is not None:
        typer.echo(f"query-id: {query_id}  ·  rate with: cce feedback {query_id} --helpful|--not-helpful")


def _search_workspace(query: str, root: Path, package: str | None, top_k: int, graph: bool, as_json: bool,
                      ranking: str | None = None) -> None:
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

        body = _json_body(new_event_id(), [r.as_json() for r in results], profile)
        sys.stdout.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
        return
    if not results:
        typer.echo("(no results)")
    for r in results:
        typer.echo(r.human_line())


def _log_search_event(data, store_path: Path, results, query: str, top_k: int, graph: bool,
                      latency_ms: float, knowledge_results: int = 0, ranking: str = "family") -> str | None:
    """Append the search event beside the store; its id, or None when the write failed."""
    from cce_core.observability.metrics import MetricsWriter, metrics_beside
    from cce_core.observability.search_record import build_search_record

    record = build_search_record(results, data.file_tokens, query, top_k, graph, data.embedder or "hash",
                                 latency_ms, source="cli", knowledge_results=knowledge_results, ranking=ranking)
    return MetricsWriter(metrics_beside(store_path)).log_search(record)

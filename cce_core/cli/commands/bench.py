"""``cce bench REPO``: recall, token savings and latency on labeled queries."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from cce_core.cli.shared import command_host, require_dir, write_report


def register(app: typer.Typer) -> None:
    app.command(name="bench")(bench)


def bench(
    repo_dir: Annotated[Path, typer.Argument(help="Repository checkout to benchmark (indexed whole, like cce index).")],
    lang: Annotated[
        str | None, typer.Option(help="Labeled query set from cce_core/data/bench_queries.json (default: flask set).")
    ] = None,
    name: Annotated[str | None, typer.Option(help="Corpus label for the report (default per --lang).")] = None,
    commit: Annotated[str | None, typer.Option(help="Commit to record (default: git HEAD of REPO_DIR).")] = None,
    queries: Annotated[Path | None, typer.Option(help="JSON query set to use instead of the built-in one.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Also write a Markdown report here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of the summary.")] = False,
    embedder: Annotated[str, typer.Option(
        help="Embedder to index with: hash (default) or any installed one, as for cce index.")] = "hash",
    ranking: Annotated[str | None, typer.Option(
        "--ranking", help="Ranking profile: default or family (the pinned table). Else CCE_RANKING_PROFILE, "
                          "then default.")] = None,
    store: Annotated[
        Path | None, typer.Option(help="Accepted for compatibility with the other engines and ignored: the bench "
                                       "always indexes REPO_DIR in memory.")
    ] = None,
) -> None:
    """Index REPO_DIR in memory and measure recall, token savings and latency."""
    from cce_core.services.bench import bench_repository

    del store  # the family accepts --store here and never reads it
    require_dir(repo_dir)
    host = command_host()
    emb = host.embedder("hash") if embedder == "hash" else host.ready_embedder(embedder, "index")
    report = bench_repository(repo_dir, host, emb, ranking=ranking, lang=lang, name=name, commit=commit,
                              queries_file=queries)
    if output is not None:
        write_report(output, report.markdown())
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
        return
    for line in report.summary_lines():
        typer.echo(line)
    if output is not None:
        typer.echo(f"  wrote        : {output}")

"""``cce relevance FIXTURES``: score ranking quality against labeled queries.

The harness is :mod:`cce_core.evaluation.relevance`; this module reads the
arguments, picks the index under test (``--store``, or an in-memory index of
the corpus directory; one per embedder when ``--compare`` names embedders)
and prints the report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from cce_core.evaluation.relevance import CompareSpec


def register(app: Any) -> None:
    app.command(name="relevance")(relevance)


def relevance(
    fixtures: Annotated[str, typer.Argument(metavar="FIXTURES",
                                            help="The cce.relevance/v1 fixture set (JSONL; see docs/relevance.md).")],
    dir_: Annotated[str | None, typer.Option(
        "--dir", help="Corpus directory to index in memory (hash embedder); overrides the fixture header's "
                      "corpus.")] = None,
    store: Annotated[str | None, typer.Option(
        help="Score an existing store instead of indexing a corpus directory.")] = None,
    backend: Annotated[str | None, typer.Option(
        help="Comma-separated backends: bm25, vector, hybrid (default: all three; with --compare of two "
             "embedders, the one backend to score, default hybrid).")] = None,
    compare: Annotated[str | None, typer.Option(
        metavar="A,B", help="Compare two backends (e.g. bm25,hybrid) or two installed embedders (e.g. hash,minilm, "
                            "each indexing the corpus in memory): per-query deltas and a paired t-test per "
                            "metric.")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the cce.relevance.report/v2 JSON (cce.relevance.embedders/v1 when comparing "
                       "embedders).")] = False,
) -> None:
    """Score rankings against labeled fixtures: precision@k, recall, MRR, F1 (measurement only)."""
    import click

    from cce_core.cli.commands import write_utf8
    from cce_core.cli.commands.eval import read_input
    from cce_core.evaluation import relevance as rel

    if dir_ is not None and store is not None:
        raise click.UsageError("--dir cannot be used with --store")
    if compare is not None and not rel.only_backends(compare):
        _compare_embedders(fixtures, dir_, store, backend, rel.parse_compare(compare, _embedder_names), as_json)
        return
    if backend is not None and compare is not None:
        raise click.UsageError("--backend cannot be used with --compare")

    fixture_set = rel.parse_fixtures(read_input("fixtures", fixtures))
    if store is not None:
        from pathlib import Path

        from cce_core.cli.shared import open_searcher
        from cce_core.retrieval.store_embedder import store_embedder_name

        searcher = open_searcher(Path(store))
        corpus = store
        embedder = store_embedder_name(searcher.store)
    else:
        from cce_core.cli.shared import command_host

        corpus = rel.corpus_dir(fixtures, fixture_set, dir_)
        searcher = rel.corpus_searcher(corpus, command_host())
        embedder = "hash"

    reports = rel.evaluate(searcher, fixture_set.cases, rel.select_backends(backend, compare))
    comparison = rel.compare(reports[0], reports[1]) if compare is not None else None
    if as_json:
        write_utf8(rel.render_json(corpus, embedder, reports, comparison))
        return
    text = rel.render_human(corpus, embedder, reports)
    if comparison is not None:
        text += rel.render_compare_human(comparison)
    write_utf8(text)


def _embedder_names() -> list[str]:
    from cce_core.cli.shared import command_host

    return list(command_host().embedders)


def _compare_embedders(fixtures: str, dir_: str | None, store: str | None, backend: str | None,
                       spec: CompareSpec, as_json: bool) -> None:
    """``--compare`` of two embedders: each indexes the corpus in memory, then one backend is scored."""
    import click

    from cce_core.cli.commands import write_utf8
    from cce_core.cli.commands.eval import read_input
    from cce_core.cli.shared import command_host
    from cce_core.evaluation import relevance as rel

    if store is not None:
        raise click.UsageError("--store cannot be used with --compare of two embedders (each indexes the corpus)")
    chosen = rel.embedder_backend(backend)
    fixture_set = rel.parse_fixtures(read_input("fixtures", fixtures))
    corpus = rel.corpus_dir(fixtures, fixture_set, dir_)
    reports = rel.evaluate_embedders(corpus, command_host(), spec.names, chosen, fixture_set.cases)
    comparison = rel.compare(reports[0], reports[1])
    if as_json:
        write_utf8(rel.render_embedders_json(corpus, chosen, reports, comparison))
        return
    text = rel.render_human(corpus, " vs ".join(spec.names), reports, backend=chosen)
    write_utf8(text + rel.render_compare_human(comparison))

"""``cce relevance FIXTURES``: score ranking quality against labeled queries.

This module reads the arguments, hands them to the relevance service
(:mod:`cce_core.services.relevance`, which picks the mode and the index under
test) and prints the report of the mode that ran.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from cce_core.services.relevance import RelevanceOutcome


def register(app: Any) -> None:
    app.command(name="relevance")(relevance)


def relevance(
    fixture_files: Annotated[list[str], typer.Argument(
        metavar="FIXTURES...", help="The cce.relevance/v1 fixture set (JSONL; see docs/relevance.md); several "
                                    "files are pooled into one comparison of ranking profiles.")],
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
                       "embedders, cce.relevance.profiles/v1 when comparing ranking profiles).")] = False,
    ranking: Annotated[str | None, typer.Option(
        "--ranking", help="Ranking profile of the hybrid search (default or family); else CCE_RANKING_PROFILE, "
                          "then default.")] = None,
    repos: Annotated[str, typer.Option(
        help="For a cce.localization/v1 set (docs/localization.md): where the repositories' git directories are "
             "(DIR/<owner>+<name>/repo or DIR/<owner>+<name>); --ranking a,b then picks the profiles scored "
             "(default: all).")] = "/work/.mirror",
) -> None:
    """Score rankings against labeled fixtures: precision@k, recall, MRR, F1 (measurement only).

    `--compare family,default` (or several FIXTURES) scores ranking profiles
    against each other, pooled over every file, with a paired t-test.
    """
    import click

    from cce_core.cli.commands.eval import read_input
    from cce_core.cli.shared import command_host, stderr_line
    from cce_core.services.relevance import RelevanceRequest, RelevanceSources, RelevanceUsageError, score_relevance

    request = RelevanceRequest(fixture_files, corpus_dir=dir_, store=store, backend=backend, compare=compare,
                               ranking=ranking, repos=repos)
    # Localization steps are slow (a checkout and an index per case): say each one, but only to a person watching.
    progress = (lambda line: print(line, file=sys.stderr, flush=True)) if sys.stderr.isatty() else None
    try:
        outcome = score_relevance(request, RelevanceSources(command_host, read_input, stderr_line, progress))
    except RelevanceUsageError as exc:
        raise click.UsageError(str(exc)) from None
    _print_outcome(outcome, as_json)


def _print_outcome(outcome: RelevanceOutcome, as_json: bool) -> None:
    from cce_core.cli.commands import write_utf8
    from cce_core.evaluation import localization, profile_compare
    from cce_core.evaluation import relevance as rel
    from cce_core.services.relevance import BackendScores, EmbedderComparison, Localization

    if isinstance(outcome, Localization):
        write_utf8(localization.render_json(outcome.report) if as_json else localization.render_human(outcome.report))
    elif isinstance(outcome, EmbedderComparison):
        if as_json:
            write_utf8(rel.render_embedders_json(outcome.corpus, outcome.backend, outcome.reports, outcome.comparison))
            return
        text = rel.render_human(outcome.corpus, " vs ".join(outcome.embedders), outcome.reports,
                                backend=outcome.backend)
        write_utf8(text + rel.render_compare_human(outcome.comparison))
    elif isinstance(outcome, BackendScores):
        if as_json:
            write_utf8(rel.render_json(outcome.corpus, outcome.embedder, outcome.reports, outcome.comparison))
            return
        text = rel.render_human(outcome.corpus, outcome.embedder, outcome.reports)
        if outcome.comparison is not None:
            text += rel.render_compare_human(outcome.comparison)
        write_utf8(text)
    else:
        render = profile_compare.render_json if as_json else profile_compare.render_human
        write_utf8(render(outcome.fixture_files, outcome.embedder, outcome.runs))

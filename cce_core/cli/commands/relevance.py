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

    from cce_core.cli.commands import write_utf8
    from cce_core.cli.commands.eval import read_input
    from cce_core.evaluation import relevance as rel
    from cce_core.evaluation.localization import is_localization_input
    from cce_core.retrieval.profiles import PROFILE_NAMES, resolve_profile

    if any(is_localization_input(f) for f in fixture_files):
        _localization(fixture_files, repos, ranking, as_json, dir_ or store or backend or compare)
        return
    if dir_ is not None and store is not None:
        raise click.UsageError("--dir cannot be used with --store")
    names = [n.strip() for n in compare.split(",") if n.strip()] if compare is not None else []
    if len(fixture_files) > 1 or (names and all(n in PROFILE_NAMES for n in names)):
        profiles = list(dict.fromkeys(names)) if names else (
            [resolve_profile(ranking)] if ranking is not None else ["family", "default"])
        _compare_profiles(fixture_files, dir_, store, backend, profiles, as_json)
        return
    fixtures = fixture_files[0]
    profile = resolve_profile(ranking)
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

        searcher = open_searcher(Path(store), profile)
        corpus = store
        embedder = store_embedder_name(searcher.store)
    else:
        from cce_core.cli.shared import command_host

        corpus = rel.corpus_dir(fixtures, fixture_set, dir_)
        searcher = rel.corpus_searcher(corpus, command_host(), profile=profile)
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


def _compare_profiles(fixture_files: list[str], dir_: str | None, store: str | None, backend: str | None,
                      profiles: list[str], as_json: bool) -> None:
    """Ranking profiles over one or more fixture files (evaluation.profile_compare)."""
    import click

    from cce_core.cli.commands import write_utf8
    from cce_core.cli.commands.eval import read_input
    from cce_core.cli.shared import command_host
    from cce_core.evaluation import profile_compare
    from cce_core.retrieval.profiles import parse_profile

    if store is not None:
        raise click.UsageError("--store cannot be used when comparing ranking profiles (each file's corpus is "
                               "indexed in memory)")
    if backend is not None:
        raise click.UsageError("--backend cannot be used when comparing ranking profiles (they rank the hybrid "
                               "search)")
    if dir_ is not None and len(fixture_files) > 1:
        raise click.UsageError("--dir names one corpus: give one fixture file with it")
    chosen = [parse_profile(p, "--compare") for p in profiles]
    runs = profile_compare.run_profiles(fixture_files, dir_, command_host(), chosen, read_input)
    render = profile_compare.render_json if as_json else profile_compare.render_human
    write_utf8(render(fixture_files, "hash", runs))


def _localization(paths: list[str], repos: str, ranking: str | None, as_json: bool, unsupported: str | None) -> None:
    """A cce.localization/v1 set (evaluation.localization): trees from git, files ranked per profile and baseline."""
    import sys

    import click

    from cce_core.cli.commands import write_utf8
    from cce_core.cli.shared import command_host
    from cce_core.evaluation import localization as loc

    if unsupported is not None:
        raise click.UsageError("--dir, --store, --backend and --compare do not apply to a localization set "
                               "(each case names its repository and commit)")
    cases = loc.read_sets(paths)
    progress = (lambda line: print(line, file=sys.stderr, flush=True)) if sys.stderr.isatty() else None
    report = loc.evaluate(cases, command_host(), repos_dir=repos, profiles=loc.parse_profiles(ranking),
                          progress=progress)
    write_utf8(loc.render_json(report) if as_json else loc.render_human(report))


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

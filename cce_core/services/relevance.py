"""``cce relevance``' one call: pick the mode the fixtures and options ask for, run it, hand back its report.

Four modes score rankings against labeled queries (measurement only):

- a ``cce.localization/v1`` set: repositories checked out from git, files
  ranked per profile and against the baselines (:mod:`cce_core.evaluation.localization`);
- ranking profiles compared, over one or several fixture files
  (:mod:`cce_core.evaluation.profile_compare`);
- two installed embedders compared, each indexing the corpus in memory;
- backends (bm25, vector, hybrid) scored over one index: an existing store,
  or the corpus indexed in memory (:mod:`cce_core.evaluation.relevance`).

The rules that pick the mode and refuse options a mode does not take live
here, in the order a user meets them; the front-end renders the report the
mode returns. The plugin host is asked for only by the modes that index, so
scoring an existing store never loads the plugins it does not need.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cce_core.foundation.errors import CceError
from cce_core.services.plugin_warnings import Warn

if TYPE_CHECKING:
    from cce_core.evaluation.localization import LocalizationReport
    from cce_core.evaluation.profile_compare import ProfileRun
    from cce_core.evaluation.relevance import BackendReport, CompareSpec, Comparison
    from cce_core.plugins.host import PluginHost


class RelevanceUsageError(CceError):
    """Options that do not go together in the chosen mode (the CLI shows it as a usage error)."""


@dataclass(frozen=True)
class RelevanceRequest:
    """What the user asked for, as typed (``--dir``, ``--store``, ``--backend``, ``--compare``, ``--ranking``)."""

    fixture_files: list[str]
    corpus_dir: str | None = None
    store: str | None = None
    backend: str | None = None
    compare: str | None = None
    ranking: str | None = None
    repos: str = "/work/.mirror"


@dataclass(frozen=True)
class RelevanceSources:
    """Where a mode gets what the front-end owns: the plugin host, the fixture text, warnings and progress.

    ``read_input(kind, path)`` returns a file's text or raises the one-line
    error; ``progress`` receives a line per localization step (None: quiet).
    """

    host: Callable[[], PluginHost]
    read_input: Callable[[str, str], str]
    warn: Warn
    progress: Callable[[str], None] | None = None


@dataclass(frozen=True)
class BackendScores:
    """Backends scored over one index; ``comparison`` when ``--compare`` named two backends."""

    corpus: str
    embedder: str
    reports: list[BackendReport]
    comparison: Comparison | None


@dataclass(frozen=True)
class EmbedderComparison:
    """Two embedders, each indexing ``corpus`` in memory, scored through one ``backend``."""

    corpus: str
    backend: str
    embedders: list[str]
    reports: list[BackendReport]
    comparison: Comparison


@dataclass(frozen=True)
class ProfileComparison:
    """Ranking profiles over every fixture file, pooled (the corpora are indexed with the hash embedder)."""

    fixture_files: list[str]
    embedder: str
    runs: list[ProfileRun]


@dataclass(frozen=True)
class Localization:
    """A ``cce.localization/v1`` set scored per profile and baseline."""

    report: LocalizationReport


RelevanceOutcome = BackendScores | EmbedderComparison | ProfileComparison | Localization


def score_relevance(request: RelevanceRequest, sources: RelevanceSources) -> RelevanceOutcome:
    """Run the mode ``request`` asks for (see the module docstring) and return its report."""
    from cce_core.evaluation.localization import is_localization_input
    from cce_core.evaluation.relevance import only_backends, parse_compare
    from cce_core.retrieval.profiles import PROFILE_NAMES, resolve_profile

    if any(is_localization_input(f) for f in request.fixture_files):
        return localize(request, sources)
    if request.corpus_dir is not None and request.store is not None:
        raise RelevanceUsageError("--dir cannot be used with --store")
    compare = request.compare
    names = [n.strip() for n in compare.split(",") if n.strip()] if compare is not None else []
    if len(request.fixture_files) > 1 or (names and all(n in PROFILE_NAMES for n in names)):
        profiles = list(dict.fromkeys(names)) if names else (
            [resolve_profile(request.ranking)] if request.ranking is not None else ["family", "default"])
        return compare_profiles(request, profiles, sources)
    profile = resolve_profile(request.ranking)
    if compare is not None and not only_backends(compare):
        return compare_embedders(request, parse_compare(compare, lambda: list(sources.host().embedders)), sources,
                                 profile)
    if request.backend is not None and compare is not None:
        raise RelevanceUsageError("--backend cannot be used with --compare")
    return score_backends(request, profile, sources)


def localize(request: RelevanceRequest, sources: RelevanceSources) -> Localization:
    """A localization set: each case names its repository and commit, so no corpus or store option applies."""
    from cce_core.evaluation import localization as loc

    if request.corpus_dir or request.store or request.backend or request.compare:
        raise RelevanceUsageError("--dir, --store, --backend and --compare do not apply to a localization set "
                                  "(each case names its repository and commit)")
    cases = loc.read_sets(request.fixture_files)
    return Localization(loc.evaluate(cases, sources.host(), repos_dir=request.repos,
                                     profiles=loc.parse_profiles(request.ranking), progress=sources.progress))


def compare_profiles(request: RelevanceRequest, profiles: list[str], sources: RelevanceSources) -> ProfileComparison:
    """Ranking ``profiles`` over every fixture file; each file's corpus is indexed in memory."""
    from cce_core.evaluation.profile_compare import run_profiles
    from cce_core.retrieval.profiles import parse_profile

    if request.store is not None:
        raise RelevanceUsageError("--store cannot be used when comparing ranking profiles (each file's corpus is "
                                  "indexed in memory)")
    if request.backend is not None:
        raise RelevanceUsageError("--backend cannot be used when comparing ranking profiles (they rank the hybrid "
                                  "search)")
    if request.corpus_dir is not None and len(request.fixture_files) > 1:
        raise RelevanceUsageError("--dir names one corpus: give one fixture file with it")
    chosen = [parse_profile(p, "--compare") for p in profiles]
    runs = run_profiles(request.fixture_files, request.corpus_dir, sources.host(), chosen, sources.read_input)
    return ProfileComparison(request.fixture_files, "hash", runs)


def compare_embedders(request: RelevanceRequest, spec: CompareSpec, sources: RelevanceSources,
                      profile: str = "family") -> EmbedderComparison:
    """``--compare`` of two embedders: each indexes the corpus in memory, then one backend is scored.

    Both embedders are ranked under ``profile`` (``--ranking``, the environment or the config).
    """
    from cce_core.evaluation import relevance as rel

    if request.store is not None:
        raise RelevanceUsageError("--store cannot be used with --compare of two embedders (each indexes the corpus)")
    chosen = rel.embedder_backend(request.backend)
    fixtures = request.fixture_files[0]
    fixture_set = rel.parse_fixtures(sources.read_input("fixtures", fixtures))
    corpus = rel.corpus_dir(fixtures, fixture_set, request.corpus_dir)
    reports = rel.evaluate_embedders(corpus, sources.host(), spec.names, chosen, fixture_set.cases, profile)
    return EmbedderComparison(corpus, chosen, list(spec.names), reports, rel.compare(reports[0], reports[1]))


def score_backends(request: RelevanceRequest, profile: str, sources: RelevanceSources) -> BackendScores:
    """The backends over one index: ``--store``, else the corpus directory indexed in memory (hash embedder)."""
    from cce_core.evaluation import relevance as rel
    from cce_core.retrieval.store_embedder import store_embedder_name
    from cce_core.services.search_project import open_searcher

    fixtures = request.fixture_files[0]
    fixture_set = rel.parse_fixtures(sources.read_input("fixtures", fixtures))
    if request.store is not None:
        searcher = open_searcher(Path(request.store), profile, sources.warn)
        corpus = request.store
        embedder = store_embedder_name(searcher.store)
    else:
        corpus = rel.corpus_dir(fixtures, fixture_set, request.corpus_dir)
        searcher = rel.corpus_searcher(corpus, sources.host(), profile=profile)
        embedder = "hash"
    reports = rel.evaluate(searcher, fixture_set.cases, rel.select_backends(request.backend, request.compare))
    comparison = rel.compare(reports[0], reports[1]) if request.compare is not None else None
    return BackendScores(corpus, embedder, reports, comparison)

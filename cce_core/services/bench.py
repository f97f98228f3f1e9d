"""Benchmark a repository: index it in memory and measure recall, token savings and latency.

The ranking profile is resolved the way every search resolves it (the
option, then ``CCE_RANKING_PROFILE``), so the bench measures what a search
would run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cce_core.hookspecs import Embedder
    from cce_core.plugins.host import PluginHost


def bench_repository(repo_dir: Path, host: PluginHost, embedder: Embedder, *, ranking: str | None,
                     lang: str | None = None, name: str | None = None, commit: str | None = None,
                     queries_file: Path | None = None) -> Any:
    """The ``evaluation.bench`` report for ``repo_dir``."""
    from cce_core.evaluation.bench import run_bench
    from cce_core.retrieval.profiles import resolve_profile

    return run_bench(repo_dir, lang=lang, name=name, commit=commit, queries_file=queries_file, host=host,
                     embedder=embedder, profile=resolve_profile(ranking))

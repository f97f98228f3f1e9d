"""Which ranking pipeline a search runs: the family's, pinned byte for byte, or ours.

Two profiles exist. ``family`` is the pipeline the other engines of the family
run, with their six-decimal scores; every pinned comparison (conformance, the
relevance goldens, the bench table) uses it. ``default`` is this engine's own
pipeline (:mod:`cce_core.retrieval.default_ranking`), built to find the right
code for real questions. The store and everything a Sync artifact pins are the
same under both: a profile is only a way of reading the store.

One resolution rule serves every front end, so the CLI, the MCP server, the
dashboard, ``cce bench`` and ``cce relevance`` agree: an explicit choice
(``--ranking``) first, then the environment (``CCE_RANKING_PROFILE``), then the
project's ``.cce/config`` (``ranking.profile``), then ``default``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from cce_core.foundation.errors import CceError

FAMILY = "family"
DEFAULT = "default"
PROFILE_NAMES = (DEFAULT, FAMILY)
PROFILE_ENV = "CCE_RANKING_PROFILE"


def parse_profile(value: str, where: str) -> str:
    """``value`` as a profile name (trimmed, case-insensitive), or a :class:`CceError` naming ``where``."""
    name = value.strip().lower()
    if name not in PROFILE_NAMES:
        raise CceError(f"unknown ranking profile {value!r} in {where}: use {' or '.join(PROFILE_NAMES)}")
    return name


# The default profile's stages that ``ranking.disable`` may name (retrieval.default_ranking.Stages).
STAGE_NAMES = ("query_analysis", "file_view", "definitions", "roles")


@dataclass(frozen=True)
class RankingChoice:
    """The profile a search runs and the default-profile stages switched off."""

    profile: str
    disabled: frozenset[str] = frozenset()


def resolve_ranking(explicit: str | None = None, root: Path | None = None) -> RankingChoice:
    """Profile and disabled stages for a search at project ``root``, reading ``.cce/config`` once.

    The profile follows the rule in this module's docstring. A bad value in
    ``--ranking`` or the environment is an error (the user typed it for this
    run); so is one in ``.cce/config``, since silently ranking with another
    pipeline would make every comparison wrong — the same for a stage name.
    """
    config = None
    if root is not None:
        from cce_core.foundation.config import load_config

        config = load_config(root)
    if explicit is not None:
        profile = parse_profile(explicit, "--ranking")
    elif os.environ.get(PROFILE_ENV):
        profile = parse_profile(os.environ[PROFILE_ENV], PROFILE_ENV)
    elif config is not None and config.ranking_profile is not None:
        profile = parse_profile(config.ranking_profile, f"{root}/.cce/config (ranking.profile)")
    else:
        profile = DEFAULT
    disabled = frozenset(name.strip().lower() for name in config.ranking_disable) if config else frozenset()
    unknown = sorted(disabled - set(STAGE_NAMES))
    if unknown:
        raise CceError(f"unknown ranking stage {unknown[0]!r} in {root}/.cce/config (ranking.disable): use "
                       f"{', '.join(STAGE_NAMES)}")
    return RankingChoice(profile, disabled)


def resolve_profile(explicit: str | None = None, root: Path | None = None) -> str:
    """Only the profile of :func:`resolve_ranking` (for callers that do not rank with stages)."""
    return resolve_ranking(explicit, root).profile


def root_of_store(store_path: Path) -> Path:
    """The project directory of a store at ``ROOT/.cce/index.cce`` (its grandparent)."""
    return Path(store_path).resolve().parent.parent

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


def resolve_profile(explicit: str | None = None, root: Path | None = None) -> str:
    """The profile a search at project ``root`` runs, by the rule in this module's docstring.

    A bad value in ``--ranking`` or the environment is an error (the user typed
    it for this run); a bad value in ``.cce/config`` is too, since silently
    ranking with another pipeline would make every comparison wrong.
    """
    if explicit is not None:
        return parse_profile(explicit, "--ranking")
    from_env = os.environ.get(PROFILE_ENV)
    if from_env:
        return parse_profile(from_env, PROFILE_ENV)
    if root is not None:
        from cce_core.foundation.config import load_config

        configured = load_config(root).ranking_profile
        if configured is not None:
            return parse_profile(configured, f"{root}/.cce/config (ranking.profile)")
    return DEFAULT


def root_of_store(store_path: Path) -> Path:
    """The project directory of a store at ``ROOT/.cce/index.cce`` (its grandparent)."""
    return Path(store_path).resolve().parent.parent


def resolve_stages(root: Path | None) -> frozenset[str]:
    """The default-profile stages ``ranking.disable`` switches off at ``root`` (an unknown name is an error)."""
    if root is None:
        return frozenset()
    from cce_core.foundation.config import load_config
    from cce_core.retrieval.default_ranking import STAGE_NAMES

    disabled = frozenset(name.strip().lower() for name in load_config(root).ranking_disable)
    unknown = sorted(disabled - set(STAGE_NAMES))
    if unknown:
        raise CceError(f"unknown ranking stage {unknown[0]!r} in {root}/.cce/config (ranking.disable): use "
                       f"{', '.join(STAGE_NAMES)}")
    return disabled

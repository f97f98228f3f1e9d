"""pytest's hooks and the shared fixtures; the helpers tests import live in ``helpers.py``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import reference_dir, run_cce


def pytest_configure(config: pytest.Config) -> None:
    # Hermetic: the plugin entry-point cache of every cce the tests start (in-process or as a
    # subprocess) lives in a private directory, never in the user's ~/.cache.
    if "CCE_CACHE_DIR" not in os.environ:
        import tempfile

        os.environ["CCE_CACHE_DIR"] = tempfile.mkdtemp(prefix="cce-test-cache-")
    # The suite's goldens pin the family's ranking; tests of the default profile ask for it
    # explicitly (`--ranking default`, Searcher(profile="default")). CI sets the same variable.
    os.environ.setdefault("CCE_RANKING_PROFILE", "family")


@pytest.fixture
def reference() -> Path:
    ref = reference_dir()
    if not ref.is_dir():
        pytest.skip(f"reference goldens not found at {ref} (set CCE_REFERENCE_DIR to the shared/reference folder)")
    return ref


@pytest.fixture
def cce():
    return run_cce


@pytest.fixture(scope="module")
def host():
    """The process-wide host over the installed plugins."""
    from cce_core.plugins.host import default_host

    return default_host()


@pytest.fixture
def bare_host():
    """A host with no plugins at all: no import override can interfere."""
    from cce_core.plugins.host import PluginHost

    return PluginHost(entry_points=False)

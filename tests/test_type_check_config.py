"""The type check CI runs covers the engine and every pack, and CI really runs it.

``[tool.mypy]`` in ``pyproject.toml`` names the packages and where the packs'
sources are; a pack added under ``packs/`` without an entry there would go
unchecked, silently. ``.ci/run`` must run ``mypy`` (after ruff) under ``set -e``.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _mypy_config() -> dict:
    with (REPO / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["tool"]["mypy"]


def _pack_packages() -> dict[str, str]:
    """Pack folder → the import package inside it (the folder holding ``__init__.py``)."""
    out = {}
    for pack in sorted((REPO / "packs").iterdir()):
        if (pack / "pyproject.toml").is_file():
            packages = [p.parent.name for p in pack.glob("cce_*/__init__.py")]
            assert len(packages) == 1, f"{pack.name}: expected one package, found {packages}"
            out[pack.name] = packages[0]
    return out


def test_mypy_checks_the_engine_and_every_pack():
    config = _mypy_config()
    packs = _pack_packages()
    assert config["python_version"] == "3.11"
    assert sorted(config["packages"]) == sorted(["cce_core", *packs.values()])
    paths = {p.replace("$MYPY_CONFIG_FILE_DIR/", "") for p in config["mypy_path"]}
    assert paths == {f"packs/{name}" for name in packs}


def test_only_named_modules_may_skip_missing_imports():
    config = _mypy_config()
    assert "ignore_missing_imports" not in config, "use a per-module override, not a global switch"
    for override in config.get("overrides", []):
        assert override["module"], override


def test_ci_runs_mypy_after_ruff_and_the_contributor_install_brings_it():
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "set -euo pipefail" in script
    lines = [ln.strip() for ln in script.splitlines()]
    assert lines.index("mypy") > lines.index("ruff check .")
    requirements = (REPO / "requirements-dev.txt").read_text(encoding="utf-8")
    # mypy 2 needs pathspec >= 1, which cce-core's pin excludes.
    assert re.search(r"^mypy>=1\.\d+,<2$", requirements, flags=re.M)

"""The pip command that installs a missing plugin, in the form that fits how this cce-core was installed.

Someone who installed ``cce-core`` from the package index adds a pack by name
(``pip install cce-pack-ruby``). Someone running the engine from a checkout of
this repository (an editable install, or the source tree on ``sys.path``) has
the packs in its ``packs/`` folder; a by-name install there would mix an
index copy into a development environment, so they are told
``pip install -e packs/cce-pack-ruby`` instead.
"""

from __future__ import annotations

from pathlib import Path

# This module lives in cce_core/plugins/: two levels up is the cce_core package itself.
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def source_checkout(package_dir: Path | None = None) -> Path | None:
    """The repository checkout ``cce_core`` runs from, or ``None`` when it was installed as a built distribution.

    A checkout is recognised by what surrounds the package: the repository's
    ``pyproject.toml`` and its ``packs/`` folder. A wheel puts the package in
    ``site-packages``, where neither exists.
    """
    package = (package_dir or PACKAGE_DIR).resolve()
    root = package.parent
    if (root / "pyproject.toml").is_file() and (root / "packs").is_dir():
        return root
    return None


def install_command(distribution: str, *, package_dir: Path | None = None, cwd: Path | None = None) -> str:
    """``pip install <distribution>``, or ``pip install -e <checkout>/packs/<distribution>`` from a checkout.

    The checkout path is shown relative to ``cwd`` (default: the current
    directory) when it lies inside it, so the usual case reads
    ``pip install -e packs/cce-pack-ruby``; otherwise it is absolute and works
    from anywhere.
    """
    checkout = source_checkout(package_dir)
    if checkout is None:
        return f"pip install {distribution}"
    target = checkout / "packs" / distribution
    here = (cwd or Path.cwd()).resolve()
    shown = target.relative_to(here) if target.is_relative_to(here) else target
    return f"pip install -e {shown.as_posix()}"

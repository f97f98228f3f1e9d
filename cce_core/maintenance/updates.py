"""``cce update``: is a newer engine or plugin on the package index, and the one pip command that installs it.

The engine is a set of pip distributions — ``cce-core`` and every
``cce-*`` plugin — so pip is the updater: this module only compares the
installed versions with what the index's JSON API (``/<name>/json``, PyPI's
by default) lists as latest, and builds the ``pip install --upgrade`` line.
It is the only module of the engine that opens a network connection, and
only when the user runs ``cce update``.

An editable install (a development checkout, ``pip install -e``) is never
upgraded: pip would replace the checkout's link with a released copy.

"Up to date" is said only of what the index was asked about and knew: when
it knows none of the installed distributions, nothing was compared, and
that is an error rather than a reassurance.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from importlib import metadata

from cce_core.foundation.errors import CceError

DEFAULT_INDEX_URL = "https://pypi.org/pypi"
INDEX_URL_ENV = "CCE_INDEX_URL"
CORE_DISTRIBUTION = "cce-core"
PLUGIN_PREFIX = "cce-"
TIMEOUT_SECONDS = 10.0
UPDATE_EXIT_CODE = 10

_VERSION = re.compile(
    r"^v?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre>a|alpha|b|beta|c|rc|pre|preview)[-_.]?(?P<pre_n>\d*))?"
    r"(?:(?:[-_.]?(?:post|rev|r)[-_.]?(?P<post>\d*))|-(?P<post_implicit>\d+))?"
    r"(?:[-_.]?dev[-_.]?(?P<dev>\d*))?"
    r"(?:\+[a-z0-9.]+)?$",
    re.IGNORECASE,
)
# PEP 440 pre-release spellings, by rank: alpha, beta, release candidate.
_PRE_RANK = {tag: rank for rank, tags in enumerate(("a alpha", "b beta", "c rc pre preview")) for tag in tags.split()}


def version_key(version: str) -> tuple[object, ...] | None:
    """A sort key following PEP 440's order (release, pre, post, dev), or None for an unparsable version."""
    m = _VERSION.match(version.strip())
    if m is None:
        return None
    release = [int(part) for part in m["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    if m["pre"] is not None:
        pre: tuple[int, int] = (_PRE_RANK[m["pre"].lower()], int(m["pre_n"] or 0))
    elif m["dev"] is not None and m["post"] is None and m["post_implicit"] is None:
        pre = (-1, 0)  # 1.0.dev1 sorts before 1.0a1
    else:
        pre = (3, 0)  # a final release
    post_text = m["post"] if m["post"] is not None else m["post_implicit"]
    post = -1 if post_text is None else int(post_text or 0)
    dev = 1 << 62 if m["dev"] is None else int(m["dev"] or 0)
    return (tuple(release), pre, post, dev)


def is_newer(candidate: str, installed: str) -> bool:
    """True when ``candidate`` is a later version than ``installed`` (False when either is unparsable)."""
    a, b = version_key(candidate), version_key(installed)
    return a is not None and b is not None and a > b  # type: ignore[operator]  # same tuple shapes


@dataclass(frozen=True)
class Installed:
    name: str  # normalized: lowercase, "-" separated
    version: str
    editable_from: str | None  # the source directory of an editable install


@dataclass
class UpdateCheck:
    index_url: str
    installed: list[Installed]
    newer: list[tuple[Installed, str]] = field(default_factory=list)  # (installed, latest)
    unknown: list[Installed] = field(default_factory=list)  # not on the index (local or private plugins)

    @property
    def update_available(self) -> bool:
        return bool(self.newer)

    @property
    def checked(self) -> list[Installed]:
        """The distributions the index knew, so whose versions were compared."""
        unknown = {i.name for i in self.unknown}
        return [i for i in self.installed if i.name not in unknown]

    def nothing_checked(self) -> CceError | None:
        """The error to raise when the index knew none of the installed distributions; None otherwise."""
        if self.installed and not self.checked:
            names = ", ".join(i.name for i in self.installed)
            return CceError(f"nothing could be checked: the package index at {self.index_url} knows none of the "
                            f"{len(self.installed)} installed cce distributions ({names}) — they were installed "
                            "from elsewhere; point --index-url (or CCE_INDEX_URL) at the index that has them")
        return None

    def pip_arguments(self) -> list[str]:
        """The upgrade, run with this interpreter's pip."""
        return [sys.executable, "-m", "pip", "install", "--upgrade", *(i.name for i, _latest in self.newer)]

    def pip_command(self) -> str:
        return shlex.join(self.pip_arguments())

    def render(self) -> str:
        # Only what was compared is called up to date; the rest is listed as not on the index below.
        checked = self.checked
        core = next((i for i in checked if i.name == CORE_DISTRIBUTION), None)
        plugins = len(checked) - (core is not None)
        lines: list[str] = []
        if not self.newer:
            what = f"{CORE_DISTRIBUTION} {core.version}" if core is not None else "no cce-core"
            lines.append(f"up to date: {what} and {plugins} plugin{'' if plugins == 1 else 's'} "
                         f"(checked against {self.index_url})")
        else:
            lines.append("update available:")
            width = max(len(i.name) for i, _latest in self.newer)
            for installed, latest in self.newer:
                lines.append(f"  {installed.name:<{width}}  {installed.version} -> {latest}")
            lines.append(f"upgrade with: {self.pip_command()}")
        if self.unknown:
            names = ", ".join(i.name for i in self.unknown)
            lines.append(f"not on the index (installed from elsewhere): {names}")
        return "\n".join(lines) + "\n"


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _editable_source(dist: metadata.Distribution) -> str | None:
    """The source directory when ``dist`` is an editable install (PEP 610 ``direct_url.json``)."""
    try:
        text = dist.read_text("direct_url.json")
        info = json.loads(text) if text else None
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or not isinstance(info.get("dir_info"), dict):
        return None
    if not info["dir_info"].get("editable"):
        return None
    url = str(info.get("url", ""))
    return urllib.parse.unquote(urllib.parse.urlparse(url).path) if url.startswith("file:") else url or "?"


def installed_distributions() -> list[Installed]:
    """``cce-core`` and every installed ``cce-*`` distribution, core first, then by name."""
    found: dict[str, Installed] = {}
    for dist in metadata.distributions():
        raw = dist.metadata["Name"] if dist.metadata else None
        if not raw:
            continue
        name = _normalize(raw)
        if name != CORE_DISTRIBUTION and not name.startswith(PLUGIN_PREFIX):
            continue
        seen = found.get(name)
        editable = _editable_source(dist)
        if seen is None:
            found[name] = Installed(name, dist.version, editable)
        elif seen.editable_from is None and editable is not None:
            # Metadata of one distribution found twice (an egg-info beside its checkout on sys.path):
            # an editable record anywhere means a checkout pip must not replace.
            found[name] = Installed(name, seen.version, editable)
    return sorted(found.values(), key=lambda i: (i.name != CORE_DISTRIBUTION, i.name))


def index_url(explicit: str | None = None) -> str:
    """``--index-url``, else ``$CCE_INDEX_URL``, else PyPI's JSON API."""
    return (explicit or os.environ.get(INDEX_URL_ENV) or DEFAULT_INDEX_URL).rstrip("/")


def latest_version(base_url: str, name: str, *, timeout: float = TIMEOUT_SECONDS) -> str | None:
    """The latest version the index lists for ``name``; None when the index does not know it."""
    url = f"{base_url}/{urllib.parse.quote(name)}/json"
    request = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "cce-update"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # http(s) only: checked in check_updates
            body = response.read()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise CceError(f"the package index answered {exc.code} for {url}") from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise CceError(f"could not reach the package index at {base_url}: {reason}") from exc
    try:
        version = json.loads(body.decode("utf-8"))["info"]["version"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise CceError(f"the package index gave an unexpected answer for {url}") from exc
    if not isinstance(version, str) or not version:
        raise CceError(f"the package index gave no version for {name} at {url}")
    return version


def check_updates(explicit_url: str | None = None, *, installed: list[Installed] | None = None) -> UpdateCheck:
    """Compare every installed cce distribution with the index."""
    base = index_url(explicit_url)
    if not base.startswith(("http://", "https://")):
        raise CceError(f"the package index URL must be http(s): {base}")
    dists = installed_distributions() if installed is None else installed
    check = UpdateCheck(base, dists)
    for dist in dists:
        latest = latest_version(base, dist.name)
        if latest is None:
            check.unknown.append(dist)
        elif is_newer(latest, dist.version):
            check.newer.append((dist, latest))
    return check


def refuse_editable(check: UpdateCheck) -> None:
    """An editable install is updated in its checkout, never by pip: refuse with where it lives."""
    editable = [(i.name, i.editable_from) for i, _latest in check.newer if i.editable_from]
    if editable:
        name, source = editable[0]
        more = f" (and {len(editable) - 1} more)" if len(editable) > 1 else ""
        raise CceError(f"{name}{more} is an editable install from {source} — update that checkout (git pull), "
                       "pip would replace it with a released copy")


def run_upgrade(check: UpdateCheck) -> int:
    """Run the upgrade with this interpreter's pip; its exit code."""
    refuse_editable(check)
    try:
        return subprocess.run(check.pip_arguments(), check=False).returncode
    except OSError as exc:
        raise CceError(f"could not run pip: {exc}") from exc

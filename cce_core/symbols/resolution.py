"""Which indexed file a module specifier names: the pack's ``cce_resolve_import`` answer, else the graph's rule.

Name resolution's middle step (a definition in a file the caller's file
imports) needs files, not module names. A pack answers with candidate paths
for a specifier (relative ones resolved against the importer); the first
candidate that is an indexed file wins, else the shallowest indexed file
whose path ends with ``/`` plus a candidate (``flask/app.py`` finds
``src/flask/app.py``). A candidate ending in ``/`` names a directory (a Go
or Java package): every indexed file directly in it. Without an answer the import graph's rule applies: a
file whose stem is the specifier, else one ending in it plus a pack suffix.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - typing only
    from cce_core.plugins.host import PluginHost


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


class ImportResolver:
    """Resolves (language, specifier, importer) to an indexed path, memoised per process."""

    def __init__(self, files: Iterable[str], host: PluginHost | None, suffixes: Iterable[str] = ()) -> None:
        self.host = host
        self.files = sorted(files)
        self.present = set(self.files)
        self.suffixes = list(dict.fromkeys(suffixes))
        # Every tail of every path at a "/" boundary -> the shallowest path with that tail.
        self.by_tail: dict[str, str] = {}
        self.by_stem: dict[str, str] = {}
        # Directories (as "a/b/"): a package of Go or Java is a directory, not a file.
        self.dirs: dict[str, list[str]] = {}
        self.dir_by_tail: dict[str, str] = {}
        for path in self.files:
            parts = path.split("/")
            for i in range(len(parts)):
                tail = "/".join(parts[i:])
                prior = self.by_tail.get(tail)
                if prior is None or prior.count("/") > path.count("/"):
                    self.by_tail[tail] = path  # the shallowest path with this tail, then the first
            self.by_stem.setdefault(_stem(path), path)
            if len(parts) > 1:
                directory = "/".join(parts[:-1]) + "/"
                if directory not in self.dirs:
                    self.dirs[directory] = []
                    for i in range(len(parts) - 1):
                        tail = "/".join(parts[i:-1]) + "/"
                        prior = self.dir_by_tail.get(tail)
                        if prior is None or prior.count("/") > directory.count("/"):
                            self.dir_by_tail[tail] = directory
                self.dirs[directory].append(path)
        self._memo: dict[tuple[str, str, str], str | None] = {}

    def files_of(self, target: str) -> list[str]:
        """The indexed files a resolved target stands for: itself, or a directory's files."""
        return list(self.dirs.get(target, ())) if target.endswith("/") else [target]

    def resolve(self, language: str, specifier: str, importer: str) -> str | None:
        """The indexed file (or directory, ending in ``/``) ``specifier`` names in ``importer``, or None."""
        key = (language, specifier, importer)
        if key not in self._memo:
            self._memo[key] = self._resolve(*key)
        return self._memo[key]

    def _candidates(self, language: str, specifier: str, importer: str) -> list[str] | None:
        if self.host is None:
            return None
        try:
            answer = self.host.pm.hook.cce_resolve_import(language=language, specifier=specifier, importer=importer)
        except Exception:  # a failing plugin: the graph's rule answers instead
            return None
        if answer is None:
            return None
        return [str(c) for c in answer]

    def _resolve(self, language: str, specifier: str, importer: str) -> str | None:
        candidates = self._candidates(language, specifier, importer)
        if candidates is not None:
            for candidate in candidates:
                if candidate in self.present or (candidate.endswith("/") and candidate in self.dirs):
                    return candidate
            # Of the paths ending in some candidate, the one nearest the root: `flask/__init__.py` under
            # src/ beats a test fixture's tests/apps/flask.py, whatever the candidates' order.
            best: tuple[int, int, str] | None = None
            for rank, candidate in enumerate(candidates):
                tail = candidate.lstrip("/")
                found = self.dir_by_tail.get(tail) if tail.endswith("/") else self.by_tail.get(tail)
                if found is not None:
                    key = (found.count("/") - tail.count("/"), rank, found)
                    best = key if best is None or key < best else best
            return best[2] if best is not None else None
        found = self.by_stem.get(specifier)
        if found is not None:
            return found
        base = specifier.replace(".", "/").strip("/")
        for suffix in self.suffixes:
            found = self.by_tail.get(base + suffix)
            if found is not None:
                return found
        return None

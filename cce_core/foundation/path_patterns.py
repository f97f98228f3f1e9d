"""The path patterns a plugin uses to name files by shape (``test_*.py``, ``spec/``, ``*.pb.go``).

Plugins declare which files of their language are tests or generated
(:class:`cce_core.hookspecs.FileConventions`) as short patterns over a
file's relative, ``/``-separated path. This module is their one grammar: the
check a declared pattern must pass (validation) and the matcher the file
roles use. It knows no language itself.

The grammar, a small subset of gitignore's, matched case-sensitively with
:func:`fnmatch.fnmatchcase` per path component (``*``, ``?``, ``[...]``):

* ``name/`` (a trailing slash) — a directory: every file below a directory
  of that name, at any depth. Several components (``src/test/``) must appear
  one after another.
* ``pattern`` (no slash) — the file name, at any depth: ``*_test.go``.
* ``dir/pattern`` (a slash inside) — the last components of the path:
  ``test/*_test.rb`` matches ``a/test/x_test.rb``.
"""

from __future__ import annotations

from collections.abc import Callable
from fnmatch import fnmatchcase


def pattern_problem(pattern: object) -> str | None:
    """Why ``pattern`` is not a valid path pattern, or ``None`` when it is."""
    if not isinstance(pattern, str):
        return f"{pattern!r} is not a string"
    if not pattern or pattern != pattern.strip():
        return f"{pattern!r} is empty or has white space around it"
    if pattern.startswith("/") or "\\" in pattern:
        return f"{pattern!r} must be a relative path with '/' separators (no leading '/', no '\\')"
    if "**" in pattern:
        return f"{pattern!r} uses '**', which the grammar lacks; a 'name/' pattern already matches at any depth"
    parts = pattern.removesuffix("/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        return f"{pattern!r} has an empty, '.' or '..' component"
    if all(set(part) <= {"*", "?"} for part in parts):
        return f"{pattern!r} matches every file; name a directory or a file-name shape"
    return None


class PathPatterns:
    """A compiled set of valid path patterns; :meth:`matches` answers for one path."""

    def __init__(self, patterns: tuple[str, ...] | list[str]) -> None:
        self.patterns = tuple(dict.fromkeys(patterns))
        self._dirs: list[tuple[Callable[[str], bool], ...]] = []
        self._names: list[Callable[[str], bool]] = []
        self._tails: list[tuple[Callable[[str], bool], ...]] = []
        for pattern in self.patterns:
            if pattern.endswith("/"):
                self._dirs.append(tuple(map(component_matcher, pattern[:-1].split("/"))))
            elif "/" in pattern:
                self._tails.append(tuple(map(component_matcher, pattern.split("/"))))
            else:
                self._names.append(component_matcher(pattern))

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def matches(self, path: str) -> bool:
        """Whether any pattern matches ``path`` (relative, ``/``-separated; a leading ``./`` is ignored)."""
        parts = path.removeprefix("./").split("/")
        name = parts[-1]
        if any(match(name) for match in self._names):
            return True
        dirs = parts[:-1]
        for seq in self._dirs:
            width = len(seq)
            for start in range(len(dirs) - width + 1):
                if all(seq[i](dirs[start + i]) for i in range(width)):
                    return True
        for tail in self._tails:
            width = len(tail)
            if len(parts) >= width and all(tail[i](parts[-width + i]) for i in range(width)):
                return True
        return False


def component_matcher(pattern: str) -> Callable[[str], bool]:
    """``fnmatchcase(component, pattern)`` as a function of the component, without a regex where none is needed.

    The declared patterns are nearly all a literal name or one ``*`` between a
    prefix and a suffix (``*_test.go``, ``test_*.py``); those are answered by
    string comparisons, which give the same answer as fnmatch's regex (its ``*``
    matches any run of characters) without compiling one per pattern in every
    process that ranks. Any other pattern goes to :func:`fnmatchcase`.
    """
    if "?" in pattern or "[" in pattern or pattern.count("*") > 1:
        return lambda component: fnmatchcase(component, pattern)
    if "*" not in pattern:
        return pattern.__eq__
    prefix, suffix = pattern.split("*")
    shortest = len(prefix) + len(suffix)
    return lambda component: (len(component) >= shortest and component.startswith(prefix)
                              and component.endswith(suffix))

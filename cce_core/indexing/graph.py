"""The import graph: which indexed files import which.

A module name resolves to the first file (in path order) whose stem equals
it, else to the first file whose path ends with the module name plus one of
the suffixes the packs declare. Edges never point at their own file.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


class _EndingIndex:
    """The first file (in the given order) whose path ends with a string, found by bisection.

    Paths are kept reversed and sorted, so the paths ending with ``t`` are one
    contiguous run: those starting with ``t`` reversed. A 20 000-file tree would
    otherwise be scanned once per module name that no file stem resolves.
    """

    def __init__(self, files: list[str]) -> None:
        pairs = sorted((f[::-1], i) for i, f in enumerate(files))
        self._keys = [key for key, _i in pairs]
        self._order = [i for _key, i in pairs]
        self._files = files

    def first(self, endings: Iterable[str]) -> str | None:
        best: int | None = None
        keys = self._keys
        for ending in endings:
            reversed_ending = ending[::-1]
            pos = bisect_left(keys, reversed_ending)
            while pos < len(keys) and keys[pos].startswith(reversed_ending):
                i = self._order[pos]
                if best is None or i < best:
                    best = i
                pos += 1
        return None if best is None else self._files[best]


def build_edges(file_imports: dict[str, list[str]], files: list[str], suffixes: Iterable[str]) -> list[tuple[str, str]]:
    suffix_list = list(dict.fromkeys(suffixes))
    by_stem: dict[str, str] = {}
    for f in files:
        by_stem.setdefault(_stem(f), f)
    by_suffix: dict[str, str | None] = {}  # many files import the same module: resolve it once
    endings: _EndingIndex | None = None
    edges: set[tuple[str, str]] = set()
    for src in sorted(file_imports):
        for module in file_imports[src]:
            target = by_stem.get(module)
            if target is None and suffix_list:
                if module not in by_suffix:
                    if endings is None:
                        endings = _EndingIndex(files)
                    by_suffix[module] = endings.first(module + s for s in suffix_list)
                target = by_suffix[module]
            if target is not None and target != src:
                edges.add((src, target))
    return sorted(edges)


def neighbours(edges: list[tuple[str, str]]) -> dict[str, list[str]]:
    """File → sorted files it imports or is imported by."""
    out: dict[str, set[str]] = {}
    for a, b in edges:
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return {k: sorted(v) for k, v in out.items()}


def neighbours_of(edges: Sequence[Sequence[str]], files: Iterable[str]) -> dict[str, list[str]]:
    """:func:`neighbours` of a few ``files`` only, in one pass over the edges."""
    wanted = set(files)
    out: dict[str, set[str]] = {f: set() for f in wanted}
    for a, b in edges:
        if a in wanted:
            out[a].add(b)
        if b in wanted:
            out[b].add(a)
    return {k: sorted(v) for k, v in out.items() if v}

"""The import graph: which indexed files import which.

A module name resolves to the first file (in path order) whose stem equals
it, else to the first file whose path ends with the module name plus one of
the suffixes the packs declare. Edges never point at their own file.
"""

from __future__ import annotations

from collections.abc import Iterable


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


def build_edges(file_imports: dict[str, list[str]], files: list[str], suffixes: Iterable[str]) -> list[tuple[str, str]]:
    suffix_list = list(dict.fromkeys(suffixes))
    by_stem: dict[str, str] = {}
    for f in files:
        by_stem.setdefault(_stem(f), f)
    by_suffix: dict[str, str | None] = {}  # many files import the same module: resolve it once
    edges: set[tuple[str, str]] = set()
    for src in sorted(file_imports):
        for module in file_imports[src]:
            target = by_stem.get(module)
            if target is None and suffix_list:
                if module not in by_suffix:
                    ends = tuple(module + s for s in suffix_list)
                    by_suffix[module] = next((f for f in files if f.endswith(ends)), None)
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

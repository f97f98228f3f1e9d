"""How central each file and definition of a repository is: PageRank over the reference graph, Aider-style.

A file that uses a name points at every file defining it (the weight shared
between them, damped for private, common or short names); the power
iteration gives each file a rank, and each definition gets the share of the
uses that point at it. ``cce map`` and the ``repo_map`` tool outline the
repository from these figures.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from cce_core.symbols.model import Definition, Reference

# PageRank: the damping of Aider's repo map, and enough power iterations to settle to 1e-9 on real repositories.
_DAMPING = 0.85
_ITERATIONS = 60
_TOLERANCE = 1e-9
# A name defined in more files than this is left out of the graph (its uses say nothing about the target).
_UNINFORMATIVE_NAME_FILES = 50
# A reference to a private-looking name (leading underscore) says less about a file's centrality.
_PRIVATE_WEIGHT = 0.1
# ... and so does a name defined in many files; a long compound name (snake or camel case) says more.
_COMMON_NAME_FILES = 5
_COMMON_NAME_WEIGHT = 0.1
_SPECIFIC_NAME_LENGTH = 8
_SPECIFIC_NAME_WEIGHT = 10.0


def rank_files(definitions: Sequence[Definition], references: Sequence[Reference]
          ) -> tuple[dict[str, float], dict[tuple[str, int], float]]:
    """(file → PageRank, definition → its share of its file's rank), over uses between different files."""
    # A use only points at definitions in its own language: Ruby's `raise` is not the one a JavaScript asset defines.
    Key = tuple[str, str]  # (language, name)
    files_of: dict[Key, dict[str, int]] = defaultdict(lambda: defaultdict(int))  # → file → definitions there
    for d in definitions:
        files_of[(d.language, d.name)][d.file_path] += 1
    counts: dict[Key, dict[str, int]] = defaultdict(lambda: defaultdict(int))  # → using file → uses
    for r in references:
        if (r.language, r.name) in files_of:
            counts[(r.language, r.name)][r.file_path] += 1
    edges: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    per_definition: dict[tuple[Key, str], float] = defaultdict(float)  # (key, file) → weight of each definition
    for key in sorted(counts):
        name = key[1]
        files = files_of[key]
        if len(files) > _UNINFORMATIVE_NAME_FILES:
            continue  # `new`, `call`, `initialize` on a large tree: a use says nothing about which file it needs
        total = sum(files.values())
        base = _name_weight(name, len(files))
        for user, count in sorted(counts[key].items()):
            targets = total - files.get(user, 0)
            if not targets:
                continue
            # sqrt: a file calling a name fifty times is not fifty times as dependent on it (Aider's rule).
            weight = base * math.sqrt(count) / targets
            for target, defined in files.items():
                if target != user:
                    edges[user][target] += weight * defined
                    per_definition[(key, target)] += weight
    nodes = sorted({d.file_path for d in definitions} | set(edges))
    uses = {(d.file_path, d.line): per_definition[((d.language, d.name), d.file_path)] for d in definitions
            if ((d.language, d.name), d.file_path) in per_definition}
    return _pagerank(nodes, edges), uses


def _name_weight(name: str, defining_files: int) -> float:
    """How much a use of ``name`` says about dependence: long specific names more, private or common ones less."""
    weight = 1.0
    if name.startswith("_"):
        weight *= _PRIVATE_WEIGHT
    if defining_files > _COMMON_NAME_FILES:
        weight *= _COMMON_NAME_WEIGHT  # get, run, __init__: defined everywhere, resolves nowhere in particular
    if len(name) >= _SPECIFIC_NAME_LENGTH and ("_" in name.strip("_") or name[1:] != name[1:].lower()):
        weight *= _SPECIFIC_NAME_WEIGHT
    return weight


def _pagerank(nodes: Sequence[str], edges: dict[str, dict[str, float]]) -> dict[str, float]:
    """Power iteration with uniform teleport; a file that uses nothing spreads its rank evenly.

    numpy does the sums (one ``bincount`` per iteration, in a fixed edge order, so the result is the same on
    every run); it stops once an iteration moves the ranks by less than ``_TOLERANCE`` in total.
    """
    import numpy as np

    if not nodes:
        return {}
    position = {n: i for i, n in enumerate(nodes)}
    sources: list[int] = []
    targets: list[int] = []
    weights: list[float] = []
    for source in sorted(edges):
        row = edges[source]
        total = sum(row.values())
        if not total:
            continue
        for target in sorted(row):
            sources.append(position[source])
            targets.append(position[target])
            weights.append(row[target] / total)
    count = len(nodes)
    src = np.asarray(sources, dtype=np.int64)
    dst = np.asarray(targets, dtype=np.int64)
    share = np.asarray(weights, dtype=np.float64)
    dangling = np.ones(count, dtype=bool)
    dangling[src] = False
    rank = np.full(count, 1.0 / count)
    for _ in range(_ITERATIONS):
        spread = (1.0 - _DAMPING) / count + _DAMPING * float(rank[dangling].sum()) / count
        following = spread + _DAMPING * np.bincount(dst, weights=rank[src] * share, minlength=count)
        moved = float(np.abs(following - rank).sum())
        rank = following
        if moved < _TOLERANCE:
            break
    return {n: float(rank[i]) for i, n in enumerate(nodes)}

"""File neighbours by import, resolved by the language packs.

The family's import graph maps a module to the first file in path order whose
stem matches, so ``from ..config import Config`` can point at ``docs/config.rst``.
The symbol records keep every file's module specifiers, and the packs resolve
them (``cce_resolve_import``) to files of their own language, relative imports
honoured. Under the default ranking profile, ``related_context`` and
``expand_chunk scope=neighbors`` read their neighbours from here; the family
profile keeps its pinned graph.
"""

from __future__ import annotations

from cce_core.symbols.index import SymbolIndex


def import_neighbours(index: SymbolIndex) -> dict[str, list[str]] | None:
    """File → sorted files it imports or is imported by; None when the store has no symbol records."""
    if not index.available:
        return None
    linked: dict[str, set[str]] = {}
    for path in index.files():
        for target in index.imported_files(path):
            linked.setdefault(path, set()).add(target)
            linked.setdefault(target, set()).add(path)
    return {path: sorted(others) for path, others in linked.items()}

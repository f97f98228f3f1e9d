"""Which pools ``cce search`` searches when it is not given ``--source``.

Code, as it always has, when the project has a code index. A project that
has only knowledge — a folder of documentation someone just ran
``cce knowledge add`` on — has nothing else to search, so there the
knowledge store answers instead of an error about a missing code index;
that is what lets a new user get from a docs folder to results in two
commands. ``--source both`` blends the two where both exist.
"""

from __future__ import annotations

from pathlib import Path


def cli_default_source(root: Path) -> str:
    """``code``, or ``knowledge`` when ``root`` has a knowledge store (and knowledge on) but no code index."""
    from cce_core.foundation.config import load_config
    from cce_core.indexing.store import default_store_path
    from cce_core.knowledge.store import pointer_path

    if default_store_path(root).exists() or not pointer_path(root).exists():
        return "code"
    return "knowledge" if load_config(root).knowledge_enabled else "code"

"""docs/ARCHITECTURE.md's module map says where every behaviour lives; it must not drift from the package."""

from __future__ import annotations

import re
from pathlib import Path

from test_layers import LAYERS

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
MAP = DOC[DOC.index("## Module map"):DOC.index("\n## ", DOC.index("## Module map") + 1)]


def _modules_needing_a_row() -> set[str]:
    out = set()
    for path in (REPO / "cce_core").rglob("*.py"):
        rel = path.relative_to(REPO).as_posix()
        # A subpackage's __init__ holds only its docstring; the package root and the command registry do more.
        if path.name == "__init__.py" and rel not in ("cce_core/__init__.py", "cce_core/cli/commands/__init__.py"):
            continue
        out.add(rel)
    return out


def test_every_module_has_a_row_in_the_module_map():
    rows = set(re.findall(r"^\| `(cce_core/[\w/]+\.py)` \|", MAP, flags=re.M))
    assert sorted(_modules_needing_a_row() - rows) == [], "modules missing from docs/ARCHITECTURE.md's module map"
    assert sorted(rows - _modules_needing_a_row()) == [], "the module map names modules that do not exist"


def test_every_path_the_document_names_exists():
    named = set(re.findall(r"`(cce_core/[\w/.]+)`", DOC))
    missing = sorted(p for p in named if not (REPO / p.rstrip("/")).exists())
    assert missing == []


def test_the_layer_diagram_matches_the_enforced_layers():
    block = MAP[MAP.index("```\n") + 4:MAP.index("\n```", MAP.index("```\n") + 4)]
    diagram = [line.split()[0] for line in block.split("\n") if line and not line.startswith(" ")]
    assert diagram == [name for name, _prefixes in LAYERS]

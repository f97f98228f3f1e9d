"""Which definitions a diff touches: the new-side changed lines of a ``-U0`` unified diff, mapped to the
innermost definition around each.

``cce impact`` and the ``change_impact`` tool start here; running ``git diff``
is the service's part, reading what it printed is this module's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from cce_core.symbols.model import Definition


@dataclass
class DiffHunks:
    """Changed lines per file, on the new side of the diff: added or edited lines, and points of deletion."""

    lines: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    deleted_after: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    files: list[str] = field(default_factory=list)


def parse_unified_diff(text: str) -> DiffHunks:
    """The new-side changed lines of a ``-U0`` diff; a pure deletion marks the line it follows."""
    import re

    hunk = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
    out = DiffHunks()
    path: str | None = None
    for line in text.split("\n"):
        if line.startswith("+++ "):
            target = line[4:]
            path = None if target == "/dev/null" else (target[2:] if target.startswith("b/") else target)
            if path is not None and path not in out.files:
                out.files.append(path)
            continue
        if path is None:
            continue
        match = hunk.match(line)
        if not match:
            continue
        start, count = int(match.group(2)), int(match.group(3) or 1)
        if count == 0:
            out.deleted_after[path].add(start)
        else:
            out.lines[path].update(range(start, start + count))
    return out


def touched_definitions(definitions: Iterable[Definition], hunks: DiffHunks) -> list[Definition]:
    """For each changed line, the innermost definition around it; a deletion counts inside the definition."""
    by_file: dict[str, list[Definition]] = defaultdict(list)
    for d in definitions:
        by_file[d.file_path].append(d)
    touched: dict[tuple[str, int], Definition] = {}
    for path in sorted(set(hunks.lines) | set(hunks.deleted_after)):
        spans = by_file.get(path, [])

        def innermost(inside: Any, spans: list[Definition] = spans) -> Definition | None:
            around = [d for d in spans if inside(d)]
            return max(around, key=lambda d: (d.line, -d.end_line)) if around else None

        for line in sorted(hunks.lines.get(path, ())):
            found = innermost(lambda d, n=line: d.line <= n <= d.end_line)
            if found is not None:
                touched[(found.file_path, found.line)] = found
        for after in sorted(hunks.deleted_after.get(path, ())):
            found = innermost(lambda d, n=after: d.line <= n < d.end_line)
            if found is not None:
                touched[(found.file_path, found.line)] = found
    return sorted(touched.values(), key=lambda d: (d.file_path, d.line, d.name))

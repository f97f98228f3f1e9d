"""The generated pack's sample: finding one in the working directory and measuring what the pack makes of it.

A pack ships a sample file and the counts its own self-test expects from it
(``PackExpected``). The scaffold picks the smallest file that parses cleanly
and holds a function, then measures it with the very queries the engine runs
and the very ``imports_from_nodes`` the pack ships, so the generated tests
pass by construction.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from cce_core.authoring.grammar_source import Grammar
from cce_core.authoring.pack_templates import template_text
from cce_core.foundation.textrules import node_text

# Bounds of the search for a sample in the working directory: a scaffold must not crawl a home directory.
MAX_FILES_VISITED = 2000
MAX_SAMPLE_BYTES = 64 * 1024
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "dist", "build", "target"})


@dataclass(frozen=True)
class Measured:
    """What the pack will produce on a text: chunk counts, kinds present and imports."""

    functions: int
    classes: int
    kinds: tuple[str, ...]
    imports: tuple[str, ...]
    has_error: bool


def _pattern(kinds: Sequence[str], capture: str) -> str:
    return "[" + " ".join(f"({k})" for k in dict.fromkeys(kinds)) + "] @" + capture


def _captured(language: Language, root: Node, kinds: Sequence[str], capture: str) -> list[Node]:
    if not kinds:
        return []
    query = Query(language, _pattern(kinds, capture))
    return list(QueryCursor(query).captures(root).get(capture, []))


def imports_function() -> Callable[[list[Node], bytes], list[str]]:
    """The generic ``imports_from_nodes`` the generated pack ships, compiled from the same template.

    Expected imports are computed with exactly the code the pack will run, so
    the generated tests pass by construction.
    """
    code = "from __future__ import annotations\n" + template_text("imports_from_nodes.py.tmpl")
    # The names the generated module imports from ``cce_core.api``, taken from where the facade takes them.
    namespace: dict[str, Any] = {"node_text": node_text}
    exec(compile(code, "<cce pack template: imports_from_nodes>", "exec"), namespace)
    return namespace["imports_from_nodes"]


def measure(grammar: Grammar, text: str, function_types: Sequence[str], class_types: Sequence[str],
            import_kinds: Sequence[str]) -> Measured:
    """Chunk and import counts the way the engine gets them: one query per purpose over the tree."""
    source = text.encode("utf-8")
    root = Parser(grammar.language).parse(source).root_node
    chunk_nodes = _captured(grammar.language, root, [*function_types, *class_types], "chunk")
    class_set = set(class_types)
    classes = sum(1 for node in chunk_nodes if node.type in class_set)
    present = {node.type for node in chunk_nodes}
    kinds = tuple(k for k in dict.fromkeys([*function_types, *class_types]) if k in present)
    imports: list[str] = []
    if import_kinds:
        nodes = sorted(_captured(grammar.language, root, import_kinds, "import"), key=lambda n: n.start_byte)
        imports = imports_function()(nodes, source)
    return Measured(len(chunk_nodes) - classes, classes, kinds, tuple(imports), root.has_error)


def as_package_text(raw: bytes) -> str:
    """The text ``read_text(encoding="utf-8")`` will give the pack (universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8").read()


def not_found_reason(extensions: Sequence[str], root: Path) -> str:
    """Why ``find_sample`` found nothing, with the bounds it searched within."""
    return (f"no file with {', '.join(extensions)} under {root} (at most {MAX_FILES_VISITED} files, "
            f"{MAX_SAMPLE_BYTES // 1024} KiB each) parsed cleanly and held a function")


def find_sample(grammar: Grammar, extensions: Sequence[str], function_types: Sequence[str],
                root: Path) -> tuple[Path, bytes] | None:
    """The smallest file under ``root`` that parses cleanly and holds a function; bounded, see above."""
    if not function_types:
        return None
    wanted = set(extensions)
    candidates: list[tuple[int, str]] = []
    visited = 0
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIPPED_DIRS)
        for filename in sorted(filenames):
            visited += 1
            if visited > MAX_FILES_VISITED:
                break
            dot = filename.rfind(".")
            if dot <= 0 or filename[dot:].lower() not in wanted:
                continue
            path = os.path.join(directory, filename)
            try:
                size = os.lstat(path).st_size
            except OSError:
                continue
            if 0 < size <= MAX_SAMPLE_BYTES and os.path.isfile(path) and not os.path.islink(path):
                candidates.append((size, path))
        if visited > MAX_FILES_VISITED:
            break
    for _size, path in sorted(candidates):
        try:
            raw = Path(path).read_bytes()
            text = as_package_text(raw)
        except (OSError, UnicodeDecodeError):
            continue
        measured = measure(grammar, text, function_types, (), ())
        if not measured.has_error and measured.functions > 0:
            return Path(path), raw
    return None

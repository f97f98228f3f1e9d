"""The core is layered: a module imports only from its own layer or the layers below, and nothing cycles.

Every import counts, including those inside functions and under
``TYPE_CHECKING``: a lazy import is still a dependency, and a cycle through
one is still a cycle. ``cce_core.api`` is the plugin authors' facade over the
layers; nothing inside the core may import it, so the facade can change shape
without the engine noticing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "cce_core"

# Bottom to top. A package (or module) named here covers everything below it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("cce_core.foundation",)),
    ("plugins", ("cce_core.hookspecs", "cce_core.plugins", "cce_core.default_plugins")),
    # Secret protection: below everything that stores or shows text.
    ("secrets", ("cce_core.secrets",)),
    # Symbols at index time: the chunker runs the tags query over the tree it has.
    ("symbol-extraction", ("cce_core.symbols.model", "cce_core.symbols.tags", "cce_core.symbols.extract")),
    ("indexing", ("cce_core.indexing",)),
    ("retrieval", ("cce_core.retrieval",)),
    # Symbols at query time: the symbol graph read from the store.
    ("symbols", ("cce_core.symbols",)),
    ("knowledge", ("cce_core.knowledge",)),
    ("workspace", ("cce_core.workspace",)),
    ("observability", ("cce_core.observability",)),
    ("sync", ("cce_core.sync",)),
    ("evaluation", ("cce_core.evaluation",)),
    ("authoring", ("cce_core.authoring",)),
    ("maintenance", ("cce_core.maintenance",)),
    # The use cases the front-ends share; above every feature, below every front-end.
    ("services", ("cce_core.services",)),
    # The front-ends (adapters): the MCP server and the command line.
    ("agents", ("cce_core.agents",)),
    ("cli", ("cce_core.cli",)),
]
FACADE = "cce_core.api"
PACKAGE_ROOT = "cce_core"  # only __version__ lives here


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(CORE.rglob("*.py")):
        parts = list(path.relative_to(CORE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(module: str, path: Path) -> set[str]:
    """Every cce_core module ``module`` imports, resolved to the longest existing module name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            names = [origin] + [f"{origin}.{alias.name}" for alias in node.names]
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def _layer_of(module: str) -> int | None:
    for rank, (_name, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    return None


def test_every_module_belongs_to_a_layer():
    unplaced = [m for m in MODULES if _layer_of(m) is None and m not in (FACADE, PACKAGE_ROOT)]
    assert unplaced == [], f"add these to a layer in {__name__}.LAYERS and docs/ARCHITECTURE.md: {unplaced}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer_of(m) is not None))
def test_lower_layers_never_import_higher_ones(module: str):
    rank = _layer_of(module)
    assert rank is not None
    upward = sorted(dep for dep in GRAPH[module]
                    if dep == FACADE or (_layer_of(dep) is not None and _layer_of(dep) > rank))  # type: ignore[operator]
    assert upward == [], f"{module} ({LAYERS[rank][0]}) imports from a higher layer or the facade: {upward}"


def test_the_facade_sits_on_top_of_everything_but_the_cli():
    cli = _layer_of("cce_core.cli")
    assert all(_layer_of(dep) != cli for dep in GRAPH[FACADE]), GRAPH[FACADE]


def test_the_package_root_imports_nothing():
    assert GRAPH[PACKAGE_ROOT] == set()


def test_no_import_cycles():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert cycles == []


def test_the_checker_sees_function_level_and_relative_imports(tmp_path: Path):
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from cce_core.cli.app import main\n\nfrom ..plugins import host\n",
                    encoding="utf-8")
    # Importing from a package imports its __init__ as well.
    assert _imports("cce_core.indexing.m", path) == {"cce_core.cli.app", "cce_core.plugins", "cce_core.plugins.host"}

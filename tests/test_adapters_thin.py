"""The front-ends are thin: a command or MCP tool parses, calls one library function, renders.

The check reads the syntax of ``cce_core/cli/commands/*.py`` and
``cce_core/agents/mcp_tools.py``. In every function there (each ``def``,
nested ones and methods included, checked on its own; a ``lambda`` counts
towards the function it sits in) it collects the *library functions called*:
the callee is a name bound by an import from a ``cce_core`` module, called
directly (``search(...)``), through an imported module (``metrics.read_log(...)``)
or through an imported class (``GrammarRow.from_result(...)``). A function
may call at most one distinct library function.

Not counted, because they are the front-end's own work rather than the use case:

- the front-end's own package — ``cce_core.cli`` for the commands (argument
  helpers, the plugin host with its warnings, the renderers), ``cce_core.agents``
  for the MCP tools (the session, the MCP texts);
- ``cce_core.foundation.errors`` (raising the one error type) and
  ``cce_core.foundation.safe_text`` (making stored text printable);
- classes imported from ``cce_core.services`` (a request or a set of
  callbacks: the argument of the one call, not a second call);
- presentation: a callee whose name starts with ``render`` (the project's
  name for "result → text"), and the formatting functions in ``PRESENTATION``;
- argument parsing: the option parsers in ``ARGUMENT_PARSING``.

What the check cannot see: method calls on objects (``host.embedder(...)``,
``searcher.search(...)``, ``session.load_index()``) — it reads syntax, not
types. A function still in ``PENDING`` has not been moved onto a service
yet; the list may only shrink (the test fails when a listed function
already complies, so the entry must go).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "cce_core"
COMMANDS = sorted((CORE / "cli" / "commands").glob("*.py"))
MCP_TOOLS = CORE / "agents" / "mcp_tools.py"

OWN_PACKAGE = {"cli": "cce_core.cli", "agents": "cce_core.agents"}
ALWAYS_ALLOWED = ("cce_core.foundation.errors", "cce_core.foundation.safe_text")
PRESENTATION = frozenset({
    "cce_core.foundation.textrules.format6",  # the family's 6-decimal score
    "cce_core.foundation.textrules.round_half_away",
    "cce_core.foundation.textrules.estimate_tokens",  # how long a rendered answer is (the MCP token budget)
    "cce_core.observability.result_line.human_row",
    "cce_core.observability.result_line.compact_line",
    "cce_core.observability.result_line.GrammarRow.from_result",
    "cce_core.observability.usage.short_tokens",
    "cce_core.observability.usage.thousands",
    "cce_core.observability.usage.dumps_pretty",
    "cce_core.knowledge.blend.display_record_id",
    "cce_core.knowledge.blend.section_snippet",
    "cce_core.retrieval.detail_views.bounded_view",
    "cce_core.indexing.watch.describe_pass",
    "cce_core.workspace.manifest.edge_line",
    "cce_core.workspace.manifest.member_line",
    "cce_core.knowledge.ingest.summary_text",  # what `cce knowledge index` prints
    "cce_core.knowledge.docs_folder.add_summary_text",  # what `cce knowledge add` prints
    "cce_core.knowledge.ask.regression_message",  # the error line of a failed `cce knowledge ask`
})
ARGUMENT_PARSING = frozenset({  # an option's text → its value; the same error line in every front-end
    "cce_core.observability.usage.parse_since",
    "cce_core.observability.usage.parse_source",
    "cce_core.workspace.federation.parse_scope",
    "cce_core.retrieval.profiles.parse_profile",
})

# Functions that still orchestrate several library calls (see the report on issue #22): shrink only.
PENDING: dict[str, str] = {}


def _import_origins(tree: ast.AST) -> dict[str, str]:
    """Local name → the dotted ``cce_core`` name it is bound to, over every import in the module."""
    origins: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "cce_core":
            for alias in node.names:
                origins[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "cce_core":
                    origins[alias.asname or alias.name] = alias.name if alias.asname else "cce_core"
    return origins


def _callee(func: ast.expr, origins: dict[str, str]) -> str | None:
    if isinstance(func, ast.Name):
        return origins.get(func.id)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in origins:
        return f"{origins[func.value.id]}.{func.attr}"
    return None


def _counts(callee: str, own_package: str) -> bool:
    """Whether a call to ``callee`` is a library call (see the module docstring)."""
    def under(prefix: str) -> bool:
        return callee == prefix or callee.startswith(prefix + ".")

    if under(own_package) or any(under(p) for p in ALWAYS_ALLOWED):
        return False
    name = callee.rpartition(".")[2]
    if under("cce_core.services") and name[:1].isupper():
        return False
    return not (name.startswith("render") or callee in PRESENTATION or callee in ARGUMENT_PARSING)


def library_calls(function: ast.FunctionDef | ast.AsyncFunctionDef, origins: dict[str, str],
                  own_package: str) -> set[str]:
    """The distinct library functions ``function`` calls in its own body (nested defs are checked apart)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(child, ast.Call):
                callee = _callee(child.func, origins)
                if callee is not None and _counts(callee, own_package):
                    found.add(callee)
            visit(child)

    visit(function)
    return found


def fat_functions(source: str, own_package: str) -> dict[str, set[str]]:
    """Function name → its library calls, for every function calling more than one."""
    tree = ast.parse(source)
    origins = _import_origins(tree)
    out: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            calls = library_calls(node, origins, own_package)
            if len(calls) > 1:
                out[node.name] = calls
    return out


def _adapter_files() -> list[tuple[str, Path, str]]:
    files = [(f"cli/commands/{p.name}", p, OWN_PACKAGE["cli"]) for p in COMMANDS]
    return [*files, ("agents/mcp_tools.py", MCP_TOOLS, OWN_PACKAGE["agents"])]


def _violations() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for label, path, own in _adapter_files():
        for name, calls in fat_functions(path.read_text(encoding="utf-8"), own).items():
            out[f"{label}:{name}"] = sorted(calls)
    return out


VIOLATIONS = _violations()


@pytest.mark.parametrize("label", [label for label, _path, _own in _adapter_files()])
def test_each_function_calls_at_most_one_library_function(label: str):
    fat = {key: calls for key, calls in VIOLATIONS.items() if key.startswith(label + ":") and key not in PENDING}
    assert fat == {}, ("move the orchestration into a cce_core.services module and call that once: "
                       f"{fat}")


def test_pending_functions_still_need_their_service():
    done = sorted(key for key in PENDING if key not in VIOLATIONS)
    assert done == [], f"these now call one library function — remove them from PENDING: {done}"


def test_the_search_and_index_front_ends_are_thin():
    # The use cases issue #22 names: no exception may be granted to them.
    for key in PENDING:
        assert not key.startswith(("cli/commands/search.py", "cli/commands/index.py", "cli/commands/init.py")), key
        assert key.rpartition(":")[2] not in ("context_search", "code_search", "log_code_search", "_blended_search")


def test_the_checker_counts_direct_module_and_class_calls_but_not_rendering_or_own_helpers():
    source = (
        "from cce_core.workspace.manifest import load_manifest, edge_line\n"
        "from cce_core.observability import metrics\n"
        "from cce_core.observability.result_line import GrammarRow\n"
        "from cce_core.cli.shared import command_host\n"
        "from cce_core.services.search import SearchRequest, search\n"
        "def fat(root):\n"
        "    m = load_manifest(root)\n"
        "    metrics.read_log(root)\n"
        "    return [GrammarRow.from_result(r) for r in m]\n"
        "def thin(q):\n"
        "    command_host()\n"
        "    out = search(SearchRequest(q))\n"
        "    return edge_line(out), render_all(out)\n"
        "def hidden_in_a_lambda(q):\n"
        "    search(q)\n"
        "    return lambda: load_manifest(q)\n"
        "from cce_core.evaluation.report import render_all\n"
    )
    fat = fat_functions(source, "cce_core.cli")
    assert fat == {
        "fat": {"cce_core.workspace.manifest.load_manifest", "cce_core.observability.metrics.read_log"},
        "hidden_in_a_lambda": {"cce_core.services.search.search", "cce_core.workspace.manifest.load_manifest"},
    }

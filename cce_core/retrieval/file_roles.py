"""What part a file plays in a repository, judged from its path alone.

When an agent asks where something happens, the answer is almost always in
the source: tests, examples, benchmarks and documentation repeat the same
names and words (a test calls the function, a guide explains it), and
licences, lockfiles, requirement lists and stylesheets share many words of a
long issue text by chance. The default ranking multiplies each chunk's score
by its file's role weight, unless the query asks for that role itself
(``QueryAnalysis.intents``). The family profile keeps its own, narrower rule.

The rules written here are conventions of repositories in general (folder
names, file kinds, licence and lockfile names), never of one language. What a
language adds — ``*_test.go``, ``spec/``, ``test_*.py``, ``*_pb2.py`` — comes
from the installed plugins' ``cce_file_conventions`` answers
(:class:`~cce_core.hookspecs.FileConventions`), pooled by
:mod:`cce_core.plugins.conventions_cache`; a language no plugin speaks for
keeps the general rules only.
"""

from __future__ import annotations

from cce_core.foundation.path_patterns import PathPatterns
from cce_core.hookspecs import FileConventions

SOURCE = "source"
TEST = "test"
EXAMPLE = "example"
BENCH = "bench"
DOCS = "docs"
CONFIG = "config"
META = "meta"
STYLE = "style"
GENERATED = "generated"

# The multiplier of each role when the query does not ask for it (measured: docs/BENCHMARKS.md).
ROLE_WEIGHTS = {
    SOURCE: 1.0, CONFIG: 0.6, TEST: 0.45, EXAMPLE: 0.5, BENCH: 0.5, DOCS: 0.35, GENERATED: 0.3, META: 0.15,
    STYLE: 0.2,
}
# A role the query asks for ("where are the tests for ...") is preferred over source by this much.
ASKED_ROLE_WEIGHT = 1.25
# Which query intents (query_analysis.ROLE_WORDS) lift which roles.
INTENT_LIFTS = {
    TEST: "test", EXAMPLE: "example", BENCH: "bench", DOCS: "docs", CONFIG: "config", META: "meta",
    STYLE: "style",
}

# Folder names that hold tests in repositories of any language (a language's own, such as
# ``spec/`` or ``__tests__/``, come from its plugin).
_TEST_DIRS = frozenset({"test", "tests", "testing", "testdata", "test_data", "fixtures", "e2e",
                        "integration-tests", "unittests"})
_EXAMPLE_DIRS = frozenset({"example", "examples", "sample", "samples", "demo", "demos", "tutorial", "tutorials",
                           "playground", "cookbook"})
_BENCH_DIRS = frozenset({"bench", "benches", "benchmark", "benchmarks", "perf"})
_DOC_DIRS = frozenset({"doc", "docs", "documentation", "man", "website", "site"})
_GENERATED_DIRS = frozenset({"dist", "build", "vendor", "vendored", "third_party", "generated", "gen", "out",
                             "coverage"})
_DOC_EXTENSIONS = frozenset({"md", "mdx", "rst", "txt", "adoc", "asciidoc", "rdoc", "texi", "tex", "org", "pod",
                             "1", "3", "5", "7", "8", "html", "htm"})
_CONFIG_EXTENSIONS = frozenset({"json", "yaml", "yml", "toml", "ini", "cfg", "conf", "xml", "in", "properties",
                                "editorconfig", "gitignore", "gitattributes", "env", "lock", "sum", "mod"})
_STYLE_EXTENSIONS = frozenset({"css", "scss", "sass", "less", "styl"})
_META_NAMES = ("license", "licence", "copying", "notice", "authors", "contributors", "changelog", "changes",
               "history", "news", "code_of_conduct", "contributing", "security", "codeowners", "maintainers")
# The same names as a set and as the prefixes ``name-`` / ``name_``: one C-level test each, not a loop per name.
_META_SET = frozenset(_META_NAMES)
_META_PREFIXES = tuple(m + sep for m in _META_NAMES for sep in ("-", "_"))
_SOURCE_DIRS = frozenset({"src", "lib", "source", "sources", "pkg", "internal", "app", "cmd", "crates"})
# Lockfiles by shape: ``*.lock``, ``*.lockb``, ``*-lock.json`` / ``*-lock.yaml``, and the ``go.sum`` style
# checksum list (``*.sum``).
_LOCK_EXTENSIONS = frozenset({"lock", "lockb", "sum"})
# Stop remembering roles past this many paths (a long-lived server walking many repositories).
_MAX_REMEMBERED = 200_000


class FileRoles:
    """The role rules: the general ones written here plus one set of pooled plugin conventions."""

    def __init__(self, conventions: FileConventions | None = None) -> None:
        conventions = conventions or FileConventions()
        self.conventions = conventions
        self._tests = PathPatterns(conventions.tests)
        self._generated = PathPatterns(conventions.generated)
        self._roles: dict[str, str] = {}

    def role(self, path: str) -> str:
        """The role of the file at ``path`` (relative, ``/``-separated)."""
        found = self._roles.get(path)
        if found is None:
            if len(self._roles) >= _MAX_REMEMBERED:
                self._roles.clear()
            found = self._roles[path] = self._decide(path)
        return found

    def weight(self, path: str, intents: frozenset[str]) -> float:
        """The multiplier of ``path``'s chunks for a query with ``intents``."""
        role = self.role(path)
        if role == SOURCE:
            return 1.0
        if INTENT_LIFTS.get(role) in intents:
            return ASKED_ROLE_WEIGHT
        return ROLE_WEIGHTS[role]

    def _decide(self, path: str) -> str:
        lower = path.lower()
        parts = lower.split("/")
        name = parts[-1]
        dirs = parts[:-1]
        stem, dot, ext = name.rpartition(".")
        if not dot:
            stem, ext = name, ""
        if ext in _LOCK_EXTENSIONS or stem.endswith("-lock") or name.startswith("requirements") or (
                dirs and dirs[-1] == "requirements"):
            return CONFIG
        if stem in _META_SET or name in _META_SET or stem.startswith(_META_PREFIXES):
            return META
        if ext in _STYLE_EXTENSIONS:
            return STYLE
        if (not _GENERATED_DIRS.isdisjoint(dirs) or ".min." in name or name.endswith(".map")
                or self._generated.matches(path)):
            return GENERATED
        if not _TEST_DIRS.isdisjoint(dirs) or self._tests.matches(path):
            return TEST
        # Below a source folder, "benchmark" or "examples" is the project's own domain (hyperfine's
        # src/benchmark/ is its core), not a side tree; only folders outside one mark a role.
        outside = _outside_source(dirs)
        if any(d in _BENCH_DIRS for d in outside) or stem.startswith("bench_") or stem.endswith("_bench"):
            return BENCH
        if any(d in _EXAMPLE_DIRS for d in outside):
            return EXAMPLE
        if any(d in _DOC_DIRS for d in outside) or ext in _DOC_EXTENSIONS:
            return DOCS
        if ext in _CONFIG_EXTENSIONS or name.startswith("."):
            return CONFIG
        return SOURCE


def _outside_source(dirs: list[str]) -> list[str]:
    """The folders above the first source folder (all of them when there is none)."""
    for i, d in enumerate(dirs):
        if d in _SOURCE_DIRS:
            return dirs[:i]
    return dirs


# The general rules alone: what a repository gets when no plugin declares conventions.
NEUTRAL = FileRoles()
_installed: FileRoles | None = None


def installed_roles() -> FileRoles:
    """The rules of this process: the general ones plus the installed plugins' conventions, asked once."""
    global _installed
    if _installed is None:
        from cce_core.plugins.conventions_cache import installed_file_conventions

        _installed = FileRoles(installed_file_conventions())
    return _installed


def use_roles(roles: FileRoles | None) -> None:
    """Make ``roles`` the rules of this process (``None``: ask the installed plugins again on next use)."""
    global _installed
    _installed = roles


def file_role(path: str) -> str:
    """The role of the file at ``path`` (relative, ``/``-separated) under the installed conventions."""
    return installed_roles().role(path)


def role_weight(path: str, intents: frozenset[str]) -> float:
    """The multiplier of ``path``'s chunks for a query with ``intents``, under the installed conventions."""
    return installed_roles().weight(path, intents)

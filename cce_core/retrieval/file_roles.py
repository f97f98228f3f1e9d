"""What part a file plays in a repository, judged from its path alone.

When an agent asks where something happens, the answer is almost always in
the source: tests, examples, benchmarks and documentation repeat the same
names and words (a test calls the function, a guide explains it), and
licences, lockfiles, requirement lists and stylesheets share many words of a
long issue text by chance. The default ranking multiplies each chunk's score
by its file's role weight, unless the query asks for that role itself
(``QueryAnalysis.intents``). The family profile keeps its own, narrower rule.

The rules are conventions of repositories in general (folder names, file
name shapes, file kinds), not of one language.
"""

from __future__ import annotations

from functools import lru_cache

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

_TEST_DIRS = frozenset({"test", "tests", "testing", "spec", "specs", "__tests__", "__mocks__", "testdata",
                        "test_data", "fixtures", "e2e", "integration-tests", "unittests"})
_EXAMPLE_DIRS = frozenset({"example", "examples", "sample", "samples", "demo", "demos", "tutorial", "tutorials",
                           "playground", "cookbook"})
_BENCH_DIRS = frozenset({"bench", "benches", "benchmark", "benchmarks", "perf"})
_DOC_DIRS = frozenset({"doc", "docs", "documentation", "man", "website", "site"})
_GENERATED_DIRS = frozenset({"dist", "build", "vendor", "vendored", "third_party", "node_modules", "generated",
                             "gen", "target", "out", "coverage"})
_DOC_EXTENSIONS = frozenset({"md", "mdx", "rst", "txt", "adoc", "asciidoc", "rdoc", "texi", "tex", "org", "pod",
                             "1", "3", "5", "7", "8", "html", "htm"})
_CONFIG_EXTENSIONS = frozenset({"json", "yaml", "yml", "toml", "ini", "cfg", "conf", "xml", "in", "properties",
                                "editorconfig", "gitignore", "gitattributes", "env", "lock", "sum", "mod"})
_STYLE_EXTENSIONS = frozenset({"css", "scss", "sass", "less", "styl"})
_META_NAMES = ("license", "licence", "copying", "notice", "authors", "contributors", "changelog", "changes",
               "history", "news", "code_of_conduct", "contributing", "security", "codeowners", "maintainers")
_SOURCE_DIRS = frozenset({"src", "lib", "source", "sources", "pkg", "internal", "app", "cmd", "crates"})
_LOCKFILES = frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "cargo.lock", "gemfile.lock",
                        "poetry.lock", "pipfile.lock", "composer.lock", "go.sum", "uv.lock", "bun.lockb"})


@lru_cache(maxsize=65536)
def file_role(path: str) -> str:
    """The role of the file at ``path`` (relative, ``/``-separated)."""
    lower = path.lower()
    parts = lower.split("/")
    name = parts[-1]
    dirs = parts[:-1]
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    if name in _LOCKFILES or name.startswith("requirements") or (dirs and dirs[-1] == "requirements"):
        return CONFIG
    if any(stem == m or stem.startswith(m + "-") or stem.startswith(m + "_") or name == m for m in _META_NAMES):
        return META
    if ext in _STYLE_EXTENSIONS:
        return STYLE
    if any(d in _GENERATED_DIRS for d in dirs) or ".min." in name or name.endswith(".map"):
        return GENERATED
    if _is_test(path, dirs, name, stem):
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


def _is_test(path: str, dirs: list[str], name: str, stem: str) -> bool:
    if any(d in _TEST_DIRS for d in dirs) or name == "conftest.py":
        return True
    if stem.startswith("test_") or stem.endswith(("_test", "_spec", "_tests")) or ".test." in name or ".spec." in name:
        return True
    original_stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return original_stem.endswith(("Test", "Tests", "Spec")) and original_stem not in ("Test", "Tests", "Spec")


def role_weight(path: str, intents: frozenset[str]) -> float:
    """The multiplier of ``path``'s chunks for a query with ``intents``."""
    role = file_role(path)
    if role == SOURCE:
        return 1.0
    if INTENT_LIFTS.get(role) in intents:
        return ASKED_ROLE_WEIGHT
    return ROLE_WEIGHTS[role]

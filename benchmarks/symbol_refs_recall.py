"""``cce refs`` against a real Python resolver: recall and precision over sampled functions and methods.

Why it exists: issue #21 accepts symbol navigation only if, on flask and
requests, ``cce refs`` finds at least 85 % of the references ``jedi`` finds
(recall) and at least 90 % of what it reports is one of them (precision), for
100 functions and methods per repository sampled with a fixed seed. This
script produces the "Symbol navigation" numbers of docs/BENCHMARKS.md and
classifies every miss, so the next improvement knows where to look.

How it measures, per repository:

1. every ``def`` under the package directory (``src/PKG``) is listed with the
   standard ``ast`` module; dunder methods (``__init__``, ``__eq__``, ...) are
   left out, since their uses are syntax (``Foo()``, ``a == b``), not names;
   ``--sample`` of them are drawn with ``random.Random(--seed)``;
2. ground truth: ``jedi.Script.get_references`` at the definition's name,
   over the whole checkout (``src`` on jedi's path, so the tests resolve to
   the checkout, never to an installed copy); the definition's own line is
   dropped, import lines are kept (``from flask import url_for`` is a use);
3. ``cce refs MODULE.QUALIFIED --json --dir REPO --store STORE`` (``helpers.url_for``,
   ``app.Flask.url_for``: the file stem and the qualified name, so the answer is
   the uses that resolve to this definition, not every use of the name), the
   rows' ``(file_path, line)`` pairs, ``.py`` files only, without the
   definition's own line;
4. recall = |cce ∩ jedi| / |jedi| and precision = |cce ∩ jedi| / |cce|, both
   micro-averaged over the sampled symbols (a symbol jedi finds no use of
   adds nothing to recall's denominator).

A miss (jedi has it, cce not) is classified from the text of its line:
``import`` (an import or re-export line), ``string`` (the name only inside a
string literal), ``on a test fixture`` (``app.route`` where ``app`` is a
parameter of the enclosing test function — a pytest fixture jedi cannot type,
so such a "false positive" is often a real use), ``attribute on self/cls``
(dynamic dispatch through the instance), ``attribute on other object`` (a
receiver whose type needs inference), ``decorator``, ``bare name`` (a plain
call or mention: a resolution miss). A false positive (cce has it, jedi not) is classified the
same way, plus ``same name elsewhere`` when the line mentions the name only as
another definition's attribute or call.

jedi's answers are cached in ``--cache`` (JSON, keyed by repository, commit,
seed and sample size), since they take minutes; the store is built once with
``cce index`` unless it exists (``--reindex`` rebuilds it).

    python benchmarks/symbol_refs_recall.py                       # flask and requests, table
    python benchmarks/symbol_refs_recall.py --json-out /tmp/refs.json --markdown
    python benchmarks/symbol_refs_recall.py --repo /work/corpora/flask=src/flask --sample 20

Needs ``jedi`` (requirements-dev.txt) and the ``cce`` beside ``sys.executable``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPORA = Path(os.environ.get("CCE_CORPORA_DIR", REPO_ROOT.parent / "corpora"))
DEFAULT_REPOS = ("flask=src/flask", "requests=src/requests")
DEFAULT_SEED = 21
DEFAULT_SAMPLE = 100
RECALL_TARGET = 0.85
PRECISION_TARGET = 0.90

Site = tuple[str, int]  # (file path relative to the repository, 1-based line)


@dataclass(frozen=True)
class Definition:
    name: str  # the bare name
    qualified: str  # Class.method for a method, the bare name otherwise
    kind: str  # function | method
    file_path: str
    line: int
    column: int  # 0-based column of the name, what jedi wants


@dataclass
class SymbolResult:
    definition: Definition
    jedi: list[Site]
    cce: list[Site]
    missed: list[Site] = field(default_factory=list)
    extra: list[Site] = field(default_factory=list)
    miss_classes: dict[str, int] = field(default_factory=dict)
    extra_classes: dict[str, int] = field(default_factory=dict)


# --------------------------------------------------------------------------- sampling


def list_definitions(repo: Path, package_dir: str) -> list[Definition]:
    """Every non-dunder ``def`` under ``repo/package_dir``, in file then line order."""
    found: list[Definition] = []
    for path in sorted((repo / package_dir).rglob("*.py")):
        rel = path.relative_to(repo).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        tree = ast.parse(text)
        _collect(tree, None, rel, lines, found)
    return found


def _collect(node: ast.AST, owner: str | None, rel: str, lines: list[str], out: list[Definition]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef):
            _collect(child, child.name, rel, lines, out)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            name = child.name
            overload = any(getattr(dec, "id", getattr(dec, "attr", None)) == "overload" for dec in child.decorator_list)
            if not (name.startswith("__") and name.endswith("__")) and not overload:
                text = lines[child.lineno - 1]
                match = re.search(rf"\bdef\s+({re.escape(name)})\b", text)
                column = match.start(1) if match else child.col_offset
                qualified = f"{owner}.{name}" if owner else name
                out.append(Definition(name, qualified, "method" if owner else "function", rel, child.lineno,
                                      column))
            # nested functions are sampled too, but not as methods of anything
            _collect(child, None, rel, lines, out)


def sample_definitions(defs: list[Definition], size: int, seed: int) -> list[Definition]:
    picked = random.Random(seed).sample(defs, min(size, len(defs)))
    return sorted(picked, key=lambda d: (d.file_path, d.line))


# --------------------------------------------------------------------------- ground truth (jedi)


def jedi_references(repo: Path, package_dir: str, defs: list[Definition]) -> dict[str, list[Site]]:
    """``qualified@file:line`` → the sorted in-repository ``.py`` sites jedi reports, the definition's own dropped."""
    import jedi

    source_root = repo / package_dir.split("/")[0]
    project = jedi.Project(repo, added_sys_path=[str(source_root)], smart_sys_path=True)
    answers: dict[str, list[Site]] = {}
    for index, d in enumerate(defs, 1):
        script = jedi.Script(path=str(repo / d.file_path), project=project)
        sites: set[Site] = set()
        for ref in script.get_references(d.line, d.column, include_builtins=False):
            if ref.module_path is None or ref.line is None:
                continue
            path = Path(ref.module_path)
            try:
                rel = path.resolve().relative_to(repo.resolve()).as_posix()
            except ValueError:
                continue  # outside the checkout (stdlib, site-packages)
            if not rel.endswith(".py"):
                continue
            sites.add((rel, ref.line))
        sites.discard((d.file_path, d.line))
        answers[key_of(d)] = sorted(sites)
        print(f"  jedi {index}/{len(defs)} {d.qualified}: {len(sites)}", file=sys.stderr)
    return answers


def key_of(d: Definition) -> str:
    return f"{d.qualified}@{d.file_path}:{d.line}"


# --------------------------------------------------------------------------- cce


def cce_executable(explicit: str | None) -> str:
    if explicit:
        return explicit
    beside = Path(sys.executable).with_name("cce")
    return str(beside) if beside.exists() else (shutil.which("cce") or "cce")


def ensure_store(cce: str, repo: Path, store: Path, reindex: bool) -> float | None:
    """Build the store with ``cce index`` unless it is there; the wall seconds it took, or None."""
    if store.exists() and not reindex:
        return None
    store.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    proc = subprocess.run([cce, "index", str(repo), "--store", str(store), "--no-metrics", "--rebuild"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"error: cce index {repo} failed: {proc.stderr.strip()}")
    return time.perf_counter() - start


def query_name(d: Definition) -> str:
    """The name ``cce refs`` is asked: module stem + qualified name (``helpers.url_for``, ``app.Flask.url_for``).

    A bare name asks for every use *named* so, whatever it resolves to; the module-qualified one asks for the
    uses that resolve to this definition, which is what jedi answers.
    """
    return f"{Path(d.file_path).stem}.{d.qualified}"


def rows_of(answer: Any) -> list[dict[str, Any]]:
    """The reference rows of a ``--json`` answer: the first list of row objects it holds."""
    if isinstance(answer, list):
        return [r for r in answer if isinstance(r, dict)]
    if isinstance(answer, dict):
        for key in ("references", "rows", "results"):
            if isinstance(answer.get(key), list):
                return rows_of(answer[key])
        for value in answer.values():
            if isinstance(value, list) and value and isinstance(value[0], dict) and "file_path" in value[0]:
                return rows_of(value)
    return []


def cce_references(cce: str, repo: Path, store: Path, d: Definition) -> tuple[list[Site], float]:
    """The ``.py`` sites of ``cce refs`` for ``d`` (its own line dropped), and the command's wall seconds."""
    argv = [cce, "refs", query_name(d), "--json", "--dir", str(repo), "--store", str(store), "--limit", "1000"]
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        print(f"  cce refs {d.qualified}: {proc.stderr.strip()}", file=sys.stderr)
        return [], wall
    sites: set[Site] = set()
    for row in rows_of(json.loads(proc.stdout)):
        path, line = row.get("file_path"), row.get("line")
        if isinstance(path, str) and isinstance(line, int) and path.endswith(".py"):
            sites.add((path, line))
    sites.discard((d.file_path, d.line))
    return sorted(sites), wall


# --------------------------------------------------------------------------- classification

CLASSES = ("import", "string", "on a test fixture", "on a test fixture (decorator)", "attribute on self/cls",
           "attribute on other object", "decorator", "bare name", "line not found")


def line_text(repo: Path, site: Site, cache: dict[str, list[str]]) -> str:
    path, line = site
    if path not in cache:
        try:
            cache[path] = (repo / path).read_text(encoding="utf-8").split("\n")
        except OSError:
            cache[path] = []
    lines = cache[path]
    return lines[line - 1] if 0 < line <= len(lines) else ""


def is_definition_line(repo: Path, site: Site, name: str, cache: dict[str, list[str]]) -> bool:
    return re.match(rf"\s*(async\s+)?def\s+{re.escape(name)}\b", line_text(repo, site, cache)) is not None


_FUNCTION_SPANS: dict[tuple[Path, str], list[tuple[int, int, frozenset[str]]]] = {}


def fixture_parameters(repo: Path, path: str, line: int) -> frozenset[str]:
    """The parameters of the innermost test function around ``line`` (pytest fixtures), in a test file."""
    name = Path(path).name
    if not (path.startswith("tests/") or "/tests/" in path or name.startswith("test_") or name == "conftest.py"):
        return frozenset()
    key = (repo, path)
    if key not in _FUNCTION_SPANS:
        spans: list[tuple[int, int, frozenset[str]]] = []
        try:
            tree = ast.parse((repo / path).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            tree = ast.Module(body=[], type_ignores=[])
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names = frozenset(a.arg for a in node.args.args + node.args.kwonlyargs if a.arg not in ("self", "cls"))
                spans.append((node.lineno, node.end_lineno or node.lineno, names))
        _FUNCTION_SPANS[key] = spans
    around = [s for s in _FUNCTION_SPANS[key] if s[0] <= line <= s[1]]
    # a nested function sees its enclosing test's fixtures too
    return frozenset().union(*(names for _start, _end, names in around)) if around else frozenset()


def classify(repo: Path, site: Site, name: str, cache: dict[str, list[str]]) -> str:
    """Why a site is hard, read from its line's text (see the module docstring)."""
    path, line = site
    text = line_text(repo, site, cache)
    if not 0 < line <= len(cache[path]):
        return "line not found"
    stripped = text.lstrip()
    if stripped.startswith(("import ", "from ")) or re.match(r"\s*[\w.]+,?\s*(#.*)?$", text):
        return "import"  # an import line, or one name of a parenthesised import list
    code = re.sub(r"(\"[^\"]*\"|'[^']*')", '""', text)
    if not re.search(rf"\b{re.escape(name)}\b", code):
        return "string"
    receiver = re.search(rf"\b(\w+)\.{re.escape(name)}\b", code)
    if receiver and receiver.group(1) in fixture_parameters(repo, path, line):
        # `app.route(...)` where `app` is a pytest fixture argument: jedi cannot type it, so a real use
        # may be counted as a false positive (or found by neither).
        return "on a test fixture" + (" (decorator)" if stripped.startswith("@") else "")
    if stripped.startswith("@"):
        return "decorator"
    if re.search(rf"\b(self|cls|super\(\))\.{re.escape(name)}\b", code):
        return "attribute on self/cls"
    if re.search(rf"\.{re.escape(name)}\b", code):
        return "attribute on other object"
    return "bare name"


# --------------------------------------------------------------------------- the run


def measure_repo(spec: str, args: argparse.Namespace, cce: str, cache: dict[str, Any]) -> dict[str, Any]:
    name, _, package_dir = spec.partition("=")
    repo = Path(name) if "/" in name else args.corpora / name
    repo = repo.resolve()
    if not repo.is_dir():
        raise SystemExit(f"error: no checkout at {repo} (set --corpora or CCE_CORPORA_DIR)")
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=False).stdout.strip() or "unknown"
    defs = list_definitions(repo, package_dir)
    picked = sample_definitions(defs, args.sample, args.seed)
    cache_key = f"{repo.name}@{commit}:{package_dir}:seed={args.seed}:n={args.sample}"
    truth = cache.get(cache_key)
    if truth is None or args.refresh_jedi or any(key_of(d) not in truth for d in picked):
        print(f"{repo.name}: jedi over {len(picked)} of {len(defs)} definitions", file=sys.stderr)
        truth = jedi_references(repo, package_dir, picked)
        cache[cache_key] = truth
        save_cache(args.cache, cache)
    store = args.stores / f"{repo.name}.cce"
    index_seconds = ensure_store(cce, repo, store, args.reindex)
    lines_cache: dict[str, list[str]] = {}
    results: list[SymbolResult] = []
    walls: list[float] = []
    for d in picked:
        expected = [tuple(s) for s in truth.get(key_of(d), [])]
        got, wall = cce_references(cce, repo, store, d)
        walls.append(wall)
        r = SymbolResult(d, expected, got)  # type: ignore[arg-type]
        # Another definition of the same name (an @overload, a property setter) is not a use, on either side.
        exp_set = {s for s in expected if not is_definition_line(repo, s, d.name, lines_cache)}
        got_set = {s for s in got if not is_definition_line(repo, s, d.name, lines_cache)}
        r.jedi, r.cce = sorted(exp_set), sorted(got_set)  # type: ignore[arg-type]
        r.missed = sorted(exp_set - got_set)  # type: ignore[arg-type]
        r.extra = sorted(got_set - exp_set)
        r.miss_classes = dict(Counter(classify(repo, s, d.name, lines_cache) for s in r.missed))
        r.extra_classes = dict(Counter(classify(repo, s, d.name, lines_cache) for s in r.extra))
        results.append(r)
    return summarise(repo.name, commit, len(defs), results, walls, index_seconds)


def summarise(name: str, commit: str, population: int, results: list[SymbolResult], walls: list[float],
              index_seconds: float | None) -> dict[str, Any]:
    found = sum(len(r.jedi) for r in results)
    reported = sum(len(r.cce) for r in results)
    hits = sum(len(set(r.jedi) & set(r.cce)) for r in results)
    misses: Counter[str] = Counter()
    extras: Counter[str] = Counter()
    for r in results:
        misses.update(r.miss_classes)
        extras.update(r.extra_classes)
    fixture_extras = sum(v for k, v in extras.items() if k.startswith("on a test fixture"))
    walls_sorted = sorted(walls)
    return {
        "repository": name,
        "commit": commit,
        "definitions": population,
        "sampled": len(results),
        "with_references": sum(1 for r in results if r.jedi),
        "jedi_sites": found,
        "cce_sites": reported,
        "common_sites": hits,
        "recall": hits / found if found else 1.0,
        "precision": hits / reported if reported else 1.0,
        # the same, not counting as wrong the uses on untyped pytest fixtures jedi could not resolve
        "precision_fixtures_excused": hits / (reported - fixture_extras) if reported - fixture_extras else 1.0,
        "misses_by_class": dict(misses.most_common()),
        "false_positives_by_class": dict(extras.most_common()),
        "cce_refs_wall_p50_ms": 1000 * walls_sorted[len(walls_sorted) // 2] if walls_sorted else None,
        "index_seconds": index_seconds,
        "symbols": [
            {**asdict(r.definition), "jedi": len(r.jedi), "cce": len(r.cce), "missed": r.missed,
             "extra": r.extra, "miss_classes": r.miss_classes, "extra_classes": r.extra_classes}
            for r in results
        ],
    }


def load_cache(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def save_cache(path: Path, cache: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(cache, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)


def render_table(reports: list[dict[str, Any]]) -> str:
    lines = ["| repository | sampled (with uses) | jedi sites | cce sites | common | recall | precision "
             "| precision, fixture uses excused |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for rep in reports:
        lines.append(f"| {rep['repository']} @ `{rep['commit'][:8]}` | {rep['sampled']} ({rep['with_references']}) "
                     f"| {rep['jedi_sites']} | {rep['cce_sites']} | {rep['common_sites']} "
                     f"| {rep['recall']:.3f} | {rep['precision']:.3f} | {rep['precision_fixtures_excused']:.3f} |")
    found = sum(r["jedi_sites"] for r in reports)
    reported = sum(r["cce_sites"] for r in reports)
    hits = sum(r["common_sites"] for r in reports)
    if len(reports) > 1:
        lines.append(f"| **both** | {sum(r['sampled'] for r in reports)} | {found} | {reported} | {hits} "
                     f"| {hits / found if found else 1:.3f} | {hits / reported if reported else 1:.3f} | |")
    lines.append("")
    lines.append("| repository | misses by class | false positives by class |")
    lines.append("|---|---|---|")
    for rep in reports:
        miss = ", ".join(f"{k} {v}" for k, v in rep["misses_by_class"].items()) or "none"
        extra = ", ".join(f"{k} {v}" for k, v in rep["false_positives_by_class"].items()) or "none"
        lines.append(f"| {rep['repository']} | {miss} | {extra} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", action="append", help="NAME_OR_PATH=PACKAGE_DIR (default: flask and requests)")
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--sample", type=int, default=DEFAULT_SAMPLE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--stores", type=Path, default=Path("/tmp/cce-symbol-refs"),
                        help="where the stores are built (never inside the corpus)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/cce-symbol-refs/jedi-cache.json"))
    parser.add_argument("--refresh-jedi", action="store_true")
    parser.add_argument("--reindex", action="store_true")
    parser.add_argument("--cce", help="the cce executable (default: beside this Python)")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--markdown", action="store_true", help="print the tables docs/BENCHMARKS.md holds")
    parser.add_argument("--jedi-only", action="store_true", help="fill the jedi cache and stop")
    args = parser.parse_args(argv)
    cce = cce_executable(args.cce)
    cache = load_cache(args.cache)
    if args.jedi_only:
        for spec in args.repo or DEFAULT_REPOS:
            name, _, package_dir = spec.partition("=")
            repo = (Path(name) if "/" in name else args.corpora / name).resolve()
            commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                                    text=True, check=False).stdout.strip() or "unknown"
            key = f"{repo.name}@{commit}:{package_dir}:seed={args.seed}:n={args.sample}"
            if key not in cache or args.refresh_jedi:
                picked = sample_definitions(list_definitions(repo, package_dir), args.sample, args.seed)
                cache[key] = jedi_references(repo, package_dir, picked)
                save_cache(args.cache, cache)
        return 0
    reports = [measure_repo(spec, args, cce, cache) for spec in args.repo or DEFAULT_REPOS]
    if args.json_out:
        args.json_out.write_text(json.dumps(reports, indent=1), encoding="utf-8")
    print(render_table(reports))
    if not args.markdown:
        for rep in reports:
            ok = rep["recall"] >= RECALL_TARGET and rep["precision"] >= PRECISION_TARGET
            print(f"{rep['repository']}: recall {rep['recall']:.3f} (target {RECALL_TARGET}), precision "
                  f"{rep['precision']:.3f} (target {PRECISION_TARGET}) — {'pass' if ok else 'MISS'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`cce relevance` on a `cce.localization/v1` set: trees from git, the metrics, the baselines, the errors.

Everything runs on a two-commit repository built in the test's own directory,
so no mirror and no network is involved.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from helpers import git, hermetic_env, run_cce

from cce_core.evaluation import localization as loc
from cce_core.foundation.errors import CceError

PARSER = '''"""Configuration parsing."""


def parse_config(text):
    """Split a configuration text into key and value pairs."""
    pairs = {}
    for line in text.split("\\n"):
        key, _, value = line.partition("=")
        pairs[key.strip()] = value.strip()
    return pairs
'''
RENDER = '''"""Rendering of reports."""


def render_table(rows):
    """Draw the rows as an aligned table of columns."""
    width = max(len(r) for r in rows)
    return "\\n".join(r.ljust(width) for r in rows)
'''
RENDER_V2 = RENDER + '''

def render_html(rows):
    """Draw the rows as an HTML table element."""
    return "<table>" + "".join(f"<tr><td>{r}</td></tr>" for r in rows) + "</table>"
'''
TEST_PARSER = '''from src.parser import parse_config


def test_parse_config_splits_key_value_pairs_in_configuration_text():
    assert parse_config("key=value") == {"key": "value"}
'''


@pytest.fixture
def mirror(tmp_path: Path) -> tuple[Path, dict[str, str], dict[str, str]]:
    """``repos/acme+tool/repo``: a bare mirror of a two-commit repository; (repos dir, commits, git env)."""
    env = hermetic_env(tmp_path)
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "tests").mkdir()
    (work / "src" / "parser.py").write_text(PARSER, encoding="utf-8")
    (work / "src" / "render.py").write_text(RENDER, encoding="utf-8")
    (work / "tests" / "test_parser.py").write_text(TEST_PARSER, encoding="utf-8")
    (work / "README.md").write_text("# tool\n\nParses configuration and renders tables.\n", encoding="utf-8")
    # An archive would leave the README out; the tree a checkout sees has it.
    (work / ".gitattributes").write_text("README.md export-ignore\n", encoding="utf-8")
    git(env, tmp_path, "init", "-q", str(work))
    git(env, work, "add", "-A")
    git(env, work, "commit", "-q", "-m", "first")
    first = git(env, work, "rev-parse", "HEAD")
    (work / "src" / "render.py").write_text(RENDER_V2, encoding="utf-8")
    git(env, work, "commit", "-q", "-am", "second")
    second = git(env, work, "rev-parse", "HEAD")
    repos = tmp_path / "repos"
    repos.mkdir()
    git(env, tmp_path, "clone", "-q", "--bare", str(work), str(repos / "acme+tool" / "repo"))
    return repos, {"first": first, "second": second}, env


def case_line(case_id: str, commit: str, query: str, expected: list[str], repo: str = "acme/tool") -> str:
    return json.dumps({"id": case_id, "repo": repo, "base_commit": commit, "language": "python", "query": query,
                       "expected": expected})


def write_set(path: Path, lines: list[str], schema: str = loc.SCHEMA) -> Path:
    header = json.dumps({"schema": schema, "source": "hand-written for the tests (CC0)"})
    path.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def three_cases(tmp_path: Path, mirror) -> Path:
    _repos, commits, _env = mirror
    return write_set(tmp_path / "cases.jsonl", [
        case_line("tool-1", commits["first"], "parse_config does not split key value pairs of the configuration",
                  ["src/parser.py"]),
        case_line("tool-2", commits["second"], "render_html should draw an HTML table element for the rows",
                  ["src/render.py"]),
        case_line("tool-3", commits["second"][:12], "aligned table columns and configuration key value parsing",
                  ["src/render.py", "src/parser.py"]),
    ])


# --------------------------------------------------------------------------- metrics


def test_score_case_by_hand():
    ranked = ["a.py", "b.py", "c.py", "d.py"]
    s = loc.score_case(ranked, ["d.py", "b.py"])
    assert s.first_rank == 2
    assert s.rr == 0.5
    assert s.hit == (False, True, True, True)  # k = 1, 3, 5, 10
    assert s.acc == (False, False, True, True)  # d.py is fourth: both are in only from k = 5
    assert s.top == tuple(ranked)


def test_score_case_misses_and_late_hits():
    miss = loc.score_case(["a.py"], ["z.py"])
    assert (miss.first_rank, miss.rr, miss.acc, miss.hit) == (None, 0.0, (False,) * 4, (False,) * 4)
    late = loc.score_case([f"f{i}.py" for i in range(11)] + ["z.py"], ["z.py"])
    assert late.first_rank == 12 and late.rr == 0.0  # found, but past MRR@10
    assert len(late.top) == loc.TOP_FILES_SHOWN


def test_aggregate_is_the_macro_mean():
    agg = loc.aggregate([loc.score_case(["a", "b"], ["b"]), loc.score_case(["a", "b"], ["a"]),
                         loc.score_case(["a"], ["q"])])
    assert agg.cases == 3
    assert agg.mrr == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    assert agg.acc == pytest.approx((1 / 3, 2 / 3, 2 / 3, 2 / 3))


@pytest.mark.parametrize(("path", "is_test"), [
    ("tests/test_parser.py", True), ("pkg/test/util.go", True), ("spec/models/user_spec.rb", True),
    ("src/__tests__/app.js", True), ("src/test_utils.py", True), ("cmd/server_test.go", True),
    ("src/app.test.ts", True), ("src/app.spec.js", True), ("src/main/FooTest.java", True),
    ("src/parser.py", False), ("src/testing.py", False), ("src/contest/app.py", False), ("latest.py", False),
])
def test_test_file_rule(path, is_test):
    assert loc.is_test_path(path) is is_test


def test_whole_file_bm25_matches_the_formula_and_drops_zero_scores():
    files = [("a.py", b"alpha beta beta"), ("b.py", b"beta gamma"), ("c.py", b"delta")]
    bm25 = loc.WholeFileBm25.build(files)
    n, avgdl = 3, (3 + 2 + 1) / 3

    def term(tf: int, df: int, dl: int) -> float:
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        return idf * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl))

    a = term(2, 2, 3) + term(1, 1, 3)  # "beta alpha" in a.py
    b = term(1, 2, 2)
    assert (a > b) and bm25.rank("beta alpha") == ["a.py", "b.py"]  # c.py scores zero and is left out
    assert bm25.rank("gamma") == ["b.py"]
    assert bm25.rank("nothing here") == []


# --------------------------------------------------------------------------- case files


def test_parse_cases_reads_a_set(three_cases):
    parsed = loc.read_sets([str(three_cases)])
    assert [c.id for c in parsed.cases] == ["tool-1", "tool-2", "tool-3"]
    assert parsed.cases[2].expected == ("src/render.py", "src/parser.py")
    assert parsed.sources == ("hand-written for the tests (CC0)",)


@pytest.mark.parametrize(("lines", "message"), [
    (['{"schema": "cce.localization/v2", "source": "x"}'], "the first line must be the header"),
    (['{"schema": "cce.localization/v1"}'], 'the header needs a non-empty "source"'),
    (['{"schema": "cce.localization/v1", "source": "x"}'], "contains no cases"),
    (['{"schema": "cce.localization/v1", "source": "x"}', '{"id": "a"}'], '"repo" must be a non-empty string'),
    (['{"schema": "cce.localization/v1", "source": "x"}',
      case_line("a", "abcdef1", "q", ["../etc/passwd"])], '"expected" must be a non-empty array'),
    (['{"schema": "cce.localization/v1", "source": "x"}', case_line("a", "abcdef1", "q", ["x.py"], repo="../x")],
     '"repo" must be "owner/name"'),
    (['{"schema": "cce.localization/v1", "source": "x"}', case_line("a", "HEAD~1", "q", ["x.py"])],
     '"base_commit" must be a hexadecimal commit id'),
    (['{"schema": "cce.localization/v1", "source": "x"}', case_line("a", "abcdef1", "q", ["x.py"]),
      case_line("a", "abcdef1", "q", ["x.py"])], "duplicate case id 'a'"),
    (['{"schema": "cce.localization/v1", "source": "x"}', "[1]"], "line 2: expected a JSON object"),
])
def test_bad_sets_are_one_clear_error(lines, message):
    with pytest.raises(CceError) as err:
        loc.parse_cases("\n".join(lines), "set.jsonl")
    assert message in str(err.value)
    assert str(err.value).startswith("set.jsonl")


def test_only_a_localization_header_is_detected(tmp_path, three_cases):
    relevance = tmp_path / "rel.jsonl"
    relevance.write_text('{"schema": "cce.relevance/v1"}\n{"query": "q", "expected": ["a.py"]}\n', encoding="utf-8")
    assert loc.is_localization_input(str(three_cases))
    assert not loc.is_localization_input(str(relevance))
    assert not loc.is_localization_input(str(tmp_path / "missing.jsonl"))
    assert loc.is_localization_input(str(tmp_path))


# --------------------------------------------------------------------------- repositories and the cache


def test_repositories_are_found_bare_or_as_work_trees(mirror, tmp_path):
    repos, commits, env = mirror
    assert loc.find_git_dir(str(repos), "acme/tool") == str(repos / "acme+tool" / "repo")
    git(env, tmp_path, "clone", "-q", str(repos / "acme+tool" / "repo"), str(repos / "acme+other"))
    found = loc.find_git_dir(str(repos), "acme/other")
    assert Path(found) == (repos / "acme+other" / ".git").resolve()
    assert loc.resolve_commit(found, "acme/other", commits["first"][:10]) == commits["first"]
    with pytest.raises(CceError, match=r"repository acme/none not found: expected a git directory at"):
        loc.find_git_dir(str(repos), "acme/none")
    with pytest.raises(CceError, match=r"commit 0000000 of acme/tool is not in"):
        loc.resolve_commit(str(repos / "acme+tool" / "repo"), "acme/tool", "0000000")


def test_materialise_writes_the_commit_tree_once(mirror, tmp_path, monkeypatch):
    repos, commits, _env = mirror
    git_dir, cache = str(repos / "acme+tool" / "repo"), tmp_path / "cache"
    tree = loc.materialise(git_dir, "acme/tool", commits["first"], cache)
    assert tree == cache / f"acme+tool@{commits['first']}"
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())
    assert files == [".gitattributes", "README.md", "src/parser.py", "src/render.py", "tests/test_parser.py"]
    assert (tree / "src" / "render.py").read_text(encoding="utf-8") == RENDER  # the first commit's content

    def broken(*_args):
        raise AssertionError("a finished tree must be reused, not written again")

    monkeypatch.setattr(loc, "write_tree", broken)
    assert loc.materialise(git_dir, "acme/tool", commits["first"], cache) == tree


def test_an_interrupted_materialise_leaves_nothing_behind(mirror, tmp_path, monkeypatch):
    repos, commits, _env = mirror
    git_dir, cache = str(repos / "acme+tool" / "repo"), tmp_path / "cache"
    real = loc.write_tree

    def dies_half_way(git_dir_: str, commit: str, dest: str) -> int:
        (Path(dest) / "half.py").write_text("x = 1\n", encoding="utf-8")
        raise KeyboardInterrupt

    monkeypatch.setattr(loc, "write_tree", dies_half_way)
    with pytest.raises(KeyboardInterrupt):
        loc.materialise(git_dir, "acme/tool", commits["second"], cache)
    assert list(cache.iterdir()) == []  # neither a final directory nor a temporary one
    monkeypatch.setattr(loc, "write_tree", real)
    tree = loc.materialise(git_dir, "acme/tool", commits["second"], cache)
    assert [p.name for p in cache.iterdir()] == [tree.name]
    assert "render_html" in (tree / "src" / "render.py").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- the run


def test_evaluate_scores_profiles_and_baselines(mirror, three_cases, tmp_path, host):
    repos, commits, _env = mirror
    report = loc.evaluate(loc.read_sets([str(three_cases)]), host, repos_dir=str(repos), cache_dir=tmp_path / "c")
    assert report.rankers == (*loc.installed_profiles(), loc.BASELINE_ALL, loc.BASELINE_NO_TESTS)
    first, second, both = report.results
    # BM25 over whole files finds the file that defines what the issue names, and only code files count.
    assert first.scores[loc.BASELINE_NO_TESTS].top[0] == "src/parser.py"
    assert second.scores[loc.BASELINE_NO_TESTS].top[0] == "src/render.py"
    baselines = (loc.BASELINE_ALL, loc.BASELINE_NO_TESTS)
    assert all(not p.endswith(".md") for b in baselines for r in report.results for p in r.scores[b].top)
    assert "tests/test_parser.py" in first.scores[loc.BASELINE_ALL].top
    assert "tests/test_parser.py" not in first.scores[loc.BASELINE_NO_TESTS].top
    assert both.scores[loc.BASELINE_NO_TESTS].acc[2]  # both expected files are in the top five
    assert both.case.base_commit == commits["second"][:12]  # the case is reported as written
    for profile in report.profiles:
        assert first.scores[profile].first_rank is not None
    assert [(c.a, c.b) for c in report.comparisons][-1] == (loc.BASELINE_NO_TESTS, report.profiles[-1])
    assert loc.render_json(report) == loc.render_json(report)


def test_ranking_selects_profiles(mirror, three_cases, tmp_path, host):
    repos, _commits, _env = mirror
    report = loc.evaluate(loc.read_sets([str(three_cases)]), host, repos_dir=str(repos), cache_dir=tmp_path / "c",
                          profiles=loc.parse_profiles("family"))
    assert report.rankers == ("family", loc.BASELINE_ALL, loc.BASELINE_NO_TESTS)
    assert [(c.a, c.b) for c in report.comparisons] == [(loc.BASELINE_NO_TESTS, "family")]
    with pytest.raises(CceError, match="unknown ranking profile 'fastest'"):
        loc.parse_profiles("family,fastest")


# --------------------------------------------------------------------------- through the installed cce


def test_cce_relevance_runs_a_localization_set(mirror, three_cases, tmp_path):
    repos, _commits, env = mirror
    env = {**env, "CCE_CACHE_DIR": str(tmp_path / "cce-cache")}
    done = run_cce("relevance", three_cases, "--repos", repos, "--json", env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["schema"] == loc.REPORT_SCHEMA
    assert report["cases"] == 3 and report["k"] == [1, 3, 5, 10]
    names = [r["name"] for r in report["rankers"]]
    assert names[-2:] == [loc.BASELINE_ALL, loc.BASELINE_NO_TESTS]
    assert (tmp_path / "cce-cache" / "localization").is_dir()
    human = run_cce("relevance", three_cases, "--repos", repos, "--ranking", "family", env=env)
    assert human.returncode == 0, human.stderr
    assert "Acc@1" in human.stdout and "bm25-files-no-tests" in human.stdout
    assert "\n  default " not in human.stdout


def test_cce_relevance_localization_errors_are_one_line(mirror, tmp_path):
    repos, commits, env = mirror
    env = {**env, "CCE_CACHE_DIR": str(tmp_path / "cce-cache")}
    cases = {
        "missing-repo": (case_line("a", commits["first"], "q", ["src/parser.py"], repo="acme/none"),
                         "error: repository acme/none not found"),
        "missing-commit": (case_line("a", "0" * 40, "q", ["src/parser.py"]),
                           f"error: commit {'0' * 40} of acme/tool is not in"),
        "bad-case": ('{"id": "a", "repo": "acme/tool"}', '"base_commit" must be a non-empty string'),
    }
    for name, (line, message) in cases.items():
        path = write_set(tmp_path / f"{name}.jsonl", [line])
        done = run_cce("relevance", path, "--repos", repos, env=env)
        assert done.returncode != 0, name
        assert done.stderr.startswith("error: ") and message in done.stderr, done.stderr
        assert len(done.stderr.strip().split("\n")) == 1 and "Traceback" not in done.stderr
    folder = tmp_path / "sets"
    folder.mkdir()
    write_set(folder / "bad-schema.jsonl", [case_line("a", commits["first"], "q", ["x.py"])],
              schema="cce.localization/v0")
    done = run_cce("relevance", folder, "--repos", repos, env=env)
    assert done.returncode != 0
    assert done.stderr.startswith("error: ") and "the first line must be the header" in done.stderr
    assert not any(p.name.endswith(".tmp") for p in (tmp_path / "cce-cache").rglob("*"))


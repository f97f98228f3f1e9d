"""Ranking profiles: how one is chosen, that `family` is untouched, and what `default` promises.

The default profile's promises are the ones an agent relies on: a bare name
finds its definition first, source ranks above the tests and docs that repeat
its words, an answer never exceeds ``top_k`` and never carries zero-score
padding, and the choice of profile is visible in ``--json`` and the metrics log.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers import REPO_ROOT, cce_executable, hermetic_env

from cce_core.foundation.errors import CceError
from cce_core.indexing.indexer import build_index
from cce_core.plugins.host import default_host
from cce_core.retrieval.definitions import declared_name
from cce_core.retrieval.file_roles import file_role, role_weight
from cce_core.retrieval.profiles import PROFILE_ENV, resolve_profile
from cce_core.retrieval.query_analysis import analyse
from cce_core.retrieval.searcher import Searcher

# -- choosing a profile -------------------------------------------------------------------------


def test_an_explicit_choice_beats_the_environment_which_beats_the_config(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".cce").mkdir()
    (tmp_path / ".cce" / "config").write_text("ranking:\n  profile: family\n")
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    assert resolve_profile(None, tmp_path) == "family"
    assert resolve_profile(None, tmp_path / "elsewhere") == "default"
    monkeypatch.setenv(PROFILE_ENV, "default")
    assert resolve_profile(None, tmp_path) == "default"
    assert resolve_profile("FAMILY", tmp_path) == "family"


@pytest.mark.parametrize("where", ["flag", "env", "config"])
def test_an_unknown_profile_is_an_error_naming_where_it_came_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   where: str) -> None:
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    (tmp_path / ".cce").mkdir()
    explicit = None
    if where == "flag":
        explicit = "fast"
    elif where == "env":
        monkeypatch.setenv(PROFILE_ENV, "fast")
    else:
        (tmp_path / ".cce" / "config").write_text("ranking:\n  profile: fast\n")
    with pytest.raises(CceError, match="unknown ranking profile 'fast'"):
        resolve_profile(explicit, tmp_path)


# -- query analysis, file roles, declarations ---------------------------------------------------


def test_query_analysis_finds_names_paths_and_drops_filler() -> None:
    bare = analyse("register_blueprint")
    assert [i.parts for i in bare.identifiers] == [("register_blueprint",)] and bare.is_lookup
    assert [i.parts for i in analyse("Flask.make_response").identifiers] == [("flask", "make_response")]
    assert [i.parts for i in analyse("safeParse").identifiers] == [("safeparse",)]
    assert analyse("jsonify").identifiers and analyse("create").identifiers  # a bare word is a name
    question = analyse("how does the session cookie get signed")
    assert not question.identifiers and "the" not in question.term_weights and "cookie" in question.term_weights
    trace = analyse('Traceback: File "src/flask/app.py", line 3, in wsgi_app\nKeyError in `make_response()`')
    assert "src/flask/app.py" in trace.paths
    assert {i.name for i in trace.identifiers} >= {"wsgi_app", "make_response"}
    assert analyse("where are the tests for blueprints").intents == frozenset({"test"})


@pytest.mark.parametrize(("path", "role"), [
    # A language's own file names (foo_test.go, FooTest.java) come from its pack: tests/test_file_conventions.py.
    ("src/flask/app.py", "source"), ("tests/test_app.py", "test"),
    ("src/a.test.ts", "test"), ("docs/api.rst", "docs"),
    ("README.md", "docs"), ("examples/tutorial/app.py", "example"), ("benches/run.rs", "bench"),
    ("LICENSE.rst", "meta"), ("CHANGES.rst", "meta"), ("requirements/dev.txt", "config"),
    ("package-lock.json", "config"), ("static/style.css", "style"), ("dist/zod.min.js", "generated"),
    ("src/latest.py", "source"), ("src/contest.py", "source"),
])
def test_file_roles_by_path(path: str, role: str) -> None:
    assert file_role(path) == role


def test_a_query_that_asks_for_tests_lifts_their_penalty() -> None:
    assert role_weight("tests/test_app.py", frozenset()) < 1.0
    assert role_weight("tests/test_app.py", frozenset({"test"})) > role_weight("src/app.py", frozenset({"test"}))


@pytest.mark.parametrize(("header", "name"), [
    ("def make_response(*args: t.Any) -> Response:", "make_response"),
    ("async def dispatch(self):", "dispatch"),
    ("class Flask(App):", "Flask"),
    ("export const $ZodType: core.$constructor<$ZodType> = /*@__PURE__*/ core.$constructor(", "$ZodType"),
    ("jv jv_parse_sized(const char* string, int length) {", "jv_parse_sized"),
    ("pub fn run_benchmark(&self, num: usize) -> Result<()> {", "run_benchmark"),
    ("func (r *Router) Handle(pattern string) {", "Handle"),
    ("  inst.safeParse = (data, params) => parse.safeParse(inst, data, params);", "safeParse"),
    ("interface ParseContext<T extends errors.$ZodIssueBase = never> {", "ParseContext"),
    ("def self.call(env)", "call"),
    ("#define JV_KIND_NULL 1", "JV_KIND_NULL"),
    ("(inst, def) => {", None),
])
def test_declared_name(header: str, name: str | None) -> None:
    assert declared_name(header) == name


# -- what the default profile does on a small repository ----------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "docs").mkdir()
    (root / "src" / "sessions.py").write_text(
        "import hashlib\n\n\n"
        "def sign_cookie(value, secret):\n    \"\"\"Sign a session cookie value with the secret key.\"\"\"\n"
        "    return hashlib.sha256((secret + value).encode()).hexdigest() + '.' + value\n\n\n"
        "def load_cookie(raw, secret):\n    digest, _, value = raw.partition('.')\n"
        "    return value if sign_cookie(value, secret).startswith(digest) else None\n")
    (root / "src" / "app.py").write_text(
        "from sessions import sign_cookie\n\n\nclass App:\n    def respond(self, value):\n"
        "        return sign_cookie(value, self.secret)\n")
    (root / "tests" / "test_sessions.py").write_text(
        "from sessions import sign_cookie, load_cookie\n\n\n"
        "def test_sign_cookie():\n    assert sign_cookie('a', 'k') != sign_cookie('a', 'j')\n\n\n"
        "def test_sign_cookie_roundtrip():\n    assert load_cookie(sign_cookie('a', 'k'), 'k') == 'a'\n"
        "    assert sign_cookie('b', 'k')\n")
    (root / "docs" / "sessions.md").write_text(
        "# Sessions\n\nThe session cookie is signed: sign_cookie signs the cookie value with the secret key, "
        "and load_cookie checks the cookie signature of a session cookie.\n")
    return root


def _searcher(root: Path, profile: str) -> Searcher:
    host = default_host()
    embedder = host.embedder("hash")
    data, _ = build_index(str(root), host, embedder, protect_secrets=True)
    return Searcher(data, embedder, profile=profile)


def test_a_bare_name_finds_its_definition_first(repo: Path) -> None:
    results = _searcher(repo, "default").search("sign_cookie", top_k=5)
    assert (results[0].chunk.file_path, results[0].chunk.start_line) == ("src/sessions.py", 4)


def test_source_ranks_above_the_tests_and_docs_that_repeat_its_words(repo: Path) -> None:
    results = _searcher(repo, "default").search("how is the session cookie signed with the secret key", top_k=5)
    assert results[0].chunk.file_path == "src/sessions.py"
    asked = _searcher(repo, "default").search("where are the tests for sign_cookie", top_k=3)
    assert asked[0].chunk.file_path == "tests/test_sessions.py"


@pytest.mark.parametrize("top_k", [1, 2, 3, 5])
def test_default_answers_never_exceed_top_k_nor_pad_with_zero_scores(repo: Path, top_k: int) -> None:
    searcher = _searcher(repo, "default")
    for query in ("sign_cookie", "respond", "session cookie", "hashlib"):
        results = searcher.search(query, top_k=top_k, graph=True)
        assert len(results) <= top_k
        assert all(r.score > 0 for r in results)
        assert [r.rank for r in results] == list(range(1, len(results) + 1))


def test_the_family_profile_is_the_librarys_default(repo: Path) -> None:
    host = default_host()
    embedder = host.embedder("hash")
    data, _ = build_index(str(repo), host, embedder, protect_secrets=True)
    implicit = Searcher(data, embedder).search("session cookie", top_k=5)
    family = Searcher(data, embedder, profile="family").search("session cookie", top_k=5)
    assert [(r.chunk.chunk_id, r.score) for r in implicit] == [(r.chunk.chunk_id, r.score) for r in family]


# -- the CLI records the profile ---------------------------------------------------------------


def _cce(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([cce_executable(), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_cli_json_and_metrics_name_the_default_profile_and_family_output_is_unchanged(
        repo: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in hermetic_env(tmp_path).items() if k != PROFILE_ENV}
    assert _cce("index", str(repo), cwd=repo, env=env).returncode == 0
    default = json.loads(_cce("search", "sign_cookie", "--json", cwd=repo, env=env).stdout)
    assert default["ranking"] == "default"
    assert default["results"][0]["file_path"] == "src/sessions.py"
    family = json.loads(_cce("search", "sign_cookie", "--json", "--ranking", "family", cwd=repo, env=env).stdout)
    assert set(family) == {"query_id", "results"}
    events = [json.loads(line) for line in (repo / ".cce" / "metrics.jsonl").read_text().splitlines()]
    searches = [e for e in events if e["event"] == "search"]
    assert searches[0]["ranking"] == "default" and "ranking" not in searches[1]
    bad = _cce("search", "x", "--ranking", "fast", cwd=repo, env=env)
    assert bad.returncode != 0 and bad.stderr.startswith("error: unknown ranking profile 'fast'")
    assert "Traceback" not in bad.stderr


def test_relevance_compares_profiles_with_a_paired_test(tmp_path: Path) -> None:
    fixtures = REPO_ROOT / "eval" / "relevance" / "code.jsonl"
    proc = _cce("relevance", str(fixtures), "--compare", "family,default", "--json", cwd=REPO_ROOT,
                env=hermetic_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["schema"] == "cce.relevance.profiles/v1"
    assert [p["profile"] for p in report["profiles"]] == ["family", "default"]
    assert report["comparison"]["mrr"]["n"] == 7


def test_plain_and_vectorised_lexical_scores_are_bit_identical(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh CLI search (plain Python) and the MCP server (numpy loaded) must rank identically."""
    import sys

    from cce_core.retrieval.default_ranking import DefaultRanker

    host = default_host()
    data, _ = build_index(str(repo), host, host.embedder("hash"), protect_secrets=True)
    ranker = DefaultRanker(data)
    for query in ("sign_cookie", "how is the session cookie signed with the secret key", "App.respond hashlib"):
        vectorised = ranker._bm25_vectorised(analyse(query))
        monkeypatch.delitem(sys.modules, "numpy")
        plain = ranker._bm25(analyse(query))
        monkeypatch.undo()
        assert plain == vectorised and plain[0]


def test_ranking_disable_in_the_config_switches_stages_off(repo: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in hermetic_env(tmp_path).items() if k != PROFILE_ENV}
    assert _cce("index", str(repo), cwd=repo, env=env).returncode == 0
    on = json.loads(_cce("search", "sign_cookie", "--json", "--top-k", "3", cwd=repo, env=env).stdout)
    (repo / ".cce" / "config").write_text("ranking:\n  disable: [definitions, roles]\n")
    off = json.loads(_cce("search", "sign_cookie", "--json", "--top-k", "3", cwd=repo, env=env).stdout)
    assert on["results"] != off["results"]
    (repo / ".cce" / "config").write_text("ranking:\n  disable: [speed]\n")
    bad = _cce("search", "sign_cookie", cwd=repo, env=env)
    assert bad.returncode != 0 and "unknown ranking stage 'speed'" in bad.stderr


@pytest.mark.parametrize(("query", "lookup"), [
    ("render in app.tsx or util.ts", True),  # a later extension token counts (reference #107)
    ("main.python auth.py", True),
    ("undefined variable error", False),  # ".* defined" needs the space
    ("predefined constant list", False),
    ("find malfunction reports", False),  # "find .* function" needs the space
    ("open util.ts", True),
    ("where hash_password is defined", True),
    ("find the parse function", True),
])
def test_family_code_lookup_follows_the_spec_boundaries(query: str, lookup: bool) -> None:
    from cce_core.retrieval.searcher import is_code_lookup

    assert is_code_lookup(query) is lookup


def test_a_family_search_never_loads_the_default_ranker(repo: Path, tmp_path: Path) -> None:
    # The resolution reads .cce/config once and names the stages itself, so the family's
    # one-shot search pays nothing for the default profile's modules.
    import sys

    env = hermetic_env(tmp_path)
    assert _cce("index", str(repo), cwd=repo, env=env).returncode == 0
    probe = ("import sys\nfrom cce_core.cli.app import main\nsys.argv = ['cce', 'search', 'sign_cookie', '--ranking', "
             "'family', '--no-metrics']\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
             "print('default_ranking' in ' '.join(sys.modules), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert proc.stderr.strip().endswith("False"), proc.stderr


def test_stage_names_are_checked_for_workspace_searches_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cce_core.retrieval.profiles import resolve_ranking

    monkeypatch.delenv(PROFILE_ENV, raising=False)
    (tmp_path / ".cce").mkdir()
    (tmp_path / ".cce" / "config").write_text("ranking:\n  profile: default\n  disable: [roles]\n")
    choice = resolve_ranking(None, tmp_path)
    assert (choice.profile, choice.disabled) == ("default", frozenset({"roles"}))

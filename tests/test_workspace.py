"""Workspaces: manifest bytes, member detection, member edges, per-member stores and federated search."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import copy_tree, run_cce

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import format6
from cce_core.indexing.store import load_store
from cce_core.workspace.manifest import (
    Manifest,
    Member,
    build_manifest,
    deps_from_gemfile,
    deps_from_gemspec,
    deps_from_package_json,
    detect_members,
    manifest_yaml,
    parse_graph,
    parse_manifest,
    yaml_scalar,
)

FIXTURE_MANIFEST = (
    "version: 1\nname: workspace\nmembers:\n"
    "  - name: app\n    path: app\n    type: rails-app\n    package: app\n"
    "  - name: billing\n    path: engines/billing\n    type: ruby-engine\n    package: billing\n"
    "  - name: web\n    path: web\n    type: typescript\n    package: web\n"
)
FIXTURE_GRAPH = '{"members":["app","billing","web"],"edges":[{"from":"app","to":"billing","via":"gemfile"}]}'
HAND_WRITTEN = (
    "version: 1\nname: shop\nmembers:\n"
    "  - name: api\n    path: api\n    type: rails-app\n    package: api\n"
    "  - name: web\n    path: web\n    type: javascript\n    package: web\n"
)


@pytest.fixture
def ws(reference, tmp_path) -> Path:
    """A writable copy of the reference workspace fixture (three members, one edge)."""
    return copy_tree(reference / "test" / "fixture" / "workspace", tmp_path / "workspace")


@pytest.fixture
def indexed_ws(ws) -> Path:
    assert run_cce("workspace", "init", ws).returncode == 0
    proc = run_cce("index", "--workspace", ws, "--no-metrics")
    assert proc.returncode == 0, proc.stderr
    return ws


def _ok(proc):
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _error(proc) -> str:
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def _files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- init / list -------------------------------------------------------------


def test_init_writes_the_canonical_manifest(ws):
    out = _ok(run_cce("workspace", "init", ws))
    manifest = ws / ".cce" / "workspace.yml"
    assert manifest.read_bytes() == FIXTURE_MANIFEST.encode()
    assert out.splitlines() == [
        f"Wrote {manifest}",
        "workspace: workspace",
        "members (3):",
        "  app              rails-app    app · package app",
        "  billing          ruby-engine  engines/billing · package billing",
        "  web              typescript   web · package web",
    ]


def test_init_refuses_to_overwrite_without_force(ws):
    _ok(run_cce("workspace", "init", ws))
    manifest = ws / ".cce" / "workspace.yml"
    manifest.write_text(HAND_WRITTEN, encoding="utf-8")
    line = _error(run_cce("workspace", "init", ws))
    assert line == f"error: {manifest} already exists — pass --force to overwrite"
    assert manifest.read_text(encoding="utf-8") == HAND_WRITTEN
    _ok(run_cce("workspace", "init", ws, "--force"))
    assert manifest.read_bytes() == FIXTURE_MANIFEST.encode()


def test_init_errors(tmp_path):
    (tmp_path / "empty" / ".cce").mkdir(parents=True)
    assert _error(run_cce("workspace", "init", tmp_path / "empty")) == \
        "error: no workspace members detected under this root"
    assert not (tmp_path / "empty" / ".cce" / "workspace.yml").exists()
    (tmp_path / "file").write_text("x")
    assert _error(run_cce("workspace", "init", tmp_path / "file")) == f"error: not a directory: {tmp_path / 'file'}"


def test_list_shows_members_and_the_edge(ws):
    _ok(run_cce("workspace", "init", ws))
    out = _ok(run_cce("workspace", "list", ws))
    assert out.splitlines() == [
        "workspace: workspace",
        "members (3):",
        "  app              rails-app    app · package app",
        "  billing          ruby-engine  engines/billing · package billing",
        "  web              typescript   web · package web",
        "edges (1):",
        "  app -> billing  (via gemfile)",
    ]


# -- the manifest format -----------------------------------------------------


def test_hand_written_manifest_reserializes_byte_identically():
    assert manifest_yaml(parse_manifest(HAND_WRITTEN)) == HAND_WRITTEN
    assert manifest_yaml(parse_manifest(FIXTURE_MANIFEST)) == FIXTURE_MANIFEST


def test_members_are_sorted_by_path_when_read():
    text = ("version: 1\nname: shop\nmembers:\n"
            "  - name: web\n    path: web\n    type: javascript\n    package: web\n"
            "  - name: api\n    path: api\n    type: rails-app\n    package: api\n")
    assert manifest_yaml(parse_manifest(text)) == HAND_WRITTEN


def test_yaml_scalars_stay_strings(tmp_path):
    text = ("version: 1\nname: yes\nmembers:\n"
            "  - name: on\n    path: '010'\n    type: javascript\n    package: yes\n"
            "  - name: off\n    path: 010x\n    type: store-only\n    package: 010\n")
    m = parse_manifest(text)
    assert m.name == "yes"
    assert [(x.name, x.path, x.package) for x in m.members] == [("on", "010", "yes"), ("off", "010x", "010")]
    # The same file through the CLI: nothing is turned into true, 8 or 10.
    (tmp_path / ".cce").mkdir()
    (tmp_path / ".cce" / "workspace.yml").write_text(text, encoding="utf-8")
    out = _ok(run_cce("workspace", "list", tmp_path))
    assert "  on               javascript   010 · package yes" in out.splitlines()
    assert "  off              store-only   010x · package 010" in out.splitlines()
    assert out.startswith("workspace: yes\n")


def test_scalar_quoting():
    assert yaml_scalar("engines/billing") == "engines/billing"
    assert yaml_scalar(".") == '"."'
    assert yaml_scalar(".tmpXy") == '".tmpXy"'
    assert yaml_scalar("-x") == '"-x"'
    assert yaml_scalar("") == '""'
    assert yaml_scalar('a "b"\\c') == '"a \\"b\\"\\\\c"'
    assert yaml_scalar("café") == '"café"'  # ASCII letters and digits only
    manifest = Manifest(".tmpXy", [Member("root", ".", "ruby-gem", "thing")])
    assert manifest_yaml(manifest) == ('version: 1\nname: ".tmpXy"\nmembers:\n  - name: root\n    path: "."\n'
                                       "    type: ruby-gem\n    package: thing\n")
    assert manifest_yaml(Manifest("x", [])) == "version: 1\nname: x\nmembers:\n"


def test_manifest_read_errors():
    with pytest.raises(CceError, match=r"^invalid workspace\.yml: "):
        parse_manifest("version: 1\nmembers: [\n")
    with pytest.raises(CceError, match=r"^unknown member type: cobol$"):
        parse_manifest("members:\n  - name: a\n    path: a\n    type: cobol\n    package: a\n")
    with pytest.raises(CceError, match=r"^invalid workspace\.yml: .*package"):
        parse_manifest("members:\n  - name: a\n    path: a\n    type: ruby-gem\n")
    assert parse_manifest("name: x\n").members == []


# -- detection ---------------------------------------------------------------


def _write(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_detection_rules(tmp_path):
    _write(tmp_path / "gem" / "pkg.gemspec", "Gem::Specification.new do |s|\n  s.name = 'pkg'\nend\n")
    _write(tmp_path / "gem" / "lib" / "pkg.rb")
    _write(tmp_path / "engine" / "e.gemspec", "spec.name = \"eng\"\n")
    _write(tmp_path / "engine" / "config" / "routes.rb")
    _write(tmp_path / "front" / "package.json", '{"name":"front-end"}')
    _write(tmp_path / "typed" / "package.json", "not json")
    _write(tmp_path / "typed" / "tsconfig.json", "{}")
    _write(tmp_path / "rails" / "Gemfile")
    _write(tmp_path / "rails" / "config" / "application.rb")
    _write(tmp_path / "rails" / "client" / "package.json", "{}")  # inside a member: not a second member
    _write(tmp_path / "node_modules" / "dep" / "package.json", "{}")
    _write(tmp_path / ".hidden" / "package.json", "{}")
    _write(tmp_path / "nogemspec" / ".gemspec")
    got = [(m.name, m.path, m.type, m.package) for m in detect_members(tmp_path)]
    assert got == [
        ("engine", "engine", "ruby-engine", "eng"),
        ("front", "front", "javascript", "front-end"),
        ("gem", "gem", "ruby-gem", "pkg"),
        ("rails", "rails", "rails-app", "rails"),
        ("typed", "typed", "typescript", "typed"),
    ]


def test_duplicate_names_are_suffixed_and_the_root_is_a_last_resort(tmp_path):
    _write(tmp_path / "a" / "widget" / "package.json", "{}")
    _write(tmp_path / "b" / "widget" / "package.json", "{}")
    _write(tmp_path / "c" / "widget" / "package.json", "{}")
    assert [(m.name, m.path) for m in detect_members(tmp_path)] == [
        ("widget", "a/widget"), ("widget-2", "b/widget"), ("widget-3", "c/widget")]
    single = tmp_path / "single"
    _write(single / "thing.gemspec", 'spec.name = "thing"\n')
    _write(single / "lib" / "thing.rb")
    assert [(m.name, m.path, m.type, m.package) for m in detect_members(single)] == [
        ("single", ".", "ruby-gem", "thing")]
    assert build_manifest(single).name == "single"


def test_dependency_extractors():
    gemspec = ('spec.add_dependency "activesupport"\nspec.add_runtime_dependency \'rack\'\n'
               'spec.add_development_dependency("rspec")\n')
    assert deps_from_gemspec(gemspec) == ["activesupport", "rack", "rspec"]
    assert deps_from_gemfile('source "https://rubygems.org"\ngem "billing"\ngem \'rails\', \'~> 7\'\ngemspec\n') == \
        ["billing", "rails"]
    assert deps_from_package_json('{"dependencies":{"left-pad":"1"},"devDependencies":{"jest":"2"}}') == \
        ["left-pad", "jest"]
    assert deps_from_package_json("[1]") == [] and deps_from_package_json("nope") == []


def test_graph_file_reading():
    g = parse_graph(FIXTURE_GRAPH)
    assert g.to_json() == FIXTURE_GRAPH
    assert g.targets_from("app") == ["billing"] and g.targets_from("web") == []
    assert parse_graph("{}").to_json() == '{"members":[],"edges":[]}'
    with pytest.raises(CceError, match=r"^invalid workspace-graph\.json: "):
        parse_graph("junk")


# -- index --workspace -------------------------------------------------------


def test_index_workspace_builds_member_stores_and_the_graph(ws):
    _ok(run_cce("workspace", "init", ws))
    out = _ok(run_cce("index", "--workspace", ws))
    assert (ws / ".cce" / "workspace-graph.json").read_bytes() == FIXTURE_GRAPH.encode()
    lines = out.splitlines()
    assert lines[0] == "Indexing workspace: workspace"
    assert lines[1].startswith("  app              files    3 · chunks ")
    assert lines[-2].startswith("workspace totals: files 9 · chunks ")
    assert lines[-1] == f"cross-member edges (1) → {ws / '.cce' / 'workspace-graph.json'}"
    for member in ("app", "engines/billing", "web"):
        assert (ws / member / ".cce" / "index.cce").is_file()
        events = (ws / member / ".cce" / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
        assert [json.loads(e)["event"] for e in events] == ["index"]


def test_member_store_is_byte_identical_to_a_standalone_index(indexed_ws, tmp_path):
    for member in ("app", "engines/billing", "web"):
        alone = copy_tree(indexed_ws / member, tmp_path / "alone" / member)
        _ok(run_cce("index", alone, "--no-metrics"))
        assert (indexed_ws / member / ".cce" / "index.cce").read_bytes() == \
            (alone / ".cce" / "index.cce").read_bytes(), member


# -- federated search --------------------------------------------------------


def _json_search(*args) -> dict:
    return json.loads(_ok(run_cce("search", *args, "--json")))


def _union_dir_index(indexed_ws: Path, tmp_path: Path) -> Path:
    """app and billing copied side by side into one directory and indexed as one repository."""
    union = tmp_path / "union"
    shutil.copytree(indexed_ws / "app", union / "app", ignore=shutil.ignore_patterns(".cce"))
    shutil.copytree(indexed_ws / "engines" / "billing", union / "billing", ignore=shutil.ignore_patterns(".cce"))
    _ok(run_cce("index", union, "--no-metrics"))
    return union


def _member_ids(indexed_ws: Path) -> dict[tuple[str, int, int], str]:
    ids = {}
    for name, path in (("app", "app"), ("billing", "engines/billing")):
        for c in load_store(indexed_ws / path / ".cce" / "index.cce").chunks:
            ids[(f"{name}/{c.file_path}", c.start_line, c.end_line)] = c.chunk_id
    return ids


@pytest.mark.parametrize("query", ["billing charge amount", "engine isolate namespace", "application boot"])
@pytest.mark.parametrize("top_k", ["3", "10"])
def test_federated_search_equals_one_index_over_the_union(indexed_ws, tmp_path, query, top_k):
    """Federation == one index over app ∪ billing with namespaced paths, chunk for chunk and score for score.

    A chunk id hashes its path, so the union directory's ids differ from the
    members' own ids, and ids break ranking ties (equal cosines, equal final
    scores). The union store built by ``cce index`` is therefore ranked with
    its ids mapped back to the members' ids; everything else (chunks, vectors,
    BM25 statistics) is the independent single index.
    """
    import dataclasses

    from cce_core.indexing.store import StoreData
    from cce_core.plugins.host import default_host
    from cce_core.retrieval.searcher import Searcher

    union = _union_dir_index(indexed_ws, tmp_path)
    fed = _json_search(query, indexed_ws, "--workspace", "--package", "app,billing", "--no-graph", "--top-k", top_k)
    assert fed["results"] and len(fed["query_id"]) == 12

    single = load_store(union / ".cce" / "index.cce")
    ids = _member_ids(indexed_ws)
    renamed = [dataclasses.replace(c, chunk_id=ids[(c.file_path, c.start_line, c.end_line)]) for c in single.chunks]
    union_store = StoreData(single.meta, renamed, single.embeddings, single.files, single.edges, single.bm25)
    expected = [(r.chunk.chunk_id, r.chunk.file_path, r.chunk.start_line, r.chunk.end_line, format6(r.score), r.rank)
                for r in Searcher(union_store, default_host().embedder("hash")).search(query, int(top_k), False)]
    got = [(r["chunk_id"], f"{r['package']}/{r['file_path']}", r["start_line"], r["end_line"], r["score"], r["rank"])
           for r in fed["results"]]
    assert got == expected


def test_federated_search_matches_the_union_directory_through_the_cli(indexed_ws, tmp_path):
    """Without any id mapping: the same chunks come back, in the same order wherever no tie is involved."""
    union = _union_dir_index(indexed_ws, tmp_path)
    query = "billing charge amount"
    fed = _json_search(query, indexed_ws, "--workspace", "--package", "app,billing", "--no-graph", "--top-k", "20")
    single = _json_search(query, "--dir", union, "--no-graph", "--no-metrics", "--top-k", "20")
    fed_rows = [(f"{r['package']}/{r['file_path']}", r["start_line"], r["end_line"]) for r in fed["results"]]
    single_rows = [(r["file_path"], r["start_line"], r["end_line"]) for r in single["results"]]
    assert sorted(fed_rows) == sorted(single_rows) and len(fed_rows) == 12
    assert [r["score"] for r in fed["results"]] == [r["score"] for r in single["results"]]
    assert fed_rows[:9] == single_rows[:9]  # the rest differ only through tied cosines, broken by chunk id
    ids = _member_ids(indexed_ws)
    assert [r["chunk_id"] for r in fed["results"]] == [ids[row] for row in fed_rows]


def test_federated_json_shape_and_labels(indexed_ws):
    body = _json_search("billing charge amount", indexed_ws, "--workspace", "--package", "app,billing",
                        "--no-graph")
    assert list(body) == ["query_id", "results"]
    assert {r["package"] for r in body["results"]} == {"app", "billing"}
    for r in body["results"]:
        assert list(r) == ["chunk_id", "chunk_type", "end_line", "file_path", "kind", "package", "rank", "score",
                           "start_line"]
        assert not r["file_path"].startswith(("app/", "billing/")) or r["file_path"].startswith("app/models")
        assert len(r["score"].split(".")[1]) == 6


def test_graph_hop_pulls_billing_into_an_app_result(indexed_ws):
    plain = _ok(run_cce("search", "application boot", indexed_ws, "--workspace", "--top-k", "3", "--no-graph"))
    lines = plain.splitlines()
    assert len(lines) == 3 and " app · " in lines[0]
    assert " billing · " not in plain
    hop = _ok(run_cce("search", "application boot", indexed_ws, "--workspace", "--top-k", "3"))
    extra = hop.splitlines()[3:]
    assert extra and all(" billing · " in line for line in extra)
    assert hop.splitlines()[:3] == lines
    assert hop.splitlines()[3].startswith(" 4. [")


def test_scope_by_package_field(tmp_path):
    _write(tmp_path / "store" / "store.gemspec", 'Gem::Specification.new do |s|\n  s.name = "acme-store"\nend\n')
    _write(tmp_path / "store" / "lib" / "catalog.rb",
           "module Store\n  class Catalog\n    def add_item(name, price)\n      @items << [name, price]\n"
           "    end\n  end\nend\n")
    _ok(run_cce("workspace", "init", tmp_path))
    _ok(run_cce("index", "--workspace", tmp_path, "--no-metrics"))
    by_package = _json_search("add item price", tmp_path, "--workspace", "--package", "acme-store")
    by_name = _json_search("add item price", tmp_path, "--workspace", "--package", "store")
    assert by_package["results"] and by_package["results"] == by_name["results"]
    assert {r["package"] for r in by_package["results"]} == {"acme-store"}
    line = _error(run_cce("search", "q", tmp_path, "--workspace", "--package", "nope"))
    assert "available: store (package acme-store)." in line


def test_workspace_search_records_no_metrics(indexed_ws):
    _ok(run_cce("search", "billing", indexed_ws, "--workspace"))
    _ok(run_cce("search", "billing", indexed_ws, "--workspace", "--json"))
    assert not list(indexed_ws.rglob("metrics.jsonl"))


def test_stats_workspace(indexed_ws):
    out = _ok(run_cce("stats", "--workspace", indexed_ws))
    lines = out.splitlines()
    assert lines[0] == "workspace: workspace"
    assert lines[1:4] == ["  app (package app)", "    files : 3", "    chunks: 6"]
    assert "  billing (package billing)" in lines and "  web (package web)" in lines
    assert any(line.startswith("totals: files 9 · chunks ") for line in lines)
    assert lines[-2:] == ["edges (1):", "  app -> billing  (via gemfile)"]


# -- errors ------------------------------------------------------------------


def test_scope_errors(indexed_ws):
    for empty in ("", "  ", ",", " , "):
        assert _error(run_cce("search", "q", indexed_ws, "--workspace", "--package", empty)) == \
            "error: --package requires at least one member or package name (e.g. --package app,billing)"
    assert _error(run_cce("search", "q", indexed_ws, "--workspace", "--package", "app,nope")) == (
        "error: unknown member/package 'nope' — available: app, billing, web. Scope by a member name or its "
        "workspace.yml `package:` field.")


def test_no_manifest(tmp_path):
    expected = (f"error: no workspace manifest at {tmp_path / '.cce' / 'workspace.yml'} — run `cce workspace init` "
                "first")
    for args in (("search", "q", tmp_path, "--workspace"), ("stats", tmp_path, "--workspace"),
                 ("index", "--workspace", tmp_path), ("workspace", "list", tmp_path)):
        assert _error(run_cce(*args)) == expected
    assert list(tmp_path.iterdir()) == []


def test_invalid_manifest_writes_nothing(ws):
    (ws / ".cce").mkdir()
    (ws / ".cce" / "workspace.yml").write_text("version: 1\nmembers: [\n", encoding="utf-8")
    before = _files_under(ws)
    for args in (("search", "q", ws, "--workspace"), ("stats", ws, "--workspace"), ("index", "--workspace", ws),
                 ("workspace", "list", ws)):
        assert _error(run_cce(*args)).startswith("error: invalid workspace.yml: ")
    assert _files_under(ws) == before


def test_unknown_member_type_writes_nothing(ws):
    (ws / ".cce").mkdir()
    (ws / ".cce" / "workspace.yml").write_text(
        FIXTURE_MANIFEST.replace("type: typescript", "type: cobol"), encoding="utf-8")
    before = _files_under(ws)
    assert _error(run_cce("index", "--workspace", ws)) == "error: unknown member type: cobol"
    assert _error(run_cce("search", "q", ws, "--workspace")) == "error: unknown member type: cobol"
    assert _files_under(ws) == before


def test_member_not_indexed(ws):
    _ok(run_cce("workspace", "init", ws))
    store = ws / "app" / ".cce" / "index.cce"
    expected = f"error: member 'app' is not indexed ({store} missing) — run `cce index --workspace` first"
    assert _error(run_cce("search", "q", ws, "--workspace")) == expected
    assert _error(run_cce("stats", ws, "--workspace")) == expected
    store.parent.mkdir()
    store.write_bytes(b"corrupt")
    assert _error(run_cce("search", "q", ws, "--workspace", "--package", "app")) == expected


def test_index_needs_a_directory_or_workspace():
    assert _error(run_cce("index")) == "error: index requires a directory (or pass --workspace)"


def test_package_without_workspace_is_an_error(indexed_ws):
    assert _error(run_cce("search", "billing", "--dir", indexed_ws / "app", "--package", "app")) == \
        "error: --package scopes a workspace search — add --workspace"


def test_single_repo_search_accepts_the_directory_positionally(indexed_ws):
    app = indexed_ws / "app"
    positional = _json_search("charge amount", app, "--no-metrics")
    by_option = _json_search("charge amount", "--dir", app, "--no-metrics")
    assert positional == by_option and positional["results"]


def test_a_symbolic_link_loop_does_not_hang_detection(tmp_path):
    _write(tmp_path / "a" / "web" / "package.json", "{}")
    (tmp_path / "a" / "back").symlink_to(tmp_path, target_is_directory=True)
    assert [(m.name, m.path) for m in detect_members(tmp_path)] == [("web", "a/web")]

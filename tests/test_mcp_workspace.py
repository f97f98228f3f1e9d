"""``cce mcp --workspace``: one agent session over every member of a workspace.

Driven like an agent drives it: the installed ``cce`` spawned as a stdio MCP
server and called through the MCP SDK's client. The fixture is a copy of the
reference's three-member workspace (a Rails app, a billing engine, a
TypeScript package), detected and indexed with the real CLI. The federated
rows must rank exactly as ``cce search --workspace`` ranks them; the texts
that the reference pins (empty-scope guidance, the not-indexed line, the
workspace status block) are compared byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from helpers import cce_executable, copy_tree, reference_dir, run_cce

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'mcp>=2.3,<3')")

from anyio.from_thread import start_blocking_portal
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from cce_core.agents import mcp_tools

QUERY = "billing charge amount"
EMPTY_SCOPE = "--package requires at least one member or package name (e.g. --package app,billing)"
NOT_INDEXED_WORKSPACE = ("This workspace is not indexed yet — run `cce index --workspace` (or `cce init`). "
                         "No results are available until then.")
NOT_A_WORKSPACE = ("not a workspace — no `.cce/workspace.yml`. Run `cce workspace init` then "
                   "`cce index --workspace` (or `cce init`).")
FRESHNESS = "  source  : local (built by cce index)\n  remote  : (no sync remote configured — pure local)\n"
ROW_RE = re.compile(r"^ ?\d+\. \[(\d+\.\d{6})\] (\S+) · (\S+):(\d+)-(\d+) \((\S+)/(\S+)\) #([0-9a-f]+)$", re.M)
ANY_QUERY_ID = re.compile(r'(query_id(?:: |="))[0-9a-f]{12}')


def strip_ids(text: str) -> str:
    return ANY_QUERY_ID.sub(r"\1<id>", text)


class Client:
    """A live MCP server process (any command line) with an initialized SDK session."""

    def __init__(self, command: str, args: list[str], cwd: Path | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if k != "CCE_DEBUG"}
        params = StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd) if cwd else None)
        self._stack = ExitStack()
        try:
            self.portal = self._stack.enter_context(start_blocking_portal())
            read, write = self._stack.enter_context(self.portal.wrap_async_context_manager(stdio_client(params)))
            self.session = self._stack.enter_context(self.portal.wrap_async_context_manager(
                ClientSession(read, write)))
            self.portal.call(self.session.initialize)
        except BaseException:
            self._stack.close()
            raise

    @classmethod
    def cce(cls, *args: str | Path) -> Client:
        return cls(cce_executable(), ["mcp", *map(str, args)])

    def tools(self) -> list[Any]:
        return self.portal.call(self.session.list_tools).tools

    def call(self, name: str, args: dict[str, Any] | None = None) -> tuple[str, bool]:
        result = self.portal.call(partial(self.session.call_tool, name, args or {}))
        assert len(result.content) == 1 and result.content[0].type == "text"
        return result.content[0].text, result.is_error

    def text(self, name: str, args: dict[str, Any] | None = None) -> str:
        text, is_error = self.call(name, args)
        assert not is_error, text
        return text

    def close(self) -> None:
        self._stack.close()


def ok(done: Any) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def copy_workspace(reference: Path, dst: Path) -> Path:
    return copy_tree(reference / "test" / "fixture" / "workspace", dst)


def init_and_index(root: Path) -> None:
    ok(run_cce("workspace", "init", root))
    ok(run_cce("index", "--workspace", root))


def rows(text: str) -> list[tuple[str, ...]]:
    return ROW_RE.findall(text)


def cli_rows(root: Path, *extra: str) -> list[tuple[str, str, str]]:
    """(score, package, path:start-end) of ``cce search --workspace`` at top_k 8, the MCP default."""
    out = ok(run_cce("search", QUERY, root, "--workspace", "--top-k", "8", *extra))
    found = re.findall(r"^ ?\d+\. \[(\d+\.\d{6})\] (\S+) · (\S+:\d+-\d+) ", out, re.M)
    assert found, out
    return found


def events(root: Path) -> list[dict[str, Any]]:
    log = root / ".cce" / "metrics.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ref = reference_dir()
    if not ref.is_dir():
        pytest.skip(f"reference goldens not found at {ref} (set CCE_REFERENCE_DIR to the shared/reference folder)")
    root = copy_workspace(ref, tmp_path_factory.mktemp("mcpws") / "shop")
    init_and_index(root)
    return root


@pytest.fixture(scope="module")
def server(workspace: Path) -> Iterator[Client]:
    client = Client.cce("--workspace", "--dir", workspace)
    yield client
    client.close()


# --------------------------------------------------------------------------- tools and search


def test_the_tool_list_is_the_single_repo_list(server: Client) -> None:
    tools = server.tools()
    assert [t.name for t in tools] == [d["name"] for d in mcp_tools.TOOL_DEFINITIONS]
    for tool, pinned in zip(tools, mcp_tools.TOOL_DEFINITIONS, strict=True):
        assert tool.description == pinned["description"]
        assert tool.input_schema == pinned["inputSchema"]


def test_search_spans_members_with_package_prefixed_headers(server: Client, workspace: Path) -> None:
    text = server.text("context_search", {"query": QUERY})
    found = rows(text)
    assert {r[1] for r in found} >= {"app", "billing"}
    # The same ranking as the CLI's federated search, path relative to its member.
    assert [(score, pkg, f"{path}:{s}-{e}") for score, pkg, path, s, e, *_ in found] == cli_rows(workspace)
    assert " 3. [0.893557] billing · lib/billing.rb:1-5 (class/module) #94a375b9698d3570\n" in text
    assert re.search(re.escape(mcp_tools.COMPACT_HINT) + r'query_id: [0-9a-f]{12}\nRate this with '
                     r'record_feedback \(query_id="[0-9a-f]{12}", helpful=true\|false\)\.\n\Z', text)


def test_a_warm_search_equals_the_cold_one(server: Client) -> None:
    args = {"query": "typescript index web", "top_k": 5}
    first = server.text("context_search", args)
    second = server.text("context_search", args)
    assert strip_ids(first) == strip_ids(second)


@pytest.mark.parametrize("package", ["billing", "billing,billing", " billing "])
def test_package_scopes_by_member_name(server: Client, workspace: Path, package: str) -> None:
    text = server.text("context_search", {"query": QUERY, "package": package, "no_graph": True})
    found = rows(text)
    assert found and {r[1] for r in found} == {"billing"}
    assert "app · " not in text
    if package == "billing":
        assert [(s, p, f"{f}:{a}-{b}") for s, p, f, a, b, *_ in found] == \
            cli_rows(workspace, "--package", "billing", "--no-graph")


def test_package_scopes_by_package_field_and_comma_lists(tmp_path: Path, reference: Path) -> None:
    root = copy_workspace(reference, tmp_path / "ws")
    ok(run_cce("workspace", "init", root))
    manifest = root / ".cce" / "workspace.yml"
    # Give the billing engine a package name that differs from its member name.
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("package: billing", "package: payments"),
                        encoding="utf-8")
    ok(run_cce("index", "--workspace", root))
    client = Client.cce("--workspace", "--dir", root)
    try:
        by_package = client.text("context_search", {"query": QUERY, "package": "payments", "no_graph": True})
        assert {r[1] for r in rows(by_package)} == {"payments"}
        assert " · lib/billing.rb:" in by_package
        by_name = client.text("context_search", {"query": QUERY, "package": "billing", "no_graph": True})
        assert strip_ids(by_name) == strip_ids(by_package)
        both = client.text("context_search", {"query": QUERY, "package": "app, web", "top_k": 20})
        assert {r[1] for r in rows(both)} == {"app", "web"}
        unknown = client.text("context_search", {"query": QUERY, "package": "shipping"})
        assert unknown == ("unknown member/package 'shipping' — available: app, billing (package payments), web. "
                           "Scope by a member name or its workspace.yml `package:` field.")
    finally:
        client.close()


@pytest.mark.parametrize("package", ["", "  ", ",", " , "])
def test_an_empty_package_is_guidance_not_an_empty_search(server: Client, package: str) -> None:
    text, is_error = server.call("context_search", {"query": QUERY, "package": package})
    assert (text, is_error) == (EMPTY_SCOPE, False)


def test_unknown_package_is_guidance(server: Client) -> None:
    text, is_error = server.call("context_search", {"query": QUERY, "package": "app,nope"})
    assert not is_error
    assert text == ("unknown member/package 'nope' — available: app, billing, web. Scope by a member name or "
                    "its workspace.yml `package:` field.")


def test_expand_and_related_resolve_union_chunk_ids(server: Client) -> None:
    text = server.text("context_search", {"query": QUERY, "package": "billing"})
    chunk_id = next(r[7] for r in rows(text) if r[2] == "lib/billing.rb" and r[3] == "1")
    body = server.text("expand_chunk", {"chunk_id": chunk_id})
    assert body.startswith("module Billing\n")
    whole = server.text("expand_chunk", {"chunk_id": chunk_id, "scope": "file"})
    assert whole.startswith("file billing/lib/billing.rb — 2 chunk(s):\n")
    assert server.text("expand_chunk", {"chunk_id": "0000000000000000"}) == mcp_tools.stale_chunk_message(
        "0000000000000000")


def test_the_ledger_names_member_paths(tmp_path: Path, workspace: Path) -> None:
    client = Client.cce("--workspace", "--dir", workspace)
    try:
        text = client.text("context_search", {"query": QUERY, "package": "billing", "no_graph": True})
        digest = client.text("summarize_context", {"scope": "files"})
    finally:
        client.close()
    assert "billing/lib/billing.rb" in digest
    assert "billing · lib/billing.rb" in text


# --------------------------------------------------------------------------- status, metrics, footer


def test_index_status_reports_the_workspace(server: Client, workspace: Path) -> None:
    stats = ok(run_cce("stats", workspace, "--workspace"))
    per_member = re.findall(r"^  (\S+) \(package (\S+)\)\n    files : (\d+)\n    chunks: (\d+)$", stats, re.M)
    assert len(per_member) == 3
    files = sum(int(m[2]) for m in per_member)
    chunks = sum(int(m[3]) for m in per_member)
    expected = (f"Workspace status: {workspace.name}\n"
                + "".join(f"  {n} (package {p}) — files {f}, chunks {c}\n" for n, p, f, c in per_member)
                + f"  totals  : files {files}, chunks {chunks}\n"
                + "  edges (1):\n    app -> billing (via gemfile)\n" + FRESHNESS)
    assert server.text("index_status") == expected


def test_agent_searches_land_in_the_root_log_with_source_mcp(tmp_path: Path, reference: Path) -> None:
    from cce_core.observability.result_line import GrammarRow, grammar_savings
    from cce_core.workspace.federation import load_member_stores
    from cce_core.workspace.manifest import load_manifest

    root = copy_workspace(reference, tmp_path / "ws")
    init_and_index(root)
    member_logs = {p: p.read_text(encoding="utf-8") for p in root.glob("*/**/.cce/metrics.jsonl")}
    client = Client.cce("--workspace", "--dir", root)
    try:
        text = client.text("context_search", {"query": QUERY, "top_k": 5})
    finally:
        client.close()
    searches = [e for e in events(root) if e.get("event") == "search"]
    assert len(searches) == 1
    event = searches[0]
    assert event["source"] == "mcp" and event["query"] == QUERY and event["top_k"] == 5
    assert f"query_id: {event['id']}\n" in text
    # The member logs hold only their index events.
    assert {p: p.read_text(encoding="utf-8") for p in root.glob("*/**/.cce/metrics.jsonl")} == member_logs
    # Baselines count each (member, file) once, by the member's own token count.
    found = rows(text)
    stores = {ms.member.package: ms.data for ms in load_member_stores(root, load_manifest(root), None)}
    files = dict.fromkeys((pkg, path) for _, pkg, path, *_ in found)
    assert event["baseline_tokens"] == sum(stores[pkg].file_tokens[path] for pkg, path in files)
    # The grammar bucket is measured on member-namespaced paths.
    namespaced = [GrammarRow(i + 1, score, None, f"{pkg}/{path}", int(s), int(e), ct, kind, cid)
                  for i, (score, pkg, path, s, e, ct, kind, cid) in enumerate(found)]
    bucket = grammar_savings(namespaced)
    assert event["savings"]["grammar"] == {"baseline_tokens": bucket.baseline_tokens,
                                           "saved_tokens": bucket.saved_tokens}


def test_the_session_footer_counts_workspace_searches(tmp_path: Path, reference: Path) -> None:
    root = copy_workspace(reference, tmp_path / "ws")
    init_and_index(root)
    (root / ".cce" / "config").write_text("mcp:\n  result_footer: session\n", encoding="utf-8")
    client = Client.cce("--workspace", "--dir", root)
    try:
        first = client.text("context_search", {"query": QUERY})
        second = client.text("context_search", {"query": QUERY, "package": "web"})
    finally:
        client.close()
    searches = [e for e in events(root) if e.get("event") == "search"]
    assert len(searches) == 2
    total = 15
    for text, event, n in ((first, searches[0], 1), (second, searches[1], 2)):
        footer = text.rstrip("\n").rsplit("\n", 1)[1]
        assert footer.startswith(f"cce: {event['result_count']} results from ")
        assert f" · session: {n} searches, ~" in footer
    assert f"results from {total} chunks" in first
    assert "results from 3 chunks" in second  # only the web member is in scope


# --------------------------------------------------------------------------- not indexed, freshness


def test_guidance_before_the_workspace_is_indexed(tmp_path: Path, reference: Path) -> None:
    root = copy_workspace(reference, tmp_path / "ws")
    client = Client.cce("--workspace", "--dir", root)
    try:
        assert client.call("context_search", {"query": QUERY}) == (NOT_INDEXED_WORKSPACE, False)
        assert client.call("index_status") == (NOT_A_WORKSPACE, False)
        assert client.call("expand_chunk", {"chunk_id": "94a375b9698d3570"}) == (NOT_INDEXED_WORKSPACE, False)
        ok(run_cce("workspace", "init", root))
        store = root / "app" / ".cce" / "index.cce"
        not_indexed = f"member 'app' is not indexed ({store} missing) — run `cce index --workspace` first"
        assert client.call("context_search", {"query": QUERY}) == (not_indexed, False)
        assert client.call("index_status") == (not_indexed, False)
        # Indexing mid-session is picked up by the running server.
        ok(run_cce("index", "--workspace", root))
        assert "billing · lib/billing.rb:" in client.text("context_search", {"query": QUERY})
        assert client.text("index_status").startswith("Workspace status: ws\n")
    finally:
        client.close()
    assert not (root / ".cce" / "metrics.jsonl").exists() or all(
        e.get("event") != "search" or e.get("source") == "mcp" for e in events(root))


def test_a_member_reindex_is_picked_up_mid_session(tmp_path: Path, reference: Path) -> None:
    root = copy_workspace(reference, tmp_path / "ws")
    init_and_index(root)
    client = Client.cce("--workspace", "--dir", root)
    try:
        before = client.text("context_search", {"query": "refund ledger", "package": "billing"})
        assert "refund_ledger" not in before
        extra = root / "engines" / "billing" / "lib" / "billing" / "refunds.rb"
        extra.write_text("module Billing\n  def self.refund_ledger(amount)\n    amount\n  end\nend\n",
                         encoding="utf-8")
        ok(run_cce("index", "--workspace", root))
        after = client.text("context_search", {"query": "refund ledger", "package": "billing"})
        assert "billing · lib/billing/refunds.rb:" in after
        status = client.text("index_status")
        assert "  billing (package billing) — files 4, " in status
        # Removing a member's store drops the cached union: guidance, never stale rows.
        shutil.rmtree(root / "web" / ".cce")
        text = client.text("context_search", {"query": "refund ledger"})
        assert text.startswith("member 'web' is not indexed (")
        # The billing-only scope does not need the web member.
        assert "refunds.rb" in client.text("context_search", {"query": "refund ledger", "package": "billing"})
    finally:
        client.close()


def test_cce_init_registers_a_working_workspace_server(tmp_path: Path, reference: Path) -> None:
    root = copy_workspace(reference, tmp_path / "ws")
    init_and_index(root)
    ok(run_cce("init", root))
    entry = json.loads((root / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["cce"]
    assert entry["args"] == ["mcp", "--workspace"]
    command = cce_executable() if entry["command"] == "cce" else entry["command"]
    client = Client(command, entry["args"], cwd=root)
    try:
        text = client.text("context_search", {"query": QUERY})
    finally:
        client.close()
    assert "billing · lib/billing.rb:" in text and "app · app/models/charge.rb:" in text
    searches = [e for e in events(root) if e.get("event") == "search"]
    assert [e["source"] for e in searches] == ["mcp"]


# --------------------------------------------------------------------------- the union cache (in process)


def test_the_union_is_cached_per_scope_and_rebuilt_when_a_store_changes(workspace: Path) -> None:
    from cce_core.agents.mcp_server import McpSession

    session = McpSession(workspace, workspace=True)
    manifest = session.manifest()
    whole = session.workspace_bundle(manifest, None)
    assert session.workspace_bundle(manifest, None) is whole
    scoped = session.workspace_bundle(manifest, ["billing"])
    assert scoped is not whole and [ms.member.name for ms in scoped.members] == ["billing"]
    assert session.workspace_bundle(manifest, ["billing"]) is scoped
    cold, _ = session.call("context_search", {"query": QUERY})
    warm, _ = session.call("context_search", {"query": QUERY})
    assert strip_ids(cold) == strip_ids(warm)
    union = whole.union
    assert session.workspace_bundle(manifest, None).union is union
    # A rewritten member store (new mtime) invalidates every scope that includes it, and only those.
    store = workspace / "web" / ".cce" / "index.cce"
    st = store.stat()
    os.utime(store, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    try:
        assert session.workspace_bundle(manifest, None) is not whole
        assert session.workspace_bundle(manifest, ["billing"]) is scoped
    finally:
        os.utime(store, ns=(st.st_atime_ns, st.st_mtime_ns))

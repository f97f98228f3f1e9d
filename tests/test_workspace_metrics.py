"""Workspace metrics: ``cce usage --workspace`` and ``cce dashboard --workspace``.

Both read the same logs: every member's ``<member>/.cce/metrics.jsonl`` plus
the workspace-root ``.cce/metrics.jsonl`` (where workspace-wide agent searches
land). Root-log searches count in the totals and the agent/human split but in
no package's row. The synthetic logs mirror the reference's workspace pin:
members app (1000 tokens) and billing (3000), both cli; two mcp searches at
the root (500 + 700) → 4 searches / 5200 tokens, ``by_package`` summing to 2.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import subprocess
import threading
from pathlib import Path

import pytest
from helpers import cce_executable, copy_tree, run_cce

from cce_core.observability.aggregate import aggregate
from cce_core.observability.metrics import parse_iso, parse_log

SERVING = re.compile(r"^cce workspace dashboard: serving http://127\.0\.0\.1:(\d+)/  \(loopback only, read-only\)$")


def search_line(id_: str, ts: str, query: str, tokens: int, source: str, top: float = 0.9) -> str:
    obj = {"schema": "cce.metrics/v1", "event": "search", "ts": ts, "id": id_, "query": query, "result_count": 2,
           "tokens_saved": tokens, "savings_ratio": 0.5, "top_score": top, "empty": False, "low_confidence": False,
           "latency_ms": 10.0, "source": source}
    return json.dumps(obj, separators=(",", ":")) + "\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def ws(reference, tmp_path) -> Path:
    """The reference workspace fixture with a manifest, two member logs and a root log."""
    root = copy_tree(reference / "test" / "fixture" / "workspace", tmp_path / "workspace")
    proc = run_cce("workspace", "init", root)
    assert proc.returncode == 0, proc.stderr
    _write(root / "app" / ".cce" / "metrics.jsonl",
           search_line("app000000001", "2026-07-04T10:00:00Z", "boot sequence", 1000, "cli"))
    _write(root / "engines" / "billing" / ".cce" / "metrics.jsonl",
           search_line("bil000000001", "2026-07-04T11:00:00Z", "charge amount", 3000, "cli", top=0.7))
    _write(root / ".cce" / "metrics.jsonl",
           search_line("root00000001", "2026-07-04T12:00:00Z", "cross member flow", 500, "mcp")
           + "not json\n"
           + search_line("root00000002", "2026-07-04T13:00:00Z", "invoice totals", 700, "mcp"))
    return root


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


# --------------------------------------------------------------------------- cce usage --workspace


WORKSPACE_HUMAN = (
    "CCE usage — all time\n"
    "  agent (mcp) : 2 searches · saved ~1,200 tok (50%) · quality 0.90 · 10 ms avg\n"
    "  human (cli) : 2 searches · saved ~4,000 tok (50%) · quality 0.80 · 10 ms avg\n"
    "  by package\n"
    "    app     : 1 searches · saved ~1,000 tok (50%) · quality 0.90\n"
    "    billing : 1 searches · saved ~3,000 tok (50%) · quality 0.70\n"
    "    web     : 0 searches · saved ~    0 tok (0%) · quality 0.00\n"
    "  recent (newest first)\n"
    '    mcp  13:00  "invoice totals"     2 hits  ~700 saved\n'
    '    mcp  12:00  "cross member flow"  2 hits  ~500 saved\n'
    '    cli  11:00  "charge amount"      2 hits  ~3.0k saved\n'
    '    cli  10:00  "boot sequence"      2 hits  ~1.0k saved\n'
)


def test_usage_workspace_json_folds_the_root_log_but_not_into_packages(ws):
    out = _ok(run_cce("usage", "--workspace", "--json", ws))
    usage = json.loads(out)
    assert list(usage) == ["schema", "generated_ts", "window", "source_filter", "totals", "by_source",
                           "by_package", "recent"]
    assert usage["totals"]["searches"] == 4
    assert usage["totals"]["tokens_saved"] == 5200
    assert usage["by_source"]["cli"]["searches"] == 2
    assert usage["by_source"]["mcp"]["searches"] == 2
    assert usage["by_source"]["mcp"]["tokens_saved"] == 1200
    assert usage["by_package"] == [
        {"mean_savings_ratio": 0.5, "mean_top_score": 0.9, "package": "app", "searches": 1, "tokens_saved": 1000},
        {"mean_savings_ratio": 0.5, "mean_top_score": 0.7, "package": "billing", "searches": 1,
         "tokens_saved": 3000},
        {"mean_savings_ratio": 0.0, "mean_top_score": 0.0, "package": "web", "searches": 0, "tokens_saved": 0},
    ]
    assert sum(p["searches"] for p in usage["by_package"]) == 2
    # Inner keys are alphabetical, as lifted from the aggregate.
    assert all(list(p) == sorted(p) for p in usage["by_package"])
    assert [r["query"] for r in usage["recent"]] == ["invoice totals", "cross member flow", "charge amount",
                                                     "boot sequence"]


def test_usage_workspace_human_block_has_the_by_package_rows(ws):
    assert _ok(run_cce("usage", "--workspace", ws)) == WORKSPACE_HUMAN
    # --dir names the root too; the positional DIR wins over it.
    assert _ok(run_cce("usage", "--workspace", "--dir", ws)) == WORKSPACE_HUMAN
    assert _ok(run_cce("usage", "--workspace", ws, "--dir", ws / "nowhere")) == WORKSPACE_HUMAN
    # ... and so does the current directory.
    assert _ok(run_cce("usage", "--workspace", cwd=ws)) == WORKSPACE_HUMAN


def test_usage_workspace_source_filter_keeps_the_package_rows(ws):
    out = _ok(run_cce("usage", "--workspace", "--source", "mcp", ws))
    assert out.splitlines()[:6] == [
        "CCE usage — all time",
        "  agent (mcp) : 2 searches · saved ~1,200 tok (50%) · quality 0.90 · 10 ms avg",
        "  by package",
        "    app     : 1 searches · saved ~1,000 tok (50%) · quality 0.90",
        "    billing : 1 searches · saved ~3,000 tok (50%) · quality 0.70",
        "    web     : 0 searches · saved ~    0 tok (0%) · quality 0.00",
    ]


def test_usage_workspace_since_windows_members_and_root_alike(ws):
    usage = json.loads(_ok(run_cce("usage", "--workspace", "--json", "--since", "2026-07-04T10:30:00Z", ws)))
    assert usage["window"]["since"] == "2026-07-04T10:30:00Z"
    assert usage["totals"]["searches"] == 3
    assert usage["totals"]["tokens_saved"] == 4200
    assert [(p["package"], p["searches"]) for p in usage["by_package"]] == [("app", 0), ("billing", 1), ("web", 0)]

    out = _ok(run_cce("usage", "--workspace", "--since", "2027-01-01", ws))
    assert out == "CCE usage — since 2027-01-01T00:00:00Z\n  no searches in this window\n"


def test_single_repo_usage_is_unchanged_and_has_no_by_package(ws):
    usage = json.loads(_ok(run_cce("usage", "--json", "--dir", ws / "app")))
    assert "by_package" not in usage
    assert usage["totals"]["searches"] == 1
    # Without --workspace the root's own log is just a single-repo log.
    out = _ok(run_cce("usage", ws))
    assert "by package" not in out
    assert "  agent (mcp) : 2 searches" in out


def test_usage_workspace_errors_are_the_workspace_messages(tmp_path):
    missing = tmp_path / "plain"
    missing.mkdir()
    line = _error_line(run_cce("usage", "--workspace", missing))
    assert line == (f"error: no workspace manifest at {missing / '.cce' / 'workspace.yml'} — run "
                    "`cce workspace init` first")
    broken = tmp_path / "broken"
    _write(broken / ".cce" / "workspace.yml", "version: 1\nmembers: [\n")
    assert _error_line(run_cce("usage", "--workspace", "--json", broken)).startswith("error: invalid workspace.yml:")
    assert _error_line(run_cce("dashboard", "--workspace", "--port", "0", broken)).startswith(
        "error: invalid workspace.yml:")


def test_a_member_at_the_root_does_not_count_the_root_log_twice(tmp_path):
    root = tmp_path / "solo"
    _write(root / ".cce" / "workspace.yml",
           'version: 1\nname: solo\nmembers:\n  - name: solo\n    path: "."\n    type: ruby-gem\n    package: solo\n')
    _write(root / ".cce" / "metrics.jsonl",
           search_line("solo00000001", "2026-07-04T10:00:00Z", "a", 100, "cli")
           + search_line("solo00000002", "2026-07-04T11:00:00Z", "b", 200, "mcp"))
    usage = json.loads(_ok(run_cce("usage", "--workspace", "--json", root)))
    assert usage["totals"]["searches"] == 2
    assert usage["totals"]["tokens_saved"] == 300
    # Here the root log *is* a member log, so its searches are that member's.
    assert [(p["package"], p["searches"]) for p in usage["by_package"]] == [("solo", 2)]

    with WorkspaceDashboard(root) as dash:
        assert dash.get("/api/health") == (200, b'{"events":2,"members":1,"status":"ok"}')


# --------------------------------------------------------------------------- the aggregate (pure)


def test_aggregate_by_package_is_additive_and_sorted():
    a = parse_log(search_line("a00000000001", "2026-07-04T10:00:00Z", "q", 10, "cli")).events
    b = parse_log(search_line("b00000000001", "2026-07-04T10:00:00Z", "q", 30, "mcp", top=0.4)).events
    now = parse_iso("2026-07-05T00:00:00Z")
    plain = aggregate(a + b, now)
    rolled = aggregate(a + b, now, packages=[("zeta", b), ("alpha", a), ("mid", [])])
    assert "by_package" not in plain
    assert {k: v for k, v in rolled.items() if k != "by_package"} == plain
    assert [r["package"] for r in rolled["by_package"]] == ["alpha", "mid", "zeta"]
    assert rolled["by_package"][2] == {"package": "zeta", "searches": 1, "tokens_saved": 30,
                                       "mean_savings_ratio": 0.5, "mean_top_score": 0.4}


# --------------------------------------------------------------------------- cce dashboard --workspace


class WorkspaceDashboard:
    """``cce dashboard DIR --workspace --port 0 --no-open`` in the background."""

    def __init__(self, root: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("CCE_DEBUG", "PYTHONUNBUFFERED")}
        self.proc = subprocess.Popen([cce_executable(), "dashboard", str(root), "--workspace", "--port", "0",
                                      "--no-open"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._pump = threading.Thread(target=self._read, daemon=True)
        self._pump.start()
        try:
            first = self._next()
            assert first is not None, f"cce dashboard exited early: {self.proc.stderr.read()!r}"
            m = SERVING.match(first)
            assert m, f"unexpected first line: {first!r}"
            self.port = int(m.group(1))
            self.banner = [first, self._next(), self._next()]
        except BaseException:
            self.close()
            raise

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def _next(self, timeout: float = 30) -> str | None:
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty as exc:
            raise AssertionError("no output from cce dashboard") from exc

    def get(self, path: str) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", path)
            res = conn.getresponse()
            return res.status, res.read()
        finally:
            conn.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._pump.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> WorkspaceDashboard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def test_dashboard_workspace_serves_the_rollup(ws):
    with WorkspaceDashboard(ws) as dash:
        assert dash.banner[1:] == ["members : 3", "press Ctrl-C to stop."]

        status, body = dash.get("/api/health")
        assert status == 200
        # 2 member events + 2 root events; the root log's corrupt line is not an event.
        assert body == b'{"events":4,"members":3,"status":"ok"}'

        status, body = dash.get("/api/metrics?x=1")
        assert status == 200
        metrics = json.loads(body)
        assert metrics["totals"]["searches"] == 4
        assert metrics["totals"]["tokens_saved"] == 5200
        assert metrics["by_source"]["cli"]["searches"] == 2
        assert metrics["by_source"]["mcp"]["searches"] == 2
        assert metrics["by_source"]["mcp"]["tokens_saved"] == 1200
        assert [r["source"] for r in metrics["recent_searches"]] == ["mcp", "mcp", "cli", "cli"]
        assert metrics["by_package"] == [
            {"mean_savings_ratio": 0.5, "mean_top_score": 0.9, "package": "app", "searches": 1,
             "tokens_saved": 1000},
            {"mean_savings_ratio": 0.5, "mean_top_score": 0.7, "package": "billing", "searches": 1,
             "tokens_saved": 3000},
            {"mean_savings_ratio": 0.0, "mean_top_score": 0.0, "package": "web", "searches": 0,
             "tokens_saved": 0},
        ]
        assert "generated_ts" in metrics

        status, page = dash.get("/")
        assert status == 200 and b'id="packages-grid"' in page
        assert dash.get("/nope")[0] == 404

        # Logs are read per request: a new member search shows up without a restart.
        _write(ws / "web" / ".cce" / "metrics.jsonl",
               search_line("web000000001", "2026-07-04T14:00:00Z", "render list", 250, "cli"))
        metrics = json.loads(dash.get("/api/metrics")[1])
        assert metrics["totals"]["searches"] == 5
        assert metrics["by_package"][2]["searches"] == 1

    # The same numbers as `cce usage --workspace --json` over the same logs.
    usage = json.loads(_ok(run_cce("usage", "--workspace", "--json", ws)))
    for key in ("searches", "tokens_saved", "mean_savings_ratio", "mean_top_score"):
        assert usage["totals"][key] == metrics["totals"][key]
    assert usage["by_source"] == metrics["by_source"]
    assert usage["by_package"] == metrics["by_package"]


def test_dashboard_workspace_without_a_manifest_errors(tmp_path):
    line = _error_line(run_cce("dashboard", "--workspace", "--port", "0", tmp_path))
    assert line == (f"error: no workspace manifest at {tmp_path / '.cce' / 'workspace.yml'} — run "
                    "`cce workspace init` first")


def test_single_repo_dashboard_has_no_by_package(ws):
    from cce_core.observability.dashboard_server import DashboardApp

    app = DashboardApp(ws / "app" / ".cce" / "metrics.jsonl", page=b"")
    assert "by_package" not in app.metrics()
    assert app.health() == {"events": 1, "skipped": 0, "status": "ok"}


# --------------------------------------------------------------------------- the page, in a real browser

CHROMIUM = Path("/usr/bin/chromium")


def _browser_page(playwright, profile: Path):
    context = playwright.chromium.launch_persistent_context(
        str(profile), executable_path=str(CHROMIUM), headless=True, service_workers="block",
        args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"])
    page = context.pages[0] if context.pages else context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    return context, page, errors


def test_the_page_shows_the_package_table_only_for_a_workspace(ws, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    from dashboard_proc import Dashboard

    with sync_api.sync_playwright() as pw:
        context, page, errors = _browser_page(pw, tmp_path / "profile")
        try:
            with WorkspaceDashboard(ws) as dash:
                page.goto(f"http://127.0.0.1:{dash.port}/", wait_until="load")
                page.wait_for_selector("body[data-ready='1']", timeout=15000)
                assert page.locator("#packages-grid").is_visible()
                rows = page.locator("#packages-body tr")
                assert rows.count() == 3
                assert [c.strip() for c in page.locator("#packages-body tr[data-package=billing] td")
                        .all_inner_texts()] == ["billing", "1", "3,000", "50%", "0.700"]
                assert [c.strip() for c in page.locator("#packages-body tr[data-package=web] td")
                        .all_inner_texts()] == ["web", "0", "0", "—", "—"]
                assert page.locator("#kpi-searches").inner_text().strip() == "4"

            single = Dashboard("--dir", ws / "app", "--port", "0", "--no-open")
            try:
                page.goto(single.base + "/", wait_until="load")
                page.wait_for_selector("body[data-ready='1']", timeout=15000)
                assert page.locator("#packages-grid").is_hidden()
                assert page.locator("#sources").is_visible()
            finally:
                single.stop()
            assert errors == []
        finally:
            context.close()


def test_package_column_width_counts_utf8_bytes_like_the_reference():
    from cce_core.observability.usage import render_human

    a = parse_log(search_line("a00000000001", "2026-07-04T10:00:00Z", "q", 10, "cli")).events
    agg = aggregate(a, parse_iso("2026-07-05T00:00:00Z"), packages=[("café", a), ("ab", [])])
    lines = render_human(agg, None, workspace=True).splitlines()
    assert lines[3:6] == [
        "  by package",
        "    ab    : 0 searches · saved ~ 0 tok (0%) · quality 0.00",
        "    café  : 1 searches · saved ~10 tok (50%) · quality 0.90",
    ]
    assert "by package" not in render_human(agg, None)

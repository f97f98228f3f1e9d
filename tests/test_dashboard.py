"""``cce dashboard``: the real command on a real socket, plus the request handler in-process."""

from __future__ import annotations

import http.client
import json
import re
import socket
import threading
import time
from pathlib import Path

import pytest
from dashboard_proc import WEEK_TOTAL_SAVED, Dashboard, copy_anchor, rebase_to_today, write_week_log
from helpers import REPO_ROOT, run_cce

from cce_core.observability.dashboard_server import PAGE_CSP, DashboardApp, make_server
from cce_core.observability.metrics import MetricsLog, parse_iso

EXPECTED_PATH = REPO_ROOT.parent / "shared" / "notes" / "metrics_anchor_expected.json"
# Parts of the aggregate that do not depend on "now" (the server uses the wall clock).
NOW_INDEPENDENT = ("schema", "totals", "by_source", "savings_by_layer", "secret_safety", "index_freshness",
                   "recent_searches", "series")
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


@pytest.fixture
def expected(reference: Path) -> dict:
    path = reference.parent / "notes" / "metrics_anchor_expected.json"
    if not path.is_file():
        path = EXPECTED_PATH
    if not path.is_file():
        pytest.skip(f"metrics_anchor_expected.json not found beside {reference}")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def dashboards():
    """Start ``cce dashboard`` processes; every one is stopped when the test ends."""
    started: list[Dashboard] = []

    def start(*args, **kwargs) -> Dashboard:
        d = Dashboard(*args, **kwargs)
        started.append(d)
        return d

    yield start
    for d in started:
        d.stop()


@pytest.fixture
def anchor_log(reference: Path, tmp_path: Path) -> Path:
    return copy_anchor(reference, tmp_path / "metrics.jsonl")


@pytest.fixture
def anchor(dashboards, anchor_log: Path) -> Dashboard:
    return dashboards("--metrics", anchor_log, "--port", "0", "--no-open")


# --------------------------------------------------------------------------- start-up


def test_prints_the_three_startup_lines(anchor: Dashboard, anchor_log: Path):
    assert anchor.port > 0
    assert anchor.next_line() == f"metrics log : {anchor_log}"
    assert anchor.next_line() == "press Ctrl-C to stop."


def test_ctrl_c_exits_cleanly(anchor: Dashboard):
    assert anchor.request("/api/health")[0] == 200
    code, out, err = anchor.interrupt()
    assert code == 0
    assert "Traceback" not in err and "Traceback" not in out
    assert "stopped" in out
    assert err == ""


def test_bind_failure_is_one_error_line(tmp_path: Path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = run_cce("dashboard", "--metrics", tmp_path / "m.jsonl", "--port", str(port), "--no-open", timeout=30)
    assert r.returncode == 1
    assert r.stderr.startswith("error: dashboard failed: ")
    assert len(r.stderr.strip().splitlines()) == 1
    assert "serving" not in r.stdout


def test_bad_port_is_a_usage_error(tmp_path: Path):
    r = run_cce("dashboard", "--metrics", tmp_path / "m.jsonl", "--port", "70000")
    assert r.returncode == 2
    assert r.stderr.startswith("error: ")


def test_metrics_path_follows_dir_and_store(dashboards, tmp_path: Path):
    d = dashboards(tmp_path, "--port", "0")
    assert d.next_line() == f"metrics log : {tmp_path / '.cce' / 'metrics.jsonl'}"
    store = tmp_path / "elsewhere" / "index.cce"
    d2 = dashboards("--store", store, "--port", "0")
    assert d2.next_line() == f"metrics log : {store.parent / 'metrics.jsonl'}"
    (tmp_path / "x").mkdir()  # a --dir that does not exist is refused with one line
    d3 = dashboards("--dir", tmp_path / "x", "--port", "0", cwd=tmp_path)
    assert d3.next_line() == f"metrics log : {tmp_path / 'x' / '.cce' / 'metrics.jsonl'}"


# --------------------------------------------------------------------------- routes


def test_page_is_self_contained(anchor: Dashboard):
    status, headers, body = anchor.request("/")
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert int(headers["content-length"]) == len(body)
    assert headers["connection"] == "close"
    assert headers["content-security-policy"] == PAGE_CSP
    html = body.decode("utf-8")
    assert "<title>CCE Dashboard</title>" in html
    lowered = html.lower()
    assert "<link" not in lowered
    assert 'src="http' not in lowered
    assert "src=" not in lowered  # nothing is loaded by URL at all, not even from this server
    assert "@import" not in lowered
    assert "cdn" not in lowered
    assert "url(" not in lowered  # no CSS-loaded resources either
    assert "createElementNS" in html  # charts are SVG drawn by the page itself
    # the only network call the page makes is to its own origin, for the one view of everything it shows
    assert re.findall(r"fetch\(([^,)]*)", html) == ['"/api/dashboard"']
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", html)


def test_health(anchor: Dashboard):
    status, headers, body = anchor.request("/api/health")
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert body == b'{"events":7,"skipped":0,"status":"ok"}'


def test_metrics_matches_the_anchor(anchor: Dashboard, expected: dict):
    before = int(time.time())
    status, headers, body = anchor.request("/api/metrics")
    after = int(time.time())
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert int(headers["content-length"]) == len(body)
    got = json.loads(body)
    # pretty, sorted keys, non-ASCII kept as UTF-8
    assert body.decode("utf-8") == json.dumps(got, indent=2, sort_keys=True, ensure_ascii=False)
    assert set(got) == set(expected) | {"generated_ts"}
    for key in NOW_INDEPENDENT:
        assert got[key] == expected[key], key
    assert ISO.match(got["generated_ts"])
    assert before <= parse_iso(got["generated_ts"]) <= after
    # the north-star windows follow the wall clock: check their shape and consistency
    ns = got["north_star"]
    for name, delta in (("savings", "delta_ratio"), ("quality", "delta_top_score")):
        part = ns[name]
        assert set(part) == set(expected["north_star"][name])
        assert part["direction"] in ("up", "down", "flat")
        assert set(part["current"]) == set(part["prior"]) == set(expected["north_star"][name]["current"])
        assert isinstance(part[delta], (int, float))
    searches = ns["savings"]["current"]["searches"] + ns["savings"]["prior"]["searches"]
    assert 0 <= searches <= got["totals"]["searches"]


def test_metrics_uses_the_wall_clock(dashboards, reference: Path, anchor_log: Path, tmp_path: Path, expected: dict):
    """The anchor moved to today: the live windows give exactly the anchor's north-star numbers."""
    log = rebase_to_today(anchor_log, tmp_path / "today.jsonl")
    d = dashboards("--metrics", log, "--port", "0")
    got = d.get_json("/api/metrics")
    assert got["north_star"] == expected["north_star"]
    assert got["totals"] == expected["totals"]


def test_price_flag(dashboards, anchor_log: Path):
    d = dashboards("--metrics", anchor_log, "--port", "0", "--price", "15")
    assert d.get_json("/api/metrics")["totals"]["cost_saved_usd"] == 0.8  # 53,000 tokens at $15 per million


def _cli_json(*args) -> dict:
    proc = run_cce(*args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _without_clock(usage: dict) -> dict:
    return {k: v for k, v in usage.items() if k not in ("generated_ts", "window")}


def test_dashboard_route_serves_the_cli_figures(dashboards, tmp_path: Path):
    """One view per request whose savings and usage bodies are exactly `cce savings --json` and `cce usage --json`."""
    log = write_week_log(tmp_path / "metrics.jsonl")
    d = dashboards("--metrics", log, "--port", "0")
    status, headers, body = d.request("/api/dashboard")
    assert status == 200 and headers["content-type"] == "application/json"
    assert headers["cache-control"] == "no-store"
    view = json.loads(body)
    assert ISO.match(view["generated_ts"])

    savings = _cli_json("savings", "--json", "--metrics", log)
    assert view["savings"] == savings
    assert savings["savings_by_layer"]["total"]["saved_tokens"] == WEEK_TOTAL_SAVED
    assert view["cost"]["tokens_saved"] == WEEK_TOTAL_SAVED
    assert view["cost"]["dollars_saved"] == savings["estimated_dollars_saved"] == "0.67"

    usage = _cli_json("usage", "--json", "--metrics", log)
    assert _without_clock(view["usage"]) == _without_clock(usage)
    assert view["usage"]["window"]["since"] is None

    # the family's aggregate is inside, unchanged, and /api/metrics still serves it alone
    metrics = d.get_json("/api/metrics")
    assert {k: v for k, v in metrics.items() if k not in ("generated_ts", "north_star")} == {
        k: v for k, v in view["metrics"].items() if k != "north_star"}


def test_price_flag_reprices_only_the_headline(dashboards, tmp_path: Path):
    log = write_week_log(tmp_path / "metrics.jsonl")
    d = dashboards("--metrics", log, "--port", "0", "--price", "15")
    view = d.get_json("/api/dashboard")
    assert (view["cost"]["dollars_saved"], view["cost"]["rate_from"]) == ("3.36", "--price")
    assert view["savings"]["estimated_dollars_saved"] == "0.67"


def test_a_forged_log_still_gives_a_json_view(dashboards, tmp_path: Path):
    log = tmp_path / "metrics.jsonl"
    big = (1 << 64) - 1
    log.write_text("".join(json.dumps({"event": "search", "ts": f"2026-07-04T1{i}:00:00Z", "id": f"f{i}",
                                       "query": "\u202e<b>x</b>\n", "result_count": big, "tokens_saved": big,
                                       "latency_ms": 1.7e308, "top_k": -3, "graph_enabled": "yes"}) + "\n"
                           for i in range(2)), encoding="utf-8")
    d = dashboards("--metrics", log, "--port", "0")
    status, _headers, body = d.request("/api/dashboard")
    assert status == 200
    view = json.loads(body)
    assert view["usage"]["totals"]["tokens_saved"] == big
    assert view["latency"]["current"]["p95_ms"] is None  # past the largest double once scaled: JSON null
    metrics = d.get_json("/api/metrics")  # once a 500: the mean latency overflowed while being rounded
    assert metrics["by_source"]["cli"]["mean_latency_ms"] is None
    assert d.request("/api/health")[0] == 200


def test_metrics_are_recomputed_on_every_request(anchor: Dashboard, anchor_log: Path):
    first = anchor.get_json("/api/metrics")
    with anchor_log.open("a", encoding="utf-8") as f:
        f.write('{"schema":"cce.metrics/v1","event":"search","ts":"2026-07-04T10:00:00Z","id":"eeeeeeeeeeee",'
                '"query":"späť","result_count":1,"baseline_tokens":100,"served_tokens":40,"tokens_saved":60,'
                '"savings_ratio":0.6,"top_score":0.5,"empty":false,"source":"mcp"}\n')
    second = anchor.get_json("/api/metrics")
    assert second["totals"]["searches"] == first["totals"]["searches"] + 1
    assert second["by_source"]["mcp"]["searches"] == 1
    assert second["recent_searches"][0]["query"] == "späť"
    assert anchor.get_json("/api/health") == {"events": 8, "skipped": 0, "status": "ok"}


def test_unknown_paths_are_json_404(anchor: Dashboard):
    for path in ("/nope", "/api", "/api/metrics/", "/index.html", "/favicon.ico", "/../etc/passwd"):
        status, headers, body = anchor.request(path)
        assert status == 404, path
        assert headers["content-type"] == "application/json"
        assert json.loads(body) == {"error": "not found"}


def test_query_string_is_ignored(anchor: Dashboard):
    assert anchor.request("/api/health?x=1&y")[2] == b'{"events":7,"skipped":0,"status":"ok"}'
    status, headers, _body = anchor.request("/?refresh=1")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert anchor.request("/nope?x=1")[0] == 404
    plain = anchor.get_json("/api/metrics")
    queried = anchor.get_json("/api/metrics?since=1d")
    plain.pop("generated_ts")
    queried.pop("generated_ts")
    assert plain == queried


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"])
def test_no_write_route(anchor: Dashboard, anchor_log: Path, method: str):
    before = anchor_log.read_bytes()
    files_before = sorted(anchor_log.parent.iterdir())
    for path in ("/", "/api/metrics", "/api/dashboard", "/api/health", "/api/feedback", "/nope"):
        status, headers, body = anchor.request(path, method=method, body=b'{"event":"feedback"}',
                                               headers={"Content-Type": "application/json"})
        assert status == 405, (method, path)
        assert headers["content-type"] == "application/json"
        assert headers["allow"] == "GET, HEAD"
        assert json.loads(body) == {"error": "method not allowed"}
    assert anchor_log.read_bytes() == before
    assert sorted(anchor_log.parent.iterdir()) == files_before
    assert anchor.request("/api/health")[0] == 200  # still serving


def test_head_sends_headers_only(anchor: Dashboard):
    status, headers, body = anchor.request("/", method="HEAD")
    assert status == 200
    assert body == b""
    assert int(headers["content-length"]) == len(anchor.request("/")[2])


def test_foreign_host_header_is_refused(anchor: Dashboard):
    """A page on another site that rebinds its name to 127.0.0.1 must not read the metrics."""
    # A loopback name without the served port (port 80 implied) is refused too.
    for host in ("evil.example", "evil.example:8787", "127.0.0.1.evil.example", "localhost"):
        status, _headers, body = anchor.request("/api/metrics", headers={"Host": host})
        assert status == 403, host
        assert json.loads(body) == {"error": "forbidden host"}
    for host in (f"127.0.0.1:{anchor.port}", f"localhost:{anchor.port}", f"[::1]:{anchor.port}"):
        assert anchor.request("/api/health", headers={"Host": host})[0] == 200, host


def test_malformed_request_gets_a_json_error(anchor: Dashboard):
    with socket.create_connection(("127.0.0.1", anchor.port), timeout=10) as s:
        s.sendall(b"GET / HTTP/9.9\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 505")
    assert b"Content-Type: application/json" in head
    assert "error" in json.loads(body)
    assert anchor.request("/api/health")[0] == 200


def test_idle_connection_does_not_block_others(anchor: Dashboard):
    with socket.create_connection(("127.0.0.1", anchor.port), timeout=10):
        assert anchor.request("/api/health")[0] == 200


# --------------------------------------------------------------------------- damaged and missing logs


def test_corrupt_lines_are_skipped_and_counted(dashboards, anchor_log: Path, expected: dict):
    with anchor_log.open("a", encoding="utf-8") as f:
        f.write("this is not json\n\n{\"event\":\"search\"}\n{\"truncated\":\n")
    d = dashboards("--metrics", anchor_log, "--port", "0")
    assert d.get_json("/api/health") == {"events": 7, "skipped": 4, "status": "ok"}
    got = d.get_json("/api/metrics")
    assert got["totals"] == expected["totals"]
    with anchor_log.open("ab") as f:
        f.write(b"\x00\x01 garbage\n")
    assert d.get_json("/api/health") == {"events": 7, "skipped": 5, "status": "ok"}
    assert d.request("/")[0] == 200
    assert d.proc.poll() is None


def test_missing_log_is_an_empty_dashboard_and_stays_missing(dashboards, tmp_path: Path):
    log = tmp_path / "nothing" / "metrics.jsonl"
    d = dashboards("--metrics", log, "--port", "0")
    assert d.get_json("/api/health") == {"events": 0, "skipped": 0, "status": "ok"}
    got = d.get_json("/api/metrics")
    assert got["totals"]["searches"] == 0 and got["totals"]["helpful_rate"] is None
    assert got["recent_searches"] == [] and got["series"]["daily"] == []
    assert got["north_star"]["savings"]["direction"] == "flat"
    assert not log.parent.exists()  # the server never creates anything


def test_non_utf8_log_reads_as_empty(dashboards, tmp_path: Path):
    log = tmp_path / "metrics.jsonl"
    log.write_bytes(b"\xff\xfe not utf-8\n")
    d = dashboards("--metrics", log, "--port", "0")
    assert d.get_json("/api/health") == {"events": 0, "skipped": 0, "status": "ok"}


# --------------------------------------------------------------------------- in-process handler


class _Log:
    def __init__(self, events=(), skipped=0):
        self.events = list(events)
        self.skipped = skipped


def _serve(app: DashboardApp):
    server = make_server(app, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


def _get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        res = conn.getresponse()
        return res.status, res.read()
    finally:
        conn.close()


def test_an_aggregator_failure_is_a_500_and_the_server_keeps_serving(tmp_path: Path):
    def broken(events, now, price=3.0):
        raise RuntimeError("boom")

    app = DashboardApp(tmp_path / "m.jsonl", reader=lambda p: _Log(), aggregator=broken, page=b"<html></html>")
    server, thread = _serve(app)
    try:
        assert _get(server.port, "/api/metrics") == (500, b'{"error":"internal error"}')
        assert _get(server.port, "/api/health") == (200, b'{"events":0,"skipped":0,"status":"ok"}')
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_app_passes_now_and_price_and_adds_generated_ts(tmp_path: Path):
    seen = {}

    def fake(events, now, price=3.0):
        seen.update(events=events, now=now, price=price)
        return {"schema": "cce.metrics/v1"}

    app = DashboardApp(tmp_path / "m.jsonl", price=7.5, reader=lambda p: MetricsLog([], 2), aggregator=fake,
                       clock=lambda: parse_iso("2026-07-05T00:00:00Z") + 0.9, page=b"")
    assert app.metrics() == {"schema": "cce.metrics/v1", "generated_ts": "2026-07-05T00:00:00Z"}
    assert seen == {"events": [], "now": parse_iso("2026-07-05T00:00:00Z"), "price": 7.5}
    assert app.health() == {"events": 0, "skipped": 2, "status": "ok"}
    assert app.route("/nope") == (404, "application/json", b'{"error":"not found"}')


def test_the_page_ships_as_package_data():
    from cce_core.observability.dashboard_server import load_page

    page = load_page().decode("utf-8")
    assert page.startswith("<!doctype html>")
    for panel in ("kpi-tokens", "kpi-cost", "kpi-searches", "kpi-helpful", "ns-savings", "ns-outcomes",
                  "chart-tokens", "chart-outcomes", "chart-latency", "latency", "sources", "layers", "freshness",
                  "secrets", "weak-zero", "weak-low", "recent", "detail", "empty"):
        assert f'id="{panel}"' in page, panel
    for label in ("↑ improving", "↓ degrading", "→ flat", "no comparison", "No metrics yet."):
        assert label in page
    # the mean top score is a similarity, not a verdict on the code found: the page never calls it quality
    assert "Retrieval quality" not in page


def test_the_workspace_view_rolls_up_every_log(tmp_path: Path):
    """`cce dashboard --workspace`: /api/dashboard over the roll-up, with the workspace `cce usage` body."""
    from dashboard_proc import week_events

    from cce_core.observability.dashboard_server import WorkspaceDashboardApp
    from cce_core.observability.metrics import parse_log

    now = parse_iso("2026-07-05T06:00:00Z")
    events = parse_log("".join(json.dumps(e) + "\n" for e in week_events(now - 6 * 3600))).events

    class _Snapshot:
        def rollup_events(self):
            return events

        def package_events(self):
            return [("app", events[:5]), ("web", [])]

    class _Logs:
        root = tmp_path
        root_log = tmp_path / ".cce" / "metrics.jsonl"
        members = ("app", "web")

        def read(self):
            return _Snapshot()

    app = WorkspaceDashboardApp(_Logs(), clock=lambda: now, page=b"")
    status, ctype, body = app.route("/api/dashboard")
    view = json.loads(body)
    assert (status, ctype) == (200, "application/json")
    assert [p["package"] for p in view["usage"]["by_package"]] == ["app", "web"]
    assert view["savings"]["source"] == f"{tmp_path} (workspace)"
    assert view["cost"]["tokens_saved"] == WEEK_TOTAL_SAVED
    assert view["generated_ts"] == "2026-07-05T06:00:00Z"

"""The dashboard page in a real browser: headless Debian Chromium driven by Playwright.

The page is served by the real ``cce dashboard`` subprocess on the metrics anchor; the test
checks every panel shows the anchor's numbers, the charts are drawn SVG, and the page
never talks to anything but 127.0.0.1. It leaves screenshots in ``test-artifacts/``;
with ``CCE_UPDATE_SCREENSHOT=1`` it also refreshes ``docs/dashboard.png``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import pytest
from dashboard_proc import (
    WEEK_RETRIEVAL_SAVED,
    WEEK_TOTAL_SAVED,
    Dashboard,
    copy_anchor,
    rebase_to_today,
    write_fortnight_log,
    write_week_log,
)
from helpers import REPO_ROOT, run_cce

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = REPO_ROOT / "test-artifacts"
DOCS_SCREENSHOT = REPO_ROOT / "docs" / "dashboard.png"
NOTE = "vs full-file baseline — not your real end-to-end agent cost"
VERDICT = {"improving": "↑ improving", "degrading": "↓ degrading", "flat": "→ flat",
           "no comparison": "no comparison"}

def _unavailable(reason: str) -> None:
    # CI sets CCE_REQUIRE_BROWSER=1: there a missing browser is a failure, not a quiet skip.
    if os.environ.get("CCE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (CCE_REQUIRE_BROWSER=1)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


try:
    from playwright import sync_api
except ImportError:
    _unavailable("playwright is not installed (pip install -r requirements-dev.txt)")
if not CHROMIUM.exists():
    _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")


@pytest.fixture(scope="module")
def playwright():
    with sync_api.sync_playwright() as p:
        yield p


class Browser:
    """One fresh Chromium profile and page, recording every request and script error."""

    def __init__(self, playwright, profile: Path) -> None:
        self.context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900}, service_workers="block")
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.page = self.context.pages[0] if self.context.pages else self.context.new_page()
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, dashboard: Dashboard):
        self.page.goto(dashboard.base + "/", wait_until="load")
        self.page.wait_for_selector("body[data-ready='1']", timeout=15000)
        return self.page

    def assert_loopback_only(self, dashboard: Dashboard) -> None:
        assert self.requests, "no request was recorded"
        outside = [u for u in self.requests if not u.startswith(f"http://127.0.0.1:{dashboard.port}/")]
        assert outside == [], f"the page reached beyond 127.0.0.1: {outside}"
        assert f"{dashboard.base}/api/dashboard" in self.requests
        assert self.errors == []

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def browser(playwright, tmp_path: Path):
    b = Browser(playwright, tmp_path / "chromium-profile")
    yield b
    b.close()


@pytest.fixture
def dashboards():
    started: list[Dashboard] = []

    def start(*args) -> Dashboard:
        d = Dashboard(*args, "--port", "0", "--no-open")
        started.append(d)
        return d

    yield start
    for d in started:
        d.stop()


def text(page, selector: str) -> str:
    return page.locator(selector).inner_text().strip()


def cells(page, row_selector: str) -> list[str]:
    return [c.strip() for c in page.locator(f"{row_selector} td").all_inner_texts()]


# The page's number forms (fixed en-US, whatever the browser's locale), for comparing with the CLI's JSON.
def fmt_int(n: int) -> str:
    return f"{n:,}"


def fmt_pct(ratio: float) -> str:
    tenths = math.floor(ratio * 1000 + 0.5) / 10  # Math.round: halves toward +infinity
    return f"{tenths:.0f}%" if tenths == int(tenths) else f"{tenths:.1f}%"


def fmt_score(score: float) -> str:
    return f"{score:.3f}"


def cli_json(*args) -> dict:
    proc = run_cce(*args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / name
    page.screenshot(path=str(out), full_page=True)
    assert out.stat().st_size > 10_000
    return out


def test_every_panel_shows_the_anchor(browser: Browser, dashboards, reference: Path, tmp_path: Path):
    d = dashboards("--metrics", copy_anchor(reference, tmp_path / "metrics.jsonl"))
    page = browser.open(d)
    view = d.get_json("/api/dashboard")

    assert page.title() == "CCE Dashboard"
    assert page.locator("#empty").is_hidden()
    assert page.locator("#error").is_hidden()
    assert page.locator("#detail").is_hidden()

    # headline numbers
    assert text(page, "#kpi-tokens") == "53,000"
    assert text(page, "#kpi-cost") == "$0.16"
    assert text(page, "#kpi-searches") == "4"
    assert text(page, "#kpi-helpful") == "50%"
    assert text(page, "#kpi-helpful-foot") == "1 helpful · 1 not helpful"
    assert text(page, "#kpi-searches-foot") == "0 by agents · 4 by people"

    # trend panels: the windows follow the wall clock, so the page must agree with the view
    trend = view["trend"]
    assert text(page, "#ns-savings [data-role=chip]") == VERDICT[trend["savings_ratio"]["verdict"]]
    for metric in ("helpful_rate", "zero_result_rate"):
        assert text(page, f"#ns-outcomes [data-metric={metric}] [data-role=chip]") == VERDICT[trend[metric]["verdict"]]
    assert page.locator("#ns-savings table.cmp tbody tr").count() == 2
    assert page.locator("#ns-outcomes table.cmp tbody tr").count() == 4
    assert cells(page, "#ns-savings tbody tr:nth-child(1)") == [
        "searches", str(trend["savings_ratio"]["current_count"]), str(trend["savings_ratio"]["prior_count"])]

    # daily charts: SVG with a bar for every day that saved tokens, outcome lines, latency lines
    tokens_svg = page.locator("svg#chart-tokens")
    assert tokens_svg.locator("rect.bar").count() == 3  # Jun 25, Jul 1, Jul 2
    assert tokens_svg.locator("rect.bar2").count() == 0  # the anchor predates the other layers
    assert tokens_svg.locator("text").filter(has_text="Jul 1").count() == 1
    outcomes_svg = page.locator("svg#chart-outcomes")
    assert outcomes_svg.locator("path.l2").count() == 1 and outcomes_svg.locator("path.l3").count() == 1
    assert outcomes_svg.locator("circle.d2").count() == 3  # three days with searches
    assert outcomes_svg.locator("rect.fb-good").count() == 1 and outcomes_svg.locator("rect.fb-bad").count() == 1
    latency_svg = page.locator("svg#chart-latency")
    assert latency_svg.locator("path.l1").count() == 1 and latency_svg.locator("path.l2").count() == 1
    assert latency_svg.locator("circle.d1").count() == 3
    assert text(page, "#trend-range") == "2026-06-25 → 2026-07-03 (UTC)"

    # agents vs people
    assert cells(page, "#sources-body tr[data-source=mcp]") == ["Agent (MCP)", "0", "0", "—", "—", "—"]
    assert cells(page, "#sources-body tr[data-source=cli]") == ["Human (CLI)", "4", "53,000", "52.5%", "0.633",
                                                                "4.5 ms"]
    assert cells(page, "#sources-body tr[data-source=all]") == ["All", "4", "53,000", "52.5%", "0.633", ""]

    # savings by layer, with the honest note
    assert text(page, "[data-layer=retrieval] .nums") == "53,000 of 70,000"
    assert text(page, "[data-layer=retrieval] .pct") == "76%"
    assert text(page, "[data-layer=total] .nums") == "53,000 of 70,000"
    assert text(page, "#layers-note") == NOTE
    assert "Chunk compression" in text(page, "#layers-unused")

    # index freshness and secret safety
    assert text(page, "#fresh-ts") == "2026-07-01T09:00:00Z"
    assert text(page, "#fresh-runs") == "1"
    assert text(page, "#fresh-source") == "local index"
    assert text(page, "#fresh-sha") == "—"
    assert text(page, "#sec-skipped") == "0"
    assert text(page, "#sec-runs") == "over 1 index run"

    # the queries that found nothing (the anchor has no weak best hit)
    assert cells(page, "#weak-zero-body tr") == ["zzz nonexistent", "1", "2026-07-02 11:00", "person"]
    assert cells(page, "#weak-low-body tr") == ["None."]

    # recent searches, newest first
    rows = page.locator("#recent-body tr")
    assert [rows.nth(i).get_attribute("data-id") for i in range(rows.count())] == [
        "cccccccccccc", "bbbbbbbbbbbb", "aaaaaaaaaaaa", "dddddddddddd"]
    assert cells(page, "#recent-body tr[data-id=bbbbbbbbbbbb]") == [
        "2026-07-02 10:00", "payment", "person", "2", "16,000", "80%", "0.600", "not helpful", "bbbbbbbbbbbb"]
    assert cells(page, "#recent-body tr[data-id=cccccccccccc]")[3] == "none found"
    assert cells(page, "#recent-body tr[data-id=aaaaaaaaaaaa]")[7] == "helpful"

    screenshot(page, "dashboard.png")
    browser.assert_loopback_only(d)


def test_trend_panels_with_a_live_week(browser: Browser, dashboards, reference: Path, tmp_path: Path):
    """The anchor moved to today, so both 7-day windows hold searches and the deltas show."""
    log = rebase_to_today(copy_anchor(reference, tmp_path / "anchor.jsonl"), tmp_path / "metrics.jsonl")
    d = dashboards("--metrics", log)
    page = browser.open(d)

    assert text(page, "#ns-savings [data-role=chip]") == "↑ improving"
    assert text(page, "#ns-savings [data-role=now]") == "53.3%"
    assert text(page, "#ns-savings [data-role=prior]") == "50%"
    assert text(page, "#ns-savings [data-role=delta]") == "+3.3 pts"
    assert cells(page, "#ns-savings tbody tr:nth-child(2)") == ["retrieval tokens saved", "48,000", "5,000"]

    helpful = "#ns-outcomes [data-metric=helpful_rate]"
    assert text(page, f"{helpful} [data-role=now]") == "50%"
    assert text(page, f"{helpful} [data-role=prior]") == "—"
    assert text(page, f"{helpful} [data-role=chip]") == "no comparison"
    assert text(page, f"{helpful} [data-role=note]") == "no feedback in the prior 7 days"
    zero = "#ns-outcomes [data-metric=zero_result_rate]"
    assert text(page, f"{zero} [data-role=now]") == "33.3%"
    assert text(page, f"{zero} [data-role=prior]") == "0%"
    assert text(page, f"{zero} [data-role=delta]") == "+33.3 pts"
    assert text(page, f"{zero} [data-role=chip]") == "↓ degrading"  # more searches found nothing
    assert cells(page, "#ns-outcomes tbody tr:nth-child(1)") == ["low-score rate (best hit < 0.30)", "0%", "0%"]
    assert cells(page, "#ns-outcomes tbody tr:nth-child(2)") == [
        "mean top score (similarity, not correctness)", "0.750", "0.400"]
    assert cells(page, "#ns-outcomes tbody tr:nth-child(3)") == ["searches", "3", "1"]
    assert cells(page, "#ns-outcomes tbody tr:nth-child(4)") == ["feedback votes", "2", "0"]

    # latency: p95 5 ms this week against 6 ms the week before
    assert text(page, "#lat-p50") == "4.0 ms"
    assert text(page, "#lat-p95") == "5.0 ms"
    assert text(page, "#lat-prior") == "prior 7 days: p50 6.0 ms · p95 6.0 ms"
    assert text(page, "#latency [data-role=chip]") == "↑ improving"
    assert text(page, "#fresh-age") in ("4 days ago", "5 days ago")  # 3 days 15 hours before today's midnight

    screenshot(page, "dashboard-current.png")
    browser.assert_loopback_only(d)


def test_two_weeks_of_use(browser: Browser, dashboards, tmp_path: Path):
    """The picture in the README: a week of use and the week before it (slower, less helpful)."""
    d = dashboards("--metrics", write_fortnight_log(tmp_path / "metrics.jsonl"))
    page = browser.open(d)
    assert text(page, "#ns-savings [data-role=chip]") == "→ flat"
    assert text(page, "#ns-outcomes [data-metric=helpful_rate] [data-role=chip]") == "↑ improving"
    assert text(page, "#ns-outcomes [data-metric=helpful_rate] [data-role=prior]") == "0%"
    assert text(page, "#latency [data-role=chip]") == "↑ improving"
    assert text(page, "#kpi-tokens") == fmt_int(2 * WEEK_TOTAL_SAVED)
    shot = screenshot(page, "dashboard-fortnight.png")
    browser.assert_loopback_only(d)
    if os.environ.get("CCE_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(shot, DOCS_SCREENSHOT)


def test_every_figure_is_the_clis(browser: Browser, dashboards, tmp_path: Path):
    """Issue #19: the headline said 199,988 / $0.60 while the layer total said 223,836 and `cce savings` $0.67.

    Every figure with a CLI counterpart must equal `cce savings --json` or `cce usage --json` for the same log.
    """
    log = write_week_log(tmp_path / "metrics.jsonl")
    d = dashboards("--metrics", log)
    page = browser.open(d)
    savings = cli_json("savings", "--json", "--metrics", log)
    usage = cli_json("usage", "--json", "--metrics", log)

    # tokens and dollars: the seven-layer ledger and its price, as `cce savings` prints them
    ledger = savings["savings_by_layer"]
    assert text(page, "#kpi-tokens") == fmt_int(ledger["total"]["saved_tokens"]) == fmt_int(WEEK_TOTAL_SAVED)
    assert text(page, "#kpi-cost") == "$" + savings["estimated_dollars_saved"] == "$0.67"
    assert savings["pricing_id"] in text(page, "#kpi-cost-foot")
    for layer in ("retrieval", "chunk_compression", "grammar", "total"):
        b = ledger[layer]
        assert text(page, f"[data-layer={layer}] .nums") == f"{fmt_int(b['saved_tokens'])} of " \
                                                           f"{fmt_int(b['baseline_tokens'])}", layer
    assert ledger["retrieval"]["saved_tokens"] == WEEK_RETRIEVAL_SAVED
    assert fmt_int(WEEK_RETRIEVAL_SAVED) in text(page, "#kpi-tokens-foot")

    # searches and the agent/person split, as `cce usage` prints them
    totals, by_source = usage["totals"], usage["by_source"]
    assert text(page, "#kpi-searches") == fmt_int(totals["searches"])
    assert text(page, "#kpi-searches-foot") == (f"{by_source['mcp']['searches']} by agents · "
                                                f"{by_source['cli']['searches']} by people")
    assert fmt_pct(totals["mean_savings_ratio"]) in text(page, "#kpi-tokens-foot")
    for source, label in (("mcp", "Agent (MCP)"), ("cli", "Human (CLI)")):
        row = by_source[source]
        assert cells(page, f"#sources-body tr[data-source={source}]") == [
            label, fmt_int(row["searches"]), fmt_int(row["tokens_saved"]), fmt_pct(row["mean_savings_ratio"]),
            fmt_score(row["mean_top_score"]), f"{row['mean_latency_ms']:.1f} ms"]
    assert cells(page, "#sources-body tr[data-source=all]") == [
        "All", fmt_int(totals["searches"]), fmt_int(totals["tokens_saved"]), fmt_pct(totals["mean_savings_ratio"]),
        fmt_score(totals["mean_top_score"]), ""]
    assert totals["tokens_saved"] == ledger["retrieval"]["saved_tokens"]  # the split adds up to the retrieval row

    # recent searches: the same rows, in the same order
    rows = page.locator("#recent-body tr")
    shown = [cells(page, f"#recent-body tr:nth-child({i + 1})") for i in range(rows.count())]
    assert [(r[1], r[4]) for r in shown] == [(u["query"], fmt_int(u["tokens_saved"])) for u in usage["recent"]]

    # the daily bars add up to the headline
    view = d.get_json("/api/dashboard")
    assert sum(day["saved_tokens"] for day in view["daily_savings"]) == ledger["total"]["saved_tokens"]
    assert page.locator("svg#chart-tokens rect.bar2").count() == 3
    screenshot(page, "dashboard-week.png")
    browser.assert_loopback_only(d)


def test_no_trend_is_claimed_without_a_prior_week(browser: Browser, dashboards, tmp_path: Path):
    """Issue #19: "↑ improving" showed beside "no searches in the prior 7 days"."""
    d = dashboards("--metrics", write_week_log(tmp_path / "metrics.jsonl"))
    page = browser.open(d)
    assert text(page, "#ns-savings [data-role=chip]") == "no comparison"
    assert text(page, "#ns-savings [data-role=note]") == "no searches in the prior 7 days"
    assert text(page, "#ns-savings [data-role=prior]") == "—"
    assert text(page, "#ns-savings [data-role=delta]") == ""
    for metric in ("helpful_rate", "zero_result_rate"):
        assert text(page, f"#ns-outcomes [data-metric={metric}] [data-role=chip]") == "no comparison"
    assert text(page, "#latency [data-role=chip]") == "no comparison"
    assert "improving" not in text(page, "#main") and "degrading" not in text(page, "#main")

    # what the outcomes panel says instead of "retrieval quality"
    assert text(page, "#ns-outcomes [data-metric=helpful_rate] [data-role=now]") == "50%"
    assert text(page, "#ns-outcomes [data-metric=helpful_rate] [data-role=count]") == "1 of 2 votes helpful"
    assert text(page, "#ns-outcomes [data-metric=zero_result_rate] [data-role=now]") == "25%"
    assert text(page, "#ns-outcomes [data-metric=zero_result_rate] [data-role=count]") == "2 of 8 searches"
    assert "quality" not in text(page, "#main").lower()
    browser.assert_loopback_only(d)


def test_latency_trend_per_day(browser: Browser, dashboards, tmp_path: Path):
    d = dashboards("--metrics", write_week_log(tmp_path / "metrics.jsonl"))
    page = browser.open(d)
    svg = page.locator("svg#chart-latency")
    assert svg.locator("path.l1").count() == 1 and svg.locator("path.l2").count() == 1
    assert svg.locator("circle.d1").count() == 3 and svg.locator("circle.d2").count() == 3
    tips = svg.locator("circle.d2 title").all_text_contents()
    assert [t.split(" · ", 1)[1] for t in tips] == [
        "p95 40.0 ms · p50 20.0 ms · 4 timed searches", "p95 35.0 ms · p50 25.0 ms · 2 timed searches",
        "p95 90.0 ms · p50 15.0 ms · 2 timed searches"]
    assert text(page, "#lat-p50") == "25.0 ms"
    assert text(page, "#lat-p95") == "90.0 ms"
    assert text(page, "#lat-prior") == "prior 7 days: no timed searches"
    browser.assert_loopback_only(d)


def test_zero_and_low_result_queries(browser: Browser, dashboards, tmp_path: Path):
    d = dashboards("--metrics", write_week_log(tmp_path / "metrics.jsonl"))
    page = browser.open(d)
    weak = d.get_json("/api/dashboard")["weak_queries"]

    def when(ts: str) -> str:
        return ts.replace("T", " ")[:16]

    assert cells(page, "#weak-zero-body tr") == ["zzz nothing", "2", when(weak["zero_result"][0]["last_ts"]), "agent"]
    assert cells(page, "#weak-low-body tr") == ["teardown appcontext", "2", "0.270",
                                                when(weak["low_score"][0]["last_ts"]), "agent, person"]
    assert text(page, "#weak-zero-hint") == "1 query · 2 searches returned no code"
    browser.assert_loopback_only(d)


def test_a_query_opens_to_what_it_returned(browser: Browser, dashboards, tmp_path: Path):
    d = dashboards("--metrics", write_week_log(tmp_path / "metrics.jsonl"))
    page = browser.open(d)

    page.click("#recent-body tr[data-id=a00000000001] button.qlink")
    detail = page.locator("#detail")
    detail.wait_for(state="visible")
    assert page.evaluate("location.hash") == "#search=a00000000001"
    assert text(page, "#detail-query") == "parse config"
    facts = dict(zip(page.locator("#detail-facts dt").all_inner_texts(),
                     page.locator("#detail-facts dd").all_inner_texts(), strict=True))
    assert facts["results"] == "5"
    assert facts["top score"] == "0.846"
    assert facts["mean score"] == "0.677"
    assert facts["tokens"] == "6,000 served of 60,000 (54,000 saved, 90%)"
    assert facts["latency"] == "10.0 ms"
    assert facts["by"] == "person (cli)"
    assert facts["asked for"] == "top 5 · graph on · hash embedder · family ranking"
    assert facts["feedback"] == "not helpful"
    assert text(page, "#detail-votes") == "not helpful — wrong file: the hit was the CLI parser"
    assert cells(page, "#detail-layers tr[data-layer=grammar]") == ["grammar", "2,000", "3,000"]
    assert text(page, "#detail-rerun") == "cce search 'parse config' --top-k 5"
    assert "does not record which chunks" in text(page, "#detail-note")
    screenshot(page, "dashboard-detail.png")

    page.click("#detail-close")
    detail.wait_for(state="hidden")
    assert page.evaluate("location.hash") == ""

    # from the zero-result list, the latest of the query's searches
    page.click("#weak-zero-body tr button.qlink")
    detail.wait_for(state="visible")
    assert text(page, "#detail-query") == "zzz nothing"
    assert page.evaluate("location.hash") == "#search=a00000000006"
    page.keyboard.press("Escape")
    detail.wait_for(state="hidden")

    # a link to one search opens it directly
    page.goto(d.base + "/#search=a00000000008", wait_until="load")
    page.wait_for_selector("body[data-ready='1']", timeout=15000)
    detail.wait_for(state="visible")
    assert text(page, "#detail-query") == "teardown appcontext"
    browser.assert_loopback_only(d)


def test_empty_state(browser: Browser, dashboards, tmp_path: Path):
    d = dashboards("--metrics", tmp_path / "none" / "metrics.jsonl")
    page = browser.open(d)
    assert page.locator("#empty").is_visible()
    assert "No metrics yet." in text(page, "#empty")
    assert page.locator("#main").is_hidden()
    screenshot(page, "dashboard-empty.png")
    browser.assert_loopback_only(d)


def test_query_text_is_never_markup(browser: Browser, dashboards, tmp_path: Path):
    log = tmp_path / "metrics.jsonl"
    evil = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'
    log.write_text(json.dumps({"schema": "cce.metrics/v1", "event": "search", "ts": "2026-07-01T10:00:00Z",
                               "id": "abcdefabcdef", "query": evil, "result_count": 1, "baseline_tokens": 10,
                               "served_tokens": 5, "tokens_saved": 5, "savings_ratio": 0.5, "top_score": 0.5,
                               "empty": False}) + "\n", encoding="utf-8")
    d = dashboards("--metrics", log)
    page = browser.open(d)
    assert text(page, "#recent-body tr[data-id=abcdefabcdef] td.q") == evil
    page.click("#recent-body tr[data-id=abcdefabcdef] button.qlink")
    page.locator("#detail").wait_for(state="visible")
    assert text(page, "#detail-query") == evil
    assert page.evaluate("window.pwned === undefined")
    assert page.locator("#recent-body img, #detail img, #detail script").count() == 0
    browser.assert_loopback_only(d)


def test_a_blended_search_shows_its_knowledge_sections(browser: Browser, dashboards, tmp_path: Path):
    log = tmp_path / "metrics.jsonl"
    base = {"schema": "cce.metrics/v1", "event": "search", "baseline_tokens": 10, "served_tokens": 5,
            "tokens_saved": 5, "savings_ratio": 0.5, "top_score": 0.5, "source": "mcp"}
    events = [{**base, "ts": "2026-07-01T10:00:00Z", "id": "b1b1b1b1b1b1", "query": "refund window",
               "result_count": 3, "empty": False, "knowledge_results": 2},
              {**base, "ts": "2026-07-01T11:00:00Z", "id": "c0c0c0c0c0c0", "query": "parse amount",
               "result_count": 3, "empty": False},
              {**base, "ts": "2026-07-01T12:00:00Z", "id": "k0k0k0k0k0k0", "query": "retention policy",
               "result_count": 0, "empty": True, "knowledge_results": 1}]
    log.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    d = dashboards("--metrics", log)
    page = browser.open(d)
    assert cells(page, "#recent-body tr[data-id=b1b1b1b1b1b1]")[3] == "3 +2 knowledge"
    assert cells(page, "#recent-body tr[data-id=c0c0c0c0c0c0]")[3] == "3"
    # Knowledge only: no code results, yet the search was not empty for the agent.
    assert cells(page, "#recent-body tr[data-id=k0k0k0k0k0k0]")[3] == "0 +1 knowledge"
    browser.assert_loopback_only(d)

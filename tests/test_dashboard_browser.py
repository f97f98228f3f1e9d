"""The dashboard page in a real browser: headless Debian Chromium driven by Playwright.

The page is served by the real ``cce dashboard`` subprocess on the metrics anchor; the test
checks every panel shows the anchor's numbers, the charts are drawn SVG, and the page
never talks to anything but 127.0.0.1. It leaves screenshots in ``test-artifacts/``;
with ``CCE_UPDATE_SCREENSHOT=1`` it also refreshes ``docs/dashboard.png``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from dashboard_proc import Dashboard, copy_anchor, rebase_to_today

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = REPO_ROOT / "test-artifacts"
DOCS_SCREENSHOT = REPO_ROOT / "docs" / "dashboard.png"
NOTE = "vs full-file baseline — not your real end-to-end agent cost"
DIRECTION = {"up": "↑ improving", "down": "↓ degrading", "flat": "→ flat"}



def _unavailable(reason: str) -> None:
    # CI sets CCE_REQUIRE_BROWSER=1: there a missing browser is a failure, not a quiet skip.
    if os.environ.get("CCE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (CCE_REQUIRE_BROWSER=1)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


try:
    from playwright import sync_api
except ImportError:
    _unavailable("playwright is not installed (pip install -r requirements.txt)")
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
        assert f"{dashboard.base}/api/metrics" in self.requests
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


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / name
    page.screenshot(path=str(out), full_page=True)
    assert out.stat().st_size > 10_000
    return out


def test_every_panel_shows_the_anchor(browser: Browser, dashboards, reference: Path, tmp_path: Path):
    d = dashboards("--metrics", copy_anchor(reference, tmp_path / "metrics.jsonl"))
    page = browser.open(d)
    api = d.get_json("/api/metrics")

    assert page.title() == "CCE Dashboard"
    assert page.locator("#empty").is_hidden()
    assert page.locator("#error").is_hidden()

    # headline numbers
    assert text(page, "#kpi-tokens") == "53,000"
    assert text(page, "#kpi-cost") == "$0.16"
    assert text(page, "#kpi-searches") == "4"
    assert text(page, "#kpi-helpful") == "50%"
    assert text(page, "#kpi-helpful-foot") == "1 helpful · 1 not helpful"
    assert text(page, "#kpi-searches-foot") == "0 by agents · 4 by people"

    # north-star panels: the windows follow the wall clock, so the page must agree with the API
    for panel, key in (("#ns-savings", "savings"), ("#ns-quality", "quality")):
        assert text(page, f"{panel} [data-role=chip]") == DIRECTION[api["north_star"][key]["direction"]]
        assert page.locator(f"{panel} table.cmp tbody tr").count() == (2 if key == "savings" else 3)
    sav = api["north_star"]["savings"]
    assert cells(page, "#ns-savings tbody tr:nth-child(1)") == [
        "searches", str(sav["current"]["searches"]), str(sav["prior"]["searches"])]

    # daily trend: SVG with a bar for every day that saved tokens, and the quality lines
    tokens_svg = page.locator("svg#chart-tokens")
    assert tokens_svg.locator("rect.bar").count() == 3  # Jun 25, Jul 1, Jul 2
    assert tokens_svg.locator("text").filter(has_text="Jul 1").count() == 1
    quality_svg = page.locator("svg#chart-quality")
    assert quality_svg.locator("path.l1").count() == 1 and quality_svg.locator("path.l2").count() == 1
    assert quality_svg.locator("circle.d1").count() == 3  # three days with searches
    assert quality_svg.locator("rect.fb-good").count() == 1 and quality_svg.locator("rect.fb-bad").count() == 1
    assert text(page, "#trend-range") == "2026-06-25 → 2026-07-03 (UTC)"

    # agents vs people
    assert cells(page, "#sources-body tr[data-source=mcp]") == ["Agent (MCP)", "0", "0", "—", "—", "—"]
    assert cells(page, "#sources-body tr[data-source=cli]") == ["Human (CLI)", "4", "53,000", "52.5%", "0.633",
                                                                "4.5 ms"]

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
    assert cells(page, "#ns-savings tbody tr:nth-child(2)") == ["tokens saved", "48,000", "5,000"]
    assert text(page, "#ns-quality [data-role=chip]") == "↑ improving"
    assert text(page, "#ns-quality [data-role=now]") == "0.750"
    assert text(page, "#ns-quality [data-role=prior]") == "0.400"
    assert text(page, "#ns-quality [data-role=delta]") == "+0.350"
    assert cells(page, "#ns-quality tbody tr:nth-child(1)") == ["empty-result rate", "33.3%", "0%"]
    assert cells(page, "#ns-quality tbody tr:nth-child(3)") == ["helpful rate", "50%", "—"]
    assert text(page, "#fresh-age") in ("4 days ago", "5 days ago")  # 3 days 15 hours before today's midnight

    shot = screenshot(page, "dashboard-current.png")
    browser.assert_loopback_only(d)
    if os.environ.get("CCE_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(shot, DOCS_SCREENSHOT)


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
    assert page.evaluate("window.pwned === undefined")
    assert page.locator("#recent-body img").count() == 0
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

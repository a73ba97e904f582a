"""The Metrics charts and the batch table in a real headless Chromium: 7.5's batch table fits the
main column (nothing cut off at its right) at a step where its positions have four digits, and 7.4's
Metrics tab draws its charts. Screenshots go to test-artifacts/ (look at them)."""

import pytest

from tests.browser_support import ARTIFACTS, open_app, require_browser, screenshot

sync_api = require_browser()

TABLE_WIDTHS = """() => [...document.querySelectorAll('.batch-view')].map((d) => [d.scrollWidth, d.clientWidth])"""


@pytest.mark.parametrize(("width", "height", "presentation"), [(1400, 900, False), (1280, 720, True)])
def test_the_chunked_prefill_batch_table_fits_the_main_column(browser, url, width, height, presentation):
    page = browser.new_page(viewport={"width": width, "height": height})
    query = "?lesson=7.5&predict=false&step=11" + ("&presentation=true" if presentation else "")
    open_app(page, url, query)  # L's 4,000-token prompt: 4-digit positions
    page.locator(".batch-view").first.scroll_into_view_if_needed()
    screenshot(page, f"batch-table-7.5-step-11-{width}")
    widths = page.evaluate(TABLE_WIDTHS)
    page.close()
    assert widths and all(scroll <= client for scroll, client in widths), widths


def test_the_thrash_lesson_s_metrics_charts_are_drawn(page, url):
    open_app(page, url, "?lesson=7.4&tab=Metrics&predict=false", ready=".js-plotly-plot")
    page.wait_for_timeout(2000)
    charts = page.locator(".js-plotly-plot")
    assert charts.count() >= 4  # over time, the KV pool, preemptions, the gaps
    ARTIFACTS.mkdir(exist_ok=True)
    for i in range(charts.count()):  # (the page scrolls inside Streamlit's main block: one shot per chart)
        charts.nth(i).scroll_into_view_if_needed()
        charts.nth(i).screenshot(path=str(ARTIFACTS / f"metrics-7.4-chart-{i}.png"))

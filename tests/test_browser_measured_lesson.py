"""The lesson "Will it run in time?" in a real headless Chromium, served with the fixture
measurements (CBL_MEASUREMENTS): the predictions graded from them, their verdicts with the
figures, and the chart of ns a token against the rows, at 1280 x 720 and at a phone's 390 px.

Skipped with a reason when Debian's Chromium is missing outside CI. Screenshots go to
test-artifacts/measured-*.png: look at them.
"""

from pathlib import Path

import pytest

from tests.browser_support import (
    VIEWPORT,
    check_answer,
    open_app,
    require_browser,
    screenshot,
    streamlit_server,
    wait_until_idle,
)

sync_api = require_browser()
FIXTURES = Path(__file__).parent / "fixtures" / "measurements"
LESSON = "?lesson=will-it-run-in-time"


@pytest.fixture(scope="module")
def measured_url():
    """An app server that reads the fixture measurements (the variable is read when it starts)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CBL_MEASUREMENTS", str(FIXTURES))
        with streamlit_server() as base:
            patch.delenv("CBL_MEASUREMENTS")  # (only the server keeps it)
            yield base


@pytest.fixture
def wide(browser):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    yield page
    page.close()


def test_the_measured_predictions_are_answered_and_the_chart_shows_after_them(wide, measured_url):
    page = wide
    open_app(page, measured_url, LESSON)
    page.get_by_text("with a batch of 8 rows: the loop engine or the vectorised one?").wait_for()
    screenshot(page, "measured-720-first-prediction")
    check_answer(page, option="the vectorised engine")
    wrong = page.locator("[data-testid='stAlert']").filter(has_text="Not quite: you said the vectorised engine")
    wrong.wait_for(timeout=30_000)
    assert "At 8 rows the loop engine took 1.0 µs a token" in wrong.inner_text()
    screenshot(page, "measured-720-wrong")
    check_answer(page, option="the vectorised engine")
    check_answer(page, option="ChecksFinishedInAList")
    page.get_by_text("How does ChecksFinishedInAList's cost a token grow").first.wait_for(timeout=30_000)
    screenshot(page, "measured-720-cause")
    check_answer(page, option="a token's cost grows in proportion to the requests")
    check_answer(page, number=2)
    page.get_by_text("This lesson: 4/5 right").wait_for(timeout=30_000)
    summary = page.locator("[data-testid='stExpander'] summary").filter(has_text="This machine's measurements")
    summary.click()  # (closed while the predictions were open; a click opens it)
    wait_until_idle(page)
    chart = page.locator("[data-testid='stPlotlyChart']")
    chart.wait_for(timeout=30_000)
    chart.scroll_into_view_if_needed()
    screenshot(page, "measured-720-chart")
    page.set_viewport_size({"width": 390, "height": 844})
    wait_until_idle(page)
    chart.scroll_into_view_if_needed()
    assert chart.bounding_box()["width"] <= 390
    screenshot(page, "measured-390-chart")
    page.set_viewport_size(VIEWPORT)


def test_the_first_prediction_fits_a_phone_s_width(browser, measured_url):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        open_app(page, measured_url, LESSON)
        question = page.get_by_text("with a batch of 8 rows: the loop engine or the vectorised one?")
        question.wait_for()
        question.scroll_into_view_if_needed()
        assert question.bounding_box()["width"] <= 390
        screenshot(page, "measured-390-first-prediction")
    finally:
        page.close()

"""The app in a real headless Chromium: every view renders, uploads and links work, errors show, no tracebacks.

Skipped with a reason when Debian's Chromium is missing outside CI; in CI (CI=true) a
missing browser is a failure, since `.ci/run` installs it. Screenshots go to
test-artifacts/ — look at them.
"""

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser_support import (
    STAGE,
    VIEWPORT,
    open_app,
    require_browser,
    screenshot,
    stage_step,
    wait_for_stage_step,
    wait_for_url,
)

sync_api = require_browser()


def no_exception(page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0


@pytest.mark.parametrize(
    ("name", "query"),
    [
        ("stop-sequences-presentation", "?scenario=stop-sequences&step=3&presentation=true"),
        ("padded-batch", "?scenario=padded-vs-ragged&step=3"),
        ("anyscale-64-slots", "?scenario=anyscale-cap128&step=150"),
        ("compare-tab", "?scenario=long-request-among-short&tab=Compare&predict=false"),
    ],
)
def test_views_render_without_exception(page, url, name, query):
    open_app(page, url, query, ready=STAGE if "tab=" not in query else ".js-plotly-plot")
    page.wait_for_timeout(1000)
    no_exception(page)
    screenshot(page, name)


def test_the_page_fetches_nothing_but_from_its_own_server(page, url):
    hosts: set[str] = set()
    page.on("request", lambda request: hosts.add(request.url.split("/")[2]))
    open_app(page, url, "?scenario=stop-sequences&predict=false")
    page.get_by_role("tab", name="Timeline").click()  # a Plotly chart too
    page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    page.wait_for_timeout(2000)  # (usage statistics would be sent by now)
    assert hosts == {url.split("/")[2]}  # no CDN script, font or tracker: everything ships with the app


def test_a_bad_upload_shows_an_error_not_a_traceback(page, url, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('title = "t"\n[[requests]]\nprompt = [1]\nmax_tokens = -2\n')
    open_app(page, url)
    page.locator("[data-testid='stSelectbox']").first.click()
    page.keyboard.type("Upload")  # the lesson list is long: filter it to the last option
    page.get_by_role("option", name="Upload a file (scenario, event log or trace)…").click()
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(bad))
    error = page.locator("[data-testid='stAlertContentError']")
    error.wait_for(timeout=30_000)
    assert "bad.toml: requests[0].max_tokens: must be an integer ≥ 0, got -2" in error.inner_text()
    no_exception(page)
    screenshot(page, "bad-upload")


def test_an_uploaded_event_log_replays_without_the_engine(page, url, tmp_path):
    from engine.lab.scenario import resolve_scenario
    from engine.lab.simulate import simulate

    log = tmp_path / "run.jsonl"
    log.write_text(simulate(resolve_scenario("cancellation")).to_jsonl())
    open_app(page, url)
    page.locator("[data-testid='stSelectbox']").first.click()
    page.keyboard.type("Upload")  # the lesson list is long: filter it to the last option
    page.get_by_role("option", name="Upload a file (scenario, event log or trace)…").click()
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(log))
    page.wait_for_selector(STAGE, timeout=60_000)
    page.locator("[data-action='next']").click()
    page.get_by_text("Request B is cancelled before it was admitted; its callback receives [2].").wait_for(
        timeout=15_000
    )
    page.get_by_text("Replaying run.jsonl as recorded: batch_size 2, continuous, ragged, stop token 0.").wait_for()
    no_exception(page)
    screenshot(page, "uploaded-log-replay")


def test_choosing_another_scenario_resets_the_step(page, url):
    open_app(page, url, "?step=2")
    assert stage_step(page) == 2
    lesson = "3.2 Multi-token stop sequences, across steps and overlapping"
    for attempt in range(3):  # right after a page load Streamlit can drop a choice; retry until it lands
        page.locator("[data-testid='stSelectbox']").first.click()
        page.get_by_role("option", name=lesson).click()
        try:
            page.get_by_role("heading", name=lesson).wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    wait_for_stage_step(page, 0)
    wait_for_url(page, "step=", present=False)
    wait_for_url(page, "lesson=stop-sequences")


def test_a_copied_link_keeps_settings_that_differ_from_the_scenario(page, url, browser):
    open_app(page, url, "?scenario=static-vs-continuous")
    for _ in range(3):  # right after a page load Streamlit can drop a click; retry until it lands
        page.get_by_text("continuous", exact=True).click()
        try:
            wait_for_url(page, "batching=continuous", timeout=5)
            break
        except AssertionError:
            continue
    wait_for_url(page, "batching=continuous")
    link = page.url
    fresh = browser.new_page(viewport=VIEWPORT)  # a new session: only the link carries the settings
    open_app(fresh, url, "?" + link.split("?", 1)[1] + "&step=1")
    fresh.locator("[data-action='next']").click()
    fresh.get_by_text("Request D is admitted into slot 0 from the queue.").wait_for(timeout=15_000)
    no_exception(fresh)
    fresh.close()

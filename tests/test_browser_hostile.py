"""Hostile input in a real browser: two tiny files and one heavy link each end in a message within
30 s, and the server they hit stays under 1.5 GB resident (read from /proc)."""

import time

from tests.browser_support import ARTIFACTS, VIEWPORT, launch, open_app, require_browser, streamlit_server
from tests.test_hostile_uploads import HEAVY_URL, TINY_JSONL, TINY_TOML

sync_api = require_browser()
MESSAGE_WITHIN_MS = 30_000
MAX_RESIDENT = 1.5 * 2**30


def upload(page, path) -> None:
    page.locator("[data-testid='stSelectbox']").first.click()
    page.keyboard.type("Upload")  # the lesson list is long: filter it to the last option
    page.get_by_role("option", name="Upload a file (scenario, event log or trace)…").click()
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(path))


def test_tiny_files_and_a_heavy_link_end_in_messages_and_the_server_stays_small(tmp_path):
    toml, jsonl = tmp_path / "forever.toml", tmp_path / "far.jsonl"
    toml.write_bytes(TINY_TOML)
    jsonl.write_bytes(TINY_JSONL)
    query = "?" + "&".join(f"{key}={value}" for key, value in HEAVY_URL.items())
    with streamlit_server() as server, sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport=VIEWPORT)
        open_app(page, server)

        upload(page, toml)
        error = page.locator("[data-testid='stAlertContentError']")
        error.wait_for(timeout=MESSAGE_WITHIN_MS)
        assert "requests[0].max_tokens: 1,000,000,000,000 lets the run generate up to" in error.inner_text()

        upload(page, jsonl)
        warning = page.locator("[data-testid='stAlertContentWarning']")
        warning.wait_for(timeout=MESSAGE_WITHIN_MS)
        assert "1 of its 1 requests were never delivered" in warning.inner_text()

        started = time.monotonic()
        page.goto(f"{server}/{query}")
        page.locator("[data-testid='stAlertContentError']").wait_for(timeout=MESSAGE_WITHIN_MS)
        assert (
            "the limit is 2,000,000 prompt tokens per run"
            in page.locator("[data-testid='stAlertContentError']").inner_text()
        )
        assert time.monotonic() - started < MESSAGE_WITHIN_MS / 1000
        assert page.locator("[data-testid='stException']").count() == 0
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "heavy-link-refused.png"))
        peak = server.peak_resident_bytes()
        print(f"server peak resident: {peak / 2**20:.0f} MiB")
        assert peak < MAX_RESIDENT
        browser.close()

"""Fixtures shared by the browser tests: one app server per module, one Chromium, a fresh page per test.

The whole suite keeps its runs in a run cache folder of its own (cblab/ui/runs/run_cache.py), which the
app servers it starts inherit: never the user's, and empty at the start of every session. No
next lesson is made ahead (cblab/ui/frame/prefetch.py) but where tests/test_prefetch.py asks for it.
"""

import os
import tempfile

import pytest

from tests.browser_support import VIEWPORT, launch, streamlit_server

os.environ["CBL_RUN_CACHE"] = tempfile.mkdtemp(prefix="cbl-test-runs-")
os.environ["CBL_PREFETCH"] = "off"  # no lesson made ahead in the background (tests count runs); test_prefetch.py


@pytest.fixture(scope="module")
def url():
    """The base URL of the app, served for the module's tests."""
    with streamlit_server() as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport=VIEWPORT)
    yield page
    page.close()

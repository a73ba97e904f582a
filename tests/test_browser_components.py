"""The components' inline forms (used should Streamlit refuse their declaration) are modules Chromium loads:
one default export, a function, and nothing they import."""

from cblab.ui.frame.page import PAGE
from cblab.ui.stage.overview_chart import OVERVIEW
from cblab.ui.stage.stage import STAGE
from tests.browser_support import launch, require_browser

sync_api = require_browser()
LOAD = """async (code) => {
  const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
  const module = await import(url);
  return [Object.keys(module), typeof module.default];
}"""


def test_the_inline_forms_load_as_modules():
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        page.set_content("<!doctype html><title>inline</title>")
        for component in (STAGE, PAGE, OVERVIEW):
            assert page.evaluate(LOAD, component.inline_js()) == [["default"], "function"], component.key
        browser.close()

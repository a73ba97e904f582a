"""First paint: one learner opens a lesson in headless Chromium; seconds to the stage's painted grid.

Measured in the page (performance.now(), whose origin is the navigation's start): from the
navigation to the animation frame after the stage's grid first has a coloured cell, so
Playwright's own latency is not counted. Each sample is a fresh page (a new session) on a
server that already holds the lesson's run (warm): what a learner waits for when the class
has started. `floor_paints` measures the same for a page that is only a title: what any
Streamlit app costs to start here, before the lab draws anything.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.browser_support import FIND_STAGE, VIEWPORT, launch, streamlit_server

FLOOR_APP = 'import streamlit as st\n\nst.title("floor")\n'
PAINTED = f"""([limit, selector]) => new Promise((done, fail) => {{
  const look = () => {{
    const root = selector ? document : ({FIND_STAGE})();
    if (root && root.querySelector(selector || ".grid .cell[class*=' k']")) {{
      requestAnimationFrame(() => done(performance.now() / 1000));
      return;
    }}
    if (performance.now() > limit * 1000) fail(new Error("nothing painted after " + limit + " s"));
    else setTimeout(look, 10);
  }};
  look();
}})"""


def paints_in(browser, url: str, query: str, repeats: int = 3, limit: float = 120.0, selector: str | None = None):
    """Seconds to the first painted grid (or `selector`), `repeats` fresh pages of `url`/?`query` in `browser`."""
    paints = []
    for _ in range(repeats):
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{url}/?{query}", wait_until="commit")
        paints.append(page.evaluate(PAINTED, [limit, selector]))
        page.close()
    return paints


def first_paints(url: str, queries: list[str], repeats: int = 3, limit: float = 120.0) -> dict[str, list[float]]:
    """`paints_in` a Chromium of its own, for each query (`lesson=1.1`)."""
    with sync_playwright() as playwright:
        browser = launch(playwright)
        paints = {query: paints_in(browser, url, query, repeats, limit) for query in queries}
        browser.close()
    return paints


def floor_paints(browser=None, repeats: int = 3, limit: float = 120.0) -> list[float]:
    """Seconds to the painted title of a page that is only `st.title` (its server warmed by one
    visit), in `browser` or a Chromium of its own."""
    with tempfile.TemporaryDirectory(prefix="cbl-floor-") as folder:
        app = Path(folder) / "floor.py"
        app.write_text(FLOOR_APP)
        with streamlit_server(app=app) as url:
            if browser is not None:
                return paints_in(browser, url, "", repeats + 1, limit, selector="h1")[1:]
            with sync_playwright() as playwright:
                own = launch(playwright)
                paints = paints_in(own, url, "", repeats + 1, limit, selector="h1")[1:]
                own.close()
            return paints

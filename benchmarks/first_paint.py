"""First paint: one learner opens a lesson in headless Chromium; seconds to the stage's painted grid.

Measured in the page (performance.now(), whose origin is the navigation's start): from the
navigation to the animation frame after the stage's grid first has a coloured cell, so
Playwright's own latency is not counted. Each sample is a fresh page (a new session) on a
server that already holds the lesson's run (warm): what a learner waits for when the class
has started.
"""

from __future__ import annotations

from playwright.sync_api import sync_playwright

from tests.browser_support import FIND_STAGE, VIEWPORT, launch

PAINTED = f"""(limit) => new Promise((done, fail) => {{
  const look = () => {{
    const root = ({FIND_STAGE})();
    if (root && root.querySelector(".grid .cell[class*=' k']")) {{
      requestAnimationFrame(() => done(performance.now() / 1000));
      return;
    }}
    if (performance.now() > limit * 1000) fail(new Error("no stage grid after " + limit + " s"));
    else setTimeout(look, 10);
  }};
  look();
}})"""


def first_paints(url: str, queries: list[str], repeats: int = 3, limit: float = 120.0) -> dict[str, list[float]]:
    """Seconds to the first painted grid, `repeats` fresh pages per query (`lesson=1.1`)."""
    paints: dict[str, list[float]] = {}
    with sync_playwright() as playwright:
        browser = launch(playwright)
        for query in queries:
            for _ in range(repeats):
                page = browser.new_page(viewport=VIEWPORT)
                page.goto(f"{url}/?{query}", wait_until="commit")
                paints.setdefault(query, []).append(page.evaluate(PAINTED, limit))
                page.close()
        browser.close()
    return paints

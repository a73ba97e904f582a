"""Browser-measured time from a control change to the redrawn grid (64 slots, ~300 steps).

    python -m benchmarks.browser_latency [--repeats 5]

Serves the app on localhost, opens the Poisson-arrivals scenario at batch size 64 (301
steps) in headless Chromium, and times, from the click to the grid figure holding the
new data: (a) Prev, a step change served from the cached run (the fragment redraws);
(b) a batch-size change, which re-runs the engine (a full rerun; first time uncached).
Medians of `--repeats`; all figures from one process, side by side.
"""

from __future__ import annotations

import argparse
import statistics
import time

from playwright.sync_api import sync_playwright

from tests.browser_support import VIEWPORT, launch, open_app, streamlit_server

SIGNATURE = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  if (!gd || !gd._fullData || !gd._fullData.length) return '';
  const z = gd._fullData[0].z;
  return JSON.stringify([z.length, z[0].length, gd._fullData[0].x[0]]);
}"""


def timed_change(page, act) -> float:
    before = page.evaluate(SIGNATURE)
    start = time.perf_counter()
    act()
    page.wait_for_function(f"(before) => ({SIGNATURE})() !== before", arg=before, timeout=120_000, polling=10)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with streamlit_server() as url, sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport=VIEWPORT)
        open_app(page, url, "?scenario=poisson-arrivals&batch_size=64&step=300")
        time.sleep(2)
        step_changes = [
            timed_change(page, lambda: page.get_by_role("button", name="Prev").click()) for _ in range(args.repeats)
        ]
        size_input = page.locator("input[aria-label='Batch size (slots)']")
        size_changes = []
        for i in range(args.repeats):
            size_input.fill(str(63 - i))
            size_changes.append(timed_change(page, lambda: size_input.press("Enter")))
        browser.close()
    print(f"64-slot, 301-step run, median of {args.repeats}, seconds from click to redrawn grid:")
    print(f"  step change (Prev, cached run):           {statistics.median(step_changes):.3f} s")
    print(f"  batch-size change (new engine run):       {statistics.median(size_changes):.3f} s")


if __name__ == "__main__":
    main()

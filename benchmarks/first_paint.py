"""First paint: one learner opens a lesson in headless Chromium; seconds to the stage's painted grid.

    python -m benchmarks.first_paint --app before=/tmp/main/app.py --app after=app.py [--lessons 1.1,8.4] [--rounds 12]

Measured in the page (performance.now(), whose origin is the navigation's start): from the
navigation to the animation frame after the stage's grid first has a coloured cell, so
Playwright's own latency is not counted. Each sample is a fresh page (a new session) on a
server that already holds the lesson's run (warm): what a learner waits for when the class
has started. `floor_paints` measures the same for a page that is only a title: what any
Streamlit app costs to start here, before the lab draws anything.

Run as a script, it paints in turn (`interleaved`): each round a fresh Chromium opens one page of
each tree's lessons and one of the floor, the order turned by one each round, so a machine whose
load comes and goes weighs on every side alike; it prints each one's median over the floor's.
`benchmarks/classroom.py` paints each lesson three times, after its class; this is for telling
two trees apart when the difference is smaller than that spread.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
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


def interleaved(apps: dict[str, Path], lessons: list[str], rounds: int, limit: float = 120.0) -> dict[str, list[float]]:
    """Seconds to the first paint of each (tree, lesson) and of the floor ("floor"), one page of each a round
    in a fresh Chromium, the order turned by one each round; each server warmed by one page first."""
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory(prefix="cbl-floor-") as folder:
        floor = Path(folder) / "floor.py"
        floor.write_text(FLOOR_APP)
        pages = {"floor": (stack.enter_context(streamlit_server(app=floor)), "", "h1")}
        for name, app in apps.items():
            url = stack.enter_context(streamlit_server(app=app))
            pages |= {f"{lesson} {name}": (url, f"lesson={lesson}", None) for lesson in lessons}
        playwright = stack.enter_context(sync_playwright())
        browser = launch(playwright)
        for url, query, selector in pages.values():
            paints_in(browser, url, query, 1, limit, selector)
        browser.close()
        names, paints = list(pages), {name: [] for name in pages}
        for n in range(rounds):
            browser = launch(playwright)
            for name in names[n % len(names) :] + names[: n % len(names)]:
                url, query, selector = pages[name]
                paints[name] += paints_in(browser, url, query, 1, limit, selector)
            browser.close()
    return paints


def loaded() -> str:
    """The load average and the time, as a run's first and last lines say them."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}, {time.strftime('%d %B %H:%M UTC', time.gmtime())}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app", action="append", required=True, help="NAME=PATH: an app.py (repeatable)")
    parser.add_argument("--lessons", default="1.1,8.4", help="comma-separated (1.1,8.4)")
    parser.add_argument("--rounds", type=int, default=12, help="pages of each (12)")
    args = parser.parse_args()
    apps = {name: Path(path).resolve() for name, path in (spec.split("=", 1) for spec in args.app)}
    print(loaded())
    paints = interleaved(apps, args.lessons.split(","), args.rounds)
    floor = statistics.median(paints["floor"])
    for name, seconds in paints.items():
        median = statistics.median(seconds)
        each = " ".join(f"{s:.2f}" for s in seconds)
        print(f"{name:16} median {median:5.2f} s = floor {floor:.2f} {median - floor:+5.2f} s   {each}")
    print(loaded())


if __name__ == "__main__":
    main()

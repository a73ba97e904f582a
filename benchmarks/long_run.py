"""A long run's first view on a warm server, and a window moved, measured in headless Chromium.

    python -m benchmarks.long_run [--repeats 5] [--scenario tests/fixtures/long-run.toml]
    python -m benchmarks.long_run --scenario scenarios/traces/trace-azure-code.toml   # a published trace

A run is long when `engine.lab.limits.is_long` says so: the Grid tab shows its overview and the stage
plays a window of it (cblab/ui/stage/long_run.py). The scenario (by default 12,000 requests, 7,188 steps,
686,514 events) is uploaded, as no lesson of the course is long yet:

1. in Python, what the server makes once per run (the simulation, the replay and metrics, the outline
   of its frames) and once per window (its frames, the first one paying for the run's step counts);
2. cold: a first session uploads it, and the server makes the run (seconds from the upload to the
   stage's first painted cell);
3. warm: `repeats` fresh sessions (new pages) upload the same file, whose run the server holds: seconds
   from the navigation, and from the upload, to the first view: the stage's first coloured cell and
   the overview's lines both painted (measured in the page: performance.now(), at the animation frame
   after both are there);
4. a window moved: a click on the overview a tenth of the way along (the window, 400 steps, centred
   there and made for the first time) to the stage painting its first step;
5. beside them, on the same server and browser: lesson 1.1's first paint, and Streamlit's floor (a
   page that is only `st.title`, `benchmarks/first_paint.py`).

Each figure is printed with the time and the load average (`uptime`'s first figure).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.first_paint import floor_paints, paints_in
from engine.analysis.frames import outline
from engine.analysis.metrics import request_metrics, step_metrics
from engine.analysis.replay import Replay
from engine.analysis.window_frames import window_frames
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate
from tests.browser_support import FIND_STAGE, VIEWPORT, launch, streamlit_server

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "long-run.toml"
UPLOADER = "[data-testid='stFileUploaderDropzoneInput']"
# In-page: the time at the animation frame after the stage has a coloured cell (or, at another step than `step`,
# any cell) and the overview has its lines (both components live in shadow roots).
VIEWED = f"""([limit, step]) => new Promise((done, fail) => {{
  const look = () => {{
    const root = ({FIND_STAGE})();
    // (a moved window may open on an idle stretch: any cell then, not a coloured one)
    const cell = root && root.querySelector(step === null ? ".grid .cell[class*=' k']" : ".grid .cell");
    const hosts = [...document.querySelectorAll("*")];
    const lines = hosts.some((host) => host.shadowRoot?.querySelector(".overview path.line"));
    if (cell && lines && (step === null || Number(root.dataset.stageStep) !== step)) {{
      requestAnimationFrame(() => done(performance.now() / 1000));
      return;
    }}
    if (performance.now() > limit * 1000) fail(new Error("no view after " + limit + " s"));
    else setTimeout(look, 10);
  }};
  look();
}})"""


def python_parts(path: Path) -> dict[str, float]:
    """Seconds of each part the server makes: once per run, then per window."""
    out, started = {}, time.perf_counter()
    log = simulate(resolve_scenario(str(path)))
    out["simulate"], started = time.perf_counter() - started, time.perf_counter()
    replay = Replay(log)
    request_metrics(log, steps=step_metrics(log))
    out["replay and metrics"], started = time.perf_counter() - started, time.perf_counter()
    frames = outline(replay)
    out["outline"], started = time.perf_counter() - started, time.perf_counter()
    window_frames(replay, frames, 3000, 3399)
    out["first window (400 steps)"], started = time.perf_counter() - started, time.perf_counter()
    window_frames(replay, frames, 5000, 5399)
    out["another window (400 steps)"] = time.perf_counter() - started
    return out


def view(browser, url: str, path: Path, limit: float = 300.0) -> tuple[float, float]:
    """A fresh session uploads `path`: seconds from the navigation and from the upload to the first view."""
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(f"{url}/?scenario=upload", wait_until="commit")
    page.wait_for_selector(UPLOADER, state="attached", timeout=limit * 1000)
    uploaded = page.evaluate("performance.now() / 1000")
    page.locator(UPLOADER).set_input_files(str(path))
    viewed = page.evaluate(VIEWED, [limit, None])
    return viewed, viewed - uploaded, page


def moved(page, limit: float = 120.0) -> float:
    """Seconds from a click on the overview, a tenth of the way along (the window, 400 steps, centred there,
    made for the first time), to the stage painting the window's first step."""
    before = int(page.locator("[data-stage-step]").first.get_attribute("data-stage-step"))
    panel = page.locator(".overview svg").first
    panel.scroll_into_view_if_needed()
    box = panel.bounding_box()
    started = page.evaluate("performance.now() / 1000")
    page.mouse.click(box["x"] + box["width"] * 0.1, box["y"] + box["height"] / 2)
    return page.evaluate(VIEWED, [limit, before]) - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--scenario", type=Path, default=FIXTURE)
    args = parser.parse_args()
    stamp = lambda: f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load {os.getloadavg()[0]:.2f}"  # noqa: E731
    print(f"{args.scenario.name}, in Python ({stamp()}):")
    for part, seconds in python_parts(args.scenario).items():
        print(f"  {part:28} {seconds:6.2f} s")
    with streamlit_server() as url, sync_playwright() as playwright:
        browser = launch(playwright)
        _, cold, page = view(browser, url, args.scenario)
        page.close()
        print(f"cold (the server makes the run): {cold:.2f} s from the upload to the first view ({stamp()})")
        warm, after_upload = [], []
        for _ in range(args.repeats):
            from_navigation, from_upload, page = view(browser, url, args.scenario)
            warm.append(from_navigation)
            after_upload.append(from_upload)
            last = page
            if len(warm) < args.repeats:
                page.close()
        print(
            f"warm, {args.repeats} fresh sessions: first view {statistics.median(warm):.2f} s from the navigation "
            f"(worst {max(warm):.2f}), {statistics.median(after_upload):.2f} s from the upload ({stamp()})"
        )
        print(f"a window moved (a click on the overview, 400 new steps): {moved(last):.2f} s ({stamp()})")
        lesson = statistics.median(paints_in(browser, url, "lesson=1.1", args.repeats))
        floor = statistics.median(floor_paints(browser, args.repeats))
        print(f"beside them: lesson 1.1's first paint {lesson:.2f} s, Streamlit's floor {floor:.2f} s ({stamp()})")
        browser.close()


if __name__ == "__main__":
    main()

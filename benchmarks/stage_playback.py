"""The stage's playback, measured in headless Chromium (all figures from one run, side by side).

    python -m benchmarks.stage_playback [--seconds 4]

Serves the app on localhost and measures, in the page itself (requestAnimationFrame and
performance.now, so Playwright's own latency is not counted):

1. first paint: from the navigation to the default scenario's stage's first painted cell
   (`benchmarks/first_paint.py`, median of 3 fresh sessions), beside Streamlit's own floor: the
   same wait for the title of a page that is only `st.title` (most of the first paint is
   Streamlit starting up);
2. payload: the largest websocket message while the 64-slot anyscale-cap1536
   run opens (its frames), and the JSON size of those frames;
3. playback at 30 and 60 steps/s on part2-slot-refill (4 steps: played over and over) and
   anyscale-cap1536 (64 slots): the steps shown per second, whether the shown step ever
   went backwards, and the animation frames at which the grid had no coloured cell;
4. a step change: from a → key press to the redrawn grid (the handler's time, and the
   time to the next animation frame, when the browser paints), median and worst of 40;
5. a jump: the slider moved to 40 far-apart steps of anyscale-cap1536, whose KV pool (1,293
   blocks) is rebuilt from a checkpoint at each, handler and next frame as in 4;
6. the frames' encoding time (Replay and `encode`, in Python, without the simulation).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from playwright.sync_api import sync_playwright

from benchmarks.first_paint import floor_paints, paints_in
from engine.analysis.frames import encode, for_the_wire
from engine.analysis.replay import Replay
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate
from tests.browser_support import FIND_STAGE, launch, open_app, streamlit_server

VIEWPORT = {"width": 1600, "height": 1000}

PLAY = f"""async ([speed, ms, loop]) => {{
  const root = ({FIND_STAGE})();
  const select = root.querySelector("[data-action='speed']");
  select.value = String(speed);
  const play = root.querySelector("[data-action='play']");
  const steps = [], blank = [];
  let advanced = 0, backwards = 0, last = Number(root.dataset.stageStep);
  play.click();
  const start = performance.now();
  await new Promise((done) => {{
    const tick = () => {{
      const step = Number(root.dataset.stageStep);
      if (step < last) {{ if (step !== 0 || !loop) backwards += 1; }} else advanced += step - last;
      last = step;
      steps.push(step);
      if (!root.querySelector(".grid .cell[class*=' k']")) blank.push(step);
      if (loop && play.textContent.includes("Play")) play.click();  // at the end: play again (it starts over)
      if (performance.now() - start < ms) requestAnimationFrame(tick); else done();
    }};
    requestAnimationFrame(tick);
  }});
  const elapsed = (performance.now() - start) / 1000;
  if (play.textContent.includes("Pause")) play.click();
  return {{ advanced, elapsed, backwards, blank: blank.length, frames: steps.length }};
}}"""

STEP_CHANGE = f"""async (n) => {{
  const root = ({FIND_STAGE})();
  const handler = [], painted = [];
  for (let i = 0; i < n; i++) {{
    const key = i % 2 ? "ArrowLeft" : "ArrowRight";
    const start = performance.now();
    document.dispatchEvent(new KeyboardEvent("keydown", {{ key, bubbles: true }}));
    handler.push(performance.now() - start);
    await new Promise((done) => requestAnimationFrame(() => {{ painted.push(performance.now() - start); done(); }}));
    await new Promise((done) => setTimeout(done, 30));
  }}
  return {{ handler, painted }};
}}"""


JUMP = f"""async (n) => {{
  const root = ({FIND_STAGE})(), slider = root.querySelector("input[type='range']");
  const handler = [], painted = [], last = Number(slider.max);
  for (let i = 0; i < n; i++) {{
    slider.value = String(Math.floor(((i * 7919) % n) / n * last));  // far apart, back and forth
    const start = performance.now();
    slider.dispatchEvent(new Event("input", {{ bubbles: true }}));
    handler.push(performance.now() - start);
    await new Promise((done) => requestAnimationFrame(() => {{ painted.push(performance.now() - start); done(); }}));
    await new Promise((done) => setTimeout(done, 30));
  }}
  return {{ handler, painted }};
}}"""


def playback(page, url: str, query: str, speed: float, seconds: float, loop: bool) -> dict:
    open_app(page, url, query)
    return page.evaluate(PLAY, [speed, seconds * 1000, loop])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="how long each playback is sampled")
    args = parser.parse_args()
    log = simulate(resolve_scenario("anyscale-cap1536"))
    start = time.perf_counter()
    frames = encode(Replay(log))
    encoding = time.perf_counter() - start
    with sync_playwright() as playwright, streamlit_server() as url:
        browser = launch(playwright)
        floor = floor_paints(browser)
        paints = paints_in(browser, url, "", 4)[1:]  # (the first: the server's first run, not a user's paint)

        page = browser.new_page(viewport=VIEWPORT)
        sizes: list[int] = []
        page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: sizes.append(len(frame))))
        open_app(page, url, "?scenario=anyscale-cap1536")
        payload = max(sizes)
        page.close()

        played = {}
        for name, query, loop in (
            ("part2-slot-refill", "?scenario=part2-slot-refill", True),
            ("anyscale-cap1536", "?scenario=anyscale-cap1536", False),
        ):
            for speed in (30, 60):
                page = browser.new_page(viewport=VIEWPORT)
                played[name, speed] = playback(page, url, query, speed, args.seconds, loop)
                page.close()

        page = browser.new_page(viewport=VIEWPORT)
        open_app(page, url, "?scenario=anyscale-cap1536&step=1000")
        changes = page.evaluate(STEP_CHANGE, 40)
        jumps = page.evaluate(JUMP, 40)
        browser.close()

    print(
        f"first grid paint, default scenario: median {statistics.median(paints):.2f} s of 3; a title-only "
        f"Streamlit page: median {statistics.median(floor):.2f} s"
    )
    print(
        f"payload, anyscale-cap1536 ({frames['steps']:,} steps, 64 slots): largest websocket message "
        f"{payload / 1e6:.2f} MB; frames as sent, in JSON {len(json.dumps(for_the_wire(frames))) / 1e6:.2f} MB "
        f"(the KV pool's ops {len(json.dumps(frames.get('kv'))) / 1e6:.2f} MB); encoded in {encoding:.2f} s"
    )
    for (name, speed), r in played.items():
        rate = r["advanced"] / r["elapsed"]
        print(
            f"{name:18} at {speed:2} steps/s: {rate:5.1f} steps/s shown over {r['elapsed']:.1f} s "
            f"({r['frames']} animation frames), backwards {r['backwards']}, blank frames {r['blank']}"
        )
    for what, timed in (("step change (← / →, 64 slots)", changes), ("jump (slider, 1,293 KV blocks)", jumps)):
        handler, painted = timed["handler"], timed["painted"]
        print(
            f"{what}: handler median {statistics.median(handler):.1f} ms, worst "
            f"{max(handler):.1f} ms; to the next frame median {statistics.median(painted):.1f} ms, "
            f"worst {max(painted):.1f} ms"
        )


if __name__ == "__main__":
    main()

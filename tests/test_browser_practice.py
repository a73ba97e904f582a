"""Spot the bug in a real headless Chromium: every bug's two grids share one plot area and x range,
the first difference is outlined on its cell in both, and "spot it first" (on by default) asks
before it tells.

Skipped with a reason when Debian's Chromium is missing outside CI (in CI it is a failure).
Screenshots go to test-artifacts/practice-*.png: look at them.
"""

import time

import pytest

from cblab.ui.practice.pair_view import INSET, OUTLINE
from engine.practice.zoo import BUGS
from tests.browser_support import require_browser, screenshot, wait_until_idle

sync_api = require_browser()

TALL = {"width": 1400, "height": 1800}  # both grids and their narration in one screenshot
SHOWN = {  # bug -> (first difference (step, slot), steps on the shared x axis, slots)
    "crossed-results": ((1, 0), 4, 2),
    "leaky-stop-state": ((1, 0), 4, 1),
    "trimmed-stop-token": ((0, 0), 3, 4),
    "idle-freed-slot": ((1, 0), 5, 2),
    "naive-stop-matcher": ((3, 0), 10, 1),
    "max-tokens-counts-prompt": ((0, 0), 3, 2),
    "static-batching": ((1, 0), 5, 2),
    "preempted-to-the-back": ((2, 0), 5, 2),
    "leaked-blocks": ((1, 0), 3, 2),
    "oldest-preempted": ((1, 0), 5, 2),
    "forgetful-recompute": ((1, 1), 6, 2),
    "tail-sized-to-shortest-stop": ((1, 0), 3, 1),
    "tail-not-reset-after-stop-sequence": ((2, 0), 6, 1),
}
MIN_ROW_PIXELS = 30  # a slot's row is at least this tall in both grids: a legend never squeezes the plot

# Per plot: its x range, plot area, where steps 0..9 fall in page pixels, and the outline's corners.
GRIDS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
    const layout = plot._fullLayout, box = plot.getBoundingClientRect();
    const outline = (layout.shapes || []).filter(shape => shape.name === NAME);
    return {
        range: layout.xaxis.range,
        size: [layout._size.w, layout._size.h],
        steps: [...Array(10).keys()].map(k => Math.round(box.left + layout._size.l + layout.xaxis.l2p(k))),
        outline: outline.map(shape => [shape.x0, shape.x1, shape.y0, shape.y1]),
    };
})""".replace("NAME", repr(OUTLINE))


@pytest.fixture
def page(browser, url):
    page = browser.new_page(viewport=TALL)
    page.goto(f"{url}/?tab=Practice")
    page.wait_for_selector(".js-plotly-plot", timeout=60_000)
    wait_until_idle(page)
    yield page
    page.close()


def choose_bug(page, name: str) -> None:
    page.locator("[data-testid='stSelectbox']").filter(has_text="A classic mistake").click()
    page.get_by_role("option", name=BUGS[name].title, exact=True).click()
    wait_until_idle(page)


def grids_when(page, ready, timeout: float = 30.0) -> list[dict]:
    """The two grids' geometry once `ready(grids)` holds (a rerun redraws them one at a time)."""
    deadline = time.monotonic() + timeout
    while True:
        grids = page.evaluate(GRIDS_JS)
        if len(grids) == 2 and ready(grids):
            wait_until_idle(page)
            return page.evaluate(GRIDS_JS)
        if time.monotonic() > deadline:
            raise AssertionError(f"the grids never got ready: {grids}")
        time.sleep(0.1)


def cell(step: int, slot: int) -> list[float]:
    return [step - INSET, step + INSET, slot - INSET, slot + INSET]


def no_exception(page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0


def guess_and_check(page, step: int) -> None:
    """Type `step` as the guess (the slot stays 0) and press Check."""
    guess = page.get_by_label("Your guess: step")
    guess.fill(str(step))
    guess.press("Enter")
    wait_until_idle(page)
    page.get_by_role("button", name="Check", exact=True).click()  # (not a lesson's "Check prediction")


@pytest.mark.parametrize("name", list(SHOWN))
def test_both_grids_share_one_plot_area_and_outline_the_same_cell(page, name):
    (step, slot), steps, slots = SHOWN[name]
    page.get_by_text("Spot it first", exact=True).click()  # on by default: told at once instead
    wait_until_idle(page)
    choose_bug(page, name)
    page.get_by_text(BUGS[name].why).wait_for(timeout=30_000)
    page.get_by_text(f"First difference (outlined in red): step {step}, slot {slot}.").wait_for(timeout=30_000)
    left, right = grids_when(page, lambda g: all(side["outline"] == [cell(step, slot)] for side in g))
    assert left["range"] == right["range"] == [-0.5, steps - 0.5]
    assert left["size"] == right["size"] and left["size"][1] >= MIN_ROW_PIXELS * slots
    offset = right["steps"][0] - left["steps"][0]  # the right grid starts half a page further on
    assert [x + offset for x in left["steps"]] == right["steps"]  # so step k is at the same x in both
    no_exception(page)
    screenshot(page, f"practice-{name}")


def test_spot_it_first_asks_then_says_close_then_right_for_another_bug(page):
    choose_bug(page, "leaky-stop-state")  # asked first by default: nothing to switch on
    page.get_by_text("Spot it first: where does the run with the mistake").wait_for(timeout=30_000)
    grids_when(page, lambda g: all(side["outline"] == [] for side in g))
    assert page.get_by_text("What goes wrong.").count() == 0
    assert page.get_by_text("First difference (outlined in red)").count() == 0
    assert page.locator("input[aria-label='Step']").get_attribute("value") == "3"  # the whole run, not the answer
    screenshot(page, "practice-spot-question")

    guess_and_check(page, 2)
    close = "You said step 2, slot 0. Close: same slot, one step late; it is step 1, slot 0."
    page.get_by_text(close).wait_for(timeout=30_000)
    page.get_by_text(BUGS["leaky-stop-state"].why).wait_for(timeout=30_000)
    grids_when(page, lambda g: all(side["outline"] == [cell(1, 0)] for side in g))
    assert page.locator("input[aria-label='Step']").get_attribute("value") == "1"
    screenshot(page, "practice-spot-close")

    choose_bug(page, "naive-stop-matcher")
    page.get_by_text("Spot it first: where does the run with the mistake").wait_for(timeout=30_000)
    assert page.get_by_text(close).count() == 0 and page.get_by_text("What goes wrong.").count() == 0
    assert page.get_by_label("Your guess: step").input_value() == "0"
    guess_and_check(page, 3)
    right = "You said step 3, slot 0. Right: the run with the mistake first goes wrong at step 3, slot 0."
    page.get_by_text(right).wait_for(timeout=30_000)
    grids_when(page, lambda g: all(side["outline"] == [cell(3, 0)] for side in g))
    page.get_by_text("yet nothing matched.").wait_for(timeout=30_000)
    no_exception(page)
    screenshot(page, "practice-spot-right")

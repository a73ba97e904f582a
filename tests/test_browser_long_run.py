"""A long run in a real headless Chromium (cblab/ui/stage/long_run.py): the 12,000-request fixture is uploaded, the Grid
tab shows its overview over simulated time and the stage plays a window of it; a drag across the overview
and a click on it move the window, and the stage plays the new one from its first step. At 1,400 px, at a
phone's 390 px and in presentation mode. Screenshots go to test-artifacts/long-run-*.png: look at them."""

import re

from tests.browser_support import STAGE, require_browser, screenshot, stage_eval, stage_step, wait_until_idle

sync_api = require_browser()

FIXTURE = "tests/fixtures/long-run.toml"
UPLOADER = "[data-testid='stFileUploaderDropzoneInput']"
PLAYS = re.compile(r"The stage plays steps ([\d,]+)–([\d,]+)")


def open_long_run(page, url: str, query: str = "") -> None:
    """Upload the fixture (its run is made once for the module's server) and wait for the overview and the stage."""
    page.goto(f"{url}/?scenario=upload{query}")
    page.locator(UPLOADER).set_input_files(FIXTURE)
    page.wait_for_selector(".overview path.line", timeout=180_000)
    page.wait_for_selector(STAGE, timeout=60_000)
    wait_until_idle(page, timeout=60)


def window(page) -> tuple[int, int]:
    """The window the caption under the slider says the stage plays."""
    found = PLAYS.search(page.get_by_text("The stage plays steps").inner_text())
    return int(found[1].replace(",", "")), int(found[2].replace(",", ""))


def moved_to(page, before: tuple[int, int], timeout: float = 60.0) -> tuple[int, int]:
    """Wait until the window is another than `before` and the stage stands on its first step; return it."""
    deadline = page.evaluate("performance.now()") + timeout * 1000
    while page.evaluate("performance.now()") < deadline:
        page.wait_for_timeout(200)
        now = window(page)
        if now != before and stage_step(page) == now[0]:
            wait_until_idle(page)
            return now
    raise AssertionError(f"the window stayed at {before} (the stage at step {stage_step(page)})")


def test_a_long_run_opens_on_its_overview_with_the_stage_on_the_window_around_its_deepest_queue(page, url):
    open_long_run(page, url)
    assert window(page) == (5511, 5910) and stage_step(page) == 5511
    titles = page.locator(".overview .title").all_inner_texts()
    assert titles == [
        "running rows (of 64)",
        "queue length (requests waiting)",
        "KV blocks in use (% of the pool's 400)",
        "prefix cache hit rate (% of the tokens looked up)",
    ]
    bar = stage_eval(page, "(root) => root.querySelector('.where').textContent")
    assert bar == "Step 5,511 · steps 5,511–5,910 of the run's 0–7,187"
    shaded = page.locator(".overview rect.window").first.bounding_box()
    panel = page.locator(".overview svg").first.bounding_box()
    assert 0.7 < (shaded["x"] - panel["x"]) / panel["width"] < 0.85  # 89.7 s of the run's 116.4 s
    page.locator(".overview svg").nth(1).hover()
    assert " s · steps " in page.locator(".overview .readout").inner_text()
    page.locator(".overview").scroll_into_view_if_needed()
    screenshot(page, "long-run-overview")
    page.locator(STAGE).scroll_into_view_if_needed()
    screenshot(page, "long-run-stage")


def test_a_drag_and_a_click_on_the_overview_move_the_window_and_the_stage_plays_it(page, url):
    open_long_run(page, url)
    panel = page.locator(".overview svg").nth(1)
    box = panel.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.2, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.25, y, steps=8)
    page.mouse.up()
    first, last = moved_to(page, (5511, 5910))
    assert 900 < first < last < 1_700 and last - first < 2_000  # about 20-25 % of the run's 116 s
    root = page.locator(STAGE)
    root.locator("select[data-action='speed']").select_option("60")
    root.locator("[data-action='play']").click()
    page.wait_for_timeout(1_500)
    root.locator("[data-action='play']").click()  # pause
    played = stage_step(page)
    assert first < played <= last
    root.locator("[data-action='end']").click()
    assert stage_step(page) == last
    page.locator(STAGE).scroll_into_view_if_needed()
    screenshot(page, "long-run-dragged")
    page.locator(".overview").scroll_into_view_if_needed()
    box = page.locator(".overview svg").nth(1).bounding_box()  # (the page scrolled: found again)
    page.mouse.click(box["x"] + box["width"] * 0.9, box["y"] + box["height"] / 2)
    length = last - first + 1
    first, last = moved_to(page, (first, last))
    assert last - first + 1 == length and 6_000 < first < 7_188  # as long as it was, centred about 90 % along


def test_at_a_phone_s_width_the_overview_fits_and_the_window_still_plays(browser, url):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    open_long_run(page, url)
    for svg in page.locator(".overview svg").all():
        assert svg.bounding_box()["width"] <= 390
    page.locator(".overview").scroll_into_view_if_needed()
    screenshot(page, "long-run-390-overview")
    page.locator(STAGE).locator("[data-action='next']").click()
    page.wait_for_timeout(500)
    assert stage_step(page) == window(page)[0] + 1
    page.locator(STAGE).scroll_into_view_if_needed()
    screenshot(page, "long-run-390-stage")
    page.close()


def test_in_presentation_mode_the_stage_comes_first_and_the_overview_is_one_click_away(browser, url):
    """On a projector the overview starts closed, so the stage is on the first screen; opened, it is drawn across
    the whole width the hidden sidebar left (it follows its box's width, not only the window's)."""
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    open_long_run(page, url)
    page.get_by_text("Presentation").click()
    page.wait_for_selector("[data-testid='stSidebar']", state="hidden", timeout=30_000)
    wait_until_idle(page)
    assert stage_eval(page, "(root) => root.classList.contains('projector')")
    assert page.locator(STAGE).bounding_box()["y"] < 1080 and not page.locator(".overview svg").first.is_visible()
    screenshot(page, "long-run-presentation")
    page.get_by_text("Overview of the whole run").click()
    page.locator(".overview svg").first.wait_for(state="visible")
    page.wait_for_timeout(500)
    assert page.locator(".overview.projector").count() == 1
    box = page.locator(".overview").bounding_box()
    assert page.locator(".overview svg").first.bounding_box()["width"] > box["width"] - 20
    screenshot(page, "long-run-presentation-overview")
    page.close()

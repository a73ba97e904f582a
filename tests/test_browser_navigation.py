"""The course as a learner walks it, in a real headless Chromium: through Next lesson, the picker
from a later step, Back and Forward, a reload; in presentation mode and at a phone's width.

Each test reproduces a defect a learner met (issue "The course a learner can trust"), so a
fresh link alone would not have caught it. Skipped with a reason when Debian's Chromium is
missing outside CI. Screenshots go to test-artifacts/navigation-*.png: look at them.
"""

import time

from tests.browser_support import (
    FIND_STAGE,
    STAGE,
    check_answer,
    open_app,
    require_browser,
    screenshot,
    stage_eval,
    stage_step,
    wait_for_stage_step,
    wait_for_url,
    wait_until_idle,
)

sync_api = require_browser()

KV_LESSON = "7.1 KV memory: paged blocks vs reserving for the worst case"


def choose_lesson(page, label: str) -> None:
    """Pick `label` in the sidebar's Lesson picker (retried: right after a load a choice can be lost)."""
    for attempt in range(3):
        page.locator("[data-testid='stSelectbox']").first.click()
        page.keyboard.type(label[:4])
        page.get_by_role("option", name=label).click()
        try:
            page.get_by_role("heading", name=label).wait_for(timeout=8_000)
            break
        except sync_api.TimeoutError:
            if attempt == 2:
                raise
    wait_until_idle(page)


def heading(page) -> str:
    return page.locator("h3").first.inner_text()


def asks(page) -> int:
    """How many predictions the page asks now (one at a time, so 0 or 1)."""
    return page.get_by_text("Predict (before step").count()


# In the page from its start: when the stage's grid first has a cell, and when the sidebar first has its picker.
FIRST_SEEN = f"""
window.firstSeen = {{}};
const see = (name, found) => {{
  if (!(name in window.firstSeen) && found) window.firstSeen[name] = performance.now();
}};
const look = () => {{
  see("stage", ({FIND_STAGE})()?.querySelector(".grid .cell"));
  see("picker", document.querySelector("[data-testid='stSidebar'] [data-testid='stSelectbox']"));
  if (Object.keys(window.firstSeen).length < 2) setTimeout(look, 5);
}};
look();
"""


def test_a_first_page_paints_its_stage_first_then_draws_the_sidebar_s_widgets(page, url):
    page.add_init_script(FIRST_SEEN)
    open_app(page, url, "?lesson=1.1")
    page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").wait_for(timeout=30_000)
    page.get_by_label("Batch size (slots)").wait_for(timeout=30_000)
    seen = page.evaluate("() => window.firstSeen")
    assert seen["stage"] < seen["picker"]  # the picker and the settings come with the run the paint asked for
    wait_for_url(page, "batch_size=2")  # the settings' values in the URL, as before
    wait_until_idle(page)
    choose_lesson(page, KV_LESSON)  # and the picker works as ever
    assert heading(page) == KV_LESSON


def test_the_picker_from_a_later_step_opens_a_lesson_with_all_its_predictions(page, url):
    open_app(page, url, "?lesson=2.2&step=11")  # a link to a step: 2.2's questions before it are skipped
    assert stage_step(page) == 11
    choose_lesson(page, KV_LESSON)
    page.get_by_text("Predict (before step").wait_for(timeout=30_000)
    assert page.get_by_text("What happened.").count() == 0  # the reveal waits for the predictions
    assert page.get_by_text("This lesson: 0/2 right").count() == 1
    screenshot(page, "navigation-picker-later-step")


def test_a_lesson_picked_from_far_down_the_page_opens_at_its_top(page, url):
    """The page used to keep the last lesson's scroll: the new title and its prediction were above view."""
    open_app(page, url, "?lesson=7.6")
    main = "document.querySelector(\"[data-testid='stMain']\")"
    page.evaluate(f"() => {main}.scrollTo(0, 1500)")
    assert page.evaluate(f"() => {main}.scrollTop") > 300
    choose_lesson(page, "7.7 Multi-turn chat: the next turn finds the last one in the cache, unless it was evicted")
    assert page.evaluate(f"() => {main}.scrollTop") == 0
    title = page.get_by_role("heading", name="7.7 Multi-turn chat").bounding_box()
    assert title is not None and 0 <= title["y"] < 400
    screenshot(page, "navigation-picker-from-far-down")


def test_back_returns_to_the_previous_lesson_and_steps_and_tabs_add_no_history(page, url):
    open_app(page, url, "?lesson=1.2&predict=false")
    start = page.evaluate("history.length")
    page.get_by_role("button", name="Next lesson: 1.3").click()
    page.get_by_role("heading", name="1.3 The first example: three requests, four slots").wait_for(timeout=30_000)
    wait_until_idle(page)
    for _ in range(3):  # steps: each replaces the history entry
        page.locator("[data-action='next']").click()
        time.sleep(0.4)
    wait_for_url(page, "step=3")
    page.get_by_role("tab", name="Timeline").click()
    wait_for_url(page, "tab=Timeline")
    assert page.evaluate("history.length") == start + 1  # one entry for the new lesson, none for steps or tabs
    page.go_back()
    page.get_by_role("heading", name="1.2 Part 2: a freed slot is refilled at once").wait_for(timeout=30_000)
    wait_for_url(page, "lesson=part2-slot-refill")
    page.go_forward()
    page.get_by_role("heading", name="1.3 The first example: three requests, four slots").wait_for(timeout=30_000)
    wait_for_url(page, "lesson=first-example")


def test_the_chosen_speed_reaches_the_url_and_survives_side_by_side(page, url, browser):
    open_app(page, url, "?lesson=2.1&predict=false")
    page.locator("select[data-action='speed']").select_option("8")
    wait_for_url(page, "speed=8")
    page.get_by_text("Static and continuous side by side").click()
    wait_for_url(page, "side_by_side=true")
    wait_until_idle(page)
    page.wait_for_selector(STAGE, timeout=60_000)  # side by side mounts the stages anew
    assert stage_eval(page, "(root) => root.querySelector('select[data-action=\"speed\"]').value") == "8"
    fresh = browser.new_page()
    open_app(fresh, url, "?" + page.url.split("?", 1)[1])
    assert stage_eval(fresh, "(root) => root.querySelector('select[data-action=\"speed\"]').value") == "8"
    fresh.close()


def test_checked_predictions_survive_a_reload_kept_in_the_browser(page, url):
    open_app(page, url, "?lesson=1.2")
    check_answer(page, option="slot 0")
    page.get_by_text("A has finished. Which slot does C take? Right.").wait_for(timeout=30_000)
    page.reload()
    page.wait_for_selector("[data-stage-step]", timeout=60_000)
    page.get_by_text("This lesson: 1/3 right").wait_for(timeout=60_000)  # (30 s timed out once, under load 5)
    assert page.get_by_text("Which slot does D take?").count() == 1  # the next one is asked, not the first again


def test_the_stage_says_steps_from_0_and_hides_the_run_s_length_while_a_prediction_is_open(page, url):
    open_app(page, url, "?lesson=2.1")  # asks "How many steps does static batching take?" before step 0
    where = stage_eval(page, "(root) => root.querySelector('.where').textContent")
    assert where == "Step 0 · answer the prediction to see the run"
    open_app(page, url, "?lesson=2.1&predict=false")
    where = stage_eval(page, "(root) => root.querySelector('.where').textContent")
    assert where == "Step 0 · steps 0–13"


def test_presentation_mode_takes_the_keys_at_once_and_keeps_cells_readable(page, url):
    page.set_viewport_size({"width": 1920, "height": 1080})
    open_app(page, url, "?lesson=7.1")  # 8 slots, and a prediction about step 0
    page.get_by_text("Presentation", exact=True).click()  # the teacher switches it on: focus is on the switch
    wait_until_idle(page)
    check_answer(page, number=8)  # the verdict above the stage used to shrink the cells to one cut line
    page.get_by_text("Right.").first.wait_for(timeout=30_000)
    check_answer(page, number=16)
    page.get_by_text("What happened").first.wait_for(timeout=30_000)
    wait_until_idle(page)
    page.keyboard.press("ArrowRight")  # no click on the stage first
    wait_for_stage_step(page, 1)
    assert not clipped_cells(page)
    height = stage_eval(page, "(root) => root.querySelector('.cell:not(.future)').getBoundingClientRect().height")
    assert height >= 32  # at least one line of 24 px text: id and token side by side, neither cut
    screenshot(page, "navigation-presentation-1080")
    page.set_viewport_size({"width": 1280, "height": 720})
    time.sleep(0.5)
    assert not clipped_cells(page)
    screenshot(page, "navigation-presentation-720")


def test_cells_hold_their_text_with_8_slots_and_at_a_phone_s_width(page, url):
    open_app(page, url, "?lesson=7.1&predict=false")
    assert not clipped_cells(page)  # "r0 / 741" overflowed its cell
    page.set_viewport_size({"width": 390, "height": 844})
    open_app(page, url, "?lesson=5.2&predict=false&step=60")
    time.sleep(0.5)
    assert not clipped_cells(page)
    width = stage_eval(page, "(root) => root.querySelector('.grid').getBoundingClientRect().width")
    assert width > 300  # the queue and the narration go under the grid, which keeps the width
    cell = stage_eval(page, "(root) => root.querySelector('.cell:not(.future)').getBoundingClientRect().height")
    assert cell >= 30
    page.locator("[data-stage-step]").first.scroll_into_view_if_needed()
    screenshot(page, "navigation-phone-5.2")


def test_the_pause_button_is_drawn_not_a_missing_glyph(page, url):
    open_app(page, url, "?lesson=1.3&predict=false")
    page.locator("[data-action='play']").click()
    assert stage_eval(page, "(root) => root.querySelector('[data-action=\"play\"]').textContent.trim()") == "Pause"
    assert stage_eval(page, "(root) => root.querySelectorAll('[data-action=\"play\"] svg rect').length") == 2


def test_an_expander_whose_prediction_is_checked_opens_at_the_first_click(page, url):
    open_app(page, url, "?lesson=1.4")
    check_answer(page, option="slot 0")
    page.get_by_text("What does C's callback receive?").wait_for(timeout=30_000)
    check_answer(page, option="[3, 661, 837, 634]")
    page.get_by_text("What does C's callback receive? Right.").wait_for(timeout=30_000)
    summary = page.locator("[data-testid='stExpander'] summary").filter(has_text="The running table")
    summary.click()
    wait_until_idle(page)
    assert page.locator("[data-testid='stExpander'] details[open] summary").filter(has_text="The running table").count()


def test_a_view_beside_a_lesson_is_not_drawn_while_its_predictions_are_open(page, url):
    """8.5's sweep is not drawn while a prediction is open (cblab/ui/frame/lesson_extras.py): opened, its
    expander says to predict first and holds no chart; a link that turns predictions off draws it."""
    open_app(page, url, "?lesson=8.5")
    summary = page.locator("[data-testid='stExpander'] summary").filter(has_text="Throughput and latency")
    summary.wait_for(timeout=60_000)
    wait_until_idle(page)
    summary.click()
    page.get_by_text("Check this lesson's predictions first").wait_for(timeout=30_000)
    assert page.locator(".js-plotly-plot").count() == 0
    open_app(page, url, "?lesson=8.5&predict=false")
    page.locator("[data-testid='stExpander'] details[open] .js-plotly-plot").wait_for(timeout=60_000)


def clipped_cells(page) -> int:
    """Cells of the stage whose id or token is cut (wider than the cell shows)."""
    return stage_eval(
        page,
        "(root) => [...root.querySelectorAll('.cell .rid, .cell .tok')]"
        ".filter((e) => e.textContent && e.scrollWidth > e.clientWidth + 1).length",
    )


def test_next_lesson_from_a_later_step_asks_every_lesson_s_predictions_and_reveals_nothing(page, url):
    """For every lesson of the course: a shared link to a later step of the lesson before it, then
    Next lesson. The lesson reached in the app starts at step 0 with all its predictions and none
    of its reveal (the old tree skipped the questions before the old lesson's step)."""
    from engine.lab.course import load_course

    lessons = load_course().lessons
    for before, lesson in zip(lessons, lessons[1:]):
        open_app(page, url, f"?lesson={before.number}&step=5")
        assert stage_step(page) > 0, before.label  # the link put the stage at a later step (5, or its last)
        page.get_by_role("button", name=f"Next lesson: {lesson.number}").click()
        page.get_by_role("heading", name=lesson.label).wait_for(timeout=60_000)
        wait_until_idle(page, timeout=60)
        wait_for_url(page, "step=", present=False)
        if lesson.quizzes:
            page.get_by_text("Predict (").wait_for(timeout=30_000)
            assert page.get_by_text(f"This lesson: 0/{lesson.quizzes} right").count() == 1, lesson.label
            if page.get_by_text("Predict (before step 0)").count():  # step 0 is asked about: all hidden
                page.wait_for_selector(STAGE, timeout=30_000)
                assert stage_eval(page, "(root) => root.classList.contains('veiled')"), lesson.label
        assert page.get_by_text("What happened.").count() == 0, lesson.label

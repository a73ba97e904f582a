"""Back, Forward and the lesson picker as a learner meets them from the root URL (no `lesson=`),
in a real headless Chromium (issue 33: "Back leaves the app", "A closed box reopens", "Phone").

The root URL names no lesson and opens 1.1; the first lesson change from it used to replace the
history entry, so Back went to `about:blank`. Skipped with a reason when Debian's Chromium is
missing outside CI. Screenshots go to test-artifacts/history-*.png: look at them.
"""

import re

from engine.analysis.replay import Replay
from engine.lab.course import load_course
from engine.lab.quizzes import questions
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate
from tests.browser_support import check_answer, open_app, require_browser, screenshot, wait_until_idle
from tests.test_browser_navigation import choose_lesson, heading

sync_api = require_browser()

LABELS = {lesson.number: lesson.label for lesson in load_course().lessons}


def wait_for_heading(page, number: str) -> None:
    page.get_by_role("heading", name=LABELS[number]).wait_for(timeout=60_000)
    wait_until_idle(page, timeout=60)


def next_lesson(page, number: str) -> None:
    page.get_by_role("button", name=f"Next lesson: {number}").click()
    wait_for_heading(page, number)


def back_to(page, url: str, number: str) -> None:
    """Press Back: the app, not `about:blank`, and lesson `number` on screen."""
    page.go_back()
    assert page.url.startswith(url), f"Back left the app for {page.url}"
    wait_for_heading(page, number)
    assert heading(page) == LABELS[number]


def test_back_from_the_root_s_next_lesson_returns_to_lesson_1_1_and_stays_in_the_app(page, url):
    open_app(page, url)
    assert heading(page) == LABELS["1.1"]
    next_lesson(page, "1.2")
    back_to(page, url, "1.1")
    next_lesson(page, "1.2")  # the root's lesson, reached by Back, goes on as any other
    back_to(page, url, "1.1")
    page.go_forward()
    wait_for_heading(page, "1.2")
    screenshot(page, "history-root-next-back")


def test_back_walks_every_lesson_picked_from_the_root_then_the_root_s_own(page, url):
    open_app(page, url)
    choose_lesson(page, LABELS["7.4"])
    choose_lesson(page, LABELS["7.5"])
    next_lesson(page, "7.6")
    back_to(page, url, "7.5")
    back_to(page, url, "7.4")
    back_to(page, url, "1.1")  # the root itself: lesson 1.1, still in the app
    assert "lesson=" not in page.url or "part1-basic-batch" in page.url
    screenshot(page, "history-root-picker-back")


def sorted_answers(name: str) -> list:
    """The lesson's answers in the order the app asks them (earliest step first)."""
    scenario = resolve_scenario(name)
    return [q.answer for q in sorted(questions(scenario, Replay(simulate(scenario))), key=lambda q: q.step)]


def box_is_open(page, heading: str) -> bool:
    details = page.locator("[data-testid='stExpander'] details").filter(has_text=heading)
    return details.first.evaluate("(d) => d.open")


def test_a_box_never_opened_stays_closed_after_next_lesson_and_back(page, url):
    """7.6's "How real servers differ" came back open after Next lesson and Back, pushing the page ~300 px."""
    open_app(page, url, "?lesson=7.6")
    box = page.locator("[data-testid='stExpander']").filter(has_text="How real servers differ")
    box.wait_for(timeout=30_000)
    assert not box_is_open(page, "How real servers differ")  # closed while a prediction is open
    for answer in sorted_answers("shared-system-prompt"):
        check_answer(page, number=answer)
    page.get_by_text("What happened.").wait_for(timeout=30_000)
    assert not box_is_open(page, "How real servers differ")  # the learner never opened it
    top = page.get_by_role("tab", name="Grid").bounding_box()["y"]
    next_lesson(page, "7.7")
    back_to(page, url, "7.6")
    box.wait_for(timeout=30_000)
    assert not box_is_open(page, "How real servers differ")
    assert abs(page.get_by_role("tab", name="Grid").bounding_box()["y"] - top) < 20  # nothing pushed down
    screenshot(page, "history-box-stays-closed")
    box.locator("summary").click()  # opened by the learner: open again after Next lesson and Back
    wait_until_idle(page)
    assert box_is_open(page, "How real servers differ")
    next_lesson(page, "7.7")
    back_to(page, url, "7.6")
    box.wait_for(timeout=30_000)
    assert box_is_open(page, "How real servers differ")


def sidebar_covers_the_page(page) -> bool:
    """Whether the sidebar is open and drawn over the lesson (its right edge past a quarter of the width)."""
    box = page.locator("[data-testid='stSidebar']").bounding_box()
    return box is not None and box["x"] + box["width"] > page.viewport_size["width"] / 4


def test_on_a_phone_picking_a_lesson_closes_the_sidebar_over_it(page, url):
    page.set_viewport_size({"width": 390, "height": 844})
    open_app(page, url, "?lesson=7.4")
    assert not sidebar_covers_the_page(page)  # a phone starts with it closed
    page.locator("[data-testid='stExpandSidebarButton']").click()
    page.wait_for_timeout(500)
    assert sidebar_covers_the_page(page)
    choose_lesson(page, LABELS["7.5"])
    page.wait_for_timeout(800)  # (the sidebar slides away)
    assert not sidebar_covers_the_page(page)
    assert page.get_by_role("heading", name=LABELS["7.5"]).is_visible()
    screenshot(page, "history-phone-picked")


def test_compare_on_8_4_names_each_configuration_while_it_runs(page, url):
    """8.4's Compare took 20 s the first time, behind one spinner: a bar names each configuration now."""
    open_app(page, url, "?lesson=8.4&predict=false")
    page.get_by_role("tab", name="Compare").click()
    bar = page.get_by_text(re.compile(r"Running every configuration: [a-z0-9.-]+, \d+ of 10"))
    bar.first.wait_for(timeout=60_000)
    screenshot(page, "history-compare-progress")
    page.get_by_text("the ratios that involve it come first").wait_for(timeout=180_000)
    wait_until_idle(page, timeout=120)
    assert page.get_by_text("Running every configuration").count() == 0
    screenshot(page, "history-compare-done")

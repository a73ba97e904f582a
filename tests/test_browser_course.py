"""The course in a real headless Chromium: a learner lands on lesson 1.1, answers one prediction
wrong and one right, reads the verdicts and the score, and goes on with `next_lesson`.

Skipped with a reason when Debian's Chromium is missing outside CI (in CI it is a failure).
Screenshots go to test-artifacts/course-*.png: look at them.
"""

import time

from tests.browser_support import (
    FIND_STAGE,
    open_app,
    require_browser,
    screenshot,
    stage_step,
    wait_for_stage_step,
    wait_for_url,
    wait_until_idle,
)

sync_api = require_browser()


def check(page) -> None:
    page.get_by_role("button", name="Check prediction").click()
    wait_until_idle(page)


def alert(page, text: str):
    return page.locator("[data-testid='stAlert']").filter(has_text=text)


def test_a_prediction_answered_wrong_then_one_answered_right(page, url):
    open_app(page, url)
    assert page.get_by_role("heading", name="1.1 Part 1: one batch, one model call per step").count() == 1
    page.get_by_text("Predict (before step 1): How many rows does the model get at step 1?").wait_for()
    answer = page.get_by_placeholder("a number")
    answer.fill("3")
    answer.press("Enter")
    wait_until_idle(page)
    check(page)
    wrong = alert(page, "Not quite: you said 3, the answer is 2.")
    wrong.wait_for(timeout=30_000)
    assert "The model gets 2 rows at step 1." in wrong.inner_text()
    screenshot(page, "course-wrong")

    page.get_by_text("What does A's callback receive when it finishes?").wait_for()
    page.get_by_text("[1, 2, 3, 4, 5]", exact=True).click()
    wait_until_idle(page)
    check(page)
    right = alert(page, "What does A's callback receive when it finishes? Right.")
    right.wait_for(timeout=30_000)
    assert "Request A's callback receives [1, 2, 3, 4, 5]." in right.inner_text()
    assert page.get_by_text("This lesson: 1/2 right · chapter 1: 1/9 right").count() == 1
    screenshot(page, "course-right")

    page.get_by_role("button", name="Next lesson: 1.2").click()
    wait_for_url(page, "lesson=part2-slot-refill")
    page.get_by_text("Predict (before step 1): A has finished. Which slot does C take?").wait_for(timeout=30_000)
    screenshot(page, "course-next-lesson")


def test_the_stage_cannot_be_played_past_an_open_prediction_and_moves_to_it_once_answered(page, url):
    """Lesson 1.2 asks about step 1 first ("Which slot does C take?"): ▶, ▶| and Play all stop at
    step 0; a prediction about step 0 (lesson 2.1) hides the whole run; checking moves the stage."""
    open_app(page, url, "?lesson=part2-slot-refill")
    page.get_by_text("Which slot does C take?").wait_for(timeout=30_000)
    for action in ("next", "end", "play"):
        page.locator(f"[data-action='{action}']").click()
        time.sleep(0.8)  # (at 2 steps/s Play would have moved on by now)
        assert stage_step(page) == 0, action
    assert "answer the prediction to see step 1" in page.locator(".stage .where").inner_text()
    page.get_by_role("radiogroup", name="Your answer").get_by_text("slot 0", exact=True).click()
    wait_until_idle(page)
    check(page)
    alert(page, "Which slot does C take? Right.").wait_for(timeout=30_000)
    wait_for_stage_step(page, 1)  # the answered step is shown
    screenshot(page, "course-revealed")

    open_app(page, url, "?lesson=static-vs-continuous")
    page.get_by_text("Predict (before step 0)").wait_for(timeout=30_000)
    hidden = page.evaluate(f"() => getComputedStyle(({FIND_STAGE})().querySelector('.runs')).visibility")
    assert hidden == "hidden"

"""The chapter "Real traffic" in a real headless Chromium: a learner reaches it with Next lesson from lesson 8.7,
reads the trace's credit under the lesson, answers lesson 9.1's predictions and reads what happened; picks
lesson 9.4 in the sidebar, answers it and opens the whole hour's cache curve; goes Back; and the chapter is
drawn on a phone's width and in presentation mode.

Skipped with a reason when Debian's Chromium is missing outside CI. Screenshots go to test-artifacts/traffic-*.png:
look at them.
"""

from tests.browser_support import open_app, require_browser, screenshot, wait_for_url, wait_until_idle

sync_api = require_browser()

AZURE_CREDIT = "Trace data: the Azure LLM inference trace 2023, code"
MOONCAKE_CREDIT = "Trace data: Mooncake's conversation trace, Kimi's chat service (Moonshot AI)"


def answer(page, question: str, choice: str | None = None, number: str | None = None) -> None:
    """Answer the open prediction `question` and check it: it must be graded right."""
    page.get_by_text(question).first.wait_for(timeout=60_000)
    if choice is not None:
        page.get_by_role("radiogroup", name="Your answer").get_by_text(choice, exact=True).click()
    else:
        field = page.get_by_placeholder("a number")
        field.fill(number)
        field.press("Enter")
    wait_until_idle(page)
    page.get_by_role("button", name="Check prediction").click()
    wait_until_idle(page)
    page.locator("[data-testid='stAlert']").filter(has_text=question).filter(has_text="Right.").wait_for(timeout=60_000)


def test_a_learner_walks_into_the_chapter_answers_it_and_goes_back(page, url):
    open_app(page, url, "?lesson=will-it-run-in-time")
    page.get_by_role("button", name="Next lesson: 9.1").click()
    wait_for_url(page, "lesson=traffic-coding", timeout=60)
    page.get_by_text("Predict (before step 0): What share of the engine's busy time").wait_for(timeout=60_000)
    assert page.get_by_text(AZURE_CREDIT).count() == 1
    screenshot(page, "traffic-9.1-asked", full_page=True)
    answer(page, "What share of the engine's busy time goes to computing prompt tokens", "50 % to 75 %")
    answer(page, "What is the median time to first token", "under 0.1 s")
    page.get_by_text("What happened.").wait_for(timeout=60_000)
    assert page.get_by_text("This lesson: 2/2 right · chapter 9: 2/10 right").count() == 1
    screenshot(page, "traffic-9.1-revealed", full_page=True)

    page.locator("[data-testid='stSelectbox']").first.click()
    page.keyboard.type("Kimi")
    page.get_by_role("option", name="9.4 Kimi's chat traffic and the prefix cache").click()
    wait_for_url(page, "lesson=traffic-kimi-cache", timeout=60)
    page.get_by_text(MOONCAKE_CREDIT).wait_for(timeout=60_000)
    answer(page, "What percent of the prompt tokens looked up in this minute", number="9")
    answer(page, "With the cache, what is the median time to first token?", "0.1 s to 1 s")
    page.get_by_text("Predict (from the whole trace's replay)").wait_for(timeout=60_000)
    answer(page, "how much of the maximum hit rate (that of a cache that never evicts)", "25 % to 50 %")
    page.get_by_text("The whole hour: hit rate against the cache's size").first.click()  # (closed while predicting)
    page.get_by_text("The whole trace mooncake-conversation, replayed by the engine once per capacity").wait_for(
        timeout=60_000
    )
    screenshot(page, "traffic-9.4-revealed", full_page=True)

    page.go_back()
    wait_for_url(page, "lesson=traffic-coding", timeout=60)
    page.get_by_text(AZURE_CREDIT).wait_for(timeout=60_000)
    screenshot(page, "traffic-back-to-9.1")


def test_the_chapter_on_a_phone_and_on_a_projector(browser, url):
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        open_app(phone, url, "?lesson=traffic-burst")
        phone.get_by_text("At the burst's worst, how many requests wait").first.wait_for(timeout=60_000)
        assert phone.get_by_text(AZURE_CREDIT).count() == 1
        screenshot(phone, "traffic-9.3-phone", full_page=True)
    finally:
        phone.close()
    projector = browser.new_page(viewport={"width": 1920, "height": 1080})
    try:
        open_app(projector, url, "?lesson=traffic-conversation&presentation=true")
        projector.get_by_text("What share of the busy time goes to computing prompt tokens now?").wait_for(
            timeout=60_000
        )
        assert projector.get_by_text("Trace data: the Azure LLM inference trace 2023, conversation").count() == 1
        screenshot(projector, "traffic-9.2-presentation")
    finally:
        projector.close()

"""The stage in a real headless Chromium: playback in the browser, and frames that tell the truth.

Play is monotonic and stops at the end (Play there starts over), a pause reports the step
to the URL, the keys and the slider move it, the frames are sent once per run, the
projector mode's every stage text is at least 24 px at 1920x1080, and each marker sits on
the cell it describes. Screenshots go to test-artifacts/ (look at them).
"""

import json

from tests.browser_support import (
    FIND_STAGE,
    STAGE,
    open_app,
    require_browser,
    screenshot,
    stage_step,
    wait_for_stage_step,
    wait_for_url,
)

sync_api = require_browser()


def control(page, action: str):
    return page.locator(f"[data-action='{action}']")


def cells(page, selector: str) -> list[str]:
    """The hover titles of the stage's cells matching `selector` (e.g. '.cell.stop')."""
    return page.evaluate(
        f"() => [...({FIND_STAGE})().querySelectorAll({json.dumps(selector)})].map((cell) => cell.title)"
    )


def narration(page) -> str:
    return page.locator(".stage .side").inner_text()


def sample_steps(page, seconds: float) -> list[int]:
    """The stage's step at every animation frame for `seconds`, recorded in the page."""
    return page.evaluate(
        f"""(ms) => new Promise((done) => {{
          const root = ({FIND_STAGE})(), seen = [], end = performance.now() + ms;
          const tick = () => {{
            seen.push(Number(root.dataset.stageStep));
            if (performance.now() < end) requestAnimationFrame(tick); else done(seen);
          }};
          requestAnimationFrame(tick);
        }})""",
        seconds * 1000,
    )


def test_next_advances_the_stage_and_the_url_and_the_batch_view_follow(page, url):
    open_app(page, url)
    assert stage_step(page) == 0
    assert "Requests A, B are admitted" in narration(page)
    control(page, "next").click()
    wait_for_stage_step(page, 1)
    assert "Request C is admitted into slot 0 from the queue." in narration(page)
    wait_for_url(page, "step=1")  # reported once the moves settle
    page.get_by_text("The batch as the model sees it at step 1").wait_for(timeout=15_000)
    first_token = page.locator(".batch-view td[class^=c]").first  # painted by the table's own style sheet
    assert first_token.evaluate("(cell) => getComputedStyle(cell).backgroundColor") != "rgba(0, 0, 0, 0)"
    screenshot(page, "stage-part2-step1", full_page=True)


def test_play_is_monotonic_stops_at_the_end_and_play_there_starts_over(page, url):
    open_app(page, url, "?scenario=static-vs-continuous&speed=8")
    control(page, "play").click()
    seen = sample_steps(page, 2.6)  # steps 0-13 at 8 steps/s: the end within 1.7 s
    assert seen == sorted(seen), "playback went backwards"
    assert seen[-1] == 13 and len(set(seen)) >= 11  # it reached the last step, through nearly every step
    assert "Pause" not in control(page, "play").inner_text()  # and stopped there
    wait_for_url(page, "step=13")
    control(page, "play").click()  # at the end, Play starts over
    restarted = sample_steps(page, 0.4)
    assert restarted[0] <= 3 and restarted == sorted(restarted)


def test_a_pause_reports_the_step_it_stopped_at(page, url):
    open_app(page, url, "?scenario=anyscale-cap128&speed=15")
    control(page, "play").click()
    page.wait_for_timeout(1000)
    control(page, "play").click()
    stopped = stage_step(page)
    assert 5 <= stopped < 100
    page.wait_for_timeout(500)
    assert stage_step(page) == stopped  # paused means paused
    wait_for_url(page, f"step={stopped}")
    page.get_by_text(f"The batch as the model sees it at step {stopped}").wait_for(timeout=15_000)


def test_the_keyboard_moves_and_plays_the_stage(page, url):
    open_app(page, url, "?scenario=static-vs-continuous&speed=4")
    page.locator(STAGE).click(position={"x": 5, "y": 5})
    page.keyboard.press("ArrowRight")
    wait_for_stage_step(page, 1)
    page.keyboard.press("End")
    wait_for_stage_step(page, 13)
    page.keyboard.press("ArrowLeft")
    wait_for_stage_step(page, 12)
    page.keyboard.press("Home")
    wait_for_stage_step(page, 0)
    page.keyboard.press(" ")
    page.wait_for_timeout(900)
    page.keyboard.press(" ")
    assert 2 <= stage_step(page) <= 5  # about 4 steps a second, then paused


def test_scrubbing_the_slider_moves_the_stage_and_the_url(page, url):
    open_app(page, url, "?scenario=static-vs-continuous")
    page.locator(".stage input[type='range']").fill("7")
    wait_for_stage_step(page, 7)
    wait_for_url(page, "step=7")
    page.get_by_text("The batch as the model sees it at step 7").wait_for(timeout=15_000)


def test_the_frames_are_sent_once_per_run(page, url):
    sizes: list[int] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: sizes.append(len(frame))))
    open_app(page, url, "?scenario=anyscale-cap128")
    page.wait_for_timeout(1500)  # (Playwright hands over the page's websocket messages while it waits)
    assert max(sizes) > 200_000  # the run's frames
    sizes.clear()
    control(page, "next").click()
    wait_for_url(page, "step=1")  # a rerun has happened
    page.get_by_text("The batch as the model sees it at step 1").wait_for(timeout=15_000)
    assert sizes and max(sizes) < 50_000  # the rerun sent the run's id, not its frames


def test_projector_mode_text_is_at_least_24_px_and_the_grid_fits_the_screen(browser, url):
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    open_app(page, url, "?scenario=stop-sequences&presentation=true&step=2")
    small = page.evaluate(
        f"""() => {{
          const root = ({FIND_STAGE})(), small = [];
          for (const node of root.querySelectorAll('*')) {{
            const own = [...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
            const size = parseFloat(getComputedStyle(node).fontSize);
            if (own && node.offsetParent !== null && size < 24) small.push(`${{node.className}}: ${{size}}`);
          }}
          return small;
        }}"""
    )
    assert small == []
    grid = page.locator(".stage .grid").bounding_box()
    assert grid["y"] + grid["height"] <= 1080
    assert page.get_by_text("Multi-token stop sequences, across steps and overlapping").is_visible()
    assert page.get_by_text("Padded batches (fixed shape + mask)").is_visible()
    assert page.locator("[data-testid='stRadio']").filter(has_text="static").is_visible()
    assert page.get_by_text("Deploy").count() == 0 or not page.get_by_text("Deploy").first.is_visible()
    screenshot(page, "stage-projector-1920")
    page.close()


def test_a_stop_outline_appears_only_when_the_stop_sequence_completes(page, url):
    open_app(page, url, "?scenario=stop-sequences&step=0")
    assert cells(page, ".cell.stop") == []  # nothing has matched yet: C's first "1" is not outlined
    assert any(title.startswith("slot 2 · step 0: request C") for title in cells(page, ".cell.partial"))
    control(page, "next").click()
    wait_for_stage_step(page, 1)  # C's stop sequence [1, 2] completes at step 1: both its cells outlined
    assert [t.split(":")[0] for t in cells(page, ".cell.stop")] == ["slot 2 · step 0", "slot 2 · step 1"]
    control(page, "next").click()
    wait_for_stage_step(page, 2)  # nothing else completes at step 2
    assert [t.split(":")[0] for t in cells(page, ".cell.stop")] == ["slot 2 · step 0", "slot 2 · step 1"]
    screenshot(page, "stage-stop-sequences-step2")


def test_a_cancelled_request_is_crossed_out_on_its_own_cell(page, url):
    open_app(page, url, "?scenario=cancellation&step=3")
    evicted = cells(page, ".cell.evict")
    assert any(t.startswith("slot 0 · step 2: request A") for t in evicted)
    assert not any(t.startswith("slot 0 · step 3") for t in evicted)  # D, admitted there, is not crossed out
    screenshot(page, "stage-cancellation-step3")


def test_a_failed_model_call_is_marked_in_its_column(page, url):
    open_app(page, url, "?scenario=model-fault&step=2")
    heads = page.evaluate(f"() => [...({FIND_STAGE})().querySelectorAll('.head.fault')].map((h) => h.textContent)")
    assert heads == ["2"]
    assert len(cells(page, ".cell.fault")) == 2  # both rows of the failed, retried call


def test_an_idle_stretch_is_one_labelled_column_with_narration(page, url):
    open_app(page, url, "?scenario=arrivals-mid-run&step=8")
    wait_for_stage_step(page, 7)  # the idle stretch 7-11 is one column, shown from its first step
    heads = page.evaluate(f"() => [...({FIND_STAGE})().querySelectorAll('.head')].map((h) => h.textContent)")
    assert "idleuntil 12" in heads
    assert "Idle: nothing runs or waits until step 12, when the next request arrives." in narration(page)
    wait_for_url(page, "step=7")
    screenshot(page, "stage-idle")


def test_cells_name_their_request_and_neighbours_never_share_a_colour(page, url):
    open_app(page, url, "?scenario=anyscale-cap128&step=100")
    pairs = page.evaluate(
        f"""() => {{
          const grid = ({FIND_STAGE})().querySelector('.grid');
          const columns = grid.style.gridTemplateColumns.split('repeat(')[1].split(',')[0];
          const cells = [...grid.querySelectorAll('.cell')], width = Number(columns), same = [];
          const colour = (cell) => (cell.className.match(/\\bk(\\d+)\\b/) || [])[1];
          cells.forEach((cell, i) => {{
            const below = cells[i + width];
            if (below && colour(cell) && colour(cell) === colour(below)
                && cell.title.split('request ')[1]?.split(' ')[0] !== below.title.split('request ')[1]?.split(' ')[0])
              same.push(cell.title + ' / ' + below.title);
          }});
          return [same, cells.filter((c) => colour(c)).length];
        }}"""
    )
    same, coloured = pairs
    assert coloured > 64 and same == []
    assert page.locator(".stage.dense").count() == 1  # 64 slots: colour and hover, no crowded labels
    screenshot(page, "stage-64-slots")


def test_the_queue_shows_coloured_chips(page, url):
    open_app(page, url)
    chips = page.locator(".stage .queue .chip")
    assert chips.all_inner_texts() == ["C", "D"]
    assert all("k" in (chips.nth(i).get_attribute("class") or "") for i in range(2))


def test_side_by_side_plays_static_and_continuous_on_one_clock(page, url):
    open_app(page, url, "?scenario=static-vs-continuous&side_by_side=true&speed=8")
    assert page.locator(".stage .run h4").all_inner_texts() == ["Static batching", "Continuous batching"]
    control(page, "end").click()
    wait_for_stage_step(page, 13)  # static batching takes 14 steps, continuous fewer: one clock for both
    screenshot(page, "stage-side-by-side")

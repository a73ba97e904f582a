"""The stage's pool as a room sees it (issue 33), in a real headless Chromium: every figure names its unit,
shared blocks carry their counts (or a table says who shares what, or that nothing is ever shared), a
prediction that hides the whole run leaves the setup rather than a blank area, and in presentation mode
at 1280x720 and 1920x1080 the grid and the pool fit one screen, with blocks large enough to see.
Screenshots go to test-artifacts/ (look at them)."""

import re

import pytest

from engine.analysis.pool_state import pool_after
from engine.lab.scenario import parse_scenario
from engine.lab.simulate import simulate
from tests.browser_support import (
    ROOT,
    STAGE,
    open_app,
    require_browser,
    screenshot,
    stage_eval,
    stage_step,
    wait_until_idle,
)
from tests.test_browser_stage import upload_scenario

sync_api = require_browser()


def scenario_text(name: str) -> str:
    return (ROOT / "scenarios" / f"{name}.toml").read_text(encoding="utf-8")


def test_each_pool_figure_names_blocks_or_tokens(page, url):
    """7.7 at step 7: the title counted blocks ("1 cached, free") and the gauge tokens ("4 cached, free"), and
    only the gauge's last figure said which ("of 40 tokens"). Every figure now names its unit."""
    log = simulate(parse_scenario(scenario_text("multi-turn-chat")))
    pool, evicted = pool_after(log, 7), sum(e.kind == "kv_evict" and e.step == 7 for e in log)
    held, cached = sum(r > 0 for r in pool.refs), sum(not r and b in pool.cached for b, r in enumerate(pool.refs))
    assert (held, cached, evicted) == (9, 1, 1)
    open_app(page, url, "?lesson=multi-turn-chat&predict=false&step=7")
    title = page.locator(".stage .kv h4").inner_text()
    assert title == (
        "KV cache at step 7: 9 of 10 blocks held (4 tokens a block, paged, prefix caching) · 0 blocks shared"
        " · 1 block cached, free · 1 block evicted at this step"
    )
    figures = page.locator(".stage .kv .gauge-text span").all_inner_texts()
    assert [re.sub(r"^[\d,]+ ", "", text) for text in figures] == [
        "tokens held",
        "tokens reserved but empty",
        "tokens cached, free",
        "tokens free",
        "of 40 tokens",
    ]
    assert figures[2] == "4 tokens cached, free"  # the title's 1 block, in tokens
    screenshot(page, "room-7.7-step7-units")


def test_a_run_that_never_shares_a_block_says_so_beside_its_pool(page, url):
    """7.7's batch of 2 runs A1 and B1, then A2 and L: each hit finds blocks their row has let go, so no block
    is ever held twice and no ×n is drawn. The panel says why rather than leave the legend's promise open."""
    open_app(page, url, "?lesson=multi-turn-chat&predict=false&step=7")
    sharing = page.locator(".stage .kv .sharing").inner_text()
    assert sharing.startswith("No block is held by two rows at once in this run")
    assert page.locator(".stage .kv .sharing table").count() == 0


def test_7_6_s_pool_is_zoomed_to_its_50_blocks_and_each_shared_block_carries_its_count(page, url):
    """7.6 uses blocks 0-49 of 400: they are drawn alone, labelled, and at step 12 blocks 0-31 (the system
    prompt) carry "×4"; blocks 50-399 are said to be never taken."""
    open_app(page, url, "?lesson=shared-system-prompt&predict=false&step=12")
    boxes = stage_eval(page, "(root) => [...root.querySelectorAll('.kv .pool .blk')].map((b) => b.dataset.refs || '')")
    assert len(boxes) == 50
    assert [i for i, refs in enumerate(boxes) if refs] == list(range(32)) and set(boxes[:32]) == {"4"}
    badge = stage_eval(page, "(root) => getComputedStyle(root.querySelector('.kv .blk.shared'), '::after').content")
    assert badge == '"×4"'
    width = stage_eval(page, "(root) => root.querySelector('.kv .pool .blk').getBoundingClientRect().width")
    assert width >= 28  # 2.2 em of 14 px (11 px before: 400 boxes, too small for a count)
    assert "blocks 50–399 (350 of 400 blocks) are never taken" in page.locator(".stage .kv .unused").inner_text()
    screenshot(page, "room-7.6-step12-zoomed")


def test_a_pool_too_big_for_counts_lists_who_shares_which_blocks_beside_it(page, url, tmp_path):
    """7.6 with blocks of 4 tokens: the 512-token system prompt is 128 blocks, the run takes more than 128, so
    the boxes are small; the table beside the pool gives each run of shared blocks, its ×n and its holders."""
    text = scenario_text("shared-system-prompt").replace("block_size = 16", "block_size = 4")
    text = text[: text.index("[[quiz]]")]  # (its predictions would hide the steps)
    path = tmp_path / "small-blocks.toml"
    path.write_text(text)
    upload_scenario(page, url, path)
    page.locator(".stage input[type='range']").fill("12")  # (a display column: an idle stretch is one)
    page.wait_for_timeout(500)
    step = stage_step(page)
    log = simulate(parse_scenario(text))
    pool = pool_after(log, step)
    names = [info.request_id for info in log.requests]
    expected = []  # [first block, last block, its holders' names]: consecutive blocks of the same holders
    for block, refs in enumerate(pool.refs):
        who = sorted(names[r] for r, table in pool.tables.items() if block in table) if refs > 1 else None
        if who and expected and expected[-1][2] == who and expected[-1][1] == block - 1:
            expected[-1][1] = block
        elif who:
            expected.append([block, block, who])
    assert expected and expected[0][:2] == [0, 127]  # the system prompt's 128 blocks, one row of the table
    rows = stage_eval(
        page, "(root) => [...root.querySelectorAll('.kv .sharing tr')].slice(1).map((r) => r.innerText.split('\\t'))"
    )
    drawn = [[blocks, count, sorted(who.split(", "))] for blocks, count, who in rows]
    assert drawn == [[f"{a}–{b}" if a != b else str(a), f"×{len(who)}", who] for a, b, who in expected]
    page.locator(".stage .kv .sharing").scroll_into_view_if_needed()
    screenshot(page, "room-sharing-table")


@pytest.mark.parametrize("lesson", ["watermark-and-thrash", "paper-four-systems", "anyscale-cap1536"])
def test_a_prediction_hiding_the_whole_run_leaves_the_setup_not_a_blank_area(page, url, lesson):
    """7.4, 7.8 and 8.4 ask about step 0 first: the stage was ~1,000 px of blank white under its legend. It now
    collapses to its controls and the run's setup (slots and pool, which the lesson gives)."""
    open_app(page, url, f"?lesson={lesson}")
    page.get_by_text("Predict (before step 0)").wait_for(timeout=30_000)
    assert stage_eval(page, "(root) => root.classList.contains('veiled')")
    height = stage_eval(page, "(root) => root.getBoundingClientRect().height")
    assert height < 200, height
    setup = page.locator(".stage .setup").inner_text()
    assert "The run stays hidden until you answer the prediction above." in setup
    assert re.search(r"\n64 slots · a KV pool of [\d,]+ blocks of 16 tokens \((paged|reserve)\)$", setup), setup
    screenshot(page, f"room-veiled-{lesson}")


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_in_presentation_mode_7_6_s_grid_and_pool_fit_one_screen_with_blocks_seen_from_the_back(browser, url, size):
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    open_app(page, url, "?lesson=shared-system-prompt&presentation=true&predict=false&step=12")
    stage_eval(page, "(root) => root.scrollIntoView()")
    page.wait_for_timeout(300)
    boxes = stage_eval(
        page,
        """(root) => Object.fromEntries(['.bar', '.grid', '.kv .pool', '.kv .pool .blk'].map((s) => [s,
          root.querySelector(s).getBoundingClientRect().toJSON()]))""",
    )
    assert boxes[".kv .pool"]["bottom"] <= size[1], boxes  # the stage's controls, grid and pool: one screen
    assert boxes[".kv .pool .blk"]["width"] >= 48  # 2.2 em of 24 px
    screenshot(page, f"room-presentation-7.6-{size[0]}x{size[1]}")
    page.close()


def test_in_presentation_mode_the_prediction_s_number_input_has_the_text_s_24_px(browser, url):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    open_app(page, url, "?lesson=shared-system-prompt&presentation=true")
    box = page.get_by_placeholder("a number")
    box.wait_for(timeout=30_000)
    text = page.get_by_text("Predict (before step 2)")
    sizes = [node.evaluate("(n) => getComputedStyle(n).fontSize") for node in (box, text)]
    assert sizes == ["24px", "24px"]
    screenshot(page, "room-presentation-prediction-1280x720")
    page.close()


def test_in_presentation_mode_8_4_s_64_slot_rows_are_equally_tall(browser, url):
    """The rows of slots 0, 8, 16, ... were taller than the others (their names set the height): slot 0
    looked detached from the grid; the "now" outline also drew a second line at the grid's right edge."""
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    open_app(page, url, "?lesson=anyscale-cap1536&presentation=true&predict=false&step=40")
    wait_until_idle(page)
    tops = stage_eval(
        page,
        """(root) => { const cells = [...root.querySelectorAll('.grid .cell')], per = cells.length / 64;
          return cells.filter((c, i) => i % per === 0).map((c) => c.getBoundingClientRect().top); }""",
    )
    gaps = {round(b - a, 1) for a, b in zip(tops, tops[1:])}
    assert len(tops) == 64 and len(gaps) == 1, gaps
    outline = "(root) => ['.grid .cursor', '.grid .cell'].map((s) => root.querySelector(s).offsetWidth)"
    widths = stage_eval(page, outline)
    assert widths[0] == widths[1]  # the "now" outline is one column, not a line at the grid's far edge too
    chips = page.locator(f"{STAGE} .queue .chip").count()
    assert chips == 16  # of 957 waiting: each 24 px text, the rest counted
    stage_eval(page, "(root) => root.scrollIntoView()")
    page.wait_for_timeout(300)
    bottom = stage_eval(page, "(root) => root.querySelector('.kv .pool').getBoundingClientRect().bottom")
    assert bottom <= 1080  # the controls, the 64 rows and the 1,293-block pool: one screen
    screenshot(page, "room-presentation-8.4-1920x1080")
    page.close()

"""The stage in a real headless Chromium: playback in the browser, and frames that tell the truth.

Play is monotonic and stops at the end (Play there starts over), a pause reports the step
to the URL, the keys and the slider move it, the frames are sent once per run, the
projector mode's every stage text is at least 24 px at 1920x1080, and each marker sits on
the cell it describes. Screenshots go to test-artifacts/ (look at them).
"""

import json

from engine.analysis.pool_state import pool_after
from engine.analysis.prefix_hits import cache_hits
from engine.analysis.replay import Replay
from engine.lab.scenario import parse_scenario, resolve_scenario
from engine.lab.simulate import simulate
from tests.browser_support import (
    FIND_STAGE,
    ROOT,
    STAGE,
    open_app,
    require_browser,
    screenshot,
    stage_step,
    wait_for_stage_step,
    wait_for_url,
)
from tests.test_frames import tables_after
from tests.test_prefix_frames import SHARED_PROMPT

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
    open_app(page, url, "?lesson=part2-slot-refill&predict=false")
    assert stage_step(page) == 0
    assert "A and B take slots 0 and 1; C and D wait." in narration(page)  # the lesson's captions
    control(page, "next").click()
    wait_for_stage_step(page, 1)
    assert "C is admitted into slot 0, the slot A freed one step ago" in narration(page)
    wait_for_url(page, "step=1")  # reported once the moves settle
    page.get_by_text("The batch as the model sees it at step 1").wait_for(timeout=15_000)
    first_token = page.locator(".batch-view td[class^=c]").first  # painted by the table's own style sheet
    assert first_token.evaluate("(cell) => getComputedStyle(cell).backgroundColor") != "rgba(0, 0, 0, 0)"
    screenshot(page, "stage-part2-step1", full_page=True)


def test_play_is_monotonic_stops_at_the_end_and_play_there_starts_over(page, url):
    open_app(page, url, "?scenario=static-vs-continuous&speed=8&predict=false")
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
    open_app(page, url, "?scenario=anyscale-cap128&speed=15&predict=false")
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
    open_app(page, url, "?scenario=static-vs-continuous&speed=4&predict=false")
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
    open_app(page, url, "?scenario=static-vs-continuous&predict=false")
    page.locator(".stage input[type='range']").fill("7")
    wait_for_stage_step(page, 7)
    wait_for_url(page, "step=7")
    page.get_by_text("The batch as the model sees it at step 7").wait_for(timeout=15_000)


def test_the_frames_are_sent_once_per_run(page, url):
    received: list[bytes] = []  # Streamlit's messages are binary (protobuf)
    page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: received.append(frame)))
    open_app(page, url, "?scenario=anyscale-cap128&predict=false")
    page.wait_for_timeout(1500)  # (Playwright hands over the page's websocket messages while it waits)
    landing = max(received, key=len)
    assert len(landing) > 200_000  # the run's frames
    middle = len(landing) // 2
    frames = landing[middle : middle + 256]  # a stretch of the compressed frames, which fill most of the message
    received.clear()
    control(page, "next").click()
    wait_for_url(page, "step=1")  # a rerun has happened
    page.get_by_text("The batch as the model sees it at step 1").wait_for(timeout=15_000)
    assert received and not any(frames in message for message in received)  # the rerun did not send the frames
    # What it sent is the run's id, the page and, as Streamlit does for an inline component, the stage's code (~55 KB)
    assert max(map(len, received)) < 100_000


def small_texts(page) -> list[str]:
    """The stage's visible texts below 24 px (class: size)."""
    return page.evaluate(
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


def test_projector_mode_text_is_at_least_24_px_and_the_grid_fits_the_screen(browser, url):
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    open_app(page, url, "?scenario=stop-sequences&presentation=true&step=2&predict=false")
    assert small_texts(page) == []
    grid = page.locator(".stage .grid").bounding_box()
    assert grid["y"] + grid["height"] <= 1080
    assert page.get_by_text("Multi-token stop sequences, across steps and overlapping").is_visible()
    assert page.get_by_text("Padded batches (fixed shape + mask)").is_visible()
    assert page.locator("[data-testid='stRadio']").filter(has_text="static").is_visible()
    assert page.get_by_text("Deploy").count() == 0 or not page.get_by_text("Deploy").first.is_visible()
    screenshot(page, "stage-projector-1920")
    page.close()


def test_a_stop_outline_appears_only_when_the_stop_sequence_completes(page, url):
    open_app(page, url, "?scenario=stop-sequences&step=0&predict=false")
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
    open_app(page, url, "?lesson=part2-slot-refill")
    chips = page.locator(".stage .queue .chip")
    assert chips.all_inner_texts() == ["C", "D"]
    assert all("k" in (chips.nth(i).get_attribute("class") or "") for i in range(2))


def test_side_by_side_plays_static_and_continuous_on_one_clock(page, url):
    open_app(page, url, "?scenario=static-vs-continuous&side_by_side=true&speed=8&predict=false")
    assert page.locator(".stage .run h4").all_inner_texts() == ["Static batching", "Continuous batching"]
    control(page, "end").click()
    wait_for_stage_step(page, 13)  # static batching takes 14 steps, continuous fewer: one clock for both
    screenshot(page, "stage-side-by-side")


# -- the KV pool panel (a run with a pool): every value below is derived from the log, as each step leaves
# the pool (after its evictions: tables_after), with the tokens in the cache after it (KVReplay.computed) --

POOL = f"""() => [...({FIND_STAGE})().querySelectorAll('.kv .pool .blk')].map((box) => [
  Number(box.dataset.block), box.dataset.request === undefined ? null : Number(box.dataset.request),
  ['free', 'full', 'part', 'empty'].find((how) => box.classList.contains(how))])"""


def replay_of(scenario):
    return Replay(simulate(scenario))


def expected_pool(replay, step: int) -> list[list]:
    """Per block at `step`: [block, its request (None: free), free/full/part/empty]."""
    kv, size = replay.kv, replay.log.config.block_size
    out = [[block, None, "free"] for block in range(replay.log.config.kv_blocks)]
    for request, table in tables_after(replay.log, step).items():
        tokens = kv.computed(request, step) or 0
        for i, block in enumerate(table):
            fill = max(0, min(size, tokens - i * size))
            out[block] = [block, request, "full" if fill == size else "empty" if fill == 0 else "part"]
    return out


def gauge(page) -> dict[str, int]:
    data = page.evaluate(f"() => ({{ ...({FIND_STAGE})().querySelector('.kv .gauge').dataset }})")
    return {key: int(value) for key, value in data.items()}


def expected_gauge(pool: list[list], size: int) -> dict[str, int]:
    fills = {"full": size, "part": None, "empty": 0}
    held = [b for b in pool if b[1] is not None]
    return {"free": (len(pool) - len(held)) * size, "held": sum(fills[how] or 0 for *_, how in held)}


def tokens_held(replay, step: int) -> int:
    return sum(replay.kv.computed(r, step) or 0 for r in tables_after(replay.log, step))


def kv_screenshot(page, name: str) -> None:
    page.locator(STAGE).screenshot(path=f"/tmp/kv-{name}.png")
    screenshot(page, f"kv-{name}")


def test_the_kv_pool_shows_each_block_s_holder_the_gauge_and_the_selected_request_s_block_table(page, url):
    replay = replay_of(resolve_scenario("preemption"))  # 7 blocks of 2 tokens
    open_app(page, url, "?scenario=preemption&step=3&predict=false")
    pool = page.evaluate(POOL)
    assert len(pool) == 7 and pool == expected_pool(replay, 3)
    assert {how for *_, how in pool} == {"free", "full", "part"}  # (paged: no block is reserved but empty)
    held = tokens_held(replay, 3)
    capacity, allocated = 14, sum(map(len, tables_after(replay.log, 3).values())) * 2
    assert gauge(page) == {"held": held, "reserved": allocated - held, "free": capacity - allocated}
    assert f"{held} tokens held" in page.locator(".stage .kv .gauge-text").inner_text()
    assert "Click a cell" in page.locator(".stage .blocktable").inner_text()

    page.locator(".stage .cell[title^='slot 0 · step 3: request A']").click()  # select A
    entries = page.evaluate(
        f"() => [...({FIND_STAGE})().querySelectorAll('.blocktable .entry')]"
        ".map((e) => [Number(e.dataset.logical), Number(e.dataset.block), Number(e.dataset.fill)])"
    )
    a_tokens = replay.kv.computed(0, 3)
    assert entries == [[i, b, max(0, min(2, a_tokens - 2 * i))] for i, b in enumerate(replay.kv.blocks(0, 3))]
    assert len(cells(page, ".kv .blk.sel")) == len(replay.kv.blocks(0, 3))  # A's blocks outlined

    # ⟲ on the cell where C was preempted: its last step in its slot, before the preemption's step
    preempt = next(e for e in replay.log if e.kind == "preempt")
    marked = cells(page, ".cell.preempt")
    assert [t.split(":")[0] for t in marked] == [f"slot {preempt.slot} · step {preempt.step - 1}"]
    mark = page.evaluate(f"() => getComputedStyle(({FIND_STAGE})().querySelector('.cell.preempt'), '::after').content")
    assert mark == '"⟲"'
    kv_screenshot(page, "preemption-step3")

    for step in (1, 0, 6, 8, 2):  # back (rebuilt from a checkpoint) and forward (the ops applied since)
        page.locator(".stage input[type='range']").fill(str(step))
        wait_for_stage_step(page, step)
        assert page.evaluate(POOL) == expected_pool(replay, step), step
    assert "Request A's block table at step 2: 2 blocks, 4 tokens" in page.locator(".stage .blocktable").inner_text()
    page.locator(".stage input[type='range']").fill("7")
    wait_for_stage_step(page, 7)  # A finished at step 5
    assert "Request A holds no blocks at step 7." in page.locator(".stage .blocktable").inner_text()


def upload_scenario(page, url, path) -> None:
    """Open the app, upload the scenario at `path` and wait for its KV pool on the stage."""
    open_app(page, url, "?predict=false")  # the file's predictions would hide the steps played here
    page.locator("[data-testid='stSelectbox']").first.click()
    page.keyboard.type("Upload")  # the lesson list is long: filter it to the last option
    page.get_by_role("option", name="Upload a file (scenario, event log or trace)…").click()
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(path))
    page.wait_for_selector(".stage .kv .pool .blk", timeout=60_000)


def test_reserved_but_empty_blocks_are_hatched(page, url, tmp_path):
    text = (ROOT / "scenarios" / "kv-paged-vs-reserve.toml").read_text().replace('"paged"', '"reserve"')
    path = tmp_path / "reserve.toml"
    path.write_text(text)
    replay = replay_of(parse_scenario(text))
    upload_scenario(page, url, path)
    for _ in range(3):
        control(page, "next").click()
    wait_for_stage_step(page, 3)
    pool = page.evaluate(POOL)
    assert pool == expected_pool(replay, 3)
    empty = [b for b, _, how in pool if how == "empty"]
    assert len(empty) > 4  # each row reserved prompt + max_tokens = 5 blocks; after 4 tokens, the last hold none
    hatch = page.evaluate(f"() => getComputedStyle(({FIND_STAGE})().querySelector('.kv .blk.empty')).backgroundImage")
    assert hatch.startswith("repeating-linear-gradient")
    kv_screenshot(page, "reserve-step3")


# Per block: [block, references (a held block without a count: 1), cached and free, evicted at this step]
SHARED_POOL = f"""() => [...({FIND_STAGE})().querySelectorAll('.kv .pool .blk')].map((box) => [
  Number(box.dataset.block), box.dataset.request === undefined ? 0 : Number(box.dataset.refs || 1),
  box.classList.contains('cached'), box.classList.contains('evicted')])"""


def expected_shared_pool(log, step: int) -> list[list]:
    """The same, from the log's own pool replay after the step (pool_state.pool_after) and its kv_evict events."""
    pool, evicted = pool_after(log, step), {e.block for e in log if e.kind == "kv_evict" and e.step == step}
    refs = pool.refs
    return [[b, refs[b], not refs[b] and b in pool.cached, b in evicted] for b in range(log.config.kv_blocks)]


def test_the_prefix_cache_s_shared_cached_and_evicted_blocks_and_its_hits_are_drawn(page, url, tmp_path):
    path = tmp_path / "shared-prompt.toml"
    path.write_text(SHARED_PROMPT)
    log = simulate(parse_scenario(SHARED_PROMPT))
    upload_scenario(page, url, path)
    seen = {}
    for step in (3, 7, 8, 4, 0, 12):  # forward, back (from a checkpoint), to the end
        page.locator(".stage input[type='range']").fill(str(step))
        wait_for_stage_step(page, step)
        seen[step] = page.evaluate(SHARED_POOL)
        assert seen[step] == expected_shared_pool(log, step), step
        if step == 3:  # B hits A's 4 system-prompt blocks: each held twice, with its count
            assert [b for b, refs, *_ in seen[3] if refs == 2] == [0, 1, 2, 3]
            badge = page.evaluate(
                f"() => getComputedStyle(({FIND_STAGE})().querySelector('.kv .blk.shared'), '::after').content"
            )
            assert badge == '"×2"'
            hits = sum(e.kind == "prefix_hit" and e.request_id == "B" for e in log) * 4
            prefill = next(e for e in log if e.kind == "prefill" and e.request_id == "B")
            cell = ".cell[title^='slot 1 · step 3: request B']"
            text = page.evaluate(f"() => ({FIND_STAGE})().querySelector({json.dumps(cell)}).lastChild.textContent")
            done = prefill.computed - hits  # computed, of 24: the cached ones are said apart
            assert text == f"prefill {done}/24 ({hits}\u00a0cached)" == "prefill 7/24 (16\u00a0cached)"
    assert any(cached for _, _, cached, _ in seen[7])  # A has ended: its full blocks are "cached, free"
    evicted = [b for b, _, _, ring in seen[8] if ring]
    assert evicted == sorted(e.block for e in log if e.kind == "kv_evict") and evicted  # D's new blocks were A's
    title = page.locator(".stage .kv h4").inner_text()  # (at step 12 now)
    assert title.endswith("· 0 blocks evicted at this step")
    cached, looked_up = cache_hits(log)  # every admission is before step 12
    assert page.locator(".stage .kv .hits").inner_text() == (
        f"Prefix cache hits so far: {cached} of {looked_up} tokens looked up at admission "
        f"({round(100 * cached / looked_up)}\u00a0%)"  # (a projector's line never breaks before the %)
    )

    page.locator(".stage input[type='range']").fill("6")
    wait_for_stage_step(page, 6)
    page.locator(".stage .kv .pool .blk[data-block='0']").click()  # held by B and C: the note names both
    note = page.locator(".stage .kv .blocknote")
    assert note.inner_text().startswith("Block 0 at step 6: shared by 2 requests:")
    assert note.locator("button").all_inner_texts() == ["B", "C"]
    note.locator("button", has_text="C").click()
    assert page.locator(".stage .blocktable").get_attribute("data-request") == "C"
    assert "Request C's block table at step 6" in page.locator(".stage .blocktable").inner_text()
    kv_screenshot(page, "prefix-cache-step6")


def test_a_chunked_prefill_cell_reads_its_progress_and_a_run_without_a_pool_has_no_panel(page, url):
    replay = replay_of(resolve_scenario("chunked-prefill"))  # a token budget, no KV pool
    open_app(page, url, "?scenario=chunked-prefill&step=6")
    assert page.locator(".stage .kv").count() == 0
    texts = page.evaluate(
        f"() => [...({FIND_STAGE})().querySelectorAll('.cell.prefill')].map((c) => c.lastChild.textContent)"
    )
    emitted = {(e.request_id, e.step) for e in replay.log if e.kind == "emit"}
    prompt = {info.request_id: len(info.prompt) for info in replay.log.requests}
    expected = [
        f"prefill {e.computed:,}/{prompt[e.request_id]:,}"
        for e in replay.log
        if e.kind == "prefill" and e.step <= 6 and (e.request_id, e.step) not in emitted
    ]
    assert texts == expected and len(expected) == 3  # L's 4,000 tokens, 509 a step
    assert expected[-1] == "prefill 1,527/4,000"
    kv_screenshot(page, "chunked-prefill-step6")


def test_scrubbing_a_1293_block_pool_rebuilds_it_at_every_step_it_lands_on(page, url):
    replay = replay_of(resolve_scenario("anyscale-cap128"))
    open_app(page, url, "?scenario=anyscale-cap128&step=700")
    for step in (700, 90, 1200, 650, 651):
        if step != 700:
            page.locator(".stage input[type='range']").fill(str(step))
            wait_for_stage_step(page, step)
        pool = page.evaluate(POOL)
        assert len(pool) == 1293 and pool == expected_pool(replay, step), step
    kv_screenshot(page, "anyscale-cap128-step651")


def test_in_projector_mode_the_kv_pool_s_text_is_at_least_24_px_too(browser, url):
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    open_app(page, url, "?scenario=preemption&presentation=true&step=3&predict=false")
    page.locator(".stage .cell[title^='slot 0 · step 3: request A']").click()  # its block table shown
    assert page.locator(".stage .blocktable .entry").count() == 3
    assert small_texts(page) == []
    kv_screenshot(page, "projector-preemption-step3")
    page.close()

"""Spot the bug: each zoo engine's own event log beside the correct engine's, the first difference
counted over requests, tokens, stop matches, evictions, deliveries, preemptions and freed blocks,
narration that gives each engine's real reasons (the memory mistakes' too), the step slider reset
per bug, one shared x range, and "spot it first"."""

import json
import pathlib

import pytest
from streamlit.testing.v1 import AppTest

from cblab.ui.practice.bug_story import story
from cblab.ui.practice.pair_view import INSET, OUTLINE, pair_figure
from cblab.ui.practice.paired_runs import cells, first_difference, run_logged
from cblab.ui.practice.spot_the_bug import bug_demo, verdict
from engine.analysis.narration import narrate
from engine.analysis.replay import Replay
from engine.practice.checker.cases import fixed_cases
from engine.practice.checker.driver import run_case
from engine.practice.memory_demos import DemoCase
from engine.practice.zoo import BUGS

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")

FIRST_DIFFERENCE = {  # (step, slot) where the engine with the mistake first goes wrong
    "crossed-results": (1, 0),
    "leaky-stop-state": (1, 0),
    "trimmed-stop-token": (0, 0),
    "idle-freed-slot": (1, 0),
    "naive-stop-matcher": (3, 0),
    "max-tokens-counts-prompt": (0, 0),
    "static-batching": (1, 0),
    "preempted-to-the-back": (2, 0),  # r2, not the preempted r1, is admitted into slot 0
    "leaked-blocks": (1, 0),  # the correct engine frees r0's block and admits r2 into slot 0
    "oldest-preempted": (1, 0),  # r0 is preempted in slot 0, where it should emit 11 and finish
    "forgetful-recompute": (1, 1),  # r1's preemption in slot 1 keeps 1 token to recompute, not 2
    "tail-sized-to-shortest-stop": (1, 0),  # r0 completes [7, 8] and runs on
    "tail-not-reset-after-stop-sequence": (2, 0),  # r1 "completes" [7, 8] with r0's 7
}
STEPS = {  # steps of (the buggy run, the correct run)
    "crossed-results": (4, 4),
    "leaky-stop-state": (2, 4),
    "trimmed-stop-token": (3, 3),
    "idle-freed-slot": (5, 4),
    "naive-stop-matcher": (10, 4),
    "max-tokens-counts-prompt": (1, 3),
    "static-batching": (5, 4),
    "preempted-to-the-back": (5, 5),
    "leaked-blocks": (3, 2),
    "oldest-preempted": (5, 5),
    "forgetful-recompute": (6, 5),
    "tail-sized-to-shortest-stop": (3, 2),
    "tail-not-reset-after-stop-sequence": (3, 6),
}
CHECKER_BUGS = [name for name in BUGS if BUGS[name].demo is None]  # the others run on their memory demo case


def practice_app(spot_first: bool = True) -> AppTest:
    """The Practice tab; `spot_first=False` switches "Spot it first" (on by default) off, so the
    explanation and the first difference show at once."""
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["tab"] = "Practice"
    app.run()
    return app if spot_first else app.toggle(key="spot_first").set_value(False).run()


def story_of(name: str, side: int, step: int, explain: bool = True) -> list[str]:
    demo = bug_demo(name)
    return story(Replay((demo.buggy, demo.correct)[side]), step, demo.received[side], demo.answer, explain)


def whole_story(name: str, side: int) -> list[str]:
    demo = bug_demo(name)
    return [s for k in range(len(Replay((demo.buggy, demo.correct)[side]))) for s in story_of(name, side, k)]


def bug_charts(app: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in app.get("plotly_chart") if "bug_" in c.proto.id]


def outlines(spec: dict) -> list[tuple[float, float, float, float]]:
    return [(s["x0"], s["x1"], s["y0"], s["y1"]) for s in spec["layout"]["shapes"] if s.get("name") == OUTLINE]


def cell(step: int, slot: int) -> tuple[float, float, float, float]:
    return (step - INSET, step + INSET, slot - INSET, slot + INSET)


def page_text(app: AppTest) -> str:
    return "\n".join(m.value for m in app.markdown)


# -- the demo and its first difference ------------------------------------------------------


def test_every_bug_has_a_pinned_first_difference():
    assert set(FIRST_DIFFERENCE) == set(STEPS) == set(BUGS)


@pytest.mark.parametrize("name", list(BUGS))
def test_first_difference_of_each_bug(name):
    demo = bug_demo(name)
    assert first_difference(demo.buggy, demo.correct, demo.received) == FIRST_DIFFERENCE[name]
    assert first_difference(demo.correct, demo.correct, (demo.received[1],) * 2) is None
    assert (demo.buggy.num_steps, demo.correct.num_steps) == STEPS[name]


@pytest.mark.parametrize("name", CHECKER_BUGS)
def test_the_demo_runs_the_case_exactly_like_the_checker(name):
    """Same model, same submissions, same callbacks: the trace is run_case's, and the log is the engine's own."""
    case = next(c for c in fixed_cases() if c.title == bug_demo(name).title)
    trace, log, received = run_logged(BUGS[name].engine, DemoCase(case))
    assert trace.to_json() == run_case(BUGS[name].engine, case.to_json(), True).to_json()
    assert log == bug_demo(name).buggy
    assert received == {f"r{i}": tuple(tokens) for i, tokens, _ in trace.callbacks}
    assert log.model is None  # not rebuilt from the trace (a rebuilt log names the checker case)


def test_the_leaky_engine_logs_its_own_stop_match():
    matches = [e for e in bug_demo("leaky-stop-state").buggy if e.kind == "stop_match"]
    assert [(e.step, e.slot, e.request_id, e.sequence) for e in matches] == [(1, 0, "r1", (7, 8))]
    evictions = [(e.step, e.request_id, e.reason) for e in bug_demo("leaky-stop-state").buggy if e.kind == "evict"]
    assert evictions == [(0, "r0", "max_tokens"), (1, "r1", "stop_sequence")]


def test_the_difference_counts_stop_matches_and_evictions_not_only_tokens():
    """leaky: both runs emit 8 for r1 at step 1; only the buggy one matches [7, 8] and evicts there
    (counting emitted tokens alone would put the difference a step late, at step 2)."""
    demo = bug_demo("leaky-stop-state")
    buggy, correct = cells(demo.buggy, demo.received[0]), cells(demo.correct, demo.received[1])
    assert buggy[1, 0] - correct[1, 0] == {
        ("stop_match", "r1", (7, 8)),
        ("evict", "r1", ("stop_sequence", (101, 8))),
    }
    assert correct[1, 0] - buggy[1, 0] == set()
    emitted = [{k: {f for f in facts if f[0] == "emit"} for k, facts in side.items()} for side in (buggy, correct)]
    assert min(k for k in buggy.keys() | correct.keys() if emitted[0].get(k) != emitted[1].get(k)) == (2, 0)


def test_max_tokens_evicts_at_step_0_with_the_same_token():
    demo = bug_demo("max-tokens-counts-prompt")
    buggy, correct = cells(demo.buggy, demo.received[0]), cells(demo.correct, demo.received[1])
    assert buggy[0, 0] - correct[0, 0] == {("evict", "r0", ("max_tokens", (100, 2, 3)))}
    assert ("emit", "r0", 3) in buggy[0, 0] & correct[0, 0]
    naive = cells(bug_demo("naive-stop-matcher").correct, bug_demo("naive-stop-matcher").received[1])[3, 0]
    assert {("stop_match", "r0", (1, 1, 2)), ("evict", "r0", ("stop_sequence", (100, 1, 1, 1, 2)))} <= naive


def test_a_trimmed_delivery_differs_only_in_what_the_callback_received():
    demo = bug_demo("trimmed-stop-token")
    assert first_difference(demo.buggy, demo.correct) is None  # the two event logs are the same
    assert demo.received[0] == {"r0": (100, 2, 3), "r1": (101, 20, 2, 1), "r2": (102,)}
    assert demo.received[1] == {"r0": (100, 2, 3, 0), "r1": (101, 20, 2, 1, 0), "r2": (102, 0)}
    assert first_difference(demo.buggy, demo.correct, demo.received) == (0, 0)


# -- the narration states what really happened -----------------------------------------------


def test_leaky_stop_state_narrates_the_real_stop_match_and_where_its_start_came_from():
    assert story_of("leaky-stop-state", 0, 1) == [
        "Request r1 is admitted into slot 0 from the queue.",
        "The queue is empty.",
        "The model is called with 1 row.",
        "Slot 0: request r1 emitted 8, completing stop sequence [7, 8]; it is evicted and its callback "
        "receives [101, 8].",
        "Request r1 itself generated only [8]: it never completed stop sequence [7, 8]. The [7] was generated "
        "last by request r0, which held slot 0 before it.",
    ]
    assert story_of("leaky-stop-state", 1, 1)[-1] == "Slot 0: request r1 emitted 8."
    assert not [s for s in whole_story("leaky-stop-state", 0) if "r1" in s and "max_tokens" in s]


def test_the_naive_matcher_misses_the_overlapping_stop():
    assert story_of("naive-stop-matcher", 0, 3) == [
        "The model is called with 1 row.",
        "Slot 0: request r0 emitted 2.",
        "Request r0's own tokens now end with its stop sequence [1, 1, 2], yet nothing matched.",
    ]
    assert story_of("naive-stop-matcher", 1, 3)[-1] == (
        "Slot 0: request r0 emitted 2, completing stop sequence [1, 1, 2]; it is evicted and its callback "
        "receives [100, 1, 1, 1, 2]."
    )
    assert story_of("naive-stop-matcher", 0, 9)[-1] == (
        "Slot 0: request r0 emitted 99, reaching max_tokens = 10; it is evicted and its callback receives "
        "[100, 1, 1, 1, 2, 9, 99, 99, 99, 99, 99]."
    )
    assert story_of("naive-stop-matcher", 1, 4) == ["This run has ended: its last step is 3."]


@pytest.mark.parametrize("name", list(BUGS))
@pytest.mark.parametrize("side", [0, 1])
def test_no_sentence_names_an_empty_stop_sequence_or_a_budget_the_request_does_not_have(name, side):
    demo = bug_demo(name)
    log = (demo.buggy, demo.correct)[side]
    budgets = {info.request_id: info.max_tokens for info in log.requests}
    sentences = whole_story(name, side)
    assert not [s for s in sentences if "stop sequence []" in s]
    for s in sentences:
        if ", reaching max_tokens = " in s:
            rid = s.split("request ")[1].split(" ")[0]
            assert f"reaching max_tokens = {budgets[rid]};" in s


def test_a_tail_sized_to_the_shortest_stop_is_narrated_as_a_missed_match_then_a_late_one():
    assert story_of("tail-sized-to-shortest-stop", 0, 1)[-1] == (
        "Request r0's own tokens now end with its stop sequence [7, 8], yet nothing matched."
    )
    assert story_of("tail-sized-to-shortest-stop", 0, 2)[-1] == (
        "Slot 0: request r0 emitted 5, completing stop sequence [5]; it is evicted and its callback receives "
        "[100, 7, 8, 5]."
    )
    assert story_of("tail-sized-to-shortest-stop", 1, 1)[-1] == (
        "Slot 0: request r0 emitted 8, completing stop sequence [7, 8]; it is evicted and its callback receives "
        "[100, 7, 8]."
    )


def test_a_tail_not_reset_after_a_stop_sequence_is_narrated_with_the_tokens_it_borrowed():
    assert story_of("tail-not-reset-after-stop-sequence", 0, 1)[-1] == (
        "Slot 0: request r0 emitted 7, completing stop sequence [4, 7]; it is evicted and its callback receives "
        "[100, 4, 7]."
    )
    assert story_of("tail-not-reset-after-stop-sequence", 0, 2)[-2:] == [
        "Slot 0: request r1 emitted 8, completing stop sequence [7, 8]; it is evicted and its callback receives "
        "[101, 8].",
        "Request r1 itself generated only [8]: it never completed stop sequence [7, 8]. The [7] was generated last "
        "by request r0, which held slot 0 before it.",
    ]
    assert story_of("tail-not-reset-after-stop-sequence", 1, 2)[-1] == "Slot 0: request r1 emitted 8."


def test_crossed_results_say_whose_answer_each_row_got():
    assert story_of("crossed-results", 0, 1) == [
        "Request r2 is admitted into slot 0 from the queue.",
        "1 request still waits.",
        "The model is called with 2 rows.",
        "Slot 0: request r2 emitted 22.",
        "Slot 1: request r1 emitted 31.",
        "The model answered 31 for request r2's row; the engine gave it 22, the model's answer for request r1's row.",
        "The model answered 22 for request r1's row; the engine gave it 31, the model's answer for request r2's row.",
    ]
    assert story_of("crossed-results", 0, 2) == [  # both off their scripts: the model answers 99 to each
        "The model is called with 2 rows.",
        "Slot 0: request r2 emitted 99, reaching max_tokens = 2; it is evicted and its callback receives "
        "[102, 22, 99].",
        "Slot 1: request r1 emitted 99, reaching max_tokens = 3; it is evicted and its callback receives "
        "[101, 21, 31, 99].",
    ]


def test_max_tokens_counting_the_prompt_ends_before_its_budget():
    assert story_of("max-tokens-counts-prompt", 0, 0)[-2:] == [
        "Slot 0: request r0 emitted 3, ending after 1 generated token, though its max_tokens is 3; it is "
        "evicted and its callback receives [100, 2, 3].",
        "Slot 1: request r1 emitted 30, ending after 1 generated token, though its max_tokens is 3; it is "
        "evicted and its callback receives [101, 20, 30].",
    ]


def test_a_trimmed_stop_token_is_narrated_as_delivered():
    assert story_of("trimmed-stop-token", 0, 0)[-5:] == [
        "Slot 0: request r0 emitted 0, the stop token; it is evicted and its callback receives [100, 2, 3].",
        "Slot 1: request r1 emitted 2.",
        "Slot 2: request r2 emitted 0, the stop token; it is evicted and its callback receives [102].",
        "Request r0's callback received [100, 2, 3]; the request holds [100, 2, 3, 0].",
        "Request r2's callback received [102]; the request holds [102, 0].",
    ]
    assert story_of("trimmed-stop-token", 1, 0)[-3].endswith("its callback receives [100, 2, 3, 0].")


@pytest.mark.parametrize("name", ["idle-freed-slot", "static-batching"])
def test_an_idle_slot_is_narrated(name):
    assert story_of(name, 0, 1) == [
        "The model is called with 1 row.",
        "Slot 1: request r1 emitted 22.",
        "Slot 0 is free during this model call while 2 requests wait.",
    ]


def test_the_idle_freed_slot_also_idles_slot_1_later():
    assert story_of("idle-freed-slot", 0, 3)[-1] == "Slot 1 is free during this model call while 1 request waits."


@pytest.mark.parametrize("name", list(BUGS))
def test_the_correct_side_is_narrated_exactly_as_the_log_says(name):
    demo = bug_demo(name)
    replay = Replay(demo.correct)
    assert all(story(replay, k, demo.received[1], demo.answer) == narrate(replay, k) for k in range(len(replay)))


def test_spot_it_first_narrates_without_the_facts_that_give_it_away():
    assert story_of("naive-stop-matcher", 0, 3, explain=False) == [
        "The model is called with 1 row.",
        "Slot 0: request r0 emitted 2.",
    ]
    assert story_of("leaky-stop-state", 0, 1, explain=False)[-1].startswith("Slot 0: request r1 emitted 8, completing")
    assert story_of("trimmed-stop-token", 0, 0, explain=False)[-1].endswith("its callback receives [102].")


def test_leaked_blocks_are_narrated_with_the_pool_really_free():
    """r0 keeps block 0 after its cancellation: the replay's free list (built from the rows in slots)
    would count it free; the story says what the engine has."""
    assert story_of("leaked-blocks", 0, 1) == [
        "Request r0 is cancelled: slot 0 is freed and its callback receives [100, 10].",
        "The model is called with 1 row.",
        "Slot 1: request r1 emitted 21, reaching max_tokens = 2; it is evicted and its callback receives "
        "[101, 20, 21].",
        "Request r1 gives its 1 block back to the pool.",
        "Request r0 has ended but never gave back block 0 (no kv_free): 1 of the pool's 3 blocks is free.",
    ]
    assert story_of("leaked-blocks", 0, 2)[1:3] == [
        "Request r2 takes blocks 1 and 2 (2 blocks now).",
        "0 blocks of the KV cache are free.",
    ]
    assert story_of("leaked-blocks", 0, 2)[-1].endswith("0 of the pool's 3 blocks are free.")
    assert story_of("leaked-blocks", 1, 1)[1:4] == [
        "Request r2 is admitted into slot 0 from the queue.",
        "Request r2 takes blocks 0 and 2 (2 blocks now).",
        "0 blocks of the KV cache are free.",
    ]


def test_a_preempted_row_sent_to_the_back_is_narrated_as_overtaken():
    assert story_of("preempted-to-the-back", 0, 1)[0] == (
        "Request r1 is preempted: its 1 block is freed; it goes back into the queue behind request r2 and will "
        "recompute 2 tokens."
    )
    assert story_of("preempted-to-the-back", 0, 2)[0] == "Request r2 is admitted into slot 0 from the queue."
    assert story_of("preempted-to-the-back", 0, 2)[-1] == (
        "Request r2 is admitted ahead of request r1, which was preempted at step 1 and should be first in the queue."
    )
    assert story_of("preempted-to-the-back", 1, 2)[0] == "Request r1 is admitted into slot 0 from the queue."


def test_the_oldest_row_preempted_is_narrated_beside_the_newer_one_that_runs_on():
    assert story_of("oldest-preempted", 0, 1) == [
        "Request r0 is preempted: its 1 block is freed; it goes back to the head of the queue and will recompute "
        "3 tokens.",
        "1 block of the KV cache is free.",
        "2 requests still wait.",
        "The model is called with 1 row.",
        "Slot 1: request r1 emitted 21.",
        "Request r0 is preempted though request r1, admitted after it, runs on: the newest row has the least work "
        "to redo.",
    ]
    assert story_of("oldest-preempted", 1, 1)[0].startswith("Request r1 is preempted: its 1 block is freed;")


def test_a_forgetful_recompute_is_narrated_from_the_tokens_the_row_really_holds():
    """r1 emits 20 twice; the replay would count 4 generated tokens and think its readmitted row is
    [101, 20]. The story counts what r1 holds: no crossed answer, its prefill is whole, max_tokens is 3."""
    assert story_of("forgetful-recompute", 0, 1)[0] == (
        "Request r1 is preempted: its 1 block is freed; it goes back to the head of the queue and will recompute "
        "1 token."
    )
    assert story_of("forgetful-recompute", 0, 1)[-1] == (
        "Request r1 keeps only 1 token of its 2: its generated [20] is forgotten and will be generated again."
    )
    assert story_of("forgetful-recompute", 0, 2)[-2:] == [
        "Request r1 prefills 1 token (1/1) and gets its first token at this step.",
        "Slot 0: request r1 emitted 20.",
    ]
    assert story_of("forgetful-recompute", 0, 4)[-2] == (
        "Slot 0: request r1 emitted 22, reaching max_tokens = 3; it is evicted and its callback receives "
        "[101, 20, 21, 22]."
    )
    assert not [s for s in whole_story("forgetful-recompute", 0) if "model answered" in s or "holds" in s]
    assert story_of("forgetful-recompute", 1, 2)[-2] == (
        "Request r1 prefills 2 tokens (2/2) and is sent to the model again at this step."
    )


def test_spot_it_first_leaves_out_the_memory_facts_but_keeps_the_corrections():
    assert story_of("leaked-blocks", 0, 1, explain=False) == story_of("leaked-blocks", 0, 1)[:-1]
    assert story_of("leaked-blocks", 0, 2, explain=False)[2] == "0 blocks of the KV cache are free."
    assert story_of("forgetful-recompute", 0, 1, explain=False) == story_of("forgetful-recompute", 0, 1)[:-1]
    assert "behind request r2" in story_of("preempted-to-the-back", 0, 1, explain=False)[0]


# -- the two grids ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(BUGS))
def test_both_grids_share_one_x_range_one_height_and_the_outlined_cell(name):
    demo, (step, slot) = bug_demo(name), FIRST_DIFFERENCE[name]
    steps = max(STEPS[name])
    for k in range(steps):
        left, right = (pair_figure(Replay(log), k, steps, (step, slot)) for log in (demo.buggy, demo.correct))
        assert list(left.layout.xaxis.range) == list(right.layout.xaxis.range) == [-0.5, steps - 0.5]
        assert left.layout.height == right.layout.height and left.layout.showlegend is right.layout.showlegend is False
        frames = [(s.x0, s.x1) for side in (left, right) for s in side.layout.shapes if s.name != OUTLINE]
        assert frames == [(k - 0.5, k + 0.5)] * 2  # the current step's frame, at the same x in both
        shown = [cell(step, slot)] if k >= step else []
        assert [outlines(side.to_plotly_json()) for side in (left, right)] == [shown, shown]


# -- the learner's guess ---------------------------------------------------------------------


def test_verdicts():
    assert verdict((1, 0), (1, 0)) == ("success", "Right: the run with the mistake first goes wrong at step 1, slot 0.")
    assert verdict((1, 1), (1, 0)) == (
        "warning",
        "Close: same step, but the first difference is in slot 0 (step 1, slot 0).",
    )
    assert verdict((2, 0), (1, 0)) == ("warning", "Close: same slot, one step late; it is step 1, slot 0.")
    assert verdict((2, 0), (3, 0)) == ("warning", "Close: same slot, one step early; it is step 3, slot 0.")
    assert verdict((5, 1), (1, 0)) == ("error", "Not quite: it goes wrong earlier, at step 1, slot 0.")
    assert verdict((0, 1), (3, 0)) == (
        "error",
        "Not quite: at step 0 both runs still agree; the first difference is at step 3, slot 0.",
    )
    assert verdict((0, 0), None) == ("info", "The two runs agree everywhere: there is nothing to spot.")


# -- the page ---------------------------------------------------------------------------------


def test_switching_bugs_resets_the_step_to_the_first_difference():
    app = practice_app(spot_first=False)
    assert app.slider(key="bug_step").value == 1
    app.slider(key="bug_step").set_value(3).run()
    for name in ["naive-stop-matcher", "leaky-stop-state", "max-tokens-counts-prompt", "crossed-results"]:
        app.selectbox(key="bug").set_value(name).run()
        step, slot = FIRST_DIFFERENCE[name]
        assert app.slider(key="bug_step").value == step
        assert f"First difference (outlined in red): step {step}, slot {slot}." in [c.value for c in app.caption]
        assert [outlines(spec) for spec in bug_charts(app)] == [[cell(step, slot)]] * 2
    app.slider(key="bug_step").set_value(2).run()  # the learner's own step stays while the bug does
    assert app.slider(key="bug_step").value == 2
    app.selectbox(key="bug").set_value("leaky-stop-state").run()
    assert app.slider(key="bug_step").value == 1
    assert not app.exception


def test_both_grids_share_one_x_range_on_the_page():
    app = practice_app(spot_first=False)
    app.selectbox(key="bug").set_value("naive-stop-matcher").run()  # 10 steps beside 4
    app.slider(key="bug_step").set_value(6).run()
    left, right = bug_charts(app)
    assert left["layout"]["xaxis"]["range"] == right["layout"]["xaxis"]["range"] == [-0.5, 9.5]
    frames = [[s["x0"] for s in side["layout"]["shapes"] if s.get("name") != OUTLINE] for side in (left, right)]
    assert frames == [[5.5], [5.5]]
    assert outlines(left) == outlines(right) == [cell(3, 0)]
    assert not app.exception


def test_spot_the_bug_asks_first_by_default_and_tells_nothing_before_a_guess():
    """As the course's predictions do: a learner opening Practice is asked before being told."""
    app = practice_app()
    assert app.toggle(key="spot_first").value is True
    assert "What goes wrong" not in page_text(app) and "How to avoid it" not in page_text(app)
    assert not any(c.value.startswith("First difference") for c in app.caption)
    assert any(i.value.startswith("Spot it first: where does the run with the mistake") for i in app.info)
    assert [outlines(spec) for spec in bug_charts(app)] == [[], []]
    assert app.button(key="spot_check")
    assert not app.exception


def test_spot_it_first_hides_the_answer_until_the_learner_checks():
    app = practice_app()
    app.selectbox(key="bug").set_value("naive-stop-matcher").run()
    assert "What goes wrong" not in page_text(app) and "How to avoid it" not in page_text(app)
    assert not any(c.value.startswith("First difference") for c in app.caption)
    assert [outlines(spec) for spec in bug_charts(app)] == [[], []]
    assert app.slider(key="bug_step").value == 9  # the whole run, not the answer's step
    app.slider(key="bug_step").set_value(3).run()
    assert "yet nothing matched" not in page_text(app)  # the narration's hint waits too
    assert "Slot 0: request r0 emitted 2." in page_text(app)
    assert not app.success and not app.warning and not app.error
    app.number_input(key="spot_step").set_value(3).run()
    assert "What goes wrong" not in page_text(app)  # choosing is not checking
    app.button(key="spot_check").click().run()
    assert [s.value for s in app.success] == [
        "You said step 3, slot 0. Right: the run with the mistake first goes wrong at step 3, slot 0."
    ]
    assert BUGS["naive-stop-matcher"].avoid in page_text(app)
    assert "yet nothing matched" in page_text(app)
    assert "First difference (outlined in red): step 3, slot 0." in [c.value for c in app.caption]
    assert [outlines(spec) for spec in bug_charts(app)] == [[cell(3, 0)]] * 2
    assert app.slider(key="bug_step").value == 3
    assert not app.exception


def test_a_wrong_guess_says_so_and_shows_where():
    app = practice_app()
    app.selectbox(key="bug").set_value("idle-freed-slot").run()
    app.number_input(key="spot_step").set_value(3).run()
    app.number_input(key="spot_slot").set_value(1).run()
    app.button(key="spot_check").click().run()
    assert [e.value for e in app.error] == [
        "You said step 3, slot 1. Not quite: it goes wrong earlier, at step 1, slot 0."
    ]
    assert not app.success and not app.warning
    assert BUGS["idle-freed-slot"].why in page_text(app)
    assert app.slider(key="bug_step").value == 1
    assert not app.exception


def test_spot_it_first_says_close_and_starts_over_for_another_bug():
    app = practice_app()
    app.number_input(key="spot_step").set_value(1).run()
    app.number_input(key="spot_slot").set_value(1).run()
    app.button(key="spot_check").click().run()
    assert [w.value for w in app.warning] == [
        "You said step 1, slot 1. Close: same step, but the first difference is in slot 0 (step 1, slot 0)."
    ]
    app.selectbox(key="bug").set_value("leaky-stop-state").run()
    assert not app.warning and app.button(key="spot_check")
    assert app.number_input(key="spot_step").value == 0 and app.number_input(key="spot_slot").value == 0
    assert "What goes wrong" not in page_text(app)
    assert app.slider(key="bug_step").value == 3
    app.toggle(key="spot_first").set_value(False).run()
    assert BUGS["leaky-stop-state"].why in page_text(app)
    assert app.slider(key="bug_step").value == 1
    assert not app.exception

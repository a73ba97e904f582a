"""Hand-derived schedules: lowest free slot, FIFO order, padded rows, late submissions, zero budgets."""

import pytest

from engine import BatchInferenceEngine, Request, generate
from tests.helpers import (
    HashModel,
    ScriptModel,
    admits,
    assert_replay_matches,
    events,
    filler_model,
    record_steps,
    recording_engine,
)


def test_lowest_free_slot_first_after_out_of_order_frees():
    # A (slot 0) and C (slot 2) finish at step 0; D arrives at step 2 -> slot 0, E -> slot 2.
    model = filler_model(1, 2, 3, 4, 5)
    engine, rec = recording_engine(model, batch_size=3)
    rec.submit("A", [1], 1)
    rec.submit("B", [2], 5)
    rec.submit("C", [3], 1)
    rec.submit("D", [4], 1, arrival_step=2)
    rec.submit("E", [5], 1, arrival_step=2)
    engine.run()
    assert admits(engine) == [(0, 0, "A"), (0, 1, "B"), (0, 2, "C"), (2, 0, "D"), (2, 2, "E")]
    assert model.calls[2] == [[4], [2, 7, 7], [5]]


def test_lowest_free_slot_when_higher_slot_freed_first():
    # C (slot 2) finishes step 0, A (slot 0) finishes step 1; D arrives at step 2 -> slot 0.
    engine, rec = recording_engine(filler_model(1, 2, 3, 4), batch_size=3)
    rec.submit("A", [1], 2)
    rec.submit("B", [2], 5)
    rec.submit("C", [3], 1)
    rec.submit("D", [4], 1, arrival_step=2)
    snaps = record_steps(engine)
    assert admits(engine)[-1] == (2, 0, "D")
    assert snaps[2][0] == {1: "B"}  # D finished at step 2
    assert snaps[1][0] == {1: "B"}
    assert snaps[0][0] == {0: "A", 1: "B"}
    assert_replay_matches(engine, snaps)


def test_fifo_admission_in_submission_order_and_no_crossed_results():
    model = HashModel(vocab_size=50)
    engine, rec = recording_engine(model, batch_size=2)
    prompts = {f"q{i}": [i + 1, i + 2] for i in range(6)}
    budgets = [3, 1, 2, 4, 1, 2]
    for (name, prompt), budget in zip(prompts.items(), budgets):
        rec.submit(name, prompt, budget)
    engine.run()
    # each output equals a solo run (HashModel depends on the whole prefix)
    for (name, prompt), budget in zip(prompts.items(), budgets):
        solo = list(prompt)
        for _ in range(budget):
            solo.append(model.token(solo))
        assert rec.results[name] == solo
    # hand-derived slot schedule, in submission order
    assert admits(engine) == [(0, 0, "q0"), (0, 1, "q1"), (1, 1, "q2"), (3, 0, "q3"), (3, 1, "q4"), (4, 1, "q5")]


def test_padded_mode_refills_a_row_with_a_late_arrival():
    model = ScriptModel({(1,): [5, 6], (2,): [8]}, filler=7)
    engine, rec = recording_engine(model, batch_size=3, padded=True)
    rec.submit("A", [1], 2)
    rec.submit("B", [2], 1)
    rec.submit("C", [2], 1, arrival_step=1)
    engine.run()
    assert rec.results == {"A": [1, 5, 6], "B": [2, 8], "C": [2, 8]}
    assert [len(c) for c in model.calls] == [3, 3]
    assert model.masks == [[True, True, False], [True, True, False]]
    assert [c[:2] for c in model.calls] == [[[1], [2]], [[1, 5], [2]]]
    calls = events(engine, "model_call")
    assert [(e.rows, e.active_mask, e.padded_rows) for e in calls] == [
        (3, (True, True, False), 1),
        (3, (True, True, False), 1),
    ]


@pytest.mark.parametrize("garbage", [None, 1.5, True, "x", -1, 2**80])
def test_padded_inactive_outputs_of_any_kind_are_ignored(garbage):
    class Model:
        def generate_next_tokens_padded(self, prefixes, mask):
            return [len(p) if m else garbage for p, m in zip(prefixes, mask)]

    delivered = []
    engine = BatchInferenceEngine(Model(), 4, None, padded=True)
    engine.submit_request([9, 9], 2, delivered.append)
    engine.run()
    assert delivered == [[9, 9, 2, 3]]


def test_request_submitted_from_a_callback_is_admitted_at_the_next_step():
    engine, rec = recording_engine(filler_model(1, 2))
    rec.submit("A", [1], 1, then=lambda: rec.submit("B", [2], 2))
    engine.run()
    assert rec.results == {"A": [1, 7], "B": [2, 7, 7]}
    assert admits(engine) == [(0, 0, "A"), (1, 0, "B")]


def test_max_tokens_zero_delivers_a_copy_of_the_prompt_without_slot_or_model():
    model = filler_model(1)
    engine = BatchInferenceEngine(model, 1, 0)
    prompt, delivered = [1, 0], []
    engine.submit_request(prompt, 0, delivered.append)
    engine.run()
    assert delivered == [[1, 0]] and delivered[0] is not prompt
    assert model.calls == []
    assert admits(engine) == []
    assert [(e.slot, e.reason) for e in events(engine, "evict")] == [(None, "max_tokens")]


def test_max_tokens_zero_does_not_delay_the_next_admission():
    engine, rec = recording_engine(filler_model(1, 2))
    rec.submit("Z", [1], 0)
    rec.submit("A", [2], 1)
    engine.run()
    assert rec.results == {"Z": [1], "A": [2, 7]}
    assert admits(engine) == [(0, 0, "A")]


def test_generate_returns_generated_tokens_only_and_nothing_for_zero_budget():
    model = ScriptModel({(1,): [5, 0], (2,): [6, 6, 6]}, filler=7)
    out = generate(model, [Request("x", [1], 5), Request("y", [2], 2), Request("z", [2], 0)], 1, 0)
    assert out == {"x": [5, 0], "y": [6, 6], "z": []}


def test_rows_ending_in_one_step_for_different_reasons_end_in_slot_order():
    """r1 (slot 1) gets the stop token at step 2 as r2 (slot 0, admitted at step 1) reaches max_tokens: the
    stop token is checked on every token, max_tokens on the rows filed under the step (scheduler.py's
    `ends_at`), and the two lists end up in slot order. r3 gets the stop token as its last token: it ends
    on the stop token, which the contract checks first."""

    def model(batch):
        return [0 if (p[0] == 5 and len(p) == 4) or p[0] == 6 else 1 for p in batch]

    engine = BatchInferenceEngine(model, 3, 0)
    engine.submit_request([1], 1, request_id="r0")
    engine.submit_request([5, 5], 9, request_id="r1")
    engine.submit_request([3], 2, request_id="r2", arrival_step=1)
    engine.submit_request([6], 1, request_id="r3")
    engine.run()
    ends = [(e.step, e.slot, e.request_id, e.reason) for e in engine.event_log if e.kind == "evict"]
    assert ends == [
        (0, 0, "r0", "max_tokens"),
        (0, 2, "r3", "stop_token"),
        (2, 0, "r2", "max_tokens"),
        (2, 1, "r1", "stop_token"),
    ]

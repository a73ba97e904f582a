"""Adversarial review of the engine against ../shared/engine-contract.md.

Every expected value is derived by hand from a scripted model (tests/helpers.py).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine import BatchInferenceEngine, CallbackError, EventLog, ModelError, Request, generate
from engine.replay import Replay
from tests.helpers import FlakyModel, HashModel, ScriptModel, make_engine


# -- helpers -----------------------------------------------------------------------------
class Recorder:
    """Submits requests with recording callbacks; counts every delivery."""

    def __init__(self, engine: BatchInferenceEngine):
        self.engine = engine
        self.results: dict[str, list[int]] = {}
        self.calls: dict[str, int] = {}
        self.objects: dict[str, list[int]] = {}

    def callback(self, name: str):
        def deliver(tokens):
            self.results[name] = list(tokens)
            self.objects[name] = tokens
            self.calls[name] = self.calls.get(name, 0) + 1

        return deliver

    def submit(self, name: str, prompt, max_tokens, stops=None, **options) -> str:
        return self.engine.submit_request(prompt, max_tokens, self.callback(name), stops, request_id=name, **options)


def events(engine, kind=None):
    return [e for e in engine.event_log if kind is None or e.kind == kind]


def evict_reasons(engine) -> dict[str, str]:
    return {e.request_id: e.reason for e in events(engine, "evict")}


def admits(engine) -> list[tuple[int, int, str]]:
    return [(e.step, e.slot, e.request_id) for e in events(engine, "admit")]


def stop_matches(engine):
    return [(e.step, e.request_id, e.sequence_index, e.sequence) for e in events(engine, "stop_match")]


def rows_seen(model) -> list[list[int]]:
    """Every prefix the model was sent (ragged), call by call."""
    return model.calls


def run_one(prompt, script, stops, stop_token=None, max_tokens=20):
    model = ScriptModel({tuple(prompt): script}, filler=98)
    engine = make_engine(model, batch_size=1, stop_token=stop_token)
    rec = Recorder(engine)
    rec.submit("a", prompt, max_tokens, stops)
    engine.run()
    return rec.results["a"], evict_reasons(engine)["a"], stop_matches(engine)


def snapshot_steps(engine) -> dict[int, tuple[dict[int, str], tuple[str, ...]]]:
    """Step the engine to the end; after each successful step record slot_table and waiting."""
    snaps = {}
    while engine.step():
        snaps[engine.clock - 1] = (dict(engine.slot_table), tuple(engine.waiting))
    return snaps


def assert_replay_matches(engine, snaps):
    replay = Replay(engine.event_log)
    for step, (table, waiting) in snaps.items():
        if step >= len(replay):
            assert table == {} and waiting == ()
            continue
        state = replay[step]
        live = {i: s.request_id for i, s in enumerate(state.slots) if s is not None and s.finish_reason is None}
        assert live == table, f"step {step}"
        assert state.waiting == waiting, f"step {step}"


# -- stop sequences ------------------------------------------------------------------------
def test_overlapping_stop_sequence_in_engine():
    out, reason, matches = run_one([50], [1, 1, 1, 2, 7], [[1, 1, 2]])
    assert (out, reason, matches) == ([50, 1, 1, 1, 2], "stop_sequence", [(3, "a", 0, (1, 1, 2))])


def test_self_overlapping_stop_sequence_in_engine():
    out, reason, matches = run_one([50], [1, 2, 1, 2, 1, 2, 3, 7], [[1, 2, 1, 2, 3]])
    assert (out, reason) == ([50, 1, 2, 1, 2, 1, 2, 3], "stop_sequence")
    assert matches == [(6, "a", 0, (1, 2, 1, 2, 3))]


def test_shorter_stop_that_is_prefix_of_longer_wins_by_completing_first():
    out, reason, matches = run_one([50], [1, 2, 3], [[1, 2, 3], [1, 2]])
    assert (out, reason, matches) == ([50, 1, 2], "stop_sequence", [(1, "a", 1, (1, 2))])


@pytest.mark.parametrize(
    ("stops", "index", "sequence"),
    [([[2, 3], [1, 2, 3]], 0, (2, 3)), ([[1, 2, 3], [2, 3]], 0, (1, 2, 3)), ([[3], [2, 3], [1, 2, 3]], 0, (3,))],
)
def test_same_token_completion_earliest_listed_wins(stops, index, sequence):
    out, reason, matches = run_one([50], [1, 2, 3], stops)
    assert (out, reason, matches) == ([50, 1, 2, 3], "stop_sequence", [(2, "a", index, sequence)])


def test_duplicate_stop_sequences_report_first_index():
    assert run_one([50], [4, 5], [[5], [5]])[2] == [(1, "a", 0, (5,))]


def test_inner_short_stop_completes_inside_long_one():
    out, reason, matches = run_one([50], [1, 2, 3, 4], [[1, 2, 3, 4], [3]])
    assert (out, matches) == ([50, 1, 2, 3], [(2, "a", 1, (3,))])


def test_stop_token_beats_stop_sequence_on_same_token():
    out, reason, matches = run_one([50], [2, 3, 9], [[2, 3], [3]], stop_token=3)
    assert (out, reason, matches) == ([50, 2, 3], "stop_token", [(1, "a", -1, (3,))])


def test_stop_sequence_ending_in_stop_token_reports_stop_token():
    out, reason, _ = run_one([50], [4, 0], [[4, 0]], stop_token=0)
    assert (out, reason) == ([50, 4, 0], "stop_token")


def test_stop_sequence_ignores_prompt_tail():
    # prompt ends with 1, 1; generated 2 must not complete [1, 1, 2]
    out, reason, _ = run_one([1, 1], [2, 5, 1, 1, 2, 9], [[1, 1, 2]])
    assert (out, reason) == ([1, 1, 2, 5, 1, 1, 2], "stop_sequence")


def test_stop_token_inside_prompt_never_stops():
    out, reason, _ = run_one([0, 0], [4, 4, 4], None, stop_token=0, max_tokens=2)
    assert (out, reason) == ([0, 0, 4, 4], "max_tokens")


def test_stop_sequence_on_last_budget_token_is_stop_sequence():
    out, reason, _ = run_one([50], [7, 8], [[7, 8]], max_tokens=2)
    assert (out, reason) == ([50, 7, 8], "stop_sequence")


def test_stop_state_does_not_leak_into_next_request_in_same_slot():
    # A ends at max_tokens right after 7 (a partial match of [7, 8]); B reuses slot 0 and
    # starts with 8: B must not stop, its matcher starts fresh.
    model = ScriptModel({(10,): [7], (20,): [8, 3, 9]}, filler=98)
    engine = make_engine(model, batch_size=1, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [10], 1, [[7, 8]])
    rec.submit("B", [20], 3, [[7, 8]])
    engine.run()
    assert rec.results == {"A": [10, 7], "B": [20, 8, 3, 9]}
    assert evict_reasons(engine) == {"A": "max_tokens", "B": "max_tokens"}
    assert admits(engine) == [(0, 0, "A"), (1, 0, "B")]


def test_many_stops_different_requests_share_no_state():
    model = ScriptModel({(10,): [1, 2, 3], (20,): [2, 3, 4]}, filler=98)
    engine = make_engine(model, batch_size=2, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [10], 5, [[2, 3, 4]])
    rec.submit("B", [20], 5, [[1, 2, 3]])
    engine.run()
    assert rec.results == {"A": [10, 1, 2, 3, 98, 98], "B": [20, 2, 3, 4, 98, 98]}


# -- slots, FIFO, static vs continuous --------------------------------------------------------
def test_lowest_free_slot_first_after_out_of_order_frees():
    # A (slot 0) and C (slot 2) finish at step 0; D arrives at step 2 -> slot 0, E -> slot 2.
    model = ScriptModel({(1,): [], (2,): [], (3,): [], (4,): [], (5,): []}, filler=7)
    engine = make_engine(model, batch_size=3, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [1], 1)
    rec.submit("B", [2], 5)
    rec.submit("C", [3], 1)
    rec.submit("D", [4], 1, arrival_step=2)
    rec.submit("E", [5], 1, arrival_step=2)
    engine.run()
    assert admits(engine) == [(0, 0, "A"), (0, 1, "B"), (0, 2, "C"), (2, 0, "D"), (2, 2, "E")]
    assert rows_seen(model)[2] == [[4], [2, 7, 7], [5]]


def test_lowest_free_slot_when_higher_slot_freed_first():
    # C (slot 2) finishes step 0, A (slot 0) finishes step 1; D arrives at step 2 -> slot 0.
    model = ScriptModel({(1,): [], (2,): [], (3,): [], (4,): []}, filler=7)
    engine = make_engine(model, batch_size=3, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [1], 2)
    rec.submit("B", [2], 5)
    rec.submit("C", [3], 1)
    rec.submit("D", [4], 1, arrival_step=2)
    snaps = snapshot_steps(engine)
    assert admits(engine)[-1] == (2, 0, "D")
    assert snaps[2][0] == {1: "B"}  # D finished at step 2
    assert snaps[1][0] == {1: "B"}
    assert snaps[0][0] == {0: "A", 1: "B"}
    assert_replay_matches(engine, snaps)


def test_fifo_admission_in_submission_order_and_no_crossed_results():
    model = HashModel(vocab_size=50)
    engine = make_engine(model, batch_size=2, stop_token=None)
    rec = Recorder(engine)
    prompts = {f"q{i}": [i + 1, i + 2] for i in range(6)}
    budgets = [3, 1, 2, 4, 1, 2]
    for (name, prompt), budget in zip(prompts.items(), budgets):
        rec.submit(name, prompt, budget)
    engine.run()
    # order of admission
    assert [rid for _, _, rid in admits(engine)] == list(prompts)
    # each output equals a solo run (HashModel depends on the whole prefix)
    for (name, prompt), budget in zip(prompts.items(), budgets):
        solo = list(prompt)
        for _ in range(budget):
            solo.append(model.token(solo))
        assert rec.results[name] == solo
    # hand-derived slot schedule
    assert admits(engine) == [
        (0, 0, "q0"),
        (0, 1, "q1"),
        (1, 1, "q2"),
        (3, 0, "q3"),
        (3, 1, "q4"),
        (4, 1, "q5"),
    ]


def test_static_batching_waits_for_empty_batch():
    model = ScriptModel({(1,): [], (2,): [], (3,): []}, filler=7)
    engine = make_engine(model, batch_size=2, stop_token=None, batching="static")
    rec = Recorder(engine)
    rec.submit("A", [1], 1)
    rec.submit("B", [2], 3)
    rec.submit("C", [3], 1)
    engine.run()
    assert admits(engine) == [(0, 0, "A"), (0, 1, "B"), (3, 0, "C")]
    assert rows_seen(model) == [[[1], [2]], [[2, 7]], [[2, 7, 7]], [[3]]]


def test_continuous_batching_refills_immediately():
    model = ScriptModel({(1,): [], (2,): [], (3,): []}, filler=7)
    engine = make_engine(model, batch_size=2, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [1], 1)
    rec.submit("B", [2], 3)
    rec.submit("C", [3], 1)
    engine.run()
    assert admits(engine) == [(0, 0, "A"), (0, 1, "B"), (1, 0, "C")]
    assert rows_seen(model) == [[[1], [2]], [[3], [2, 7]], [[2, 7, 7]]]


def test_static_cancel_of_one_running_row_does_not_admit():
    model = ScriptModel({(1,): [], (2,): [], (3,): []}, filler=7)
    engine = make_engine(model, batch_size=2, stop_token=None, batching="static")
    rec = Recorder(engine)
    rec.submit("A", [1], 5)
    rec.submit("B", [2], 3)
    rec.submit("C", [3], 1)
    engine.step()
    engine.cancel("A")
    engine.run()
    assert rec.results == {"A": [1, 7], "B": [2, 7, 7, 7], "C": [3, 7]}
    assert admits(engine) == [(0, 0, "A"), (0, 1, "B"), (3, 0, "C")]


# -- padded ------------------------------------------------------------------------------------
def test_padded_mode_exact_rows_mask_and_garbage_ignored():
    model = ScriptModel({(1,): [5, 6], (2,): [8]}, filler=7)
    engine = make_engine(model, batch_size=3, stop_token=None, padded=True)
    rec = Recorder(engine)
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

    engine = BatchInferenceEngine(Model(), 4, None, padded=True)
    rec = Recorder(engine)
    rec.submit("A", [9, 9], 2)
    engine.run()
    assert rec.results == {"A": [9, 9, 2, 3]}


# -- cancellation ----------------------------------------------------------------------------
def test_cancel_waiting_never_reaches_model():
    model = ScriptModel({(1,): [], (2,): []}, filler=7)
    engine = make_engine(model, batch_size=1, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [1], 2)
    rec.submit("B", [2], 2)
    engine.step()
    assert engine.cancel("B") is True
    engine.run()
    assert rec.results == {"A": [1, 7, 7], "B": [2]}
    assert rec.calls == {"A": 1, "B": 1}
    assert all([2] not in call for call in model.calls)
    ev = [e for e in events(engine, "evict") if e.request_id == "B"][0]
    assert (ev.step, ev.slot, ev.reason) == (1, None, "cancelled")


def test_cancel_running_evicts_at_next_boundary_and_refills_lowest_slot():
    model = ScriptModel({(1,): [], (2,): [], (3,): []}, filler=7)
    engine = make_engine(model, batch_size=2, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [1], 5)
    rec.submit("B", [2], 5)
    rec.submit("C", [3], 1)
    engine.step()
    engine.step()
    engine.cancel("A")
    snaps = {}
    while engine.step():
        snaps[engine.clock - 1] = (dict(engine.slot_table), tuple(engine.waiting))
    assert rec.results["A"] == [1, 7, 7]
    assert evict_reasons(engine)["A"] == "cancelled"
    assert (2, 0, "C") in admits(engine)
    assert model.calls[2] == [[3], [2, 7, 7]]
    assert rec.calls == {"A": 1, "B": 1, "C": 1}
    assert_replay_matches(engine, snaps)


def test_cancel_pending_arrival():
    model = ScriptModel({(1,): [], (2,): []}, filler=7)
    engine = make_engine(model, batch_size=2, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [1], 3)
    rec.submit("B", [2], 3, arrival_step=2)
    engine.step()
    engine.cancel("B")
    engine.run()
    assert rec.results == {"A": [1, 7, 7, 7], "B": [2]}
    assert all([2] not in call for call in model.calls)
    assert evict_reasons(engine)["B"] == "cancelled"


def test_cancel_waiting_from_end_of_step_callback():
    model = ScriptModel({(1,): [], (2,): [], (3,): []}, filler=7)
    engine = make_engine(model, batch_size=1, stop_token=None)
    rec = Recorder(engine)

    def cancel_b(tokens):
        rec.callback("A")(tokens)
        engine.cancel("B")

    engine.submit_request([1], 1, cancel_b, request_id="A")
    rec.submit("B", [2], 2)
    rec.submit("C", [3], 1)
    engine.run()
    assert rec.results == {"A": [1, 7], "B": [2], "C": [3, 7]}
    assert model.calls == [[[1]], [[3]]]


def test_cancel_waiting_from_boundary_callback_never_reaches_model():
    """A max_tokens=0 request completes at the step boundary; its callback cancels B, which
    is still waiting (never admitted). B must never reach the model."""
    model = ScriptModel({(1,): [], (2,): []}, filler=7)
    engine = make_engine(model, batch_size=1, stop_token=None)
    rec = Recorder(engine)

    def cancel_b(tokens):
        rec.callback("Z")(tokens)
        engine.cancel("B")

    engine.submit_request([1], 0, cancel_b, request_id="Z")
    rec.submit("B", [2], 3)
    engine.run()
    assert rec.results == {"Z": [1], "B": [2]}
    assert evict_reasons(engine) == {"Z": "max_tokens", "B": "cancelled"}
    assert model.calls == []


def test_cancel_waiting_from_cancel_callback_at_boundary_never_reaches_model():
    model = ScriptModel({(1,): [], (2,): [], (3,): []}, filler=7)
    engine = make_engine(model, batch_size=2, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [1], 1)

    def cancel_c(tokens):
        rec.callback("B")(tokens)
        engine.cancel("C")

    engine.submit_request([2], 3, cancel_c, request_id="B")
    rec.submit("C", [3], 3)
    engine.cancel("B")  # B is waiting: cancelled at step 0's boundary; its callback cancels C
    engine.run()
    assert rec.results == {"A": [1, 7], "B": [2], "C": [3]}
    assert model.calls == [[[1]]]


def test_cancel_of_request_finishing_same_step_calls_back_once():
    model = ScriptModel({(1,): [], (2,): []}, filler=7)
    engine = make_engine(model, batch_size=2, stop_token=None)
    rec = Recorder(engine)
    returned = []

    def a_done(tokens):
        rec.callback("A")(tokens)
        returned.append(engine.cancel("B"))  # B finishes later in this very step

    engine.submit_request([1], 1, a_done, request_id="A")
    rec.submit("B", [2], 1)
    engine.run()
    assert rec.calls == {"A": 1, "B": 1}
    assert rec.results == {"A": [1, 7], "B": [2, 7]}
    assert evict_reasons(engine) == {"A": "max_tokens", "B": "max_tokens"}
    assert len(events(engine, "evict")) == 2
    assert engine.cancel("B") is False


def test_on_token_cancels_another_row_finishing_same_step():
    model = ScriptModel({(1,): [], (2,): []}, filler=7)
    engine = make_engine(model, batch_size=2, stop_token=None)
    rec = Recorder(engine)
    engine.submit_request([1], 3, rec.callback("A"), request_id="A", on_token=lambda t: engine.cancel("B"))
    rec.submit("B", [2], 1)
    engine.run()
    assert rec.calls == {"A": 1, "B": 1}
    assert rec.results == {"A": [1, 7, 7, 7], "B": [2, 7]}
    assert evict_reasons(engine) == {"A": "max_tokens", "B": "max_tokens"}


def test_on_token_cancels_own_row():
    model = ScriptModel({(1,): [4, 5, 6]}, filler=7)
    engine = make_engine(model, batch_size=1, stop_token=None)
    rec = Recorder(engine)
    engine.submit_request([1], 5, rec.callback("A"), request_id="A", on_token=lambda t: engine.cancel("A"))
    engine.run()
    assert rec.results == {"A": [1, 4]}
    assert rec.calls == {"A": 1}
    assert evict_reasons(engine) == {"A": "cancelled"}
    assert len(model.calls) == 1


# -- arrivals, submission from callbacks, max_tokens == 0 --------------------------------------
def test_arrival_step_idle_jump():
    model = ScriptModel({(1,): []}, filler=7)
    engine = make_engine(model, batch_size=2, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [1], 2, arrival_step=3)
    engine.run()
    assert rec.results == {"A": [1, 7, 7]}
    assert [(e.step, e.kind) for e in events(engine) if e.kind in ("arrive", "admit", "model_call")] == [
        (3, "arrive"),
        (3, "admit"),
        (3, "model_call"),
        (4, "model_call"),
    ]


def test_submit_from_callback_served_by_same_run():
    model = ScriptModel({(1,): [], (2,): []}, filler=7)
    engine = make_engine(model, batch_size=1, stop_token=None)
    rec = Recorder(engine)

    def resubmit(tokens):
        rec.callback("A")(tokens)
        rec.submit("B", [2], 2)

    engine.submit_request([1], 1, resubmit, request_id="A")
    engine.run()
    assert rec.results == {"A": [1, 7], "B": [2, 7, 7]}
    assert admits(engine) == [(0, 0, "A"), (1, 0, "B")]


def test_max_tokens_zero_completes_without_slot_or_model():
    model = ScriptModel({(1,): []}, filler=7)
    engine = make_engine(model, batch_size=1, stop_token=0)
    rec = Recorder(engine)
    prompt = [1, 0]
    rec.submit("A", prompt, 0)
    engine.run()
    assert rec.results == {"A": [1, 0]}
    assert rec.objects["A"] is not prompt
    assert model.calls == []
    assert admits(engine) == []
    ev = events(engine, "evict")
    assert [(e.slot, e.reason) for e in ev] == [(None, "max_tokens")]


def test_max_tokens_zero_does_not_delay_others():
    model = ScriptModel({(1,): [], (2,): []}, filler=7)
    engine = make_engine(model, batch_size=1, stop_token=None)
    rec = Recorder(engine)
    rec.submit("Z", [1], 0)
    rec.submit("A", [2], 1)
    engine.run()
    assert rec.results == {"Z": [1], "A": [2, 7]}
    assert admits(engine) == [(0, 0, "A")]


def test_empty_prompt_queries_model_with_empty_prefix():
    model = ScriptModel({(): [3, 4]}, filler=7)
    engine = make_engine(model, batch_size=2, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [], 2)
    engine.run()
    assert rec.results == {"A": [3, 4]}
    assert model.calls[0] == [[]]


def test_generate_returns_generated_only():
    model = ScriptModel({(1,): [5, 0], (2,): [6, 6, 6]}, filler=7)
    out = generate(model, [Request("x", [1], 5), Request("y", [2], 2), Request("z", [2], 0)], 1, 0)
    assert out == {"x": [5, 0], "y": [6, 6], "z": []}


# -- model faults ---------------------------------------------------------------------------
def fault_scenario(model, padded=False):
    engine = BatchInferenceEngine(model, 2, 0, padded=padded)
    rec = Recorder(engine)
    rec.submit("A", [1], 4, [[5, 6]])
    rec.submit("B", [2], 1)
    rec.submit("C", [3], 3)
    rec.submit("D", [4], 2, arrival_step=2)
    return engine, rec


SCRIPTS = {(1,): [5, 5, 6, 9], (2,): [8], (3,): [0], (4,): [4, 4]}


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("fault", ["raise", "short", "long", "float", "bool", "none"])
@pytest.mark.parametrize("attempt", [0, 1, 2])
def test_model_fault_leaves_rows_and_resume_is_identical(fault, attempt, padded):
    base_engine, base = fault_scenario(ScriptModel(SCRIPTS), padded)
    base_engine.run()
    assert base.results == {"A": [1, 5, 5, 6], "B": [2, 8], "C": [3, 0], "D": [4, 4, 4]}

    flaky = FlakyModel(ScriptModel(SCRIPTS), {attempt: fault})
    engine, rec = fault_scenario(flaky, padded)
    for _ in range(attempt):
        assert engine.step()
    before = engine.event_log.outputs()
    before_results = dict(rec.results)
    clock = engine.clock
    with pytest.raises(ModelError) as info:
        engine.run()
    assert f"step {attempt}" in str(info.value)
    assert "expected" in str(info.value)
    assert engine.clock == clock
    after = engine.event_log.outputs()
    assert {rid: after[rid] for rid in before} == before  # no row gained a token
    assert all(after[i.request_id] == list(i.prompt) for i in engine.event_log.requests if i.request_id not in before)
    assert rec.results == before_results
    assert events(engine)[-1].kind == "error"
    engine.run()
    assert rec.results == base.results
    assert rec.calls == {"A": 1, "B": 1, "C": 1, "D": 1}
    assert engine.event_log.outputs() == base_engine.event_log.outputs()


def test_numpy_int_tokens_accepted_and_delivered_as_int():
    class NP:
        def generate_next_tokens(self, prefixes):
            return np.array([len(p) for p in prefixes], dtype=np.int64)

    engine = BatchInferenceEngine(NP(), 2, 3)
    rec = Recorder(engine)
    rec.submit("A", [9], 5, [[2]])
    rec.submit("B", [9, 9], 5)
    engine.run()
    assert rec.results == {"A": [9, 1, 2], "B": [9, 9, 2, 3]}
    assert all(type(t) is int for out in rec.objects.values() for t in out)
    assert evict_reasons(engine) == {"A": "stop_sequence", "B": "stop_token"}


@pytest.mark.parametrize("bad", [True, np.bool_(True), 1.0, np.float64(2.0), "3", None])
def test_non_int_token_rejected_without_change(bad):
    class M:
        n = 0

        def generate_next_tokens(self, prefixes):
            M.n += 1
            return [bad if M.n == 2 else 5 for _ in prefixes]

    engine = BatchInferenceEngine(M(), 1, None)
    rec = Recorder(engine)
    rec.submit("A", [1], 3)
    engine.step()
    with pytest.raises(ModelError, match="step 1"):
        engine.step()
    engine.run()
    assert rec.results == {"A": [1, 5, 5, 5]}


def test_callback_error_in_boundary_is_reported_even_if_model_faults_same_step():
    """B is cancelled while waiting; its callback raises at step 1's boundary, and the
    model faults at step 1. The callback error must still be reported by a later run()."""
    flaky = FlakyModel(ScriptModel({(1,): [], (2,): []}, filler=7), {1: "raise"})
    engine = make_engine(flaky, batch_size=1, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [1], 2)

    def boom(tokens):
        rec.callback("B")(tokens)
        raise KeyError("boom")

    engine.submit_request([2], 2, boom, request_id="B")
    engine.step()
    engine.cancel("B")
    with pytest.raises(ModelError):
        engine.run()
    assert rec.calls == {"B": 1}
    assert [e.request_id for e in events(engine, "error")] == ["B", None]
    with pytest.raises(CallbackError) as info:
        engine.run()
    assert [rid for rid, _ in info.value.failures] == ["B"]
    assert rec.calls == {"A": 1, "B": 1}


# -- raising callbacks --------------------------------------------------------------------------
def test_raising_callback_others_delivered_once_and_logged():
    model = ScriptModel({(1,): [], (2,): [], (3,): [], (4,): []}, filler=7)
    engine = make_engine(model, batch_size=3, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [1], 1)

    def boom(tokens):
        rec.callback("B")(tokens)
        raise ValueError("bad B")

    engine.submit_request([2], 1, boom, request_id="B")
    rec.submit("C", [3], 1)
    rec.submit("D", [4], 2)
    with pytest.raises(CallbackError) as info:
        engine.run()
    assert [rid for rid, _ in info.value.failures] == ["B"]
    assert rec.results == {"A": [1, 7], "B": [2, 7], "C": [3, 7], "D": [4, 7, 7]}
    assert rec.calls == {"A": 1, "B": 1, "C": 1, "D": 1}
    errs = events(engine, "error")
    assert [(e.step, e.slot, e.request_id) for e in errs] == [(0, 1, "B")]
    assert "bad B" in errs[0].message
    assert engine.slot_table == {} and engine.waiting == []
    engine.run()  # nothing left, nothing re-raised
    assert rec.calls == {"A": 1, "B": 1, "C": 1, "D": 1}


def test_raising_on_token_never_stops_generation():
    model = ScriptModel({(1,): [3, 4, 5]}, filler=7)
    engine = make_engine(model, batch_size=1, stop_token=None)
    rec = Recorder(engine)
    seen = []

    def on_token(t):
        seen.append(t)
        raise RuntimeError(f"tok {t}")

    engine.submit_request([1], 3, rec.callback("A"), request_id="A", on_token=on_token)
    with pytest.raises(CallbackError) as info:
        engine.run()
    assert len(info.value.failures) == 3
    assert seen == [3, 4, 5]
    assert rec.results == {"A": [1, 3, 4, 5]}
    assert rec.calls == {"A": 1}
    assert [(e.step, e.request_id) for e in events(engine, "error")] == [(0, "A"), (1, "A"), (2, "A")]


# -- event log ----------------------------------------------------------------------------------
def build_rich_log(padded=False, stop_token=0):
    flaky = FlakyModel(ScriptModel({(1,): [5, 6, 9], (2,): [0], (3,): [], (4,): []}, filler=7), {2: "short"})
    engine = BatchInferenceEngine(flaky, 2, stop_token, padded=padded)
    rec = Recorder(engine)
    rec.submit("A", [1], 4, [[5, 6], [6]])

    def boom(tokens):
        raise ValueError('kaboom\n"quoted" ü')

    engine.submit_request([2], 3, boom, request_id="B")
    rec.submit("C", [3], 5)
    rec.submit("D", [4], 2, arrival_step=6)
    rec.submit("E", [], 0)
    rec.submit("F", [4], 2, arrival_step=9)
    snaps = {}
    for _ in range(20):
        try:
            if engine.clock == 2 and "C" not in rec.results:
                engine.cancel("C")
            if engine.clock == 3:
                engine.cancel("F")
            if not engine.step():
                break
            snaps[engine.clock - 1] = (dict(engine.slot_table), tuple(engine.waiting))
        except (ModelError, CallbackError):
            pass
    return engine, rec, snaps


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("stop_token", [0, None])
def test_jsonl_round_trip_with_errors_and_cancellations(padded, stop_token):
    engine, rec, snaps = build_rich_log(padded, stop_token)
    log = engine.event_log
    kinds = {e.kind for e in log}
    assert {"error", "evict", "stop_match", "arrive", "admit", "model_call", "emit"} <= kinds
    assert "cancelled" in evict_reasons(engine).values()
    text = log.to_jsonl()
    loaded = EventLog.from_jsonl(text)
    assert loaded == log
    assert list(loaded) == list(log)
    assert loaded.to_jsonl() == text
    for line in text.splitlines():
        json.loads(line)
    # emits rebuild exactly what callbacks received
    outs = loaded.outputs()
    for rid, got in rec.results.items():
        assert outs[rid] == got
    assert_replay_matches(engine, snaps)
    replay_live, replay_loaded = Replay(log), Replay(loaded)
    assert replay_live.states == replay_loaded.states


def test_rich_log_hand_values():
    engine, rec, _ = build_rich_log()
    assert rec.results == {"E": [], "A": [1, 5, 6], "C": [3, 7], "D": [4, 7, 7], "F": [4]}
    assert evict_reasons(engine) == {
        "E": "max_tokens",
        "B": "stop_token",
        "A": "stop_sequence",
        "C": "cancelled",
        "F": "cancelled",
        "D": "max_tokens",
    }
    assert stop_matches(engine) == [(0, "B", -1, (0,)), (1, "A", 0, (5, 6))]


def test_jsonl_load_rejects_out_of_range_step_with_value_error():
    engine = make_engine(ScriptModel({(1,): []}), batch_size=1, stop_token=None)
    engine.submit_request([1], 1, None)
    engine.run()
    lines = engine.event_log.to_jsonl().splitlines()
    record = json.loads(lines[1])
    record["step"] = 2**40
    lines[1] = json.dumps(record)
    with pytest.raises(ValueError):
        EventLog.from_jsonl("\n".join(lines))


def test_huge_arrival_step_is_rejected_or_served_never_lost():
    model = ScriptModel({(1,): [], (2,): []}, filler=7)
    engine = make_engine(model, batch_size=1, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [1], 1)
    try:
        rec.submit("B", [2], 1, arrival_step=2**31)
    except (ValueError, TypeError) as exc:  # rejecting it up front is fine too
        assert "arrival_step" in str(exc)
        engine.run()
        assert rec.results == {"A": [1, 7]}
        return
    raised = None
    for _ in range(2):  # even a resumed run must not lose B
        try:
            engine.run()
            break
        except Exception as exc:  # noqa: BLE001
            raised = raised or exc
    assert rec.results == {"A": [1, 7], "B": [2, 7]}
    assert raised is None


# -- replay consistency on a busy workload --------------------------------------------------------
@pytest.mark.parametrize("batching", ["continuous", "static"])
@pytest.mark.parametrize("padded", [False, True])
def test_replay_matches_engine_after_every_step(batching, padded):
    model = HashModel(vocab_size=5)
    engine = make_engine(model, batch_size=3, stop_token=0, batching=batching, padded=padded)
    rec = Recorder(engine)
    for i in range(10):
        rec.submit(f"q{i}", [i, i + 1], (i * 3) % 5, [[1, 2], [3, 3]], arrival_step=(i // 3) * 2)
    snaps = {}
    while True:
        if engine.clock == 3:
            for rid in ("q4", "q9"):
                if rid not in rec.results:
                    engine.cancel(rid)
        if not engine.step():
            break
        snaps[engine.clock - 1] = (dict(engine.slot_table), tuple(engine.waiting))
    assert_replay_matches(engine, snaps)
    assert set(rec.calls) == {f"q{i}" for i in range(10)}
    assert set(rec.calls.values()) == {1}
    outs = engine.event_log.outputs()
    assert {rid: outs[rid] for rid in rec.results} == rec.results


# -- differential check against a from-the-contract reference -----------------------------------
def reference_run(model, batch_size, stop_token, specs, *, static=False, cancels=None):
    """A slow, obviously-correct engine written straight from the contract.

    specs: list of (prompt, max_tokens, stops, arrival_step). cancels: {step: [index, ...]},
    cancel requested right before that step. Returns ({index: tokens}, [(step, slot, index)]).
    """
    cancels = dict(cancels or {})
    slots = [None] * batch_size  # index or None
    tokens = {}
    state = {}  # index -> "pending" | "waiting" | "running" | "done"
    pending = sorted(range(len(specs)), key=lambda i: (specs[i][3] or 0, i))
    for i in pending:
        state[i] = "pending"
    waiting: list[int] = []
    results, admitted = {}, []
    requested: list[int] = []
    clock = 0

    def finish(i):
        state[i] = "done"
        results[i] = list(tokens.get(i, specs[i][0]))

    def busy():
        return any(s is not None for s in slots) or waiting or any(v == "pending" for v in state.values())

    while busy() or requested:
        for step in sorted(s for s in cancels if s <= clock):
            requested += [i for i in cancels.pop(step) if state[i] != "done"]
        if not (busy() or requested):
            break
        if not (any(s is not None for s in slots) or waiting or requested):
            clock = max(clock, min((specs[i][3] or 0) for i, v in state.items() if v == "pending"))
        for i in requested:
            if state[i] == "done":
                continue
            if state[i] == "running":
                slots[slots.index(i)] = None
            elif state[i] == "waiting":
                waiting.remove(i)
            finish(i)
        requested = []
        due = sorted(
            (i for i, v in state.items() if v == "pending" and (specs[i][3] or 0) <= clock),
            key=lambda i: (specs[i][3] or 0, i),
        )
        for i in due:
            if specs[i][1] == 0:
                finish(i)
            else:
                state[i] = "waiting"
                waiting.append(i)
        if not static or all(s is None for s in slots):
            for slot in range(batch_size):
                if slots[slot] is None and waiting:
                    i = waiting.pop(0)
                    slots[slot] = i
                    state[i] = "running"
                    tokens[i] = list(specs[i][0])
                    admitted.append((clock, slot, i))
        rows = [i for i in slots if i is not None]
        if rows:
            out = model.generate_next_tokens([list(tokens[i]) for i in rows])
            done = []
            for i, t in zip(rows, out):
                tokens[i].append(t)
                gen = tokens[i][len(specs[i][0]) :]
                if (
                    t == stop_token
                    or any(gen[-len(s) :] == list(s) for s in specs[i][2] or [])
                    or len(gen) >= specs[i][1]
                ):
                    done.append(i)
            for i in done:
                slots[slots.index(i)] = None
                finish(i)
        clock += 1
    return results, admitted


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("batching", ["continuous", "static"])
def test_differential_against_reference(seed, batching, padded):
    import random

    rng = random.Random(seed)
    specs = []
    for _ in range(rng.randint(1, 9)):
        prompt = [rng.randrange(4) for _ in range(rng.randint(0, 3))]
        stops = [[rng.randrange(4) for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(0, 3))] or None
        arrival = rng.choice([None, None, rng.randint(0, 8)])
        specs.append((prompt, rng.randint(0, 6), stops, arrival))
    cancels = {}
    for i in range(len(specs)):
        if rng.random() < 0.25:
            cancels.setdefault(rng.randint(0, 8), []).append(i)
    batch = rng.randint(1, 3)
    stop_token = rng.choice([None, 0])
    expected, expected_admits = reference_run(
        HashModel(4), batch, stop_token, specs, static=batching == "static", cancels=cancels
    )

    engine = make_engine(HashModel(4), batch_size=batch, stop_token=stop_token, batching=batching, padded=padded)
    rec = Recorder(engine)
    for i, (prompt, budget, stops, arrival) in enumerate(specs):
        rec.submit(str(i), prompt, budget, stops, arrival_step=arrival)
    todo = dict(cancels)
    snaps = {}
    while True:
        for step in sorted(s for s in todo if s <= engine.clock):
            for i in todo.pop(step):
                engine.cancel(str(i))
        if not engine.step():
            break
        snaps[engine.clock - 1] = (dict(engine.slot_table), tuple(engine.waiting))
    assert rec.results == {str(i): v for i, v in expected.items()}
    assert admits(engine) == [(s, slot, str(i)) for s, slot, i in expected_admits]
    assert set(rec.calls.values()) == {1}
    assert_replay_matches(engine, snaps)
    assert EventLog.from_jsonl(engine.event_log.to_jsonl()) == engine.event_log


# -- assorted edges ---------------------------------------------------------------------------
def test_fault_then_cancel_admitted_row_then_resume_replays_consistently():
    flaky = FlakyModel(ScriptModel({(1,): [], (2,): [], (3,): []}, filler=7), {1: "raise"})
    engine = make_engine(flaky, batch_size=1, stop_token=None)
    rec = Recorder(engine)
    rec.submit("A", [1], 1)
    rec.submit("B", [2], 2)
    rec.submit("C", [3], 1)
    snaps = {}
    assert engine.step()
    snaps[0] = (dict(engine.slot_table), tuple(engine.waiting))
    with pytest.raises(ModelError, match="step 1"):
        engine.step()
    assert engine.slot_table == {0: "B"} and engine.waiting == ["C"]
    engine.cancel("B")
    while engine.step():
        snaps[engine.clock - 1] = (dict(engine.slot_table), tuple(engine.waiting))
    assert rec.results == {"A": [1, 7], "B": [2], "C": [3, 7]}
    assert admits(engine) == [(0, 0, "A"), (1, 0, "B"), (1, 0, "C")]
    assert_replay_matches(engine, snaps)
    assert EventLog.from_jsonl(engine.event_log.to_jsonl()) == engine.event_log


def test_end_of_step_callback_cancels_running_row():
    model = ScriptModel({(1,): [], (2,): [4, 5, 6]}, filler=7)
    engine = make_engine(model, batch_size=2, stop_token=None)
    rec = Recorder(engine)

    def a_done(tokens):
        rec.callback("A")(tokens)
        engine.cancel("B")

    engine.submit_request([1], 1, a_done, request_id="A")
    rec.submit("B", [2], 5)
    engine.run()
    assert rec.results == {"A": [1, 7], "B": [2, 4]}
    ev = [e for e in events(engine, "evict") if e.request_id == "B"][0]
    assert (ev.step, ev.slot, ev.reason) == (1, 1, "cancelled")
    assert len(model.calls) == 1


def test_callback_may_keep_and_mutate_its_list():
    model = ScriptModel({(1,): [4, 5], (2,): [6, 6]}, filler=7)
    engine = make_engine(model, batch_size=1, stop_token=None)
    kept = []

    def keep(tokens):
        kept.append(tokens)
        tokens.append(-1)

    engine.submit_request([1], 2, keep, request_id="A")
    engine.submit_request([2], 2, keep, request_id="B")
    engine.run()
    assert kept == [[1, 4, 5, -1], [2, 6, 6, -1]]
    assert engine.event_log.outputs() == {"A": [1, 4, 5], "B": [2, 6, 6]}


@pytest.mark.parametrize(
    ("kwargs", "exc", "field"),
    [
        ({"prompt_tokens": [1, True], "max_tokens": 1}, TypeError, "prompt_tokens"),
        ({"prompt_tokens": [1], "max_tokens": -1}, ValueError, "max_tokens"),
        ({"prompt_tokens": [1], "max_tokens": True}, TypeError, "max_tokens"),
        ({"prompt_tokens": [1], "max_tokens": 1, "stop_sequences": [[]]}, ValueError, "stop_sequences"),
        ({"prompt_tokens": [1], "max_tokens": 1, "stop_sequences": [[1, False]]}, TypeError, "stop_sequences"),
    ],
)
def test_rejected_request_is_never_queued(kwargs, exc, field):
    engine = make_engine(ScriptModel({(1,): []}), batch_size=1, stop_token=None)
    with pytest.raises(exc, match=field):
        engine.submit_request(callback=None, **kwargs)
    assert engine.has_work() is False
    assert engine.step() is False
    assert len(engine.event_log) == 0


def test_dataframe_matches_event_rows():
    engine, _, _ = build_rich_log(True)
    df = engine.event_log.to_dataframe()
    log = list(engine.event_log)
    assert list(df["kind"].astype(str)) == [e.kind for e in log]
    assert [None if v is None or v != v else v for v in df["request_id"]] == [e.request_id for e in log]
    assert [None if x is pd_na() else int(x) for x in df["slot"]] == [e.slot for e in log]
    assert [None if x is pd_na() else int(x) for x in df["padded_rows"]] == [e.padded_rows for e in log]


def pd_na():
    import pandas as pd

    return pd.NA

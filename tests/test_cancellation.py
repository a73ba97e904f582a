"""cancel() from outside, from callbacks and after a fault: one delivery each, no cancelled row reaches the model."""

import pytest

from engine import EventLog, ModelError
from engine.lab.scenario import parse_scenario
from engine.lab.simulate import simulate
from tests.helpers import (
    FlakyModel,
    ScriptModel,
    admits,
    assert_replay_matches,
    events,
    evict_reasons,
    filler_model,
    record_steps,
    recording_engine,
)


def test_static_batching_does_not_refill_a_cancelled_row():
    engine, rec = recording_engine(filler_model(1, 2, 3), batch_size=2, batching="static")
    rec.submit("A", [1], 5)
    rec.submit("B", [2], 3)
    rec.submit("C", [3], 1)
    engine.step()
    engine.cancel("A")
    engine.run()
    assert rec.results == {"A": [1, 7], "B": [2, 7, 7, 7], "C": [3, 7]}
    assert admits(engine) == [(0, 0, "A"), (0, 1, "B"), (3, 0, "C")]


def test_cancelled_running_row_is_refilled_from_the_lowest_slot_and_replays():
    model = filler_model(1, 2, 3)
    engine, rec = recording_engine(model, batch_size=2)
    rec.submit("A", [1], 5)
    rec.submit("B", [2], 5)
    rec.submit("C", [3], 1)
    engine.step()
    engine.step()
    engine.cancel("A")
    snaps = record_steps(engine)
    assert rec.results["A"] == [1, 7, 7]
    assert evict_reasons(engine)["A"] == "cancelled"
    assert (2, 0, "C") in admits(engine)
    assert model.calls[2] == [[3], [2, 7, 7]]
    assert rec.calls == {"A": 1, "B": 1, "C": 1}
    assert_replay_matches(engine, snaps)


def test_cancelling_a_request_before_its_arrival_step():
    model = filler_model(1, 2)
    engine, rec = recording_engine(model, batch_size=2)
    rec.submit("A", [1], 3)
    rec.submit("B", [2], 3, arrival_step=2)
    engine.step()
    engine.cancel("B")
    engine.run()
    assert rec.results == {"A": [1, 7, 7, 7], "B": [2]}
    assert all([2] not in call for call in model.calls)
    assert evict_reasons(engine)["B"] == "cancelled"


@pytest.mark.parametrize(
    ("batch_size", "requests", "cancel_first", "results", "reasons", "model_calls"),
    [
        pytest.param(  # A's callback at the end of step 0 cancels B, still waiting; C is served next
            1,
            [("A", [1], 1, "B"), ("B", [2], 2, None), ("C", [3], 1, None)],
            None,
            {"A": [1, 7], "B": [2], "C": [3, 7]},
            {"A": "max_tokens", "B": "cancelled", "C": "max_tokens"},
            [[[1]], [[3]]],
            id="end-of-step",
        ),
        pytest.param(  # Z (max_tokens 0) completes at the step boundary; its callback cancels B
            1,
            [("Z", [1], 0, "B"), ("B", [2], 3, None)],
            None,
            {"Z": [1], "B": [2]},
            {"Z": "max_tokens", "B": "cancelled"},
            [],
            id="zero-budget-at-boundary",
        ),
        pytest.param(  # B, cancelled while waiting, is delivered at step 0's boundary; its callback cancels C
            2,
            [("A", [1], 1, None), ("B", [2], 3, "C"), ("C", [3], 3, None)],
            "B",
            {"A": [1, 7], "B": [2], "C": [3]},
            {"A": "max_tokens", "B": "cancelled", "C": "cancelled"},
            [[[1]]],
            id="cancel-callback-at-boundary",
        ),
    ],
)
def test_callback_cancelling_a_waiting_request_keeps_it_from_the_model(
    batch_size, requests, cancel_first, results, reasons, model_calls
):
    model = filler_model(1, 2, 3)
    engine, rec = recording_engine(model, batch_size=batch_size)
    for name, prompt, budget, victim in requests:
        then = (lambda victim=victim: engine.cancel(victim)) if victim else None
        rec.submit(name, prompt, budget, then=then)
    if cancel_first:
        engine.cancel(cancel_first)
    engine.run()
    assert rec.results == results
    assert evict_reasons(engine) == reasons
    assert model.calls == model_calls


@pytest.mark.parametrize(
    ("hook", "a_budget", "a_tokens"),
    [("callback", 1, [1, 7]), ("on_token", 3, [1, 7, 7, 7])],
)
def test_cancelling_a_row_that_finishes_in_the_same_step_delivers_it_once(hook, a_budget, a_tokens):
    engine, rec = recording_engine(filler_model(1, 2), batch_size=2)

    def cancel_b(*_):
        engine.cancel("B")

    hooks = {"then": cancel_b} if hook == "callback" else {"on_token": cancel_b}
    rec.submit("A", [1], a_budget, **hooks)
    rec.submit("B", [2], 1)  # B finishes in step 0, after A (slot order)
    engine.run()
    assert rec.calls == {"A": 1, "B": 1}
    assert rec.results == {"A": a_tokens, "B": [2, 7]}
    assert evict_reasons(engine) == {"A": "max_tokens", "B": "max_tokens"}
    assert len(events(engine, "evict")) == 2
    assert engine.cancel("B") is False


def test_on_token_cancelling_its_own_row_stops_it_after_that_token():
    model = ScriptModel({(1,): [4, 5, 6]}, filler=7)
    engine, rec = recording_engine(model)
    rec.submit("A", [1], 5, on_token=lambda _: engine.cancel("A"))
    engine.run()
    assert rec.results == {"A": [1, 4]}
    assert rec.calls == {"A": 1}
    assert evict_reasons(engine) == {"A": "cancelled"}
    assert len(model.calls) == 1


def test_end_of_step_callback_cancelling_a_running_row_evicts_it_next_step():
    model = ScriptModel({(1,): [], (2,): [4, 5, 6]}, filler=7)
    engine, rec = recording_engine(model, batch_size=2)
    rec.submit("A", [1], 1, then=lambda: engine.cancel("B"))
    rec.submit("B", [2], 5)
    engine.run()
    assert rec.results == {"A": [1, 7], "B": [2, 4]}
    evict_b = [e for e in events(engine, "evict") if e.request_id == "B"][0]
    assert (evict_b.step, evict_b.slot, evict_b.reason) == (1, 1, "cancelled")
    assert len(model.calls) == 1


def test_fault_then_cancel_of_the_admitted_row_then_resume_replays_consistently():
    engine, rec = recording_engine(FlakyModel(filler_model(1, 2, 3), {1: "raise"}))
    rec.submit("A", [1], 1)
    rec.submit("B", [2], 2)
    rec.submit("C", [3], 1)
    snaps = {}
    with pytest.raises(ModelError, match="step 1"):
        record_steps(engine, into=snaps)
    assert engine.slot_table == {0: "B"} and engine.waiting == ["C"]  # B's admission at step 1 stands
    engine.cancel("B")
    record_steps(engine, into=snaps)
    assert rec.results == {"A": [1, 7], "B": [2], "C": [3, 7]}
    assert admits(engine) == [(0, 0, "A"), (1, 0, "B"), (1, 0, "C")]
    assert_replay_matches(engine, snaps)
    assert EventLog.from_jsonl(engine.event_log.to_jsonl()) == engine.event_log


def test_a_cancel_before_a_later_arrival_happens_before_admission():
    log = simulate(
        parse_scenario(
            'title = "t"\n[model]\nstop_chance = 0.0\n[[requests]]\nprompt = [1]\n'
            "max_tokens = 3\narrival_step = 10\ncancel_step = 5\n"
        )
    )
    assert [(e.step, e.kind, e.reason) for e in log] == [(5, "arrive", None), (5, "evict", "cancelled")]

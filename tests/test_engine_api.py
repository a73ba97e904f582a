"""The engine's API beyond the seeds' examples: validation, padding, cancel, arrivals, streaming."""

import re

import pytest

from engine import BatchInferenceEngine, MockModel, SimulatedLLM
from tests.helpers import HashModel, ScriptModel, make_engine


@pytest.mark.parametrize(
    ("args", "error", "field"),
    [
        (([1], -1), ValueError, "max_tokens"),
        (([1], 1.0), TypeError, "max_tokens"),
        (([1], True), TypeError, "max_tokens"),
        (([1, "a"], 1), TypeError, "prompt_tokens[1]"),
        (([1, True], 1), TypeError, "prompt_tokens[1]"),
        (("12", 1), TypeError, "prompt_tokens"),
        (([1], 1, None, [[]]), ValueError, "stop_sequences[0]"),
        (([1], 1, None, [[1, 2.0]]), TypeError, "stop_sequences[0][1]"),
        (([1], 1, None, [1, 2]), TypeError, "stop_sequences"),
        (([1], 1, "not callable"), TypeError, "callback"),
        (([2**64], 1), ValueError, "prompt_tokens[0]"),
    ],
)
def test_bad_request_raises_naming_the_field_and_queues_nothing(args, error, field):
    engine = make_engine()
    with pytest.raises(error, match="^" + re.escape(field) + ": "):
        engine.submit_request(*args)
    assert not engine.has_work()
    assert engine.step() is False


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"batch_size": "2"}, TypeError, "batch_size"),
        ({"stop_token": 1.5}, TypeError, "stop_token"),
        ({"batching": "dynamic"}, ValueError, "batching"),
        ({"padded": 1}, TypeError, "padded"),
    ],
)
def test_bad_engine_arguments_raise_naming_the_field(kwargs, error, field):
    arguments = {"model": SimulatedLLM(), "batch_size": 2, "stop_token": 0, **kwargs}
    with pytest.raises(error, match=f"^{field}: "):
        BatchInferenceEngine(**arguments)


def test_padded_mode_needs_a_padded_method():
    with pytest.raises(TypeError, match="^model: padded=True needs a generate_next_tokens_padded"):
        BatchInferenceEngine(MockModel().next_tokens, 2, 0, padded=True)


def test_model_without_any_known_method_is_rejected():
    with pytest.raises(TypeError, match="^model: "):
        BatchInferenceEngine(object(), 2, 0)


def test_plain_callable_and_next_tokens_models_are_driven_unchanged():
    seen = []
    engine = BatchInferenceEngine(lambda batch: [len(p) for p in batch], 2, None)
    engine.submit_request([5, 5], 2, seen.append)
    engine.run()
    assert seen == [[5, 5, 2, 3]]

    class OnlyNextTokens:
        def next_tokens(self, batch):
            return [p[-1] + 1 for p in batch]

    seen.clear()
    engine = BatchInferenceEngine(OnlyNextTokens(), 1, None)
    engine.submit_request([1], 3, seen.append)
    engine.run()
    assert seen == [[1, 2, 3, 4]]


def test_duplicate_request_ids_are_rejected_and_fresh_ids_skip_taken_ones():
    engine = make_engine()
    assert engine.submit_request([1], 1, request_id="r1") == "r1"
    with pytest.raises(ValueError, match="^request_id: 'r1' is already in use"):
        engine.submit_request([1], 1, request_id="r1")
    assert engine.submit_request([1], 1) == "r2"  # r1 taken, so the counter skips it


def test_padded_calls_send_batch_size_rows_with_a_mask_and_ignore_inactive_outputs():
    model = ScriptModel({(1,): [11, 12, 13], (2,): [21]})  # inactive rows answer "garbage"
    engine = make_engine(model, batch_size=3, stop_token=0, padded=True)
    out = []
    engine.submit_request([1], 3, out.append)
    engine.submit_request([2], 1, out.append)
    engine.run()
    assert out == [[2, 21], [1, 11, 12, 13]]
    assert model.calls == [[[1], [2], []], [[1, 11], [], []], [[1, 11, 12], [], []]]
    assert model.masks == [[True, True, False], [True, False, False], [True, False, False]]
    calls = [(e.rows, e.padded_rows, e.active_mask) for e in engine.event_log if e.kind == "model_call"]
    assert calls == [(3, 1, (True, True, False)), (3, 2, (True, False, False)), (3, 2, (True, False, False))]


def test_padded_and_ragged_simulated_llm_agree_on_active_rows():
    model = SimulatedLLM(seed=3)
    prefixes = [[1, 2], [], [7]]
    assert model.generate_next_tokens_padded(prefixes, [True, False, True])[::2] == [
        model.generate_next_tokens(prefixes)[0],
        model.generate_next_tokens(prefixes)[2],
    ]


def test_cancel_a_waiting_request_never_reaches_the_model():
    model = ScriptModel({(1,): [2, 3, 4], (5,): [6]})
    engine = make_engine(model, batch_size=1, stop_token=None)
    out = []
    engine.submit_request([1], 3, out.append)
    waiting = engine.submit_request([5], 1, out.append)
    engine.step()
    assert engine.cancel(waiting) is True
    engine.run()
    assert out == [[5], [1, 2, 3, 4]]
    assert all(call != [[5]] for call in model.calls)
    evicts = [(e.step, e.slot, e.request_id, e.reason) for e in engine.event_log if e.kind == "evict"]
    assert evicts == [(1, None, "r1", "cancelled"), (2, 0, "r0", "max_tokens")]


def test_cancel_a_running_request_delivers_what_it_has_and_frees_the_slot_at_the_boundary():
    model = ScriptModel({(1,): [2, 3, 4, 5], (9,): [8]})
    engine = make_engine(model, batch_size=1, stop_token=None)
    out = []
    running = engine.submit_request([1], 4, out.append)
    engine.submit_request([9], 1, out.append)
    engine.step()
    engine.step()
    assert engine.cancel(running) is True
    assert engine.cancel(running) is True  # idempotent: still one callback
    engine.run()
    assert out == [[1, 2, 3], [9, 8]]
    kinds = [(e.kind, e.slot, e.request_id) for e in engine.event_log if e.step == 2]
    assert kinds[:2] == [("evict", 0, "r0"), ("admit", 0, "r1")]  # the slot is refilled in the same step
    assert engine.cancel(running) is False  # already finished
    with pytest.raises(ValueError, match="^request_id: no request 'nope'"):
        engine.cancel("nope")


def test_request_arriving_mid_run_joins_the_queue_at_its_step():
    model = ScriptModel({(1,): [2, 3, 4, 5], (7,): [8, 9]})
    engine = make_engine(model, batch_size=2, stop_token=None)
    out = []
    engine.submit_request([1], 4, out.append)
    engine.submit_request([7], 2, out.append, arrival_step=2)
    engine.run()
    assert out == [[1, 2, 3, 4, 5], [7, 8, 9]]
    assert [len(call) for call in model.calls] == [1, 1, 2, 2]
    assert [(e.step, e.kind) for e in engine.event_log if e.request_id == "r1"][:2] == [(2, "arrive"), (2, "admit")]


def test_idle_engine_jumps_to_the_next_arrival():
    model = ScriptModel({(1,): [2]})
    engine = make_engine(model, batch_size=1, stop_token=None)
    engine.submit_request([1], 1, arrival_step=10)
    engine.run()
    assert [(e.step, e.kind) for e in engine.event_log] == [
        (10, "arrive"),
        (10, "admit"),
        (10, "model_call"),
        (10, "emit"),
        (10, "evict"),
    ]


def test_request_submitted_from_a_callback_is_served_by_the_same_run():
    model = ScriptModel({(1,): [2], (3,): [4]})
    engine = make_engine(model, batch_size=1, stop_token=None)
    out = []

    def chain(tokens):
        out.append(tokens)
        if len(out) == 1:
            engine.submit_request([3], 1, out.append)

    engine.submit_request([1], 1, chain)
    engine.run()
    assert out == [[1, 2], [3, 4]]


def test_step_inside_a_callback_is_refused():
    engine = make_engine(ScriptModel({(1,): [2]}), batch_size=1, stop_token=None)
    errors = []

    def reenter(_):
        try:
            engine.step()
        except RuntimeError as exc:
            errors.append(str(exc))

    engine.submit_request([1], 1, reenter)
    engine.run()
    assert errors == ["step() and run() cannot be called from inside a callback"]


def test_on_token_streams_every_generated_token_in_order():
    model = ScriptModel({(1,): [5, 6, 0]})
    engine = make_engine(model, batch_size=1, stop_token=0)
    streamed, final = [], []
    engine.submit_request([1], 10, final.append, on_token=streamed.append)
    engine.run()
    assert streamed == [5, 6, 0]
    assert final == [[1, 5, 6, 0]]


def test_slot_table_and_waiting_expose_the_mapping():
    engine = make_engine(HashModel(), batch_size=2, stop_token=None)
    for prompt in ([1], [2], [3]):
        engine.submit_request(prompt, 2)
    engine.step()
    assert engine.slot_table == {0: "r0", 1: "r1"}
    assert engine.waiting == ["r2"]


def test_callback_receives_a_list_it_may_keep():
    engine = make_engine(ScriptModel({(1,): [2, 3]}), batch_size=1, stop_token=None)
    prompt, out = [1], []
    engine.submit_request(prompt, 2, out.append)
    engine.run()
    out[0].append(99)
    assert prompt == [1]

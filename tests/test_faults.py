"""Faults: a failing model changes nothing and resumes exactly; raising callbacks hurt no one else."""

import pytest

from engine import CallbackError, EventLog, ModelError
from tests.helpers import FlakyModel, HashModel, Spec, make_engine, run_specs, submit_specs

SPECS = [Spec([i, i + 1], 2 + i % 5, [[3, 4]] if i % 3 == 0 else None) for i in range(9)]


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            "raise",
            "step 2: model call failed with RuntimeError: injected fault; expected 3 tokens (one per active row)",
        ),
        ("short", "step 2: model returned 2 tokens, expected 3 tokens (one per active row)"),
        ("long", "step 2: model returned 4 tokens, expected 3 tokens (one per active row)"),
        ("float", "step 2: slot 0 (request r0): expected an int token, got float 1.5"),
        ("bool", "step 2: slot 0 (request r0): expected an int token, got bool True"),
        ("none", "step 2: slot 0 (request r0): expected an int token, got NoneType None"),
        ("huge", "step 2: slot 0 (request r0): token 9223372036854775808 does not fit in 64 bits"),
        ("last bool", "step 2: slot 2 (request r2): expected an int token, got bool True"),
    ],
)
def test_model_fault_names_the_step_and_changes_no_row(fault, message):
    engine = make_engine(FlakyModel(HashModel(), {2: fault}), batch_size=3, stop_token=None)
    for prompt in ([1], [2], [3]):
        engine.submit_request(prompt, 5)
    engine.step()
    engine.step()
    before = {slot: list(seq.tokens) for slot, seq in enumerate(engine._scheduler.slots)}
    with pytest.raises(ModelError) as caught:
        engine.step()
    assert str(caught.value) == message
    assert caught.value.step == 2
    assert {slot: list(seq.tokens) for slot, seq in enumerate(engine._scheduler.slots)} == before
    assert engine.clock == 2
    errors = [(e.step, e.message) for e in engine.event_log if e.kind == "error"]
    assert errors == [(2, message)]


def test_padded_fault_message_states_the_padded_shape():
    engine = make_engine(FlakyModel(HashModel(), {0: "short"}), batch_size=4, stop_token=None, padded=True)
    engine.submit_request([1], 2)
    with pytest.raises(ModelError, match=r"^step 0: model returned 3 tokens, expected 4 tokens \(one per slot"):
        engine.run()


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("batching", ["continuous", "static"])
def test_resuming_after_model_faults_equals_a_fault_free_run(batching, padded):
    clean = run_specs(make_engine(HashModel(), 3, 0, batching=batching, padded=padded), SPECS)
    faults = {1: "raise", 2: "short", 4: "float", 5: "raise", 7: "long"}
    engine = make_engine(FlakyModel(HashModel(), faults), 3, 0, batching=batching, padded=padded)
    outcome = submit_specs(engine, SPECS)
    raised = 0
    while True:
        try:
            engine.run()
            break
        except ModelError:
            raised += 1
    assert raised == 5
    assert outcome.results == clean.results
    assert set(outcome.calls.values()) == {1}
    assert engine.event_log.outputs() == clean.engine.event_log.outputs()
    assert EventLog.from_jsonl(engine.event_log.to_jsonl()) == engine.event_log


def test_numpy_integer_tokens_are_accepted():
    np = pytest.importorskip("numpy")
    engine = make_engine(lambda batch: np.array([len(p) for p in batch], dtype=np.int64), 2, None)
    out = []
    engine.submit_request([1], 2, out.append)
    engine.run()
    assert out == [[1, 1, 2]] and all(type(t) is int for t in out[0])


def test_raising_callback_does_not_stop_other_deliveries_and_is_never_called_twice():
    engine = make_engine(HashModel(), batch_size=2, stop_token=None)
    calls = {"bad": 0}
    good = []

    def bad(tokens):
        calls["bad"] += 1
        raise ValueError("boom")

    engine.submit_request([1], 1, bad)
    engine.submit_request([2], 1, good.append)
    engine.submit_request([3], 2, good.append)
    with pytest.raises(CallbackError, match=r"^1 callback\(s\) raised: r0 \(ValueError: boom\)$") as caught:
        engine.run()
    assert calls["bad"] == 1
    assert [t[0] for t in good] == [2, 3]
    assert caught.value.failures[0][0] == "r0"
    errors = [(e.step, e.slot, e.request_id, e.message) for e in engine.event_log if e.kind == "error"]
    assert errors == [(0, 0, "r0", "callback of request r0 raised ValueError: boom")]
    engine.run()  # nothing left, nothing raised again
    assert calls["bad"] == 1


def test_raising_on_token_is_reported_and_the_request_still_finishes():
    engine = make_engine(HashModel(), batch_size=1, stop_token=None)
    out = []

    def explode(token):
        raise KeyError("stream closed")

    engine.submit_request([1], 2, out.append, on_token=explode)
    with pytest.raises(CallbackError) as caught:
        engine.run()
    assert len(out) == 1 and len(out[0]) == 3
    assert len(caught.value.failures) == 2  # one per streamed token
    assert [e.message for e in engine.event_log if e.kind == "error"][0].startswith(
        "on_token of request r0 raised KeyError"
    )


def test_step_raises_callback_error_after_finishing_the_step():
    engine = make_engine(HashModel(), batch_size=2, stop_token=None)
    engine.submit_request([1], 1, lambda t: 1 / 0)
    engine.submit_request([2], 3)
    with pytest.raises(CallbackError):
        engine.step()
    assert engine.clock == 1
    assert engine.slot_table == {1: "r1"}

"""Model faults, bad token types and raising callbacks: nothing changes, nothing is lost, resuming is exact."""

import numpy as np
import pytest

from engine import BatchInferenceEngine, CallbackError, ModelError
from tests.helpers import FlakyModel, HashModel, ScriptModel, events, evict_reasons, filler_model, recording_engine

SCRIPTS = {(1,): [5, 5, 6, 9], (2,): [8], (3,): [0], (4,): [4, 4]}


def fault_scenario(model, padded):
    engine, rec = recording_engine(model, batch_size=2, stop_token=0, padded=padded)
    rec.submit("A", [1], 4, [[5, 6]])
    rec.submit("B", [2], 1)
    rec.submit("C", [3], 3)
    rec.submit("D", [4], 2, arrival_step=2)
    return engine, rec


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("fault", ["raise", "short", "long", "float", "bool", "none"])
@pytest.mark.parametrize("attempt", [0, 1, 2])
def test_model_fault_leaves_rows_and_resume_is_identical(fault, attempt, padded):
    base_engine, base = fault_scenario(ScriptModel(SCRIPTS), padded)
    base_engine.run()
    assert base.results == {"A": [1, 5, 5, 6], "B": [2, 8], "C": [3, 0], "D": [4, 4, 4]}

    engine, rec = fault_scenario(FlakyModel(ScriptModel(SCRIPTS), {attempt: fault}), padded)
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


def test_numpy_int_tokens_match_stops_and_are_delivered_as_int():
    class NumpyModel:
        def generate_next_tokens(self, prefixes):
            return np.array([len(p) for p in prefixes], dtype=np.int64)

    delivered = []
    engine = BatchInferenceEngine(NumpyModel(), 2, 3)
    engine.submit_request([9], 5, delivered.append, [[2]], request_id="A")
    engine.submit_request([9, 9], 5, delivered.append, request_id="B")
    engine.run()
    assert delivered == [[9, 1, 2], [9, 9, 2, 3]]
    assert all(type(t) is int for tokens in delivered for t in tokens)
    assert evict_reasons(engine) == {"A": "stop_sequence", "B": "stop_token"}


@pytest.mark.parametrize("bad", [True, np.bool_(True), 1.0, np.float64(2.0), "3", None])
def test_non_int_token_rejected_without_change(bad):
    class SecondCallBad:
        n = 0

        def generate_next_tokens(self, prefixes):
            self.n += 1
            return [bad if self.n == 2 else 5 for _ in prefixes]

    engine, rec = recording_engine(SecondCallBad())
    rec.submit("A", [1], 3)
    engine.step()
    with pytest.raises(ModelError, match="step 1"):
        engine.step()
    engine.run()
    assert rec.results == {"A": [1, 5, 5, 5]}


def raise_key_error():
    raise KeyError("boom")


def test_callback_error_at_a_boundary_is_still_reported_when_the_model_faults_in_that_step():
    """B is cancelled while waiting; its callback raises at step 1's boundary, and the
    model faults at step 1. The callback error must still be reported by a later run()."""
    engine, rec = recording_engine(FlakyModel(filler_model(1, 2), {1: "raise"}))
    rec.submit("A", [1], 2)
    rec.submit("B", [2], 2, then=raise_key_error)
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


def test_raising_on_token_is_logged_at_every_step_and_generation_goes_on():
    engine, rec = recording_engine(ScriptModel({(1,): [3, 4, 5]}, filler=7))
    seen = []

    def on_token(t):
        seen.append(t)
        raise RuntimeError(f"tok {t}")

    rec.submit("A", [1], 3, on_token=on_token)
    with pytest.raises(CallbackError) as info:
        engine.run()
    assert len(info.value.failures) == 3
    assert seen == [3, 4, 5]
    assert rec.results == {"A": [1, 3, 4, 5]}
    assert rec.calls == {"A": 1}
    assert [(e.step, e.request_id) for e in events(engine, "error")] == [(0, "A"), (1, "A"), (2, "A")]


def test_run_keeps_callback_failures_across_a_model_fault():
    engine = BatchInferenceEngine(FlakyModel(HashModel(), {1: "raise"}), 2, None)
    engine.submit_request([1], 1, lambda tokens: 1 / 0)
    engine.submit_request([2], 3)
    with pytest.raises(ModelError):
        engine.run()
    with pytest.raises(CallbackError, match=r"^1 callback\(s\) raised: r0 \(ZeroDivisionError"):
        engine.run()

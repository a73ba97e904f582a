"""The event log after errors, cancellations and edge inputs: JSONL, DataFrame and replay agree with the engine."""

import json

import pandas as pd
import pytest

from engine import CallbackError, EventLog, ModelError
from engine.analysis.replay import Replay
from tests.helpers import (
    FlakyModel,
    HashModel,
    ScriptModel,
    Spec,
    assert_replay_matches,
    evict_reasons,
    filler_model,
    make_engine,
    record_steps,
    recording_engine,
    run_specs,
    stop_matches,
)


def failing_callback(tokens):
    raise ValueError('kaboom\n"quoted" ü')


def build_rich_log(padded=False, stop_token=0):
    """A model fault, a raising callback, cancellations of a running and a pending request, late arrivals."""
    flaky = FlakyModel(ScriptModel({(1,): [5, 6, 9], (2,): [0], (3,): [], (4,): []}, filler=7), {2: "short"})
    engine, rec = recording_engine(flaky, batch_size=2, stop_token=stop_token, padded=padded)
    rec.submit("A", [1], 4, [[5, 6], [6]])
    engine.submit_request([2], 3, failing_callback, request_id="B")
    rec.submit("C", [3], 5)
    rec.submit("D", [4], 2, arrival_step=6)
    rec.submit("E", [], 0)
    rec.submit("F", [4], 2, arrival_step=9)

    def cancel_on_cue():
        if engine.clock == 2 and "C" not in rec.results:
            engine.cancel("C")
        if engine.clock == 3:
            engine.cancel("F")

    snaps = {}
    for _ in range(20):  # resume after each fault or raising callback
        try:
            record_steps(engine, cancel_on_cue, into=snaps)
            break
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
    assert list(Replay(log)) == list(Replay(loaded))


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


def test_dataframe_matches_event_rows():
    engine, _, _ = build_rich_log(padded=True)
    frame = engine.event_log.to_dataframe()
    for column in ("kind", "request_id", "slot", "padded_rows"):
        values = [None if pd.isna(v) else v for v in frame[column]]
        assert values == [getattr(e, column) for e in engine.event_log], column


@pytest.mark.parametrize("batching", ["continuous", "static"])
@pytest.mark.parametrize("padded", [False, True])
def test_replay_matches_engine_after_every_step_of_a_busy_workload(batching, padded):
    specs = [
        Spec([i, i + 1], (i * 3) % 5, [[1, 2], [3, 3]], arrival_step=(i // 3) * 2, cancel_at=3 if i in (4, 9) else None)
        for i in range(10)
    ]
    outcome = run_specs(make_engine(HashModel(5), 3, 0, batching=batching, padded=padded), specs)
    assert_replay_matches(outcome.engine, outcome.snapshots)
    assert outcome.calls == {rid: 1 for rid in outcome.ids}
    assert outcome.engine.event_log.outputs() == outcome.results


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
    engine, rec = recording_engine(filler_model(1, 2))
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


def test_callback_may_keep_and_mutate_its_list_without_changing_the_log():
    engine = make_engine(ScriptModel({(1,): [4, 5], (2,): [6, 6]}, filler=7), batch_size=1, stop_token=None)
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
def test_rejected_request_is_never_queued_or_logged(kwargs, exc, field):
    engine = make_engine(ScriptModel({(1,): []}), batch_size=1, stop_token=None)
    with pytest.raises(exc, match=field):
        engine.submit_request(callback=None, **kwargs)
    assert engine.has_work() is False
    assert engine.step() is False
    assert len(engine.event_log) == 0

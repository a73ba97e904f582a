"""The engine under models and callbacks that misbehave: it stays consistent, and everything it
accepts round-trips through JSONL and the DataFrame."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import BatchInferenceEngine, EventLog
from engine.core.validation import INT64_MAX, INT64_MIN
from tests.helpers import HashModel, make_engine


def test_a_model_that_consumes_its_batch_list_does_not_touch_the_engine():
    def consuming(batch):
        answers = [len(p) for p in batch]
        while batch:
            batch.pop(0)
        return answers

    engine = BatchInferenceEngine(consuming, 2, None)
    out = {}
    for rid, prompt in (("a", [1]), ("b", [2, 2]), ("c", [3])):
        engine.submit_request(prompt, 2, lambda tokens, rid=rid: out.__setitem__(rid, tokens), request_id=rid)
    engine.run()
    assert out == {"a": [1, 1, 2], "b": [2, 2, 2, 3], "c": [3, 1, 2]}
    assert engine.clock == 4


def test_a_model_that_sorts_its_batch_in_place_crosses_nothing_later():
    def sorting(batch):
        answers = [p[0] * 10 for p in batch]
        batch.sort(key=lambda p: -p[0])
        return answers

    engine = BatchInferenceEngine(sorting, 3, None)
    out = {}
    for prompt in ([1], [2], [3]):
        engine.submit_request(prompt, 3, lambda tokens: out.__setitem__(tokens[0], tokens))
    engine.run()
    assert out == {1: [1, 10, 10, 10], 2: [2, 20, 20, 20], 3: [3, 30, 30, 30]}


@pytest.mark.parametrize("where", ["callback", "on_token"])
def test_a_keyboard_interrupt_in_a_callback_leaves_the_engine_consistent(where):
    engine = make_engine(HashModel(), batch_size=2, stop_token=None)
    delivered, interrupted = [], []

    def deliver(tokens):
        if not interrupted:
            interrupted.append(True)
            raise KeyboardInterrupt
        delivered.append(tokens)

    if where == "callback":
        engine.submit_request([1], 2, deliver)
    else:
        engine.submit_request([1], 2, delivered.append, on_token=lambda token: deliver([token]))
    engine.submit_request([2], 2, delivered.append)
    with pytest.raises(KeyboardInterrupt):
        engine.run()
    engine.run()
    calls = [e.step for e in engine.event_log if e.kind == "model_call"]
    assert calls == sorted(set(calls))  # one model call per step
    generated = {rid: len(tokens) - 1 for rid, tokens in engine.event_log.outputs().items()}
    assert generated == {"r0": 2, "r1": 2}  # never more than max_tokens
    finals = [tokens for tokens in delivered if len(tokens) == 3]
    assert len(finals) == (2 if where == "on_token" else 1)  # the interrupted callback is not called again
    errors = [e.message for e in engine.event_log if e.kind == "error"]
    assert errors == [f"{where} of request r0 raised KeyboardInterrupt: "]


def test_a_numpy_stop_token_is_converted_and_the_log_exports():
    engine = BatchInferenceEngine(HashModel(vocab_size=4), 1, np.int64(3))
    assert type(engine.stop_token) is int and engine.stop_token == 3
    engine.submit_request([1], 20)
    engine.run()
    assert EventLog.from_jsonl(engine.event_log.to_jsonl()) == engine.event_log
    engine.event_log.to_dataframe()


def test_max_tokens_beyond_64_bits_is_refused_naming_the_field():
    engine = make_engine()
    message = r"^max_tokens: must be an integer ≥ 0 and ≤ 9223372036854775807, got 9223372036854775808$"
    with pytest.raises(ValueError, match=message):
        engine.submit_request([1], 2**63)
    assert not engine.has_work()


def test_a_stop_list_edited_in_place_is_checked_again():
    engine = make_engine()
    stops = [[7, 8]]
    engine.submit_request([1], 2, None, stops)
    stops[0][0] = 7.0
    rule = r"^stop_sequences\[0\]\[0\]: must be a 64-bit integer token id, got "
    with pytest.raises(TypeError, match=rule + "float 7.0$"):
        engine.submit_request([1], 2, None, stops)
    stops[0][0] = True
    with pytest.raises(TypeError, match=rule + "bool True$"):
        engine.submit_request([1], 2, None, stops)


def test_cancelling_a_waiting_request_leaves_the_queue_untouched_until_it_reaches_the_head():
    engine = make_engine(HashModel(), batch_size=1, stop_token=None)
    ids = [engine.submit_request([i], 1) for i in range(5)]
    engine.step()  # r0 runs, r1..r4 wait
    queue = engine._scheduler.waiting
    length = len(queue)
    for rid in ids[1:4]:
        assert engine.cancel(rid)
    assert len(queue) == length  # marked, not searched for and removed: O(1) a cancel
    engine.run()
    assert [e.request_id for e in engine.event_log if e.kind == "admit"] == ["r0", "r4"]


def test_forty_thousand_cancels_of_requests_not_yet_arrived():
    engine = make_engine(HashModel(), batch_size=4, stop_token=None)
    ids = [engine.submit_request([1], 1, arrival_step=10 + i) for i in range(40_000)]
    for rid in ids[:-1]:
        engine.cancel(rid)
    engine.run()
    reasons = [e.reason for e in engine.event_log if e.kind == "evict"]
    assert reasons.count("cancelled") == 39_999 and reasons.count("max_tokens") == 1


request_ids = st.text(min_size=1, max_size=8)
tokens = st.integers(INT64_MIN, INT64_MAX)


@given(
    st.lists(
        st.tuples(
            request_ids,
            st.lists(tokens, max_size=4),
            st.integers(0, 3) | st.just(INT64_MAX),
            st.lists(st.lists(tokens, min_size=1, max_size=3), max_size=2),
        ),
        max_size=5,
        unique_by=lambda r: r[0],
    ),
    st.sampled_from([None, 0, INT64_MIN, INT64_MAX]),
)
@settings(max_examples=150, deadline=None)
def test_everything_the_engine_accepts_round_trips(requests, stop_token):
    engine = BatchInferenceEngine(lambda batch: [INT64_MAX] * len(batch), 2, stop_token)
    for rid, prompt, max_tokens, stops in requests:
        engine.submit_request(prompt, max_tokens, None, stops, request_id=rid)
    for _ in range(10):
        if not engine.step():
            break
    for rid, *_ in requests:
        engine.cancel(rid)
    engine.run()
    log = engine.event_log
    assert EventLog.from_jsonl(log.to_jsonl()) == log
    assert len(log.to_dataframe()) == len(log)

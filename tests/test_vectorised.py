"""The vectorised engine (engine/practice/vectorised.py): hand-worked cases with pinned outputs, its stop
tables, its errors, and the property that it gives exactly the loop engine's outputs in the loop engine's
callback order, with the array model and with plain per-row models, ragged and padded."""

import json
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import BatchInferenceEngine, SimulatedLLM
from engine.core.errors import CallbackError, ModelError
from engine.practice import stop_table as stop_table_module
from engine.practice.last_token_model import LastTokenModel
from engine.practice.stop_table import StopTable
from engine.practice.vectorised import HISTORY, SHARED_IDS, WINDOW, VectorisedEngine, python_ints
from tests.helpers import HashModel


def scripted(*tokens: int):
    """A plain per-row model: the token after a prefix of length n is tokens[n], whatever the prefix."""
    return lambda batch: [tokens[len(prefix)] for prefix in batch]


def run(engine, requests, follow_ups=()):
    """Submit (prompt, max_tokens, stop_sequences) requests, run, and return [(request id, tokens)] in
    callback order. A callback of the i-th request submits `follow_ups[i]` (a list of requests) when it runs."""
    delivered = []
    follow_ups = dict(follow_ups)

    def submit(request, number):
        prompt, max_tokens, stops = request
        box = []

        def callback(tokens):
            delivered.append((box[0], list(tokens)))
            for later in follow_ups.pop(number, ()):
                submit(later, -1)  # (follow-ups have none of their own)

        box.append(engine.submit_request(prompt, max_tokens, callback, stops))

    for number, request in enumerate(requests):
        submit(request, number)
    engine.run()
    return delivered


# -- hand-worked cases -------------------------------------------------------------------------
def both(model, batch_size, stop_token, requests):
    """The vectorised engine's deliveries, checked against the loop engine's."""
    expected = run(BatchInferenceEngine(model, batch_size, stop_token), requests)
    assert run(VectorisedEngine(model, batch_size, stop_token), requests) == expected
    return expected


def test_the_stop_token_is_delivered_and_a_stop_token_in_the_prompt_stops_nothing():
    got = both(scripted(9, 5, 5, 0, 9), 2, 0, [([1], 10, None), ([0], 2, None)])
    assert got == [("r1", [0, 5, 5]), ("r0", [1, 5, 5, 0])]


def test_overlapping_stop_sequences_stop_at_the_earliest_completion():
    assert both(scripted(9, 1, 1, 1, 2, 2, 2), 1, None, [([7], 10, [[1, 1, 2]])]) == [("r0", [7, 1, 1, 1, 2])]
    got = both(scripted(9, 3, 4, 5, 6, 7), 1, None, [([7], 10, [[3, 4, 5, 6], [4, 5]])])
    assert got == [("r0", [7, 3, 4, 5])]


def test_stop_sequences_match_generated_tokens_only():
    assert both(scripted(9, 2, 2, 8, 8), 1, None, [([1], 3, [[1, 2]])]) == [("r0", [1, 2, 2, 8])]


def test_max_tokens_zero_is_delivered_at_the_next_step_without_a_slot_and_slots_refill_lowest_first():
    requests = [([], 3, None), ([], 1, None), ([4], 0, None), ([], 1, None), ([], 1, None)]
    # step 0: r2 (max_tokens 0) first; r0 -> slot 0, r1 -> slot 1; r1 ends.  step 1: r3 -> slot 1, ends.
    # step 2: r4 -> slot 1; r0 (slot 0) and r4 (slot 1) end together, in slot order.
    assert both(scripted(*range(10, 20)), 2, None, requests) == [
        ("r2", [4]),
        ("r1", [10]),
        ("r3", [10]),
        ("r0", [10, 11, 12]),
        ("r4", [10]),
    ]


def test_the_array_model_by_hand():
    # LastTokenModel(vocab_size=10): ((last % 2**20 * 1103515245 + length % 2**20 * 12345) >> 8) % 10
    # prompt [3]: (3 * 1103515245 + 1 * 12345) >> 8 = 12931867, so 7; [3, 4]: (4 * 1103515245 + 2 * 12345) >> 8
    # = 17242522, so 2; and [3, 7]: (7 * 1103515245 + 2 * 12345) >> 8 = 30174341, so 1
    assert LastTokenModel(vocab_size=10).generate_next_tokens([[3], [3, 4]]) == [7, 2]
    engine = VectorisedEngine(LastTokenModel(vocab_size=10), batch_size=1, stop_token=None)
    assert run(engine, [([3], 2, None)]) == [("r0", [3, 7, 1])]


def test_rows_longer_than_the_window_and_the_ring_keep_every_token():
    requests = [([1], 3 * WINDOW + 5, None), ([2], WINDOW, None), ([3], 2 * WINDOW - 1, None)]
    got = both(LastTokenModel(vocab_size=50), 2, None, requests)
    assert [len(tokens) for _, tokens in got] == [WINDOW + 1, 2 * WINDOW, 3 * WINDOW + 6]
    lengths = [3 * HISTORY + 7, HISTORY - WINDOW + 1, HISTORY + 1, 2 * HISTORY]  # generated tokens
    requests = [([1, 2], lengths[0], None)] + [([3], n, None) for n in lengths[1:]]
    got = both(LastTokenModel(vocab_size=50), 2, None, requests)
    assert sorted(len(tokens) for _, tokens in got) == sorted([lengths[0] + 2] + [n + 1 for n in lengths[1:]])


class Wide(LastTokenModel):
    """An array model whose tokens pass 2**40 once a row holds WINDOW + 4 tokens: the window and the ring, which
    hold tokens of earlier steps by then, widen to int64."""

    def next_tokens_array(self, last_tokens, lengths):
        tokens = super().next_tokens_array(last_tokens, lengths)
        return np.where(lengths >= WINDOW + 4, tokens + 2**40, tokens)

    def generate_next_tokens(self, batch_prefixes):
        tokens = super().generate_next_tokens(batch_prefixes)
        return [token + 2**40 if len(p) >= WINDOW + 4 else token for token, p in zip(tokens, batch_prefixes)]


def test_tokens_past_16_bits_widen_the_window_and_the_ring():
    requests = [([1], 2 * WINDOW + 3, None), ([2], WINDOW + 5, [[2**40 + 7]]), ([3], 5, None)]
    got = both(Wide(vocab_size=50), 2, None, requests)
    assert max(max(tokens) for _, tokens in got) >= 2**40


def test_token_lists_take_their_own_references_to_the_shared_ints():
    shared, before = SHARED_IDS[999], sys.getrefcount(SHARED_IDS[999])
    lists = [python_ints(np.array([999, 999, 3], dtype=np.uint16)) for _ in range(10)]
    assert lists[0] == [999, 999, 3] and lists[0][0] is shared
    assert sys.getrefcount(shared) == before + 20
    del lists
    assert sys.getrefcount(shared) == before
    assert python_ints(np.array([], dtype=np.uint16)) == [] and python_ints(np.array([-1, 2**40])) == [-1, 2**40]


def test_a_stop_table_walks_the_automaton():
    table = StopTable(((1, 1, 2), (5,)))
    states = np.zeros(1, dtype=np.intp)
    ends = []
    for token in (1, 1, 1, 2, 9, 5):
        states = table.advance(states, np.array([token]))
        ends.append(bool(table.ends[states[0]]))
    assert ends == [False, False, False, True, False, True]


# -- bad input and faults --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("arguments", "field"),
    [(([1], -1, None), "max_tokens"), (([True], 1, None), "prompt_tokens"), (([1], 1, [[]]), "stop_sequences")],
)
def test_bad_requests_are_refused_naming_the_field_and_never_queued(arguments, field):
    engine = VectorisedEngine(scripted(1), batch_size=1, stop_token=None)
    with pytest.raises((ValueError, TypeError), match=field):
        engine.submit_request(arguments[0], arguments[1], None, arguments[2])
    assert not engine.waiting and not engine.empty


def test_bad_engine_arguments_name_the_field():
    with pytest.raises(ValueError, match="batch_size"):
        VectorisedEngine(scripted(1), batch_size=0, stop_token=None)
    with pytest.raises(TypeError, match="stop_token"):
        VectorisedEngine(scripted(1), batch_size=1, stop_token="0")
    with pytest.raises(TypeError, match="padded"):
        VectorisedEngine(lambda batch: batch, batch_size=1, stop_token=None, padded=True)


def test_a_stop_list_too_big_for_a_table_is_refused(monkeypatch):
    monkeypatch.setattr(stop_table_module, "MAX_TABLE_ENTRIES", 20)
    engine = VectorisedEngine(scripted(1), batch_size=1, stop_token=None)
    with pytest.raises(ValueError, match="stop_sequences"):
        engine.submit_request([1], 1, None, [[10, 11, 12, 13, 14, 15]])
    assert not engine.waiting and not engine.empty


class WrongOnce:
    """An array model whose first answer has one token too many."""

    def __init__(self, inner):
        self.inner, self.faults = inner, 1

    def next_tokens_array(self, last_tokens, lengths):
        if self.faults:
            self.faults -= 1
            return np.zeros(len(last_tokens) + 1, dtype=np.int64)
        return self.inner.next_tokens_array(last_tokens, lengths)


def test_a_wrong_answer_raises_and_the_rerun_gives_what_a_clean_run_gives():
    requests = [([1], 5, [[3]]), ([2], 3, None), ([4], 2, None)]
    expected = run(VectorisedEngine(LastTokenModel(vocab_size=7), 2, 0), requests)
    engine, delivered = VectorisedEngine(WrongOnce(LastTokenModel(vocab_size=7)), 2, 0), []
    for prompt, max_tokens, stops in requests:
        engine.submit_request(prompt, max_tokens, lambda tokens: delivered.append(tokens), stops)
    with pytest.raises(ModelError, match="step 0: expected an array of 2"):
        engine.run()
    engine.run()
    assert delivered == [tokens for _, tokens in expected]


def test_a_model_may_not_write_into_the_engines_arrays():
    class Writer(LastTokenModel):
        def next_tokens_array(self, last_tokens, lengths):
            lengths[:] = 0
            return last_tokens

    engine = VectorisedEngine(Writer(), 1, None)
    engine.submit_request([1], 1)
    with pytest.raises(ModelError, match="read-only"):
        engine.run()


def test_a_raising_callback_does_not_stop_the_others():
    engine, delivered = VectorisedEngine(scripted(5, 6), batch_size=2, stop_token=None), []

    def boom(tokens):
        raise RuntimeError("boom")

    engine.submit_request([1], 1, boom)
    engine.submit_request([2], 1, delivered.append)
    with pytest.raises(CallbackError, match="r0"):
        engine.run()
    assert delivered == [[2, 6]]


def test_a_callback_may_submit_but_not_step():
    engine, delivered = VectorisedEngine(scripted(5, 6, 7), batch_size=1, stop_token=None), []

    def again(tokens):
        delivered.append(tokens)
        engine.submit_request([3], 1, delivered.append)
        engine.run()

    engine.submit_request([1], 1, again)
    with pytest.raises(CallbackError, match="inside a callback"):
        engine.run()
    assert delivered == [[1, 6], [3, 6]]


# -- the same outputs and callback order as the loop engine ---------------------------------
token = st.integers(0, 4)  # a small vocabulary, so the stop token and stop sequences really match
requests = st.tuples(
    st.lists(token, max_size=4),
    st.integers(0, 12),
    st.none() | st.lists(st.lists(token, min_size=1, max_size=3), min_size=1, max_size=3),
)
MODELS = {
    "array model": (lambda: LastTokenModel(vocab_size=5), False),
    "whole-prefix hash, ragged": (HashModel, False),
    "whole-prefix hash, padded": (HashModel, True),
    "simulated, padded": (lambda: SimulatedLLM(vocab_size=5, stop_chance=0.2), True),
}


@given(
    st.lists(requests, min_size=1, max_size=14),
    st.dictionaries(st.integers(0, 13), st.lists(requests, max_size=3), max_size=3),
    st.integers(1, 8),
    st.none() | token,
    st.sampled_from(sorted(MODELS)),
)
@settings(max_examples=150, deadline=None)
def test_outputs_and_callback_order_are_the_loop_engines(workload, follow_ups, batch_size, stop_token, model_name):
    make_model, padded = MODELS[model_name]
    expected = run(BatchInferenceEngine(make_model(), batch_size, stop_token, padded=padded), workload, follow_ups)
    got = run(VectorisedEngine(make_model(), batch_size, stop_token, padded=padded), workload, follow_ups)
    assert got == expected


def test_stop_sequences_of_negative_and_large_token_ids():
    big = 2**40
    model = scripted(9, -3, big, -3, big, 7)
    assert both(model, 1, None, [([1], 10, [[big, -3, big]])]) == [("r0", [1, -3, big, -3, big])]


# -- the benchmark runs (its times are never asserted) ---------------------------------------
def test_the_benchmark_runs_and_writes_the_lessons_shape(monkeypatch, tmp_path, capsys):
    from benchmarks import vectorised as benchmark

    monkeypatch.setattr(benchmark, "QUICK_ROWS", (2, 4))
    monkeypatch.setattr(benchmark, "QUICK_BEYOND", 8)
    monkeypatch.setattr(benchmark, "LENGTHS", (2, 3))
    monkeypatch.setattr(benchmark, "MEASUREMENTS", tmp_path / "vectorised.json")
    benchmark.main(["--quick", "--json", "--write"])
    printed = json.loads(capsys.readouterr().out)
    stored = json.loads((tmp_path / "vectorised.json").read_text())
    assert set(stored) == {
        "measured_on", "load", "cpu", "rows", "loop_ns_per_token", "vectorised_ns_per_token", "stops",
        "crossover_rows", "speedup_at_max_rows", "max_rows",
    }  # fmt: skip
    assert printed == {**stored, "plain_loop": printed["plain_loop"], "layout": printed["layout"]}
    assert stored["rows"] == [2, 4, 8] and stored["max_rows"] == 4
    assert stored["loop_ns_per_token"][-1] is None and stored["stops"]["loop_ns_per_token"][-1] is None
    assert set(stored["stops"]) == {"count", "loop_ns_per_token", "vectorised_ns_per_token"}
    benchmark.print_table(printed)
    assert "crossover" in capsys.readouterr().out


def test_the_stored_table_has_the_shape_the_lessons_read():
    from benchmarks import vectorised as benchmark

    table = json.loads(benchmark.MEASUREMENTS.read_text())
    sizes = len(table["rows"])
    assert table["max_rows"] in table["rows"] and table["crossover_rows"] in table["rows"]
    for figures in (table["loop_ns_per_token"], table["vectorised_ns_per_token"], *table["stops"].values()):
        assert isinstance(figures, int) or len(figures) == sizes
    last = table["rows"].index(table["max_rows"])  # the loop engine's figures stop at its batch limit
    assert None not in table["loop_ns_per_token"][: last + 1]
    assert table["loop_ns_per_token"][last + 1 :] == [None] * (sizes - last - 1)

"""Invariants on generated workloads (hypothesis): the engine's promises, stated in words."""

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import EventLog
from engine.analysis.replay import Replay
from engine.core.stops import NO_MATCH, StopMatcher
from tests.helpers import HashModel, Spec, make_engine, run_specs

MODES = [("continuous", False), ("continuous", True), ("static", False), ("static", True)]
token = st.integers(0, 5)  # a small vocabulary, so stop tokens and sequences really match
stop_lists = st.none() | st.lists(st.lists(token, min_size=1, max_size=3), min_size=1, max_size=3)


def spec_strategy(last_arrival: int, cancels: bool) -> st.SearchStrategy[Spec]:
    return st.builds(
        Spec,
        prompt=st.lists(token, max_size=4),
        max_tokens=st.integers(0, 8),
        stop_sequences=stop_lists,
        arrival_step=st.none() | st.integers(0, last_arrival),
        cancel_at=st.none() | st.integers(0, 10) if cancels else st.none(),
    )


specs = spec_strategy(12, cancels=False)
cancellable = spec_strategy(6, cancels=True)
workloads = st.lists(specs, min_size=1, max_size=12)
stop_tokens = st.none() | token
modes = st.sampled_from(MODES)
batch_sizes = st.integers(1, 5)


def run(workload, batch_size, stop_token, mode, stream=False):
    batching, padded = mode
    engine = make_engine(HashModel(), batch_size, stop_token, batching=batching, padded=padded)
    return run_specs(engine, workload, stream=stream)


@given(workloads, stop_tokens)
@settings(max_examples=60, deadline=None)
def test_outputs_independent_of_batch_size_and_mode(workload, stop_token):
    reference = run(workload, 1, stop_token, MODES[0]).results
    for batch_size in (2, 3, 5):
        for mode in MODES:
            assert run(workload, batch_size, stop_token, mode).results == reference


@given(st.lists(cancellable, min_size=1, max_size=12), batch_sizes, stop_tokens, modes)
@settings(max_examples=150, deadline=None)
def test_every_callback_fires_exactly_once_even_with_cancellations(workload, batch_size, stop_token, mode):
    outcome = run(workload, batch_size, stop_token, mode, stream=True)
    assert outcome.calls == {rid: 1 for rid in outcome.ids}
    log = outcome.engine.event_log
    assert log.outputs() == outcome.results  # the log rebuilds exactly what callbacks got
    for rid, spec in zip(outcome.ids, workload):
        assert outcome.streamed.get(rid, []) == outcome.results[rid][len(spec.prompt) :]
    evicted = [e.request_id for e in log if e.kind == "evict"]
    assert sorted(evicted) == sorted(outcome.ids)


@given(workloads, batch_sizes, stop_tokens, modes)
@settings(max_examples=150, deadline=None)
def test_admission_is_fifo_in_arrival_order(workload, batch_size, stop_token, mode):
    log = run(workload, batch_size, stop_token, mode).engine.event_log
    queued = [e.request_id for e in log if e.kind == "arrive"]
    zero_budget = {info.request_id for info in log.requests if info.max_tokens == 0}
    admitted = [e.request_id for e in log if e.kind == "admit"]
    assert admitted == [rid for rid in queued if rid not in zero_budget]
    arrivals = [(spec.arrival_step or 0, i) for i, spec in enumerate(workload)]
    by_arrival = [f"r{i}" for _, i in sorted(arrivals)]
    assert queued == by_arrival


@given(workloads, batch_sizes, stop_tokens, modes)
@settings(max_examples=150, deadline=None)
def test_batch_shape_follows_the_mode(workload, batch_size, stop_token, mode):
    batching, padded = mode
    log = run(workload, batch_size, stop_token, mode).engine.event_log
    replay = Replay(log)
    for state in replay:
        if not state.rows_sent:
            continue
        occupied = sum(slot is not None for slot in state.slots)
        assert sum(state.active_mask) == occupied
        assert state.rows_sent == (batch_size if padded else occupied)
        if batching == "continuous":  # work conserving: min(batch_size, live requests) rows
            assert occupied == min(batch_size, occupied + len(state.waiting))
    if batching == "static":
        for e in log:
            if e.kind == "admit":
                previous = replay[e.step - 1].slots if e.step else ()
                assert all(s is None or s.finish_reason for s in previous)


@given(workloads, batch_sizes, stop_tokens, modes)
@settings(max_examples=150, deadline=None)
def test_no_emit_names_a_request_that_does_not_hold_the_slot(workload, batch_size, stop_token, mode):
    log = run(workload, batch_size, stop_token, mode).engine.event_log
    owner: dict[int, str] = {}
    for e in log:
        if e.kind == "admit":
            assert e.slot not in owner
            owner[e.slot] = e.request_id
        elif e.kind in ("emit", "stop_match"):
            assert owner.get(e.slot) == e.request_id
        elif e.kind == "evict" and e.slot is not None:
            assert owner.pop(e.slot) == e.request_id
    assert owner == {}
    assert all(
        s == sorted(s)
        for s in [[e.slot for e in log if e.kind == "admit" and e.step == k] for k in range(log.num_steps)]
    )


@given(st.lists(cancellable, min_size=1, max_size=10), batch_sizes, stop_tokens, modes)
@settings(max_examples=100, deadline=None)
def test_log_round_trips_through_jsonl(workload, batch_size, stop_token, mode):
    log = run(workload, batch_size, stop_token, mode).engine.event_log
    loaded = EventLog.from_jsonl(log.to_jsonl())
    assert loaded == log
    assert list(loaded) == list(log)


@given(workloads, batch_sizes, stop_tokens, modes)
@settings(max_examples=80, deadline=None)
def test_replay_rebuilds_slot_table_and_queue_at_every_step(workload, batch_size, stop_token, mode):
    batching, padded = mode
    engine = make_engine(HashModel(), batch_size, stop_token, batching=batching, padded=padded)
    for spec in workload:
        engine.submit_request(spec.prompt, spec.max_tokens, None, spec.stop_sequences, arrival_step=spec.arrival_step)
    seen = []
    while engine.step():
        seen.append((engine.clock - 1, engine.slot_table, engine.waiting))
    replay = Replay(engine.event_log)
    for step, table, waiting in seen:
        state = replay[step]
        assert {i: s.request_id for i, s in enumerate(state.slots) if s and not s.finish_reason} == table
        assert list(state.waiting) == waiting
        for s in state.slots:
            if s is not None:
                prefix = replay.prefix(s.request_id, s.generated)
                assert len(prefix) == s.prompt_len + s.generated
                assert s.token is None or prefix[-1] == s.token


def naive_first_match(sequences, tokens):
    for i in range(len(tokens)):
        done = [k for k, s in enumerate(sequences) if len(s) <= i + 1 and tokens[i + 1 - len(s) : i + 1] == s]
        if done:
            return i, done[0]
    return None


@given(
    st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=4), min_size=1, max_size=5),
    st.lists(st.integers(0, 2), max_size=30),
)
@settings(max_examples=400, deadline=None)
def test_stop_matcher_agrees_with_a_naive_tail_comparison(sequences, tokens):
    matcher = StopMatcher(tuple(tuple(s) for s in sequences))
    state, found = 0, None
    for i, t in enumerate(tokens):
        state = matcher.advance(state, t)
        if matcher.matched(state) != NO_MATCH:
            found = (i, matcher.matched(state))
            break
    assert found == naive_first_match(sequences, tokens)

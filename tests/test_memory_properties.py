"""Invariants of the KV pool, preemption and chunked prefill over generated workloads (hypothesis):
memory changes when things happen, never what anyone gets."""

from math import ceil

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import EventLog
from engine.analysis.replay import Replay
from tests.helpers import HashModel, make_engine, run_specs
from tests.test_properties import MODES, cancellable, stop_tokens, workloads


@st.composite
def memory(draw, workload, batch_size: int):
    """Memory settings this workload can run under: pools from just big enough (many preemptions) up."""
    block_size = draw(st.integers(1, 4))
    biggest = max((ceil((len(s.prompt) + s.max_tokens) / block_size) for s in workload if s.max_tokens), default=1)
    options = {
        "kv_blocks": draw(st.none() | st.integers(biggest, biggest + 4)),
        "block_size": block_size,
        "kv_policy": draw(st.sampled_from(["paged", "reserve"])),
        "token_budget": draw(st.none() | st.integers(batch_size, batch_size + 4)),
    }
    if options["kv_blocks"] is None and options["token_budget"] is None:
        options["token_budget"] = batch_size
    return options


def run(workload, batch_size, stop_token, mode, stream=False, **options):
    batching, padded = mode
    engine = make_engine(HashModel(), batch_size, stop_token, batching=batching, padded=padded, **options)
    return run_specs(engine, workload, stream=stream)


@given(st.data(), workloads, st.integers(1, 4), stop_tokens, st.sampled_from(MODES))
@settings(max_examples=600, deadline=None)
def test_outputs_and_callbacks_never_depend_on_memory(data, workload, batch_size, stop_token, mode):
    options = data.draw(memory(workload, batch_size))
    plain = run(workload, batch_size, stop_token, mode)
    limited = run(workload, batch_size, stop_token, mode, stream=True, **options)
    assert limited.results == plain.results
    assert limited.calls == {rid: 1 for rid in limited.ids}
    for rid, spec in zip(limited.ids, workload):  # streamed once each, even across preemptions
        assert limited.streamed.get(rid, []) == limited.results[rid][len(spec.prompt) :]
    log = limited.engine.event_log
    assert log.outputs() == limited.results
    if options["kv_blocks"] is not None:
        assert limited.engine._blocks.num_free == options["kv_blocks"]  # every block is back at the end


@given(st.data(), st.lists(cancellable.filter(lambda s: s.max_tokens), min_size=1, max_size=10), st.integers(1, 4))
@settings(max_examples=400, deadline=None)
def test_every_step_keeps_the_pool_whole_and_paged_rows_hold_what_they_computed(data, workload, batch_size):
    options = {**data.draw(memory(workload, batch_size)), "kv_policy": "paged"}
    options["kv_blocks"] = options["kv_blocks"] or 50
    outcome = run(workload, batch_size, None, MODES[0], **options)
    log = outcome.engine.event_log
    assert outcome.calls == {rid: 1 for rid in outcome.ids}
    replay = Replay(EventLog.from_jsonl(log.to_jsonl()))
    for step in map(int, replay.busy_steps()):
        state = replay[step]
        tables = [row.blocks for row in state.slots if row is not None]
        held = [block for table in tables for block in table]
        assert len(held) == len(set(held)) and len(held) + len(state.free_blocks) == options["kv_blocks"]
        for row in state.slots:
            if row is not None and row.computed is not None:
                assert len(row.blocks) == ceil(row.computed / options["block_size"]), (step, row)


@given(st.data(), workloads, st.integers(1, 4), st.sampled_from(MODES))
@settings(max_examples=150, deadline=None)
def test_a_memory_log_round_trips_and_replays_the_engine_state(data, workload, batch_size, mode):
    options = data.draw(memory(workload, batch_size))
    batching, padded = mode
    engine = make_engine(HashModel(), batch_size, None, batching=batching, padded=padded, **options)
    outcome = run_specs(engine, workload)
    log = engine.event_log
    text = log.to_jsonl()
    assert EventLog.from_jsonl(text) == log and EventLog.from_jsonl(text).to_jsonl() == text
    replay = Replay(log)
    for step, (table, waiting) in outcome.snapshots.items():
        state = replay[step]
        live = {i: s.request_id for i, s in enumerate(state.slots) if s is not None and s.finish_reason is None}
        assert live == table and state.waiting == waiting, step

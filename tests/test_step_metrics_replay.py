"""Every count the Metrics charts and the narration derive from events (`step_metrics`, the
preemption chart, `StepCounts`) equals the count read off the replayed state at that step, over generated workloads with
preemption (small KV pools), chunked prefill, prefix caching and cancellations (hypothesis), and
exactly for a small case."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import EventLog
from engine.analysis.metrics import step_metrics
from engine.analysis.replay import Replay
from tests.helpers import HashModel, make_engine, run_specs
from tests.test_memory_cases import two_rows_three_blocks
from tests.test_memory_properties import memory
from tests.test_properties import MODES, cancellable, stop_tokens

COUNTS = ["rows_sent", "active_rows", "running_rows", "padded_rows", "queue_depth", "admitted", "finished"]


def replayed_counts(replay: Replay, step: int) -> dict[str, int]:
    """The counts of `step_metrics` at `step`, read off the replayed state of that step."""
    state = replay[step]
    rows = [row for row in state.slots if row is not None]
    active = sum(row.token is not None for row in rows)
    counts = {
        "rows_sent": state.rows_sent,
        "active_rows": active,
        "running_rows": len(rows),
        "padded_rows": state.rows_sent - active if state.rows_sent else 0,
        "queue_depth": len(state.waiting),
        "admitted": sum(row.admitted for row in rows),
        "finished": len(state.finished),
        "preempted": len(state.preempted),
    }
    if state.free_blocks is not None:
        config = replay.log.config
        counts["kv_blocks_held"] = config.kv_blocks - len(state.free_blocks)
        holders = Counter(block for row in rows for block in row.blocks)
        shared_tokens = sum(n - 1 for n in holders.values()) * config.block_size  # a shared block holds its tokens once
        counts["kv_tokens_held"] = sum(row.computed or 0 for row in rows) - shared_tokens
    return counts


def narration_counts(replay: Replay, step: int) -> dict[str, int]:
    """The narration's counts at `step` (`StepCounts`), under the names of `replayed_counts`."""
    counts = {"queue_depth": replay.counts.waiting(step), "running_rows": replay.counts.occupied(step)}
    free = replay.counts.free_blocks(step)
    if free is not None:
        counts["kv_blocks_held"] = replay.log.config.kv_blocks - free
    return counts


def derived_counts(log: EventLog) -> dict[int, dict[str, int]]:
    """Busy step -> the counts `step_metrics` derives from the events, and the preemptions there."""
    steps = step_metrics(log)
    preempted = {}
    for event in log:
        if event.kind == "preempt":
            preempted[event.step] = preempted.get(event.step, 0) + 1
    columns = COUNTS + (["kv_blocks_held", "kv_tokens_held"] if log.config.kv_blocks is not None else [])
    return {
        int(row.step): {**{c: int(getattr(row, c)) for c in columns}, "preempted": preempted.get(int(row.step), 0)}
        for row in steps.itertuples()
    }


def test_a_preempted_row_waits_again_in_the_queue_depth():
    engine = two_rows_three_blocks()  # B is preempted at step 2 and admitted again at 4
    engine.run()
    steps = step_metrics(engine.event_log)
    assert steps.queue_depth.tolist() == [0, 0, 1, 1, 0, 0]
    assert steps.running_rows.tolist() == [2, 2, 1, 1, 1, 1]
    assert steps.admitted.tolist() == [2, 0, 0, 0, 1, 0]
    assert steps.kv_blocks_held.tolist() == [2, 2, 2, 2, 2, 2]


def test_the_small_case_counts_agree_with_its_replay():
    engine = two_rows_three_blocks()
    engine.run()
    log = engine.event_log
    replay = Replay(log)
    assert derived_counts(log) == {step: replayed_counts(replay, step) for step in map(int, replay.busy_steps())}


@st.composite
def memory_with_cache(draw, workload, batch_size: int):
    """`memory(...)`'s settings, sometimes with prefix caching (a paged pool only)."""
    options = draw(memory(workload, batch_size))
    if options["kv_blocks"] is not None and options["kv_policy"] == "paged":
        options["prefix_caching"] = draw(st.booleans())
    return options


@given(
    st.data(),
    st.lists(cancellable, min_size=1, max_size=10),
    st.integers(1, 4),
    stop_tokens,
    st.sampled_from(MODES),
)
@settings(max_examples=300, deadline=None)
def test_every_count_derived_from_events_equals_the_replayed_state(data, workload, batch_size, stop_token, mode):
    options = data.draw(memory_with_cache(workload, batch_size))
    batching, padded = mode
    engine = make_engine(HashModel(), batch_size, stop_token, batching=batching, padded=padded, **options)
    run_specs(engine, workload)
    log = EventLog.from_jsonl(engine.event_log.to_jsonl())
    replay = Replay(log)
    derived = derived_counts(log)
    replayed = {step: replayed_counts(replay, step) for step in derived}
    assert derived == replayed
    for step, counts in replayed.items():
        told = narration_counts(replay, step)
        assert told == {name: counts[name] for name in told}, step

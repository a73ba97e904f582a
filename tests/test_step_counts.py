"""The narration's counts (requests waiting, slots taken, KV blocks free) agree with the replay's full
state at every step, and narrating a run never builds a step's whole state."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import BatchInferenceEngine
from engine.analysis.narration import narrate
from engine.analysis.replay import Replay
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate
from engine.practice.zoo import LeakedBlocksOnCancel
from tests.helpers import HashModel
from tests.test_prefix_caching import cache_options, run_cancelling, shared_workloads


def assert_counts_match_the_replay(replay: Replay) -> None:
    counts = replay.counts
    for step in range(len(replay)):
        state = replay[step]
        assert counts.waiting(step) == len(state.waiting), step
        assert counts.occupied(step) == sum(row is not None for row in state.slots), step
        expected = None if state.free_blocks is None else len(state.free_blocks)
        assert counts.free_blocks(step) == expected, step


@settings(max_examples=120, deadline=None)
@given(
    batch_size=st.integers(1, 5),
    budgets=st.lists(st.integers(0, 9), min_size=1, max_size=14),
    arrivals=st.lists(st.integers(0, 6), min_size=14, max_size=14),
    pool=st.sampled_from([None, 6, 9, 14]),
    policy=st.sampled_from(["paged", "reserve"]),
    token_budget=st.sampled_from([None, 5, 8]),
    batching=st.sampled_from(["continuous", "static"]),
    cancels=st.lists(st.tuples(st.integers(1, 8), st.integers(0, 13)), max_size=3),
)
def test_the_counts_equal_the_replay_s_state_at_every_step(
    batch_size, budgets, arrivals, pool, policy, token_budget, batching, cancels
):
    engine = BatchInferenceEngine(
        HashModel(), batch_size, None, kv_blocks=pool, block_size=2, kv_policy=policy if pool else "paged",
        token_budget=max(token_budget, batch_size) if token_budget else None, batching=batching,
    )  # fmt: skip
    ids = [engine.submit_request([i + 1, i + 2, i + 3], b, arrival_step=arrivals[i]) for i, b in enumerate(budgets)]
    for step, which in sorted(cancels):
        while engine.clock < step and engine.step():
            pass
        engine.cancel(ids[which % len(ids)])
    engine.run()
    assert_counts_match_the_replay(Replay(engine.event_log))


def test_a_log_that_leaks_blocks_is_counted_from_the_replay_itself():
    """A cancelled row that never gives its blocks back (the bug zoo's leak) leaves its slot still holding them."""
    engine = LeakedBlocksOnCancel(HashModel(), 2, None, kv_blocks=6, block_size=2)
    first = engine.submit_request([1, 2, 3], 6)
    engine.submit_request([4, 5], 4)
    engine.submit_request([6], 3, arrival_step=2)
    engine.step()
    engine.cancel(first)
    engine.run()
    replay = Replay(engine.event_log)
    assert replay.counts._alive is None  # irregular: the fast count would say the leaked blocks are held
    assert_counts_match_the_replay(replay)


@pytest.mark.parametrize("name", ["anyscale-cap32", "preemption", "chunked-prefill", "fill-timeout", "cancellation"])
def test_narrating_every_step_never_builds_a_step_s_whole_state(name, monkeypatch):
    replay = Replay(simulate(resolve_scenario(name)))
    monkeypatch.setattr(Replay, "_state", lambda self, step: pytest.fail(f"narration built step {step}'s state"))
    for step in range(len(replay)):
        assert narrate(replay, step)


@given(st.data(), shared_workloads(), st.integers(1, 3))
@settings(max_examples=100, deadline=None)
def test_a_prefix_cached_run_s_free_blocks_come_from_the_pool_replay_and_agree(data, workload, batch_size):
    options = data.draw(cache_options(workload, batch_size))
    assert_counts_match_the_replay(Replay(run_cancelling(workload, batch_size, options).event_log))


@pytest.mark.parametrize("name", ["shared-system-prompt", "multi-turn-chat"])
def test_the_prefix_caching_lessons_counts_agree_with_the_replay(name):
    assert_counts_match_the_replay(Replay(simulate(resolve_scenario(name))))

"""The prefix cache's hits from the log (engine/analysis/prefix_hits.py): exact values of hand-derived
runs, and, over generated runs (hypothesis), agreement with a plain walk through the events."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import BatchInferenceEngine
from engine.analysis.metrics import request_metrics, summary
from engine.analysis.prefix_hits import cache_hits, hit_rate_over_time, prefix_lookups, window_width
from engine.core.log.events import EventKind
from engine.lab.scenario import parse_scenario, resolve_scenario
from engine.lab.simulate import simulate

SHARED = """
title = "A shared system prompt"
[engine]
batch_size = 3
stop_token = 0
[engine.kv]
blocks = 16
block_size = 4
policy = "paged"
prefix_caching = true
[model]
kind = "simulated"
stop_chance = 0.0
[[requests]]
id = "A"
prompt = [1, 2, 3, 4, 5, 6, 7, 8, 20, 21]
max_tokens = 3
[[requests]]
id = "B"
prompt = [1, 2, 3, 4, 5, 6, 7, 8, 30, 31, 32]
max_tokens = 2
arrival_step = 2
[[requests]]
id = "C"
prompt = [1, 2, 3, 4, 5, 6, 7, 8]
max_tokens = 2
arrival_step = 2
"""


def shared_run():
    return simulate(parse_scenario(SHARED, "shared.toml"))


def test_a_shared_system_prompt_hits_at_the_later_admissions():
    """A (10 tokens) is admitted alone at step 0 and prefills its 10 tokens: blocks [1..4] and [5..8]
    are full and cached, [20, 21] is not. B (11 tokens) and C (8) arrive at step 2, while A still runs
    (3 tokens: steps 0-2), and share A's first 8 tokens: B hits both full blocks (8 tokens, capped at
    (11 - 1) // 4 = 2 blocks); C, whose whole prompt is those 8, is capped at (8 - 1) // 4 = 1 block
    (4 tokens) so that one token is computed. Step 0 looks up 10 tokens and finds 0; step 2 looks up
    11 + 8 = 19 and finds 8 + 4 = 12. The run ends at step 3 (B and C emit at steps 2 and 3)."""
    log = shared_run()
    assert prefix_lookups(log).to_dict("list") == {"step": [0, 2], "looked_up": [10, 19], "cached": [0, 12]}
    assert request_metrics(log).cached_tokens.to_dict() == {"A": 0, "B": 8, "C": 4}
    windows = hit_rate_over_time(log)
    assert windows.to_dict("list") == {
        "first_step": [0, 2],
        "last_step": [0, 2],
        "looked_up": [10, 19],
        "cached": [0, 12],
        "rate": [0.0, 12 / 19],
        "so_far": [0.0, 12 / 29],
    }
    assert cache_hits(log) == (12, 29)
    assert summary(log)["prefix_hit_rate"] == 12 / 29 == windows.so_far.iloc[-1]


def test_a_long_run_is_grouped_into_at_most_max_points_windows():
    """4 steps in at most 2 windows: steps 0-1 (A's 10 tokens, none found) and 2-3 (B and C: 12 of 19);
    in 3 windows, 2 steps each too (ceil(4 / 3) = 2). The last window ends at the last step."""
    log = shared_run()
    assert log.num_steps == 4 and window_width(4, 2) == window_width(4, 3) == 2 and window_width(4, 4) == 1
    windows = hit_rate_over_time(log, max_points=2)
    assert windows[["first_step", "last_step", "looked_up", "cached"]].to_dict("list") == {
        "first_step": [0, 2],
        "last_step": [1, 3],
        "looked_up": [10, 19],
        "cached": [0, 12],
    }
    assert hit_rate_over_time(log, max_points=1).to_dict("list") == {
        "first_step": [0],
        "last_step": [3],
        "looked_up": [29],
        "cached": [12],
        "rate": [12 / 29],
        "so_far": [12 / 29],
    }


def test_a_readmission_looks_up_its_generated_tokens_and_may_hit_its_own_blocks():
    """The preemption lesson (7 blocks of 2; A, B, C with 2-token prompts) with prefix caching: step 0
    looks up the three prompts (6 tokens) and finds none. C is preempted at step 3 (its blocks 2, 5 to
    the queue's tail) and B at step 5, holding [1, 4, 5] (5 was C's, taken back at step 3): the queue's
    tail gets 5, 4, 1, then A's 2, 6, 3, 0 when it finishes. At step 6 B looks up its 2 + 5 tokens and
    C its 2 + 3 (the lesson's 7 and 5): B's three full blocks [3, 4], [b1, b2], [b3, b4] are still
    cached, a hit capped at (7 - 1) // 2 = 3 blocks, 6 tokens; C's were reused (5 by B, 2 by A): none."""
    log = simulate(resolve_scenario("preemption").with_engine(prefix_caching=True))
    assert [e.block for e in log if e.kind == "prefix_hit"] == [1, 4, 5]
    assert prefix_lookups(log).to_dict("list") == {"step": [0, 6], "looked_up": [6, 12], "cached": [0, 6]}
    assert request_metrics(log).cached_tokens.to_dict() == {"A": 0, "B": 6, "C": 0}
    assert hit_rate_over_time(log).so_far.tolist() == [0.0, 6 / 18]


def test_without_prefix_caching_nothing_is_looked_up():
    log = simulate(parse_scenario(SHARED.replace("prefix_caching = true", ""), "plain.toml"))
    assert prefix_lookups(log).empty and hit_rate_over_time(log).empty
    assert cache_hits(log) == (0, 0)


def walked(log) -> tuple[dict[int, int], dict[int, int]]:
    """Per step: tokens looked up and found, by a plain walk through the events (the definition)."""
    emitted, looked_up, cached = {}, {}, {}
    for step, kind, request in zip(log.step, log.kind, log.request):
        if kind == EventKind.EMIT:
            emitted[request] = emitted.get(request, 0) + 1
        elif kind == EventKind.ADMIT:
            looked_up[step] = looked_up.get(step, 0) + len(log.requests[request].prompt) + emitted.get(request, 0)
            cached.setdefault(step, 0)
        elif kind == EventKind.PREFIX_HIT:
            cached[step] += log.config.block_size
    return looked_up, cached


def next_token(batch: list[list[int]]) -> list[int]:
    return [sum(prefix) % 7 + 1 for prefix in batch]


@settings(max_examples=60, deadline=None)
@given(
    batch_size=st.integers(1, 4),
    block_size=st.sampled_from([1, 2, 4]),
    system=st.lists(st.integers(1, 9), max_size=8),
    requests=st.lists(
        st.tuples(
            st.booleans(), st.lists(st.integers(1, 9), min_size=1, max_size=5), st.integers(1, 8), st.integers(0, 8)
        ),
        min_size=1,
        max_size=10,
    ),
    max_points=st.integers(1, 12),
)
def test_lookups_agree_with_a_walk_through_the_events_and_windows_add_up(
    batch_size, block_size, system, requests, max_points
):
    """Tight pools (preemptions, readmissions that look their generated tokens up) and shared prefixes."""
    engine = BatchInferenceEngine(
        next_token, batch_size, None, kv_blocks=24, block_size=block_size, prefix_caching=True
    )
    for shares, own, max_tokens, arrival in requests:
        engine.submit_request((system if shares else []) + own, max_tokens, arrival_step=arrival)
    engine.run()
    log = engine.event_log
    looked_up, cached = walked(log)
    lookups = prefix_lookups(log)
    assert dict(zip(lookups.step, lookups.looked_up)) == looked_up
    assert dict(zip(lookups.step, lookups.cached)) == cached
    windows = hit_rate_over_time(log, max_points)
    assert len(windows) <= max_points
    assert (windows.first_step.diff().dropna() > 0).all() and (windows.last_step < log.num_steps).all()
    assert (windows.looked_up.sum(), windows.cached.sum()) == (sum(looked_up.values()), sum(cached.values()))
    assert windows.so_far.iloc[-1] == pytest.approx(summary(log)["prefix_hit_rate"])
    assert ((windows.rate >= 0) & (windows.rate < 1)).all()  # never every token: one is always computed
    assert request_metrics(log).cached_tokens.sum() == windows.cached.sum()

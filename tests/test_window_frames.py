"""A long run's window (engine/analysis/window_frames.py, kv_window.py): the stage plays steps `first`..`last`
from frames made for them alone. On small runs (hypothesis), every list of a window equals the whole run's
frames cut to it, its pool decodes to the whole run's at each of its steps, and its opening state (slots,
queue, pool) is the log's own replay at its first step; and exact values on a hand-made run."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import BatchInferenceEngine
from engine.analysis.frames import encode, outline
from engine.analysis.kv_window import pool_before
from engine.analysis.pool_state import pool_after
from engine.analysis.replay import Replay
from engine.analysis.window_frames import window_bounds, window_frames
from tests.helpers import HashModel, ScriptModel
from tests.test_frames import tables_after
from tests.test_prefix_caching import cache_options, run_cancelling, shared_workloads


def global_rows(rows: list, ids: list[str], everyone: list[str], at: int = 0) -> list:
    """`rows` with the window's request index in column `at` written as the run's."""
    index = {rid: i for i, rid in enumerate(everyone)}
    return [[*row[:at], index[ids[row[at]]], *row[at + 1 :]] for row in rows]


def decoded(kv: dict, step: int, ids: list[str]) -> tuple[dict, set]:
    """The pool the stage draws at `step` (every entry up to it applied): tables by request id, cached blocks."""
    pool = pool_before(kv, step + 1)
    owned = lambda r, table: [b for b in table if kv.get("prefix_caching") or pool.plain.owner[b] == r]  # noqa: E731
    return {ids[r]: owned(r, t) for r, t in pool.tables.items() if owned(r, t)}, set(pool.cached)


def assert_window_is_the_run_cut(replay: Replay, first: int, last: int) -> None:
    whole, log = encode(replay), replay.log
    window = window_frames(replay, outline(replay), first, last)
    json.dumps(window)  # (sent as JSON)
    everyone = [info.request_id for info in log.requests]
    ids = [r["id"] for r in window["requests"]]
    shown = {everyone.index(rid) for rid in ids}
    assert (window["first"], window["steps"], window["total"]) == (first, last + 1, whole["steps"])
    assert window["colours"] == [whole["colours"][everyone.index(rid)] for rid in ids]
    for r, request in zip(ids, window["requests"]):
        tokens = whole["requests"][everyone.index(r)]["tokens"]
        assert request["tokens"] == tokens[: len(request["tokens"])]
    overlapping = [row for row in whole["occupancy"] if row[2] <= last and row[3] >= first]
    assert global_rows(window["occupancy"], ids, everyone, at=1) == overlapping
    assert global_rows(window["waits"], ids, everyone) == [w for w in whole["waits"] if w[1] <= last and w[2] > first]
    clipped = [[r, s, min(n, last - s + 1)] for r, s, n in whole["emits"] if r in shown and s <= last]
    assert global_rows(window["emits"], ids, everyone) == clipped
    for key, upto in (("stops", last), ("prefills", last), ("preempted", last + 1), ("partial", last)):
        assert global_rows(window[key], ids, everyone) == [
            row for row in whole[key] if row[0] in shown and row[1] <= upto
        ]
    assert window["busy"] == [s for s in whole["busy"] if first <= s <= last]
    assert window["calls"] == [c for c in whole["calls"] if first <= c[0] <= last]
    assert window["narration"] == {str(s): whole["narration"][str(s)] for s in window["busy"]}
    state = replay[first]  # the opening state: slots and queue as the log's replay has them
    held = {row[0]: ids[row[1]] for row in window["occupancy"] if row[2] <= first <= row[3]}
    assert held == {slot: row.request_id for slot, row in enumerate(state.slots) if row is not None}
    waiting = sorted((order, ids[r]) for r, a, u, order in window["waits"] if a <= first < u)
    assert tuple(rid for _, rid in waiting) == state.waiting
    if "kv" not in whole:
        return
    for step in range(first, last + 1):  # the pool at every step of the window: the whole run's
        assert decoded(window["kv"], step, ids) == decoded(whole["kv"], step, everyone), step
    tables, cached = decoded(window["kv"], first, ids)
    if log.config.prefix_caching:
        replayed = pool_after(log, first)
        assert tables == {everyone[r]: t for r, t in replayed.tables.items() if t} and cached == replayed.cached
        admissions = whole["kv"]["admissions"]
        before = window["kv"]["before"]
        for step in range(first, last + 1):  # the hit rate so far counts every admission up to the step
            so_far = [a for a in window["kv"]["admissions"] if a[1] <= step]
            expected = [a for a in admissions if a[1] <= step]
            assert before[0] + sum(a[2] for a in so_far) == sum(a[2] for a in expected)
            assert before[1] + sum(a[3] for a in so_far) == sum(a[3] for a in expected)
    else:
        assert tables == {everyone[r]: list(t) for r, t in tables_after(log, first).items()}


def some_window(data, replay: Replay) -> tuple[int, int]:
    steps = len(replay)
    first, last = data.draw(st.integers(0, steps - 1)), data.draw(st.integers(0, steps - 1))
    busy = replay.busy_steps().tolist()
    return window_bounds(busy, steps, first, last, data.draw(st.integers(1, steps)))


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    batch_size=st.integers(1, 4),
    budgets=st.lists(st.integers(0, 8), min_size=1, max_size=10),
    arrivals=st.lists(st.integers(0, 12), min_size=10, max_size=10),
    pool=st.sampled_from([None, 6, 9, 14]),
    policy=st.sampled_from(["paged", "reserve"]),
)
def test_a_window_of_a_run_with_or_without_a_pool_is_the_whole_run_cut_to_it(
    data, batch_size, budgets, arrivals, pool, policy
):
    """Idle stretches (late arrivals), preemptions (small pools), both policies."""
    options = {} if pool is None else {"kv_blocks": pool, "block_size": 2, "kv_policy": policy}
    engine = BatchInferenceEngine(HashModel(), batch_size, None, **options)
    for i, budget in enumerate(budgets):
        engine.submit_request([i + 1, i + 2, i + 3], budget, arrival_step=arrivals[i])
    engine.run()
    replay = Replay(engine.event_log)
    assert_window_is_the_run_cut(replay, *some_window(data, replay))


@given(st.data(), shared_workloads(), st.integers(1, 3))
@settings(max_examples=60, deadline=None)
def test_a_window_of_a_prefix_cached_run_opens_on_the_log_s_own_pool(data, workload, batch_size):
    """Shared prefixes, small pools, cancellations, budgets: cached-free blocks, shared blocks, evictions."""
    engine = run_cancelling(workload, batch_size, data.draw(cache_options(workload, batch_size)))
    replay = Replay(engine.event_log)
    assert_window_is_the_run_cut(replay, *some_window(data, replay))


def test_window_bounds_clamp_order_cap_and_widen_to_whole_idle_stretches():
    busy = [0, 1, 2, 10, 11, 20]  # idle: 3-9 and 12-19; the run has 25 steps (21-24 idle at its end)
    assert window_bounds(busy, 25, 1, 2, 10) == (1, 2)
    assert window_bounds(busy, 25, 2, 1, 10) == (1, 2)  # in any order
    assert window_bounds(busy, 25, 5, 10, 10) == (3, 10)  # from the start of the idle stretch it starts in
    assert window_bounds(busy, 25, 0, 4, 10) == (0, 9)  # to the end of the one it ends in
    assert window_bounds(busy, 25, 0, 24, 4) == (0, 9)  # at most 4 steps (0-3), then the stretch whole
    assert window_bounds(busy, 25, -7, 99, 100) == (0, 24)  # inside the run; its idle end is one column
    assert window_bounds([], 0, 3, 5, 10) == (0, 0)


def test_a_hand_made_window_holds_the_rows_running_and_waiting_as_it_opens():
    """A (4 tokens) and B (3) run in 2 slots from step 0; C waits for B's slot, which it takes at step 3;
    D arrives at 3 and waits for A's. The window of steps 2-3: A and B listed with their whole stretches
    (admitted at 0, so never drawn as admitted), the tokens emitted up to step 3 only, each wait whole."""
    scripts = {(1,): [11, 12, 13, 14], (2,): [21, 22, 23], (3,): [31, 32], (4,): [41]}
    engine = BatchInferenceEngine(ScriptModel(scripts), 2, None)
    for prompt, budget, arrival in ((1, 4, 0), (2, 3, 0), (3, 2, 0), (4, 1, 3)):
        engine.submit_request([prompt], budget, request_id="ABCD"[prompt - 1], arrival_step=arrival)
    engine.run()
    replay = Replay(engine.event_log)
    window = window_frames(replay, outline(replay), 2, 3)
    assert [r["id"] for r in window["requests"]] == ["A", "B", "C", "D"]
    assert [r["tokens"] for r in window["requests"]] == [[11, 12, 13, 14], [21, 22, 23], [31], []]
    assert window["occupancy"] == [[0, 0, 0, 3, 1], [1, 1, 0, 2, 1], [1, 2, 3, 4, 1]]  # D's (4-4) is after it
    assert window["emits"] == [[0, 0, 4], [1, 0, 3], [2, 3, 1]]  # C's run of 2 cut to its step 3
    assert window["waits"] == [[2, 0, 3, 2], [3, 3, 4, 3]]
    assert window["calls"] == [[2, 2, 0], [3, 2, 0]] and window["busy"] == [2, 3]
    assert (window["first"], window["steps"], window["total"], window["next_busy"]) == (2, 4, 5, 4)
    assert window["narration"]["3"][:2] == [
        "Request D arrives and joins the queue.",
        "Request C is admitted into slot 1 from the queue.",
    ]


def test_a_window_opens_with_the_pool_the_steps_before_left_as_explicit_blocks():
    """A and B share a pool of 3 blocks of 2 tokens; B is preempted at step 2 and comes back at 4 (test_frames.py's
    run). The whole run's ops: A takes 0, B 1; at 2 A takes the lowest (2) and B gives its back; A's go at 3."""
    scripts = {(1,): [11, 12, 13, 14], (2,): [21, 22, 23, 24]}
    engine = BatchInferenceEngine(ScriptModel(scripts), 2, None, kv_blocks=3, block_size=2)
    engine.submit_request([1], 4, request_id="A")
    engine.submit_request([2], 4, request_id="B")
    engine.run()
    replay = Replay(engine.event_log)
    assert encode(replay)["kv"]["ops"] == [[0, 0, 1], [2, 0, ~1], [3, ~0], [4, [1, 2]], [5, ~1]]
    window = window_frames(replay, outline(replay), 2, 3)
    # opening: A holds block 0 and B block 1 (as [request, count, first block]); then step 2's own ops
    assert window["kv"]["ops"] == [[2, [0, 1, 0], [1, 1, 1], 0, ~1], [3, ~0]]
    assert window["waits"] == [[1, 2, 4, -1]]  # B waits again from its preemption, at the queue's front
    window = window_frames(replay, outline(replay), 3, 5)
    assert window["kv"]["ops"] == [[3, [0, 1, 0], [0, 1, 2], ~0], [4, [1, 2]], [5, ~1]]  # A's 0 and 2: two runs
    window = window_frames(replay, outline(replay), 4, 5)  # A is gone, its blocks given back: B alone, renumbered
    assert ([r["id"] for r in window["requests"]], window["kv"]["ops"]) == (["B"], [[4, [0, 2]], [5, ~0]])

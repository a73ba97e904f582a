"""The stage's frames (engine.analysis.frames): exact values on built-in scenarios, the colour rule,
and the KV pool's ops (engine.analysis.kv_frames), which rebuild every step's block tables."""

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import BatchInferenceEngine, EventLog
from engine.analysis.frames import AFTER_CALL, NEXT_STEP, encode, for_the_wire
from engine.analysis.kv_frames import LowestFree, kv_section
from engine.analysis.replay import Replay
from engine.core.config import EngineConfig
from engine.core.log.events import EventKind, RequestInfo
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate
from tests.helpers import HashModel, ScriptModel


def frames_of(name: str) -> dict:
    return encode(Replay(simulate(resolve_scenario(name))))


def test_part2_frames_hold_who_is_where_what_they_emitted_and_who_waits():
    frames = frames_of("part2-slot-refill")
    assert (frames["slots"], frames["steps"], frames["batching"], frames["padded"]) == (2, 4, "continuous", False)
    assert frames["requests"] == [
        {"id": "A", "prompt": 1, "tokens": [11]},
        {"id": "B", "prompt": 1, "tokens": [21, 22, 23]},
        {"id": "C", "prompt": 1, "tokens": [31, 32]},
        {"id": "D", "prompt": 1, "tokens": [41]},
    ]
    assert frames["occupancy"] == [[0, 0, 0, 0, AFTER_CALL], [0, 2, 1, 2, 1], [0, 3, 3, 3, 1], [1, 1, 0, 2, 1]]
    assert frames["emits"] == [[0, 0, 1], [1, 0, 3], [2, 1, 2], [3, 3, 1]]
    assert frames["waits"] == [[0, 0, 0, 0], [1, 0, 0, 1], [2, 0, 1, 2], [3, 0, 3, 3]]
    assert frames["busy"] == [0, 1, 2, 3] and frames["faults"] == [] and frames["stops"] == []
    assert frames["calls"] == [[0, 2, 0], [1, 2, 0], [2, 2, 0], [3, 1, 0]]
    assert frames["narration"]["1"][0] == "Request C is admitted into slot 0 from the queue."


def test_a_stop_is_recorded_at_the_step_it_completes_and_partial_matches_apart():
    frames = frames_of("stop-sequences")
    assert frames["stops"] == [[2, 1, 2], [0, 3, 2], [1, 3, 3], [3, 3, 2]]  # [request, completing step, tail]
    assert [2, 0] in frames["partial"] and [2, 1] not in frames["partial"]  # C: "1" part-way, "1 2" complete
    assert frames["partial"] == [[0, 0], [0, 2], [1, 0], [1, 1], [1, 2], [2, 0], [3, 2]]


def test_a_cancelled_running_request_leaves_at_the_next_step_and_one_never_admitted_only_waits():
    frames = frames_of("cancellation")
    assert [r["id"] for r in frames["requests"]] == ["A", "C", "B", "D"]
    assert frames["occupancy"] == [[0, 0, 0, 2, NEXT_STEP], [0, 3, 3, 5, 1], [1, 1, 0, 3, 1]]
    assert frames["waits"][2] == [2, 0, 1, 2]  # B waited until its cancellation at step 1


def test_idle_stretches_are_the_steps_without_events_and_a_failed_call_is_a_fault():
    assert frames_of("arrivals-mid-run")["busy"] == [0, 1, 2, 3, 4, 5, 6, 12, 13]
    assert frames_of("model-fault")["faults"] == [2]


def test_padded_calls_count_their_padding_rows():
    frames = frames_of("padded-vs-ragged")
    assert frames["padded"] is True
    assert frames["calls"] == [[0, 4, 0], [1, 4, 0], [2, 4, 1], [3, 4, 3], [4, 4, 3], [5, 4, 3]]


def test_a_preempted_request_leaves_its_slot_and_comes_back_keeping_its_colour():
    scripts = {(1,): [11, 12, 13, 14], (2,): [21, 22, 23, 24]}
    engine = BatchInferenceEngine(ScriptModel(scripts), 2, None, kv_blocks=3, block_size=2)
    engine.submit_request([1], 4, request_id="A")
    engine.submit_request([2], 4, request_id="B")
    engine.run()
    frames = encode(Replay(engine.event_log))
    assert frames["occupancy"] == [[0, 0, 0, 3, AFTER_CALL], [0, 1, 4, 5, AFTER_CALL], [1, 1, 0, 1, NEXT_STEP]]
    assert frames["preempted"] == [[1, 2]]
    assert frames["emits"] == [[0, 0, 4], [1, 0, 2], [1, 4, 2]]
    assert frames["requests"][1]["tokens"] == [21, 22, 23, 24]
    assert frames["colours"][0] != frames["colours"][1]


def test_the_anyscale_run_s_frames_stay_under_2_2_mb_on_the_wire():
    frames = frames_of("anyscale-cap1536")  # paged on OPT-13B's pool: 195 preemptions make it 4,330 steps
    assert (frames["slots"], frames["steps"]) == (64, 4330)
    wire = for_the_wire(frames)
    assert len(json.dumps(wire)) <= 2_200_000  # 1.99 MB without the pool; its 46,685 allocations add 0.09 MB
    assert len(json.dumps(wire["kv"])) < 100_000
    assert [wire["sentences"][i] for i in wire["narration"]["1"]] == frames["narration"]["1"]  # the same sentences
    assert len(wire["sentences"]) < 0.6 * sum(map(len, frames["narration"].values()))  # many repeat


@settings(max_examples=150, deadline=None)
@given(
    batch_size=st.integers(1, 6),
    budgets=st.lists(st.integers(0, 6), min_size=1, max_size=25),
    arrivals=st.lists(st.integers(0, 8), min_size=25, max_size=25),
    pool=st.sampled_from([None, 8, 12]),  # small pools preempt: a readmitted request keeps its colour
)
def test_neighbouring_and_successive_occupants_never_share_a_colour(batch_size, budgets, arrivals, pool):
    engine = BatchInferenceEngine(HashModel(), batch_size, None, kv_blocks=pool, block_size=2)
    for i, budget in enumerate(budgets):
        engine.submit_request([i + 1], budget, arrival_step=arrivals[i])
    engine.run()
    assert_neighbours_differ(encode(Replay(engine.event_log)))


def assert_neighbours_differ(frames: dict) -> None:
    colour, by_slot = frames["colours"], {}
    for row in frames["occupancy"]:
        by_slot.setdefault(row[0], []).append(row)
    for slot, request, first, last, _ in frames["occupancy"]:
        for neighbour in (slot - 1, slot, slot + 1):
            for _, other, other_first, other_last, _ in by_slot.get(neighbour, ()):
                touching = other_first <= last + 1 and other_last >= first - 1  # overlapping, or one right after
                if other != request and touching:
                    assert colour[request] != colour[other], (request, other)


def test_a_preempted_request_s_colour_differs_from_its_neighbours_in_every_stretch():
    frames = frames_of("anyscale-cap128")  # 93 preemptions; readmitted rows land beside rows coloured earlier
    assert len(frames["preempted"]) == 93
    assert_neighbours_differ(frames)


def test_the_preemption_run_s_pool_is_sent_as_ops_whose_block_ids_follow_from_the_free_list():
    frames = frames_of("preemption")  # 7 blocks of 2 tokens; A, B, C are requests 0, 1, 2
    assert {k: v for k, v in frames["kv"].items() if k != "ops"} == {
        "blocks": 7,
        "block_size": 2,
        "policy": "paged",
        "used": 7,
    }
    assert frames["kv"]["ops"] == [
        [0, 0, 1, 2],  # admissions: A, B, C take blocks 0, 1, 2 (each the lowest free)
        [1, 0, 1, 2],  # each takes its second block: 3, 4, 5
        [3, 0, ~2, 1],  # A takes 6; C is preempted (frees 2 and 5); B takes 2
        [5, 0, ~1, ~0],  # A takes 5; B is preempted; A, evicted after the call, frees its blocks at the step
        [6, [1, 4], [2, 3], ~1],  # B takes 0-3, C 4-6 (recompute); B is evicted after the call
        [8, 2, ~2],  # C takes block 0, and ends at the run's last step: the pool is drawn empty
    ]
    assert frames["prefills"] == [[0, 0, 2, 2], [1, 0, 2, 2], [2, 0, 2, 2], [1, 6, 7, 7], [2, 6, 5, 5]]


def test_runs_without_a_pool_have_no_kv_section_and_a_budget_alone_sends_its_prefills():
    part2 = frames_of("part2-slot-refill")
    assert "kv" not in part2 and part2["prefills"] == []
    chunked = frames_of("chunked-prefill")  # a token budget of 512 and no pool: L's 4,000 tokens take 8 steps
    assert "kv" not in chunked
    assert [p for p in chunked["prefills"] if p[0] == 3] == [
        [3, 4, 509, 509],
        [3, 5, 509, 1018],
        [3, 6, 509, 1527],
        [3, 7, 509, 2036],
        [3, 8, 509, 2545],
        [3, 9, 509, 3054],
        [3, 10, 509, 3563],
        [3, 11, 437, 4000],
    ]


def test_block_ids_that_are_not_the_lowest_free_are_sent_as_runs():
    log = EventLog(EngineConfig(batch_size=2, kv_blocks=4, block_size=2))
    for name in "AB":
        log.arrive(0, RequestInfo(name, (1,), 2, ()))
    for step, kind, request, block in [(0, EventKind.KV_ALLOC, 0, 2), (0, EventKind.KV_ALLOC, 0, 3),
                                       (0, EventKind.KV_ALLOC, 1, 0), (1, EventKind.KV_FREE, 0, 2),
                                       (1, EventKind.KV_ALLOC, 1, 1), (1, EventKind.KV_ALLOC, 1, 2),
                                       (1, EventKind.KV_ALLOC, -1, 3), (1, EventKind.KV_ALLOC, 1, 9)]:  # fmt: skip
        log.append(step, kind, 0, request, block)
    columns = [np.frombuffer(c, dtype).astype(np.int64) for c, dtype in
               ((log.step, np.int32), (log.kind, np.int8), (log.request, np.int32))]  # fmt: skip
    # A takes 2 and 3 (not the lowest free, 0): one run; B then takes the lowest, 0; at step 1, 1 and
    # 2 are the lowest free; a block of no request and one outside the pool are dropped
    assert kv_section(log, *columns)["ops"] == [[0, [0, 2, 2], 1], [1, ~0, [1, 2]]]


def decoded_tables(kv: dict, step: int) -> dict[int, tuple[int, ...]]:
    """Every request's block table at `step`, from the ops alone, by kv.js's rules."""
    pool = LowestFree(kv["blocks"])
    for entry in (e for e in kv["ops"] if e[0] <= step):
        for op in entry[1:]:
            if isinstance(op, int) and op < 0:
                pool.free(~op)
                continue
            request, count, first = (op, 1, None) if isinstance(op, int) else (*op, None)[:3]
            for n in range(count):
                pool.take(request, pool.lowest() if first is None else first + n)
    return {r: tuple(b for b in table if pool.owner[b] == r) for r, table in pool.tables.items() if table}


@settings(max_examples=60, deadline=None)
@given(
    batch_size=st.integers(1, 5),
    budgets=st.lists(st.integers(0, 9), min_size=1, max_size=14),
    arrivals=st.lists(st.integers(0, 6), min_size=14, max_size=14),
    pool=st.integers(6, 14),  # a request needs up to 6 blocks: 3 prompt tokens + 9
    policy=st.sampled_from(["paged", "reserve"]),
    token_budget=st.sampled_from([None, 5, 8]),
)
def test_the_ops_rebuild_every_request_s_block_table_at_every_step(
    batch_size, budgets, arrivals, pool, policy, token_budget
):
    engine = BatchInferenceEngine(
        HashModel(), batch_size, None, kv_blocks=pool, block_size=2, kv_policy=policy,
        token_budget=max(token_budget, batch_size) if token_budget else None,
    )  # fmt: skip
    for i, budget in enumerate(budgets):
        engine.submit_request([i + 1, i + 2, i + 3], budget, arrival_step=arrivals[i])
    engine.run()
    replay = Replay(engine.event_log)
    kv = encode(replay)["kv"]
    for step in range(len(replay)):  # the last step too: its rows' blocks given back
        assert decoded_tables(kv, step) == tables_after(engine.event_log, step), step


def tables_after(log, step: int) -> dict[int, tuple[int, ...]]:
    """Every request's block table once every event of `step` (and before) has happened: the pool as the stage
    draws it, after the step's evictions."""
    tables: dict[int, list[int]] = {}
    for e in log:
        if e.step > step:
            break
        if e.kind == "kv_alloc":
            tables.setdefault(e.request_id, []).append(e.block)
        elif e.kind == "kv_free":
            tables.pop(e.request_id, None)
    index = {request.request_id: r for r, request in enumerate(log.requests)}
    return {index[rid]: tuple(table) for rid, table in tables.items() if table}


def test_the_stage_s_queue_follows_priorities_as_the_replay_does():
    """frames.js orders a step's waiting requests by the waits' place: with priorities, E (priority
    -1) is ahead of C and D at steps 2 and 4 of priority-vs-fifo, though it arrived last."""
    replay = Replay(simulate(resolve_scenario("priority-vs-fifo")))
    ids = [info.request_id for info in replay.log.requests]
    for step in range(len(replay)):
        stage = [ids[r] for place, r in sorted((o, r) for r, a, u, o in replay.waits() if a <= step < u)]
        assert tuple(stage) == replay[step].waiting, step
    assert replay[2].waiting == ("E", "C", "D") == replay[4].waiting

"""The stage's frames (engine.analysis.frames): exact values on built-in scenarios, and the colour rule."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import BatchInferenceEngine
from engine.analysis.frames import AFTER_CALL, NEXT_STEP, encode, for_the_wire
from engine.analysis.replay import Replay
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


def test_the_anyscale_run_s_frames_stay_under_2_mb_on_the_wire():
    frames = frames_of("anyscale-cap1536")  # paged on OPT-13B's pool: 195 preemptions make it 4,330 steps
    assert (frames["slots"], frames["steps"]) == (64, 4330)
    wire = for_the_wire(frames)
    assert len(json.dumps(wire)) <= 2_000_000
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

"""Every built-in scenario loads, runs, round-trips, and matches its golden event log."""

import dataclasses
import json

import pytest

from engine import EventLog
from engine.analysis.hardware import preset
from engine.lab.scenario import list_scenarios, load_scenario
from engine.lab.simulate import simulate
from tests.update_golden import GOLDEN, digest, golden_text, is_generated

SCENARIOS = list_scenarios()
NAMES = [path.stem for path in SCENARIOS]


def test_at_least_twelve_scenarios_including_the_anyscale_four():
    assert len(SCENARIOS) >= 12
    assert {f"anyscale-cap{cap}" for cap in (32, 128, 512, 1536)} <= set(NAMES)


@pytest.mark.parametrize("path", SCENARIOS, ids=NAMES)
def test_scenario_log_is_golden_and_round_trips(path):
    text = golden_text(path)
    if is_generated(path):
        assert digest(text) == json.loads((GOLDEN / "digests.json").read_text())[path.stem]
    else:
        assert text == (GOLDEN / f"{path.stem}.jsonl").read_text()
    log = EventLog.from_jsonl(text)
    assert log.to_jsonl() == text
    scenario = load_scenario(path)
    assert scenario.title and scenario.lesson.strip()
    assert len(log.requests) == len(scenario.requests)


def outputs(name: str) -> dict[str, list[int]]:
    return simulate(load_scenario(f"scenarios/{name}.toml")).outputs()


def test_part2_story_is_exact():
    assert outputs("part2-slot-refill") == {"A": [1, 11], "B": [2, 21, 22, 23], "C": [3, 31, 32], "D": [4, 41]}


def test_stop_sequence_story_is_exact():
    assert outputs("stop-sequences") == {
        "A": [20, 7, 4, 7, 8],
        "B": [21, 1, 1, 1, 2],
        "C": [22, 1, 2],
        "D": [7, 8, 3, 7, 8],
    }


def test_stop_token_and_edge_case_stories_are_exact():
    assert outputs("stop-token-included") == {"A": [9, 5, 5, 0], "B": [0, 0, 4, 0]}
    assert outputs("zero-budget-and-empty-prompt") == {"A": [1, 2, 3], "B": [7, 8, 9], "C": [4, 5, 6]}
    assert outputs("slot-reuse-state-reset") == {"A": [1, 7], "B": [2, 8, 8, 5]}


def test_cancellation_story_delivers_what_each_request_has():
    log = simulate(load_scenario("scenarios/cancellation.toml"))
    reasons = {e.request_id: (e.step, e.reason) for e in log if e.kind == "evict"}
    assert reasons == {"A": (3, "cancelled"), "B": (1, "cancelled"), "C": (3, "max_tokens"), "D": (5, "max_tokens")}
    assert len(log.outputs()["A"]) == 1 + 3 and log.outputs()["B"] == [2]


def test_model_fault_scenario_logs_the_error_and_matches_a_fault_free_run():
    faulty = load_scenario("scenarios/model-fault.toml")
    log = simulate(faulty)
    assert [(e.step, e.kind) for e in log if e.kind == "error"] == [(2, "error")]
    clean = simulate(dataclasses.replace(faulty, model=dataclasses.replace(faulty.model, fail_calls=())))
    assert log.outputs() == clean.outputs()


def test_anyscale_workload_matches_the_benchmark_as_a_server_sees_it():
    scenario = load_scenario("scenarios/anyscale-cap1536.toml")
    requests = scenario.requests
    assert len(requests) == 1000
    assert {len(r.prompt) for r in requests} == {512}
    assert {r.arrival_step for r in requests} == {0}
    assert {r.max_tokens for r in requests} == {1536}  # every request asks for the cap
    lengths = [r.answer_len for r in requests]
    assert max(lengths) <= 1536 and min(lengths) >= 1
    assert 110 < sum(lengths) / len(lengths) < 140  # exponential, mean 128, resampled above the cap
    assert len({tuple(r.prompt[:2]) for r in requests}) == 1000  # each prompt starts with its own answer id
    capped = load_scenario("scenarios/anyscale-cap32.toml").requests
    assert max(r.answer_len for r in capped) == 32
    assert scenario.engine.kv_blocks == preset(scenario.cost).kv_pool_blocks(scenario.engine.block_size) == 1293


def test_the_answer_model_stops_each_answer_at_its_drawn_length():
    scenario = dataclasses.replace(
        load_scenario("scenarios/anyscale-cap128.toml"),
        workload=dataclasses.replace(load_scenario("scenarios/anyscale-cap128.toml").workload, count=50),
    )
    log = simulate(scenario.with_engine(kv_blocks=None))
    outputs = log.outputs()
    for spec, rid in zip(scenario.requests, [f"r{i}" for i in range(50)]):
        answer = outputs[rid][len(spec.prompt) :]
        assert len(answer) == spec.answer_len and answer[-1] == 0 and 0 not in answer[:-1]

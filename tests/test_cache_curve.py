"""Mooncake's Figure 9 from the engine (engine/lab/cache_curve.py, `python -m engine cache-curve`): the engine's
prefix hit rate at each cache capacity stays within TOLERANCE of the trace's own LRU figure; a hit counts at a
request's first admission only."""

import dataclasses
import json
import math

import pytest

from cblab.cli.main import main
from engine import BatchInferenceEngine, SimulatedLLM
from engine.core.block_prompt import BlockPrompt
from engine.lab.cache_curve import TOLERANCE, cache_curve, first_admission_hits
from engine.lab.scenario import resolve_scenario
from engine.lab.toml_reader import ScenarioError


def first_requests(name: str, first: int):
    scenario = resolve_scenario(name)
    return dataclasses.replace(scenario, trace=dataclasses.replace(scenario.trace, first=first))


@pytest.mark.parametrize("name", ["trace-mooncake-conversation", "trace-mooncake-synthetic"])
def test_the_engines_hit_rate_is_the_traces_within_the_tolerance(name):
    points = cache_curve(first_requests(name, 600), (1e6, 4e6, math.inf))
    assert [p["capacity_tokens"] for p in points] == [1e6, 4e6, math.inf]
    for p in points:
        assert abs(p["engine_hit_rate"] - p["trace_hit_rate"]) <= TOLERANCE
    assert points[0]["trace_hit_rate"] < points[-1]["trace_hit_rate"]  # a bigger cache finds more


def test_a_hit_counts_at_the_first_admission_only():
    """r1 repeats r0's first 512-token block and is admitted after it: its 32 blocks of 16 are hits; a third
    request sharing nothing hits nothing."""
    engine = BatchInferenceEngine(SimulatedLLM(stop_chance=0.0), 1, 0, kv_blocks=200, prefix_caching=True)
    for blocks in ([(5, 512), (6, 20)], [(5, 512), (7, 20)], [(8, 40)]):
        engine.submit_request(BlockPrompt(blocks), 3)
    engine.run()
    assert first_admission_hits(engine.event_log) == 512


def test_a_capacity_smaller_than_the_longest_request_is_refused():
    with pytest.raises(ScenarioError, match="--capacities: 1000 tokens cannot hold the trace's longest request"):
        cache_curve(first_requests("trace-mooncake-synthetic", 50), (1000,))


def test_the_command_prints_a_json_list(capsys, monkeypatch):
    monkeypatch.setattr("cblab.cli.trace_commands.resolve_scenario", lambda name: first_requests(name, 40))
    assert main(["cache-curve", "mooncake-synthetic", "--capacities", "1e6,inf", "--json"]) == 0
    points = json.loads(capsys.readouterr().out)
    assert [p["capacity_tokens"] for p in points] == [1e6, "inf"]
    assert set(points[0]) == {"capacity_tokens", "engine_hit_rate", "trace_hit_rate"}


@pytest.mark.parametrize("given", ["", "1e6,x", "0", "1,2,3,4,5,6,7,8,9", "nan"])
def test_bad_capacities_are_one_line_errors(given, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["cache-curve", "mooncake-synthetic", "--capacities", given])
    assert exit.value.code == 2 and capsys.readouterr().err.startswith("error: argument --capacities:")

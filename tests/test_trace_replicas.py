"""A trace on several replicas (engine/lab/trace_replicas.py): every request is served once, by the replica with
the fewest outstanding requests when it arrives, at that replica's first step starting at or after its arrival;
the autoscaler's keys are refused with a trace; the command line reads the replicas as one service."""

import json

import pytest

from cblab.cli.main import main
from engine.analysis.hardware import cost_model
from engine.lab.scenario import parse_scenario
from engine.lab.simulate import simulate
from engine.lab.toml_reader import ScenarioError
from engine.lab.trace_replicas import replay_trace_replicas, replicas_summary
from tests.test_trace_replay import SCENARIO, arrival_starts

REPLICAS = SCENARIO.format(first=150, blocks=400, cost="llama-2-7b-h100-80gb") + "[replicas]\ninitial = 3\n"


@pytest.fixture(scope="module")
def replayed():
    scenario = parse_scenario(REPLICAS, "t.toml")
    return scenario, replay_trace_replicas(scenario)


def test_every_request_is_served_once_on_one_replica(replayed):
    scenario, logs = replayed
    served = [info.request_id for log in logs for info in log.requests]
    assert sorted(served) == sorted(spec.request_id for spec in scenario.requests)
    assert all(len(log.requests) for log in logs)  # the router spread them
    outputs = {rid: tokens for log in logs for rid, tokens in log.outputs().items()}
    assert all(len(outputs[spec.request_id]) == len(spec.prompt) + spec.max_tokens for spec in scenario.requests)


def test_each_request_joins_its_replicas_first_step_at_or_after_its_arrival(replayed):
    scenario, logs = replayed
    arrival = {spec.request_id: spec.arrival_ms / 1000 for spec in scenario.requests}
    for log in logs:
        for request_id, (start, before) in arrival_starts(log, cost_model(scenario.cost)).items():
            assert start >= arrival[request_id] > before


def test_the_router_sends_each_arrival_to_the_fewest_outstanding(replayed):
    """Replayed in time order: at each arrival time, the chosen replica had no more unfinished requests than any
    (a request is unfinished until the step that delivers it starts: the replay runs a step at its start)."""
    scenario, logs = replayed
    arrival = {spec.request_id: (spec.arrival_ms / 1000, i) for i, spec in enumerate(scenario.requests)}
    events = []  # (time, 0 arrival / 1 delivery, arrival order, replica): arrivals are routed in order, before a
    # step starting at their time
    for r, log in enumerate(logs):
        for request_id, (_, delivered) in arrival_starts(log, cost_model(scenario.cost), delivered=True).items():
            time, order = arrival[request_id]
            events += [(time, 0, order, r), (delivered, 1, 0, r)]
    outstanding = [0] * len(logs)
    for _, kind, _, r in sorted(events):
        if kind == 0:
            assert outstanding[r] == min(outstanding)
        outstanding[r] += 1 if kind == 0 else -1


def test_the_summary_reads_the_replicas_as_one_service(replayed):
    scenario, logs = replayed
    figures = replicas_summary(scenario, logs)
    assert figures["replicas"] == 3 and figures["requests"] == 150
    assert sum(figures["requests_per_replica"]) == 150
    assert all(0 < share <= 1 for share in figures["busy_share_per_replica"])
    assert figures["ttft_p50_s"] <= figures["ttft_p99_s"]


def test_a_trace_refuses_the_autoscalers_keys_and_the_app_path():
    with pytest.raises(ScenarioError, match="t.toml: replicas.max: a trace runs on a fixed number of replicas"):
        parse_scenario(REPLICAS + "max = 4\n", "t.toml")
    with pytest.raises(ScenarioError, match="python -m engine run t"):
        simulate(parse_scenario(REPLICAS, "t.toml", name="t"))


def test_the_command_line_prints_the_service_as_json(tmp_path, capsys):
    path = tmp_path / "rep.toml"
    path.write_text(REPLICAS.replace("first = 150", "first = 30"))
    assert main(["run", str(path), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["replicas"] == 3 and figures["requests"] == 30
    assert main(["run", str(path), "--jsonl", str(tmp_path / "x.jsonl")]) == 2
    assert "one a replica" in capsys.readouterr().err

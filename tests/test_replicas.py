"""Replicas behind a router, with a queue-depth autoscaler (engine/lab/replicas.py): exact routing
on a small case, the lesson's numbers, the limits, the TOML table, the CLI and the view."""

import json
import re

import pytest

from engine.lab.replicas import contrast, run_summary, simulate_replicas
from engine.lab.scenario import load_scenario, parse_scenario
from engine.lab.scenario_types import ReplicaConfig
from engine.lab.toml_reader import ScenarioError
from tests.test_cli import run_cli

LESSON = "scenarios/autoscaling-replicas.toml"
SMALL = """title = "t"
lesson = "l"
[engine]
batch_size = 1
stop_token = 0
[model]
stop_chance = 0.0
"""


def requests(*specs) -> str:
    """(id, max_tokens, arrival step) -> [[requests]] tables."""
    out = ""
    for i, (rid, max_tokens, arrival) in enumerate(specs):
        out += f'[[requests]]\nid = "{rid}"\nprompt = [{i + 1}]\nmax_tokens = {max_tokens}\narrival_step = {arrival}\n'
    return out


def test_the_router_sends_each_request_to_the_replica_with_the_least_outstanding():
    """Two replicas of one slot. A (3 tokens) and B (1) at step 0 go to replicas 0 and 1; C at step 1
    finds replica 0 busy with A and replica 1 free (B finished at step 0), so it goes to 1; D, also at
    step 1, then finds one outstanding on each and goes to replica 0, the lower id."""
    scenario = parse_scenario(SMALL + requests(("A", 3, 0), ("B", 1, 0), ("C", 2, 1), ("D", 1, 1)))
    run = simulate_replicas(scenario, ReplicaConfig(initial=2, max=2))
    assert list(run.steps.step) == [0, 1, 2, 3]
    assert list(run.steps.queue_depth) == [0, 1, 1, 0]  # D waits behind A on replica 0 for steps 1-2
    assert list(run.steps.tokens) == [2, 2, 2, 1]
    assert list(run.steps.utilization) == [1.0, 1.0, 1.0, 0.5]
    assert sorted(run.latency_steps.items()) == [("A", 3.0), ("B", 1.0), ("C", 2.0), ("D", 3.0)]


def test_the_autoscaler_starts_a_replica_after_the_window_and_it_serves_after_its_startup():
    """One slot, four 4-token requests at step 0: 3 wait at steps 0-3, above a threshold of 2, so the
    window of 2 steps is full after step 1; the new replica serves from step 1 + 1 + 1 = 3."""
    scenario = parse_scenario(SMALL + requests(*[(f"R{i}", 4, 0) for i in range(4)]))
    config = ReplicaConfig(initial=1, max=2, threshold=2, window=2, startup_steps=1)
    run = simulate_replicas(scenario, config)
    assert run.scaling == [(1, 1)]
    assert list(run.steps.replicas[:4]) == [1, 1, 2, 2] and list(run.steps.serving[:4]) == [1, 1, 1, 2]
    assert run.steps.tokens[3] == 1  # the new replica has nothing routed to it yet: arrivals were at step 0


def test_an_idle_replica_is_stopped_after_idle_steps_but_never_below_initial():
    scenario = parse_scenario(SMALL + requests(("A", 6, 0), ("B", 6, 0), ("C", 1, 9)))
    run = simulate_replicas(scenario, ReplicaConfig(initial=1, max=2, threshold=0.5, window=1, idle_steps=2))
    # Step 0: B waits behind A on the only replica, so a second starts (it gets nothing: B stays queued
    # where it was routed). B runs from step 6, the queue is empty at steps 6 and 7, and the idle
    # replica stops after step 7. At step 9 C waits behind B, and a replica starts again.
    assert run.scaling == [(0, 1), (7, -1), (9, 1)]
    assert list(run.steps.replicas) == [1] + [2] * 7 + [1, 1] + [2] * 3  # C stays on replica 0, behind B
    assert min(run.steps.serving) == 1


def test_the_lesson_states_its_numbers():
    runs = contrast(load_scenario(LESSON))
    one, queue, busy = (runs[name] for name in ("one replica", "queue depth", "utilization"))
    assert int(one.steps.queue_depth.max()) == 111 and round(one.latency(99)) == 264
    assert set(one.steps[one.steps.queue_depth > 0].utilization) == {1.0}  # 100% busy whenever anyone waits
    assert queue.scaling == [(80, 1)] and int(queue.steps[queue.steps.serving == 2].step.min()) == 91
    assert int(queue.steps.queue_depth.max()) == 9 and round(queue.latency(99)) == 66
    assert queue.replica_steps == 791
    assert busy.scaling == [(37, 1), (134, 1)] and busy.replica_steps == 1135 and round(busy.latency(99)) == 64
    coping = queue.steps[queue.steps.serving == 2]
    assert round(coping.utilization.mean(), 2) == 0.76 and round(coping.queue_depth.mean(), 1) == 0.7
    assert round(one.steps.queue_depth.mean()) == 43 and round(one.steps.utilization.mean(), 2) == 0.92
    assert round(busy.replica_steps / queue.replica_steps - 1, 2) == 0.43
    assert run_summary(queue)["peak_replicas"] == 2 and run_summary(busy)["peak_replicas"] == 3


def test_the_replicas_table_is_checked_naming_the_field():
    text = SMALL + requests(("A", 1, 0))
    assert parse_scenario(text + "[replicas]\nmax = 3\n").replicas == ReplicaConfig(max=3)
    for table, field in [
        ("initial = 0", "replicas.initial: must be an integer ≥ 1"),
        ("max = 99", "replicas.max: must be an integer ≥ 1 and ≤ 16"),
        ('signal = "gpu"', "replicas.signal: must be one of 'queue_depth', 'utilization'"),
        ('signal = "utilization"\nthreshold = 1.5', "replicas.threshold: must be a finite number ≥ 0.0 and ≤ 1.0"),
        ("window = 0", "replicas.window: must be an integer ≥ 1"),
        ("warmup = 3", "replicas.warmup: unknown key"),
    ]:
        with pytest.raises(ScenarioError, match=re.escape(f"r.toml: {field}")):
            parse_scenario(text + "[replicas]\n" + table + "\n", "r.toml")


def test_a_replica_run_over_its_limit_is_refused_before_it_runs():
    text = SMALL + '[workload]\ncount = 1000\nprompt_len = 4\n[workload.output]\ndistribution = "fixed"\nvalue = 1000\n'
    scenario = parse_scenario(text, "big.toml")
    message = "big.toml: replicas.max: 16 replicas × up to 1,001,001 steps would step up to 16,016,016 replica-steps"
    with pytest.raises(ScenarioError, match=re.escape(message)):
        simulate_replicas(scenario, ReplicaConfig(max=16))


def test_prefill_only_steps_count_in_the_bound_and_a_static_fill_timeout_is_refused():
    """One slot, a 1-token budget, 100 prompts of 10,000 tokens: about 1,000,000 prefill-only steps,
    though the requests generate only 1,600 tokens."""
    text = SMALL.replace("stop_token = 0", "stop_token = 0\ntoken_budget = 1")
    text += '[workload]\ncount = 100\nprompt_len = 10000\n[workload.output]\ndistribution = "fixed"\nvalue = 16\n'
    message = "big.toml: replicas.max: 2 replicas × up to 1,001,701 steps would step up to 2,003,402 replica-steps"
    with pytest.raises(ScenarioError, match=re.escape(message)):
        simulate_replicas(parse_scenario(text, "big.toml"), ReplicaConfig(max=2))
    waiting = SMALL.replace("stop_token = 0", 'stop_token = 0\nbatching = "static"\nfill_timeout = 5') + requests(
        ("A", 1, 0)
    )
    with pytest.raises(ScenarioError, match=r"^w.toml: engine.fill_timeout: a static batch waiting to fill"):
        simulate_replicas(parse_scenario(waiting, "w.toml"), ReplicaConfig(max=2))


def test_the_cli_prints_the_three_runs():
    result = run_cli("replicas", "autoscaling-replicas", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert list(data) == ["one replica", "queue depth", "utilization"]
    assert data["queue depth"]["scaling"] == [[80, 1]] and data["queue depth"]["max_queue"] == 9
    table = run_cli("replicas", "autoscaling-replicas").stdout.splitlines()
    assert table[2].split()[:4] == ["one", "replica", "1", "650"]


def replicas_page():
    from cblab.ui.charts.replicas_view import render_replicas
    from engine.lab.scenario import resolve_scenario

    render_replicas(resolve_scenario("autoscaling-replicas"))


def test_the_replicas_view_runs_standalone():
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(replicas_page, default_timeout=120).run()
    assert not app.exception
    table = app.dataframe[0].value
    assert list(table.autoscaler) == ["one replica", "queue depth", "utilization"]
    assert list(table["replica-steps (cost)"]) == [650, 791, 1135]  # headed in words
    assert list(table["mean utilisation"])[0].endswith("%")
    chart = json.loads(app.get("plotly_chart")[0].proto.spec)
    assert len(chart["data"]) == 9  # three panels × three runs

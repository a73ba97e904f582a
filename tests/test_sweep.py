"""The batch-size sweep (engine/lab/sweep.py): closed-loop runs, the lesson's curve and knee, the
limits checked before anything runs, the CLI and the chart."""

import json
import re

import pytest

from engine.lab.scenario import load_scenario, parse_scenario
from engine.lab.sweep import closed_loop, knee, sweep
from engine.lab.toml_reader import ScenarioError
from tests.test_cli import run_cli

LESSON = "scenarios/throughput-vs-latency.toml"
SMALL = """title = "t"
lesson = "l"
[engine]
stop_token = 0
[model]
stop_chance = 0.0
[[requests]]
id = "A"
prompt = [1]
max_tokens = 1
arrival_step = 50
[[requests]]
id = "B"
prompt = [2]
max_tokens = 3
[[requests]]
id = "C"
prompt = [3]
max_tokens = 2
"""


def test_a_closed_loop_sends_the_next_request_when_a_client_is_served():
    """Two clients: A and B at step 0 (A's arrival step is the clients' to decide); A is delivered
    at the end of step 0, so C arrives and is admitted at step 1, into A's slot."""
    log = closed_loop(parse_scenario(SMALL), 2)
    lifecycle = [(e.step, e.kind, e.slot, e.request_id) for e in log if e.kind in ("arrive", "admit", "evict")]
    assert lifecycle == [
        (0, "arrive", None, "A"),
        (0, "arrive", None, "B"),
        (0, "admit", 0, "A"),
        (0, "admit", 1, "B"),
        (0, "evict", 0, "A"),
        (1, "arrive", None, "C"),
        (1, "admit", 0, "C"),
        (2, "evict", 0, "C"),
        (2, "evict", 1, "B"),
    ]
    one = closed_loop(parse_scenario(SMALL), 1)
    assert [e.request_id for e in one if e.kind == "admit"] == ["A", "B", "C"]
    assert one.num_steps == 6  # 1 + 3 + 2 tokens, one row at a time


def points_by_size():
    scenario = load_scenario(LESSON)
    assert scenario.sweep == (1, 2, 4, 8, 16, 32, 64, 128, 256)
    points = sweep(scenario, scenario.sweep)
    return points, {p.batch_size: p for p in points}


def test_the_lesson_states_its_curve_and_knee():
    points, at = points_by_size()
    throughput = [p.throughput_tokens_per_s for p in points]
    p50 = [p.e2e_p50_s for p in points]
    assert throughput == sorted(throughput) and p50 == sorted(p50)  # both rise all along
    assert [round(at[b].throughput_tokens_per_s) for b in (1, 32, 256)] == [140, 2562, 4965]
    assert round(at[32].throughput_tokens_per_s / at[1].throughput_tokens_per_s) == 18
    assert [round(at[b].e2e_p50_s * 1e3) for b in (1, 32, 256)] == [222, 370, 1349]
    assert round(at[256].e2e_p99_s * 1e3) == 2554
    assert knee(points) == 32
    gain = at[64].throughput_tokens_per_s / at[32].throughput_tokens_per_s
    assert (round(gain, 2), round(at[64].e2e_p50_s / at[32].e2e_p50_s, 2)) == (1.39, 1.42)
    ratios = [
        (b.throughput_tokens_per_s / a.throughput_tokens_per_s, b.e2e_p50_s / a.e2e_p50_s)
        for a, b in zip(points, points[1:])
    ]
    assert [t > lat for t, lat in ratios] == [True] * 5 + [False] * 3  # cheap up to 32, dear from there


@pytest.mark.parametrize("sizes", [[], [0], [257], list(range(1, 11)), [1.5], "1,2", [True]])
def test_bad_batch_sizes_are_refused_naming_the_field(sizes):
    with pytest.raises(ValueError, match="^batch_sizes: must list 1 to 9 batch sizes"):
        sweep(parse_scenario(SMALL), sizes)


def test_the_sweep_table_of_a_scenario_is_checked():
    with pytest.raises(ScenarioError, match=re.escape("s.toml: sweep.batch_sizes: must list 1 to 9 batch sizes")):
        parse_scenario(SMALL + "[sweep]\nbatch_sizes = [0, 4]\n", "s.toml")
    with pytest.raises(ScenarioError, match=re.escape("s.toml: sweep.batch_size: unknown key")):
        parse_scenario(SMALL + "[sweep]\nbatch_sizes = [4]\nbatch_size = 2\n", "s.toml")
    assert parse_scenario(SMALL + "[sweep]\nbatch_sizes = [4, 1, 4]\n").sweep == (1, 4)


def test_a_sweep_over_its_limits_is_refused_before_anything_runs():
    """1,000 requests of 1,400 tokens: one run (1.4M tokens) is within the limits, nine are not."""
    text = SMALL.split("[[requests]]")[0] + "[workload]\ncount = 1000\nprompt_len = 4\n"
    text += '[workload.output]\ndistribution = "fixed"\nvalue = 1400\n'
    scenario = parse_scenario(text, "big.toml")
    message = (
        "big.toml: batch_sizes: 9 points would take up to 12,600,000 generated tokens in all; "
        "the limit is 8,000,000 (4 runs' worth)"
    )
    with pytest.raises(ScenarioError, match=re.escape(message)):
        sweep(scenario, (1, 2, 4, 8, 16, 32, 64, 128, 256))


def test_the_cli_prints_the_sweep_as_json_and_refuses_bad_sizes():
    result = run_cli("sweep", "throughput-vs-latency", "--batch-sizes", "1,32,64", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [p["batch_size"] for p in data["points"]] == [1, 32, 64]
    assert round(data["points"][1]["throughput_tokens_per_s"]) == 2562
    assert data["knee"] == 32  # from 32 to 64 the median latency grows faster than the throughput
    table = run_cli("sweep", "throughput-vs-latency", "--batch-sizes", "1,8,64")
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[-1] == "knee: none (throughput keeps up with latency at every step)"
    bad = run_cli("sweep", "throughput-vs-latency", "--batch-sizes", "1,300")
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: argument --batch-sizes: must list 1 to 9 batch sizes")


def sweep_page():
    from cblab.ui.charts.sweep_view import render_sweep
    from engine.lab.scenario import resolve_scenario

    render_sweep(resolve_scenario("throughput-vs-latency"), (8, 16, 32, 64))


def test_the_sweep_view_runs_standalone_with_both_axes():
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(sweep_page, default_timeout=120).run()
    assert not app.exception
    table = app.dataframe[0].value
    assert list(table["batch size"]) == [8, 16, 32, 64]  # headed in words
    assert list(table["end-to-end p50 (ms)"]) == sorted(table["end-to-end p50 (ms)"])
    chart = json.loads(app.get("plotly_chart")[0].proto.spec)
    assert [trace["name"] for trace in chart["data"]] == ["throughput", "latency p50", "latency p99"]
    assert [trace.get("yaxis", "y") for trace in chart["data"]] == ["y", "y2", "y2"]
    assert chart["layout"]["yaxis2"]["overlaying"] == "y"


def test_the_knee_line_and_its_label_sit_at_the_knee_on_the_log_axis():
    import math

    from cblab.ui.charts.sweep_view import sweep_figure
    from engine.lab.scenario import resolve_scenario
    from engine.lab.sweep import knee, sweep

    points = sweep(resolve_scenario("throughput-vs-latency"), (1, 2, 4, 8, 16, 32, 64))
    layout = sweep_figure(points).layout
    assert knee(points) == 32
    assert (layout.shapes[0].x0, layout.shapes[0].x1) == (32, 32)  # a shape: data units
    assert layout.annotations[0].x == math.log10(32) and layout.annotations[0].text == "knee: 32"  # log10 units

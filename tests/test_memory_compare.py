"""Compare with a KV pool: the four configurations with unlimited memory, and the three
memory configurations the pool bounds, on the kv-paged-vs-reserve lesson."""

import dataclasses
import json

from engine.lab.compare import CONFIGURATIONS, MEMORY_CONFIGURATIONS, compare, configurations, memory_speedups
from engine.lab.scenario import resolve_scenario
from tests.helpers import start_app
from tests.test_cli import run_cli

SCENARIO = resolve_scenario("kv-paged-vs-reserve")  # 24 requests of 4 + up to 16 tokens, 8 slots, 24 blocks of 4


def test_a_scenario_with_a_pool_runs_seven_configurations_the_four_without_it():
    runs = configurations(SCENARIO)
    assert list(runs) == [*CONFIGURATIONS, "static-reserve", "continuous-reserve", "continuous-paged"]
    assert all(runs[name]["kv_blocks"] is None for name in CONFIGURATIONS)  # unlimited memory
    assert runs["static-reserve"] == {"batching": "static", "padded": False, "kv_policy": "reserve"}
    assert list(configurations(resolve_scenario("part2-slot-refill"))) == list(CONFIGURATIONS)  # no pool


def test_paged_beats_reserving_which_beats_static_and_keeps_its_blocks_full():
    results = compare(SCENARIO)
    steps = {name: results[name]["steps"] for name in MEMORY_CONFIGURATIONS}
    assert steps == {"static-reserve": 79, "continuous-reserve": 44, "continuous-paged": 27}
    peak = {name: results[name]["peak_running"] for name in MEMORY_CONFIGURATIONS}
    assert peak == {"static-reserve": 4, "continuous-reserve": 4, "continuous-paged": 8}  # 5 blocks a reserved row
    throughput = [results[name]["throughput_tokens_per_s"] for name in MEMORY_CONFIGURATIONS]
    assert throughput == sorted(throughput)  # static-reserve <= continuous-reserve <= continuous-paged
    utilization = {name: results[name]["kv_utilization"] for name in MEMORY_CONFIGURATIONS}
    assert utilization["continuous-paged"] > 0.85 > 0.55 > utilization["continuous-reserve"]
    assert results["continuous-ragged"]["kv_utilization"] is None  # no pool, nothing to fill
    speedups = memory_speedups(results)
    assert speedups["static-reserve"] > speedups["continuous-reserve"] > 1


def test_the_cli_prints_the_memory_figures_and_the_ratios():
    result = run_cli("compare", "kv-paged-vs-reserve")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-2].startswith("continuous-paged / static-reserve throughput: ")
    assert lines[-1].startswith("continuous-paged / continuous-reserve throughput: ")
    memory = lines[lines.index(next(line for line in lines if "KV util" in line)) :]
    assert memory[1].split()[:3] == ["static-reserve", "51.4%", "4"]
    assert memory[3].split()[:3] == ["continuous-paged", "86.6%", "8"]
    figures = json.loads(run_cli("compare", "kv-paged-vs-reserve", "--json").stdout)
    assert list(figures) == [*CONFIGURATIONS, *MEMORY_CONFIGURATIONS]


def test_the_compare_tab_shows_the_memory_ratios():
    app = start_app(scenario="kv-paged-vs-reserve", tab="Compare", predict="false")
    assert not app.exception and not app.error
    labels = [metric.label for metric in app.metric]
    assert "Paged / static-reserve throughput" in labels and "Paged / continuous-reserve throughput" in labels
    assert any("FasterTransformer" in caption.value for caption in app.caption)  # the rest of the gap to 23x
    table = app.dataframe[0].value  # one column per configuration, one row per figure, headed by labels
    assert list(table.columns)[-1] == "continuous-paged" and list(table.index)[:2] == ["steps", "throughput"]
    assert table.loc["KV util", "continuous-ragged"] == "–"  # unlimited memory: not a figure, no "None"


def reduced_anyscale(cap: int, count: int = 250):
    scenario = resolve_scenario(f"anyscale-cap{cap}")  # OPT-13B on an A100-40GB: 1,293 blocks of 16
    return dataclasses.replace(scenario, workload=dataclasses.replace(scenario.workload, count=count))


def test_on_the_anyscale_workload_paging_gains_more_the_higher_the_cap():
    """The memory arithmetic, untuned, on 250 of the 1,000 requests: what it predicts and what it does not."""
    ratios, utilization = {}, {}
    for cap in (32, 1536):
        results = compare(reduced_anyscale(cap))
        throughput = {name: results[name]["throughput_tokens_per_s"] for name in MEMORY_CONFIGURATIONS}
        assert throughput["continuous-paged"] > throughput["static-reserve"]
        assert throughput["continuous-reserve"] > throughput["static-reserve"]
        ratios[cap] = throughput["continuous-paged"] / throughput["static-reserve"]
        utilization[cap] = {name: results[name]["kv_utilization"] for name in MEMORY_CONFIGURATIONS}
        assert utilization[cap]["continuous-paged"] >= 0.9
    assert ratios[1536] > 2.5 * ratios[32]  # 2.92x against 1.06x
    assert utilization[1536]["continuous-reserve"] < 0.5  # a row reserves 2,048 tokens and uses about 640
    # Not predicted: at cap 32 paging loses a little to reserving (0.99x), since it admits 40
    # rows whose prompts fill the pool and then preempts to let them grow (no watermark).


def test_the_anyscale_sidebar_offers_no_stop_chance_the_answer_lengths_decide():
    app = start_app(scenario="anyscale-cap32")
    assert not app.exception and not app.error
    assert "Model: SimulatedLLM, stopping each answer at its drawn length" in [c.value for c in app.caption]
    assert not [s for s in app.slider if s.key == "stop_chance"]
    assert [s.key for s in start_app(scenario="first-example").slider if s.key == "stop_chance"] == ["stop_chance"]

"""The cost models grounded in hardware: each preset's arithmetic, by hand, and how a step
is priced from its context and its prefill."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine import BatchInferenceEngine
from engine.analysis.hardware import PRESETS, preset
from engine.analysis.metrics import CostModel, step_metrics
from engine.lab.compare import compare
from engine.lab.scenario import ScenarioError, parse_scenario, resolve_scenario
from engine.lab.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent


def test_opt_13b_on_an_a100_40gb_is_priced_from_its_cited_figures():
    hardware = preset("opt-13b-a100-40gb")
    cost = hardware.cost_model()
    assert hardware.kv_bytes_per_token == 819_200  # 2 × 5,120 × 40 layers × 2 bytes: vLLM's "800 KB"
    assert cost.step_s == pytest.approx(0.01672026, rel=1e-6)  # 26 GB read at 1,555 GB/s: 16.7 ms
    assert cost.kv_token_s == pytest.approx(5.268167e-7, rel=1e-6)  # 819,200 B at 1,555 GB/s: 0.53 µs a token
    assert cost.prefill_token_s == pytest.approx(1.803752e-4, rel=1e-6)  # 26 GFLOP at 46.2% of 312 TFLOP/s
    assert cost.row_s == 0.0
    # (40 GiB − 26 GB) / (800 KiB × 16) = 16,949,672,960 / 13,107,200 = 1,293.15 blocks
    assert hardware.kv_pool_blocks(16) == 1293


def test_llama_2_7b_on_an_a100_80gb():
    hardware = preset("llama-2-7b-a100-80gb")
    cost = hardware.cost_model()
    assert hardware.kv_bytes_per_token == 524_288  # 2 × 4,096 × 32 layers × 2 bytes
    assert cost.step_s == pytest.approx(6.611084e-3, rel=1e-6)  # 13.48 GB at 2,039 GB/s
    assert cost.kv_token_s == pytest.approx(2.571300e-7, rel=1e-6)
    # (80 GiB − 13.48 GB) / (512 KiB × 16) = 72,419,345,920 / 8,388,608 = 8,633.0 blocks
    assert hardware.kv_pool_blocks(16) == 8633


def test_an_unknown_preset_names_the_ones_there_are():
    with pytest.raises(KeyError, match="unknown cost preset 'a100'; the presets are opt-13b-a100-40gb, llama"):
        preset("a100")
    assert set(PRESETS) == {
        "opt-13b-a100-40gb",
        "llama-2-7b-a100-80gb",
        "llama-2-7b-h100-80gb",
        "llama-2-7b-8xh100-80gb",
    }


def test_eight_gpus_split_each_step_and_pool_their_memory():
    one, eight = preset("llama-2-7b-h100-80gb"), preset("llama-2-7b-8xh100-80gb")
    assert one.cost_model().prefill_token_s == pytest.approx(2 * 6.74e9 / (989e12 * 0.462))
    assert eight.cost_model().step_s == pytest.approx(one.cost_model().step_s / 8)
    assert eight.cost_model().kv_token_s == pytest.approx(one.cost_model().kv_token_s / 8)
    assert one.kv_pool_blocks(512) == 269  # (80 GiB − 13.48 GB) / 512 KiB a token / 512
    assert eight.kv_pool_blocks(512) == 2509  # (8 × 80 GiB − 13.48 GB) / 512 KiB / 512


def test_a_step_pays_for_the_context_its_rows_attend_to():
    log = simulate(resolve_scenario("part2-slot-refill"))
    cost = CostModel(step_s=1.0, row_s=0.0, prefill_token_s=0.0, kv_token_s=0.5)
    steps = step_metrics(log, cost)
    assert steps.context_tokens.tolist() == [2, 3, 5, 1]  # prefix lengths before each step's new token
    assert steps.duration_s.tolist() == [2.0, 2.5, 3.5, 1.5]  # 1 + 0.5 per token of context


def test_a_padded_batch_attends_to_its_longest_context_in_every_row():
    log = simulate(resolve_scenario("part2-slot-refill").with_engine(padded=True))
    steps = step_metrics(log, CostModel(step_s=1.0, row_s=0.0, prefill_token_s=0.0, kv_token_s=0.5))
    assert steps.context_tokens.tolist() == [2, 4, 6, 2]  # 2 rows × the longest (1, 2, 3, 1)


def test_chunked_prefill_is_priced_by_what_each_step_computed():
    engine = BatchInferenceEngine(lambda batch: [1] * len(batch), 2, 0, token_budget=3)
    engine.submit_request([5, 6, 7, 8, 9], 2, None, None, request_id="L")
    engine.submit_request([4], 2, None, None, request_id="S")
    engine.run()
    steps = step_metrics(engine.event_log, CostModel(step_s=1.0, row_s=0.0, prefill_token_s=0.25, kv_token_s=0.0))
    assert steps.rows_sent.tolist() == [0, 2, 2]  # step 0 only prefills L's first chunk
    assert steps.prefill_tokens.tolist() == [3, 3, 0]  # L: 3 then 2; S: 1 with L's last 2
    assert steps.context_tokens.tolist() == [0, 6, 8]  # L 5 + S 1, then L 6 + S 2
    assert steps.duration_s.tolist() == [1.75, 1.75, 1.0]  # a prefill-only step costs its prefill too


PART2 = (ROOT / "scenarios" / "part2-slot-refill.toml").read_text()
# Part 2 under OPT-13B: 4 steps, 2 + 3 + 5 + 1 = 11 tokens of context, 2 + 1 + 0 + 1 = 4 prompt tokens
OPT_PART2_S = 4 * 0.016720257 + 11 * 5.268167e-7 + 4 * 1.803752e-4  # = 0.0676083 s


def test_a_scenario_names_its_cost_model_and_compare_prices_by_it():
    scenario = parse_scenario('cost = "opt-13b-a100-40gb"\n' + PART2, "x.toml")
    assert scenario.cost == "opt-13b-a100-40gb"
    assert compare(scenario)["continuous-ragged"]["total_time_s"] == pytest.approx(OPT_PART2_S, rel=1e-6)
    assert resolve_scenario("part2-slot-refill").cost == "default"


def test_an_unknown_cost_model_in_a_scenario_is_refused_naming_the_field():
    with pytest.raises(
        ScenarioError, match=r"x.toml: cost: must be one of 'default', 'opt-13b-a100-40gb', .*got 'h100'"
    ):
        parse_scenario('cost = "h100"\n' + PART2, "x.toml")


def test_the_cli_prices_by_cost_and_a_ms_flag_replaces_one_figure():
    def total(*flags):
        args = [sys.executable, "-m", "engine", "compare", "scenarios/part2-slot-refill.toml", "--json", *flags]
        result = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=ROOT)
        return json.loads(result.stdout)["continuous-ragged"]["total_time_s"]

    assert total("--cost", "opt-13b-a100-40gb") == pytest.approx(OPT_PART2_S, rel=1e-6)
    assert total("--cost", "opt-13b-a100-40gb", "--step-ms", "10") == pytest.approx(
        OPT_PART2_S - 4 * (0.016720257 - 0.01), rel=1e-6
    )


def test_the_app_prices_an_uploaded_scenario_by_its_preset_and_says_so():
    from cblab.ui.charts.time_charts import cost_caption
    from cblab.ui.runs.runs import Overrides, load
    from tests.helpers import Upload

    run = load("x.toml", Upload("x.toml", ('cost = "opt-13b-a100-40gb"\n' + PART2).encode()), Overrides())
    assert run.cost.name == "opt-13b-a100-40gb"
    assert run.summary["total_time_s"] == pytest.approx(OPT_PART2_S, rel=1e-6)
    assert run.requests.e2e_s.max() == pytest.approx(OPT_PART2_S, rel=1e-6)  # D is delivered at the last step's end
    assert cost_caption(run.cost) == (
        "Simulated seconds come from the hardware preset opt-13b-a100-40gb (engine/analysis/hardware.py): "
        "16.7 ms a step to read the weights + 0.53 µs per token of context attended + 0.18 ms a prompt token prefilled."
    )
    default = load("part2-slot-refill", None, Overrides())
    assert default.cost == CostModel()
    assert cost_caption(default.cost).startswith("Simulated seconds come from the default cost model")

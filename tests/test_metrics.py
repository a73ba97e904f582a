"""Metrics of small hand-checkable runs, exactly, under a round-number cost model."""

import math

import pytest

from engine.analysis.metrics import CostModel, request_metrics, step_metrics, summary
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate

COST = CostModel(step_s=1.0, row_s=0.5, prefill_token_s=0.25)


def part2_log(**engine):
    return simulate(resolve_scenario("part2-slot-refill").with_engine(**engine))


def test_step_metrics_of_part2():
    steps = step_metrics(part2_log(), COST)
    assert steps.to_dict("list") == {
        "step": [0, 1, 2, 3],
        "idle_before": [0, 0, 0, 0],
        "rows_sent": [2, 2, 2, 1],
        "active_rows": [2, 2, 2, 1],
        "running_rows": [2, 2, 2, 1],
        "padded_rows": [0, 0, 0, 0],
        "queue_depth": [2, 1, 1, 0],
        "admitted": [2, 1, 0, 1],
        "finished": [1, 0, 2, 1],
        "prefill_tokens": [2, 1, 0, 1],
        "context_tokens": [2, 3, 5, 1],  # A 1 + B 1; C 1 + B 2; C 2 + B 3; D 1 (one-token prompts)
        "kv_blocks_held": [0, 0, 0, 0],  # no KV pool
        "kv_tokens_held": [2, 3, 5, 1],
        # 1 + 0.5 per row + 0.25 per prompt token
        "duration_s": [2.5, 2.25, 2.0, 1.75],
        "end_s": [2.5, 4.75, 6.75, 8.5],
    }


def test_request_metrics_of_part2():
    requests = request_metrics(part2_log(), COST)
    assert list(requests.index) == ["A", "B", "C", "D"]
    assert requests.queue_wait_s.tolist() == [0.0, 0.0, 2.5, 6.75]
    assert requests.ttft_s.tolist() == [2.5, 2.5, 4.75, 8.5]
    assert requests.e2e_s.tolist() == [2.5, 6.75, 6.75, 8.5]
    assert requests.tpot_s.tolist()[1:3] == [2.125, 2.0]
    assert math.isnan(requests.tpot_s["A"]) and math.isnan(requests.tpot_s["D"])
    assert requests.queue_wait_steps.tolist() == [0, 0, 1, 3]
    assert requests.ttft_steps.tolist() == [1, 1, 2, 4]
    assert requests.e2e_steps.tolist() == [1, 3, 3, 4]
    assert requests.output_tokens.tolist() == [1, 3, 2, 1]
    assert requests.finish_reason.tolist() == ["max_tokens"] * 4


def test_summary_of_part2():
    figures = summary(part2_log(), COST)
    assert figures == pytest.approx(
        {
            "requests": 4,
            "steps": 4,
            "model_calls": 4,
            "generated_tokens": 7,
            "total_time_s": 8.5,
            "throughput_tokens_per_s": 7 / 8.5,
            "slot_utilization": 0.875,
            "padding_waste": 0.0,
            "queue_wait_p50_s": 1.25,
            "ttft_p50_s": 3.625,
            "ttft_p99_s": 4.75 + 0.97 * 3.75,
            "tpot_p50_s": 2.0625,
            "e2e_p50_s": 6.75,
            "e2e_p99_s": 6.75 + 0.97 * 1.75,
            # B's tokens at 2.5, 4.75, 6.75 and C's at 4.75, 6.75: gaps 2.25, 2.0, 2.0
            "tbt_p99_s": 2.0 + 0.98 * 0.25,
            "max_tbt_s": 2.25,
            "peak_running": 2,
            "preemptions": 0,
            "recomputed_tokens": 0,
            "kv_utilization": None,
            "kv_pool_utilization": None,  # (no pool)
            "cached_tokens": 0,  # (no prefix cache)
            "prefix_hit_rate": 0.0,
        }
    )


def test_padded_rows_cost_like_real_rows():
    steps = step_metrics(part2_log(padded=True), COST)
    assert steps.rows_sent.tolist() == [2, 2, 2, 2]
    assert steps.padded_rows.tolist() == [0, 0, 0, 1]
    assert steps.duration_s.tolist() == [2.5, 2.25, 2.0, 2.25]
    assert summary(part2_log(padded=True), COST)["padding_waste"] == 1 / 8


def test_padded_prefill_pads_the_prompts_admitted_together():
    log = simulate(resolve_scenario("padded-vs-ragged"))
    # Step 0 admits A, B, C, D with prompts of 2, 1, 3, 1 tokens: 4 rows x 3 tokens.
    assert step_metrics(log, COST).prefill_tokens.tolist()[:2] == [12, 1]
    ragged = simulate(resolve_scenario("padded-vs-ragged").with_engine(padded=False))
    assert step_metrics(ragged, COST).prefill_tokens.tolist()[:2] == [7, 1]


def test_deliveries_without_a_model_call_happen_at_the_step_start():
    requests = request_metrics(simulate(resolve_scenario("cancellation")), COST)
    steps = step_metrics(simulate(resolve_scenario("cancellation")), COST)
    assert requests.loc["B", "e2e_s"] == steps.end_s[0]  # cancelled at the start of step 1
    assert requests.loc["B", "e2e_steps"] == 1
    assert requests.loc["B", "finish_reason"] == "cancelled"
    assert math.isnan(requests.loc["B", "ttft_s"])
    zero = request_metrics(simulate(resolve_scenario("zero-budget-and-empty-prompt")), COST)
    assert zero.loc["A", "e2e_s"] == 0.0 and zero.loc["A", "output_tokens"] == 0


def test_idle_steps_have_no_row_and_tick_at_the_fixed_cost():
    steps = step_metrics(simulate(resolve_scenario("arrivals-mid-run")), COST).set_index("step")
    assert 7 not in steps.index and 11 not in steps.index  # the clock jumped over steps 7-11
    assert steps.idle_before[12] == 5 and steps.idle_before.drop(12).eq(0).all()
    start_12 = steps.end_s[12] - steps.duration_s[12]
    assert start_12 == steps.end_s[6] + 5 * COST.step_s


def test_default_cost_model_makes_a_64_row_decode_step_memory_bound():
    cost = CostModel()
    step_64 = cost.step_s + 64 * cost.row_s
    assert step_64 == pytest.approx(0.0134)
    matmul_s = 64 * 2 * 7e9 / 312e12  # 7B parameters, 2 FLOPs each per row, A100 dense fp16 peak
    assert matmul_s < step_64 / 4

"""The memory lessons say what their runs do: each claim in a lesson's text, checked."""

import pytest

from engine.analysis.hardware import cost_model
from engine.analysis.metrics import request_metrics, summary
from engine.analysis.narration import narrate
from engine.analysis.replay import Replay
from engine.lab.paper_systems import TOKEN_STATES, paper_systems
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate


def events(log, kind):
    return [(e.step, e.request_id) for e in log if e.kind == kind]


def test_preemption_takes_the_newest_running_row_twice_and_recomputes_12_tokens():
    scenario = resolve_scenario("preemption")
    log = simulate(scenario)
    assert events(log, "preempt") == [(3, "C"), (5, "B")]
    assert [(step, rid) for step, rid in events(log, "admit") if step > 0] == [(6, "B"), (6, "C")]
    assert [(e.step, e.request_id, e.tokens) for e in log if e.kind == "prefill" and e.step == 6] == [
        (6, "B", 7),
        (6, "C", 5),
    ]
    assert summary(log)["recomputed_tokens"] == 12
    c_steps = [e.step for e in log if e.kind == "emit" and e.request_id == "C"]
    assert c_steps == [0, 1, 2, 6, 7, 8]  # 4 steps between its third and fourth tokens
    assert log.outputs() == simulate(scenario.with_engine(kv_blocks=None)).outputs()  # memory changes no output


def test_chunked_prefill_trades_the_stall_for_the_long_request_s_first_token():
    scenario = resolve_scenario("chunked-prefill")
    chunked, whole = simulate(scenario), simulate(scenario.with_engine(token_budget=None))
    assert [e.tokens for e in chunked if e.kind == "prefill" and e.request_id == "L"] == [509] * 7 + [437]
    assert summary(whole)["max_tbt_s"] == pytest.approx(0.2074)  # the whole 4,000-token prefill in one step
    assert summary(chunked)["max_tbt_s"] == pytest.approx(0.03275)  # about one chunk
    assert request_metrics(whole).ttft_s["L"] == pytest.approx(0.2074)
    assert request_metrics(chunked).ttft_s["L"] == pytest.approx(0.2585)
    assert (
        request_metrics(chunked).e2e_s["A"]
        == pytest.approx(request_metrics(whole).e2e_s["A"])
        == pytest.approx(0.37575)
    )


def test_block_tables_end_scattered():
    log = simulate(resolve_scenario("block-table"))
    replay = Replay(log)
    last = {rid: step for step, rid in events(log, "evict")}
    tables = {rid: replay[last[rid]].slots[slot].blocks for slot, rid in ((0, "D"), (1, "B"))}
    assert tables == {"D": (0, 2, 6, 1, 3), "B": (1, 4, 3, 5, 7)}
    assert events(log, "admit")[-1] == (3, "D")
    assert [e.blocks for e in log if e.kind == "kv_free" and e.request_id == "A"] == [2]


def test_the_reused_slot_s_new_request_gets_the_old_block_and_computes_only_its_own_prompt():
    log = simulate(resolve_scenario("slot-reuse-state-reset"))
    kv = [
        (e.step, e.kind, e.request_id, e.block if e.kind == "kv_alloc" else e.blocks)
        for e in log
        if e.kind[:3] == "kv_"
    ]
    assert kv == [(0, "kv_alloc", "A", 0), (0, "kv_free", "A", 1), (1, "kv_alloc", "B", 0), (3, "kv_free", "B", 1)]
    assert [(e.step, e.request_id, e.tokens, e.computed) for e in log if e.kind == "prefill"] == [
        (0, "A", 1, 1),
        (1, "B", 1, 1),  # B's own prompt, nothing of A's
    ]
    replay = Replay(log)
    assert [replay[step].slots[0].blocks for step in (1, 2, 3)] == [(0,), (0,), (0,)]
    assert log.outputs() == simulate(resolve_scenario("slot-reuse-state-reset").with_engine(kv_blocks=None)).outputs()


def test_multi_turn_chat_hits_the_first_turn_s_full_blocks_and_loses_b1_s_to_eviction():
    scenario = resolve_scenario("multi-turn-chat")
    log = simulate(scenario)
    outputs = log.outputs()
    prompts = {info.request_id: list(info.prompt) for info in log.requests}
    # each second turn is the first turn's whole conversation (its stop token included) + a 3-token question
    assert prompts["A2"][:11] == outputs["A1"] and prompts["B2"][:11] == outputs["B1"]
    hits = [(e.step, e.request_id, e.block) for e in log if e.kind == "prefix_hit"]
    assert hits == [(7, "A2", 0), (7, "A2", 1)]  # A1's two full blocks; its third held 2 tokens
    prefills = {e.request_id: (e.tokens, e.computed) for e in log if e.kind == "prefill"}
    assert prefills["A2"] == (6, 14) and prefills["B2"] == (14, 14)
    evicted = [(e.step, e.block) for e in log if e.kind == "kv_evict"]
    assert evicted[:2] == [(7, 3), (8, 2)]  # L reuses B1's blocks: its second, then its first
    assert [(e.step, e.block) for e in log if e.kind == "kv_alloc" and e.request_id == "L"][:5] == [
        (7, 8),
        (7, 9),
        (7, 4),
        (7, 5),
        (7, 3),
    ]  # never-used blocks first, then A1's and B1's freed last blocks, then B1's second
    assert summary(log)["cached_tokens"] == 8
    uncached = simulate(scenario.with_engine(prefix_caching=False))
    assert uncached.outputs() == outputs  # the cache changes no output


def test_the_watermark_lesson_s_waves_and_its_side_by_side_figures():
    scenario = resolve_scenario("watermark-and-thrash")
    cost = cost_model(scenario.cost)
    log = simulate(scenario)
    assert [rid for step, rid in events(log, "evict") if step == 0] == ["r39"]
    assert [rid for step, rid in events(log, "preempt") if step == 1] == ["r49", "r48", "r47", "r46", "r45"]
    assert "preempted, r49 to r45," in scenario.captions[1]
    waves = sorted({step for step, _ in events(log, "preempt")})
    assert waves[:4] == [1, 17, 33, 49]  # rows admitted together cross a block boundary together
    figures = {}
    for watermark in (0.0, 0.01, 0.05, 0.1):
        run = summary(simulate(scenario.with_engine(kv_watermark=watermark)), cost)
        figures[watermark] = (run["preemptions"], run["recomputed_tokens"], round(run["throughput_tokens_per_s"]))
    assert figures == {
        0.0: (144, 20_111, 846),
        0.01: (94, 13_419, 882),
        0.05: (23, 3_586, 919),
        0.1: (8, 1_289, 912),
    }
    text = " ".join((scenario.lesson + scenario.reveal).split())
    for phrase in (
        "144 preemptions over the run and 20,111 tokens computed again, at 846 tokens/s",
        "0.01 (4 blocks) gives 94 preemptions, 13,419 recomputed tokens and 882 tokens/s",
        "0.05 (20 blocks) 23, 3,586 and 919 tokens/s",
        "0.1 (40 blocks) only 8 preemptions but 912 tokens/s",
    ):
        assert phrase in text
    assert [int(w * scenario.engine.kv_blocks) for w in (0.01, 0.05, 0.1)] == [4, 20, 40]


def test_the_shared_system_prompt_is_computed_once_and_halves_the_median_first_token():
    scenario = resolve_scenario("shared-system-prompt")
    cost = cost_model(scenario.cost)
    log = simulate(scenario)
    prompts = {info.request_id: list(info.prompt) for info in log.requests}
    system = prompts["r0"][:512]
    assert [rid for rid, p in prompts.items() if p[:512] == system] == ["r0", "r1", "r2", "r3", "r5"]
    assert {len(p) for p in prompts.values()} == {544, 32}
    prefills = [(e.step, e.request_id, e.tokens, e.computed) for e in log if e.kind == "prefill"]
    assert prefills == [
        (2, "r0", 544, 544),
        (3, "r1", 32, 544),  # "prefill 32/544 (512 cached)"
        (8, "r2", 32, 544),
        (10, "r3", 32, 544),
        (18, "r4", 32, 32),
        (19, "r5", 32, 544),
    ]
    hits = [(e.request_id, e.block) for e in log if e.kind == "prefix_hit"]
    assert hits[:32] == [("r1", block) for block in range(32)]  # r0's system-prompt blocks, in table order
    assert Replay(log)[10].slots[3].blocks[:32] == tuple(range(32))  # r3 too: four rows hold blocks 0-31
    assert all(row is not None and row.blocks[:32] == tuple(range(32)) for row in Replay(log)[10].slots)
    cached, plain = summary(log, cost), summary(simulate(scenario.with_engine(prefix_caching=False)), cost)
    assert (cached["cached_tokens"], round(cached["prefix_hit_rate"] * 100)) == (2_048, 74)
    assert round(2_048 / cached["prefix_hit_rate"]) == 2_752
    assert (round(plain["ttft_p50_s"] * 1000), round(cached["ttft_p50_s"] * 1000)) == (116, 53)
    ttft = request_metrics(log, cost).ttft_s
    assert (round(ttft["r1"] * 1000), round(ttft["r0"] * 1000)) == (23, 115)
    text = " ".join((scenario.lesson + scenario.reveal).split())
    for phrase in (
        "2,048 of the 2,752 prompt tokens",
        "(74 %)",
        "from 116 ms without the cache to 53 ms with it",
        "one step (23 ms)",
        "a 544-token prefill (115 ms)",
        '"prefill 32/544 (512 cached)")',
    ):
        assert phrase in text


def test_the_paper_s_four_systems_fill_17_6_to_96_8_percent_of_what_they_hold():
    scenario = resolve_scenario("paper-four-systems")
    systems = paper_systems(scenario)
    figures = {
        name: (round(run["kv_utilization"] * 100, 1), run["peak_running"], round(run["throughput_tokens_per_s"]))
        for name, run in systems.items()
    }
    assert figures == {
        "Orca-Max": (17.6, 11, 563),
        "Orca-Pow2": (46.9, 42, 1_140),
        "Orca-Oracle": (65.2, 58, 1_297),
        "vLLM": (96.8, 64, 1_448),
    }
    assert all(run["kv_pool_utilization"] < run["kv_utilization"] for run in systems.values())
    assert TOKEN_STATES == {"Orca-Max": 0.204, "Orca-Pow2": 0.268, "Orca-Oracle": 0.382, "vLLM": 0.963}
    answers = [spec.answer_len for spec in scenario.requests]
    assert round(sum(answers) / len(answers)) == 133
    assert systems["Orca-Max"] == summary(simulate(scenario), cost_model(scenario.cost))  # the lesson's own run
    text = " ".join((scenario.lesson + scenario.reveal).split())
    for phrase in (
        "only 17.6 % of the token room",
        "Orca-Pow2 fills 46.9 % and Orca-Oracle 65.2 %",
        "vLLM 96.8 %",
        "20.4 %, 26.8 %, 38.2 % and 96.3 %",
        "11, 42, 58 and 64 at the peak",
        "563, 1,140, 1,297 and 1,448 tokens/s",
        "answers average 133 tokens",
    ):
        assert phrase in text


def test_the_narration_of_a_cached_admission_says_what_was_computed_and_what_was_found():
    replay = Replay(simulate(resolve_scenario("shared-system-prompt")))
    said = "Request r2 prefills 32 tokens (32/544, and 512 found in the prefix cache) and gets its first token"
    assert f"{said} at this step." in narrate(replay, 8)

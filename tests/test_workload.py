"""Generated workloads: seeded, bounded, and shaped as their distributions say; a shared system
prompt and multi-turn chats whose answers the model gives as the workload wrote them."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.metrics import request_metrics, step_metrics
from engine.analysis.narration import narrate
from engine.analysis.replay import Replay
from engine.lab.conversation import Chat, SystemPrompt
from engine.lab.scenario import ScenarioError, parse_scenario
from engine.lab.scenario_work import check_work
from engine.lab.simulate import simulate
from engine.lab.workload import arrival_steps, generated_workload, output_lengths
from tests.helpers import HashModel, Spec, make_engine, run_specs


def test_capped_exponential_resamples_above_the_cap():
    lengths = output_lengths(random.Random(1), 5000, "capped_exponential", {"mean": 128, "cap": 100})
    assert max(lengths) == 100 and min(lengths) == 1
    assert len(set(lengths)) > 90


def test_poisson_arrivals_are_sorted_with_the_requested_rate():
    steps = arrival_steps(random.Random(2), 4000, "poisson", {"rate": 2.0})
    assert steps == sorted(steps)
    assert 1900 < steps[-1] < 2100  # 4000 arrivals at 2 per step take ~2000 steps


def test_same_seed_same_workload():
    make = lambda seed: generated_workload(  # noqa: E731
        20, seed=seed, prompt_len=(1, 8), vocab_size=50, output=("uniform", {"min": 1, "max": 9})
    )
    assert make(3) == make(3) and make(3) != make(4)
    assert all(1 <= len(r.prompt) <= 8 and 1 <= r.max_tokens <= 9 for r in make(3))


token = st.integers(0, 5)
specs = st.lists(
    st.builds(
        Spec,
        prompt=st.lists(token, max_size=3),
        max_tokens=st.integers(0, 6),
        stop_sequences=st.none() | st.lists(st.lists(token, min_size=1, max_size=2), min_size=1, max_size=2),
        arrival_step=st.none() | st.integers(0, 8),
        cancel_at=st.none() | st.integers(0, 8),
    ),
    min_size=1,
    max_size=10,
)


@given(specs, st.integers(1, 4), st.booleans(), st.booleans())
@settings(max_examples=60, deadline=None)
def test_metrics_and_narration_hold_for_any_run(workload, batch_size, static, padded):
    engine = make_engine(HashModel(), batch_size, 0, batching="static" if static else "continuous", padded=padded)
    log = run_specs(engine, workload).engine.event_log
    steps = step_metrics(log)
    requests = request_metrics(log, steps=steps)
    assert steps.active_rows.sum() == requests.output_tokens.sum() == sum(e.kind == "emit" for e in log)
    assert (steps.queue_depth >= 0).all()
    assert len(steps) == 0 or steps.queue_depth.iloc[-1] == 0
    assert (requests.e2e_s.dropna() >= 0).all() and requests.e2e_s.notna().all()
    assert (requests.ttft_s.dropna() <= requests.e2e_s[requests.ttft_s.notna()] + 1e-12).all()
    replay = Replay(log)
    for step in range(len(replay)):
        assert all(isinstance(sentence, str) and sentence for sentence in narrate(replay, step))


# -- a shared system prompt and multi-turn chats (engine/lab/conversation.py) -----------------------

CHAT = """
title = "A shared system prompt and a 2-turn chat"
[engine]
batch_size = 1
stop_token = 0
[engine.kv]
blocks = 32
block_size = 4
prefix_caching = true
[model]
vocab_size = 50
[workload]
count = 2
prompt_len = 4
seed = 3
[workload.system_prompt]
len = 8
share = 1
[workload.output]
distribution = "uniform"
min = 2
max = 6
max_tokens = 6
[workload.chat]
turns = 2
question_len = 2
gap = 30
"""


def plain(count: int, **keys) -> list:
    """A workload's requests, generated with `keys` (system, chat, model) or without."""
    return generated_workload(
        count,
        seed=7,
        prompt_len=(2, 5),
        vocab_size=50,
        output=("uniform", {"min": 1, "max": 4}),
        max_tokens=4,
        **keys,
    )


def test_a_system_prompt_comes_first_then_the_request_id_then_the_same_own_prompt():
    without, shared = plain(2), plain(2, system=SystemPrompt(4, share=0.5))
    system = shared[1].prompt[:4]
    # share 0.5 of 2 requests: exactly 1, drawn (request 1); its id [1, 2] sits right after the system
    # prompt, whose own id is answer_id(2, 50) = [1 + 2 // 49, 1 + 2 % 49] = [1, 3], no request's
    assert [r.answer_id_at for r in shared] == [0, 4]
    assert system[:2] == [1, 3] and shared[1].prompt[4:6] == [1, 2] and shared[0].prompt[:2] == [1, 1]
    assert shared[0].prompt == without[0].prompt and shared[1].prompt == system + without[1].prompt
    assert [(r.answer_len, r.arrival_step) for r in shared] == [(r.answer_len, r.arrival_step) for r in without]


def test_a_system_prompts_share_is_a_count_rounded_half_up():
    def members(count, share):
        return sum(r.answer_id_at > 0 for r in plain(count, system=SystemPrompt(3, share=share)))

    assert [members(10, 0.8), members(10, 0.0), members(10, 1.0), members(2, 0.25), members(4, 0.1)] == [8, 0, 10, 1, 0]


def test_without_the_new_keys_or_with_them_empty_every_draw_is_unchanged():
    before = plain(6)
    assert plain(6, system=SystemPrompt(0, share=1.0)) == before
    assert plain(6, chat=Chat(turns=1, gap=5), model=(9, 0)) == before
    chats = plain(6, system=SystemPrompt(3, share=0.5), chat=Chat(turns=3, gap=5, question_len=(0, 2)))
    firsts = chats[::3]  # conversation c's turns are requests 3c, 3c + 1, 3c + 2
    assert [r.prompt[r.answer_id_at :] for r in firsts] == [r.prompt for r in before]
    assert [(r.answer_len, r.arrival_step) for r in firsts] == [(r.answer_len, r.arrival_step) for r in before]
    assert [r.arrival_step for r in chats[:3]] == [0, 5, 10]


def test_a_two_turn_chat_continues_each_conversation_with_its_answer_and_hits_its_blocks():
    scenario = parse_scenario(CHAT)
    r0, r1, r2, r3 = scenario.requests  # conversation 0 is r0, r1; conversation 1 is r2, r3
    log = simulate(scenario)
    out = log.outputs()
    assert [r.answer_len for r in scenario.requests] == [3, 6, 6, 3]  # drawn
    assert [len(r.prompt) for r in (r0, r2)] == [8 + 4, 8 + 4] and r0.prompt[:8] == r2.prompt[:8]
    # turn 2 = turn 1's prompt + its answer as the run gave it, stop token included + a 2-token question
    assert out["r0"][12:] == [37, 40, 0] and r1.prompt == out["r0"] + r1.prompt[15:] and len(r1.prompt) == 17
    assert r3.prompt == out["r2"] + r3.prompt[18:] and len(r3.prompt) == 20
    assert [r.arrival_step for r in scenario.requests] == [0, 30, 0, 30]
    hits = [(e.step, e.request_id, e.block) for e in log if e.kind == "prefix_hit"]
    # batch_size 1: r2 waits for r0 and hits the system prompt's 2 blocks (8 tokens / 4). r0 wrote 12 + 3 - 1
    # = 14 tokens (its stop token is never written), 3 full blocks: r1 hits all 3 (cap (17 - 1) // 4 = 4);
    # r2 wrote 12 + 6 - 1 = 17 tokens, 4 full blocks (the system prompt's and its own 4, 5): r3 hits 4
    assert hits == [(3, "r2", 0), (3, "r2", 1), (30, "r1", 0), (30, "r1", 1), (30, "r1", 2)] + [
        (36, "r3", block) for block in (0, 1, 4, 5)
    ]
    assert {e.request_id: e.computed - e.tokens for e in log if e.kind == "prefill"} == {
        "r0": 0,
        "r2": 8,
        "r1": 12,
        "r3": 16,
    }


def test_a_turn_that_arrives_while_the_last_one_runs_hits_only_the_blocks_already_written():
    scenario = parse_scenario(CHAT.replace("batch_size = 1", "batch_size = 4").replace("gap = 30", "gap = 1"))
    log = simulate(scenario)
    hits = [(e.step, e.request_id, e.block) for e in log if e.kind == "prefix_hit"]
    # step 0 admits r0 (blocks 0, 1, 2) and r2 (3, 4, 5; no hit: blocks are registered in the step that
    # fills them), and writes their 12-token prompts. Step 1 admits r1 and r3, which hit the 3 full blocks
    # of each prompt, not the answer still being written; the system prompt's two blocks are r0's (0, 1),
    # registered before r2's identical 3, 4
    assert hits == [(1, "r1", 0), (1, "r1", 1), (1, "r1", 2), (1, "r3", 0), (1, "r3", 1), (1, "r3", 5)]
    assert log.outputs() == simulate(scenario.with_engine(kv_blocks=None)).outputs()


@given(
    count=st.integers(1, 3),
    own=st.integers(2, 6),
    system=st.sampled_from([0, 2, 5, 9]),
    share=st.sampled_from([0.0, 0.5, 1.0]),
    turns=st.integers(1, 3),
    gap=st.integers(0, 12),
    question=st.integers(0, 3),
    max_tokens=st.integers(1, 6),
    batch_size=st.integers(1, 3),
    caching=st.booleans(),
    seed=st.integers(0, 50),
)
@settings(max_examples=100, deadline=None)
def test_every_answer_has_its_drawn_length_and_every_turn_starts_with_the_last_one(
    count, own, system, share, turns, gap, question, max_tokens, batch_size, caching, seed
):
    text = (
        CHAT.replace("batch_size = 1", f"batch_size = {batch_size}")
        .replace("prefix_caching = true", f"prefix_caching = {str(caching).lower()}")
        .replace("count = 2", f"count = {count}")
        .replace("prompt_len = 4", f"prompt_len = [2, {own}]")
        .replace("seed = 3", f"seed = {seed}")
        .replace("len = 8\nshare = 1", f"len = {system}\nshare = {share}")
        .replace("max = 6\nmax_tokens = 6", f"max = 6\nmax_tokens = {max_tokens}")
        .replace("turns = 2\nquestion_len = 2\ngap = 30", f"turns = {turns}\nquestion_len = {question}\ngap = {gap}")
        .replace("blocks = 32", "blocks = 200")
    )
    scenario = parse_scenario(text)
    assert check_work(scenario).prompt_tokens >= sum(len(r.prompt) for r in scenario.requests)  # a bound
    out = simulate(scenario).outputs()
    for i, spec in enumerate(scenario.requests):
        answer = out[f"r{i}"][len(spec.prompt) :]
        stops = spec.answer_len <= max_tokens  # else max_tokens ends the answer first
        assert len(answer) == min(spec.answer_len, max_tokens) and (answer[-1] == 0) == stops
        assert 0 not in answer[:-1]
        if i % turns:  # a later turn: the last turn's whole output, then a question
            assert spec.prompt[: len(out[f"r{i - 1}"])] == out[f"r{i - 1}"]
            assert len(spec.prompt) - len(out[f"r{i - 1}"]) == question


def test_the_limits_estimate_bounds_a_chats_growing_prompts_exactly_when_lengths_are_fixed():
    # system 8 + own 4 = 12 tokens for each first turn; turn 2 adds its turn 1's answer (3 and 6 drawn,
    # at most max_tokens 6) and a 2-token question: 12 + 3 + 2 = 17 and 12 + 6 + 2 = 20; 61 in all
    assert check_work(parse_scenario(CHAT)).prompt_tokens == 12 + 17 + 12 + 20 == 61
    half = parse_scenario(CHAT.replace("share = 1", "share = 0.5"))  # 1 of 2 conversations: 2 × 8 tokens fewer
    assert check_work(half).prompt_tokens == sum(len(r.prompt) for r in half.requests) == 61 - 16


def hostile(old: str, new: str) -> str:
    assert old in CHAT
    return CHAT.replace(old, new)


NO_CHAT = ("[workload.chat]\nturns = 2\nquestion_len = 2\ngap = 30\n", "")
POOL = "blocks = 32\nblock_size = 4"
NO_POOL = ("[engine.kv]\nblocks = 32\nblock_size = 4\nprefix_caching = true\n", "")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (hostile("share = 1", "share = 2"), "system_prompt.share: must be a finite number ≥ 0.0 and ≤ 1.0, got 2"),
        (hostile("len = 8", "len = -1"), "system_prompt.len: must be an integer ≥ 0 and ≤ 65536, got -1"),
        (hostile("len = 8", "len = 'x'"), "system_prompt.len: must be an integer ≥ 0 and ≤ 65536, got str 'x'"),
        (
            hostile("len = 8", "len = 1"),
            "system_prompt.len: must be 0 or at least 2 with output.max_tokens (it starts with a 2-token id), got 1",
        ),
        (
            hostile("[workload.system_prompt]\nlen = 8\nshare = 1", "system_prompt = 'You are helpful.'"),
            "system_prompt: must be a table, got 'You are helpful.'",
        ),
        (hostile("share = 1", "share = 1\nshared = 1"), "system_prompt.shared: unknown key (known here: len, share)"),
        (hostile("turns = 2", "turns = 1000000000"), "chat.turns: must be an integer ≥ 1 and ≤ 100000, got 1000000000"),
        (hostile("turns = 2", "turns = 'two'"), "chat.turns: must be an integer ≥ 1 and ≤ 100000, got str 'two'"),
        (
            hostile("turns = 2", "turns = 60000"),
            "chat.turns: 60,000 (× 2 conversations) makes 120,000 requests; the limit is 100,000 requests per run",
        ),
        (hostile("gap = 30", "gap = -1"), "chat.gap: must be an integer ≥ 0 and ≤ 1073741824, got -1"),
        (hostile("gap = 30\n", ""), "chat.gap: is required"),
        (
            hostile("turns = 2\nquestion_len = 2\ngap = 30", "turns = 3\ngap = 1000000000"),
            "chat.gap: gap 1,000,000,000 puts turn 3 of the last conversation at step 2,000,000,000, past step "
            "1,073,741,824, the latest arrival step allowed",
        ),
        (
            hostile("question_len = 2", "question_len = [3, 1]"),
            "chat.question_len: must be an integer 0..65536 or a range [min, max], got [3, 1]",
        ),
        (
            hostile("max_tokens = 6\n", ""),
            "chat: needs workload.output.max_tokens: a turn's prompt holds the answer before it, so the model must "
            "stop each answer at a length drawn in advance",
        ),
        (
            hostile("seed = 3", "seed = 3\nstop_sequences = [[5]]"),
            "stop_sequences: cannot go with [workload.chat]: a stop sequence could end an answer before the next "
            "turn's prompt says it ends",
        ),
        (
            hostile("stop_token = 0\n", ""),
            "chat: needs engine.stop_token = 0 (model.eos_token), so that each answer ends where the next turn's "
            "prompt says; engine.stop_token is left out",
        ),
        (
            hostile("vocab_size = 50", "vocab_size = 2"),
            "count: 2 conversations need 3 answer ids (one for the system prompt), but model.vocab_size 2 has 1 "
            "((vocab_size − 1)²)",
        ),
        (
            hostile("turns = 2", "turns = 600").replace("count = 2", "count = 100").replace(POOL, "blocks = 99999"),
            "chat.turns: 600 (× 100 conversations, prompts up to 3,696 tokens) makes 108,562,404 prompt tokens; "
            "the limit is 2,000,000 prompt tokens per run",
        ),
        # the longest turn 20: 12 + 19 drawn answers and 2-token questions = 131 tokens, + max_tokens 6
        (
            hostile("turns = 2", "turns = 20"),
            "chat.turns: prompt + max_tokens = 137 tokens need 35 blocks of 4, but engine.kv.blocks is 32",
        ),
        (
            hostile("len = 8", "len = 200"),
            "system_prompt.len: prompt + max_tokens = 210 tokens need 53 blocks of 4, but engine.kv.blocks is 32",
        ),
        (
            hostile("len = 8", "len = 65536").replace("count = 2", "count = 40").replace(*NO_CHAT),
            "system_prompt.len: prompt + max_tokens = 65,546 tokens need 16,387 blocks of 4, but engine.kv.blocks "
            "is 32",
        ),
        (
            hostile("len = 8", "len = 65536").replace("count = 2", "count = 40").replace(*NO_CHAT).replace(*NO_POOL),
            "system_prompt.len: 65,536 (on 40 requests) makes 2,621,600 prompt tokens; the limit is 2,000,000 prompt "
            "tokens per run",
        ),
    ],
)
def test_hostile_system_prompts_and_chats_are_one_line_errors_naming_the_field(text, message):
    with pytest.raises(ScenarioError) as error:
        parse_scenario(text, "foo.toml")
    assert str(error.value) == f"foo.toml: workload.{message}"

"""The vLLM paper's four systems (engine/lab/paper_systems.py) on a workload small enough to
derive by hand, and, for any small workload, what must hold: the same outputs in all four,
and Orca-Pow2 reserving at least what Orca-Oracle does."""

import dataclasses
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.lab.compare import runs
from engine.lab.paper_systems import (
    SYSTEMS,
    has_true_lengths,
    paper_systems,
    pow2_length,
    reservation_runs,
    true_length,
)
from engine.lab.scenario import ScenarioError, parse_scenario
from engine.lab.scenario_work import check_work
from engine.lab.simulate import simulate

TWO_ANSWERS = """
title = "two answers"
[engine]
batch_size = 2
stop_token = 0
[engine.kv]
blocks = {blocks}
block_size = 4
[workload]
count = {count}
prompt_len = {prompt_len}
seed = {seed}
[workload.output]
distribution = "uniform"
min = 1
max = {longest}
max_tokens = {max_tokens}
"""


def workload(answers=None, blocks=7, count=2, prompt_len=4, seed=0, longest=16, max_tokens=16):
    """A generated workload; `answers` replaces the drawn answer lengths (the requests keep their ids)."""
    text = TWO_ANSWERS.format(
        blocks=blocks, count=count, prompt_len=prompt_len, seed=seed, longest=longest, max_tokens=max_tokens
    )
    scenario = parse_scenario(text)
    if answers is None:
        return scenario
    specs = tuple(dataclasses.replace(s, answer_len=a) for s, a in zip(scenario.requests, answers))
    return dataclasses.replace(scenario, explicit_requests=specs)


def logs(scenario):
    """The event log of each of the four systems, by the paper's name."""
    planned = runs(scenario)
    return {paper: simulate(planned[name]) for paper, name in SYSTEMS.items()}


def reserved(log) -> dict[str, int]:
    """Blocks each request was given (a reserving row takes them all at admission)."""
    return dict(Counter(event.request_id for event in log if event.kind == "kv_alloc"))


def test_the_lengths_each_system_reserves_for():
    spec = workload([5, 9]).requests[0]
    assert (true_length(spec), pow2_length(spec)) == (5, 8)
    assert [pow2_length(dataclasses.replace(spec, answer_len=n)) for n in (1, 2, 3, 8, 9, 16, 17)] == [
        1,
        2,
        4,
        8,
        16,
        16,
        16,  # fmt: skip  (capped at max_tokens = 16; an answer of 17 stops at 16)
    ]


def test_two_answers_of_5_and_9_tokens_by_hand():
    """Prompts of 4 tokens, answers of 5 and 9, max_tokens 16, blocks of 4, a pool of 7, 2 slots.

    A row's tokens held at a step are its prefix before the new token: 4 + k at its k-th step.
    Orca-Oracle reserves (4+5)/4 -> 3 and (4+9)/4 -> 4 blocks: 7, so both run at once, steps 0-4
    holding 8, 10, 12, 14, 16 tokens of 28, then the second alone, steps 5-8, 9..12 of 16:
    KV util = (60/28 + 42/16) / 9 = 89/168; of the pool (28 tokens) = 102/28 / 9 = 17/42.
    Orca-Max reserves (4+16)/4 = 5 blocks each, so the second waits for the first: steps 0-4
    hold 4..8 of 20, steps 5-13 4..12 of 20: (30 + 72) / 20 / 14 = 51/140; of the pool 51/196.
    Orca-Pow2 reserves for 8 and 16 tokens: 3 and 5 blocks, 8 > 7, so it waits too:
    (30/12 + 72/20) / 14 = 61/140; of the pool 51/196.
    vLLM holds ceil((4+k)/4) blocks a row (1 at its prefill): steps 0-4 8/8, 10/16, 12/16, 14/16,
    16/16, then 9/12, 10/12, 11/12, 12/12: (4.25 + 3.5) / 9 = 31/36; of the pool, Oracle's 17/42.
    """
    results = paper_systems(workload([5, 9]))
    kv = {paper: Fraction(r["kv_utilization"]).limit_denominator(1000) for paper, r in results.items()}
    assert kv == {
        "Orca-Max": Fraction(51, 140),
        "Orca-Pow2": Fraction(61, 140),
        "Orca-Oracle": Fraction(89, 168),
        "vLLM": Fraction(31, 36),
    }
    pool = {paper: Fraction(r["kv_pool_utilization"]).limit_denominator(1000) for paper, r in results.items()}
    assert pool == {
        "Orca-Max": Fraction(51, 196),
        "Orca-Pow2": Fraction(51, 196),
        "Orca-Oracle": Fraction(17, 42),
        "vLLM": Fraction(17, 42),
    }
    assert {paper: r["steps"] for paper, r in results.items()} == {
        "Orca-Max": 14,
        "Orca-Pow2": 14,
        "Orca-Oracle": 9,
        "vLLM": 9,
    }
    assert {paper: r["generated_tokens"] for paper, r in results.items()} == dict.fromkeys(SYSTEMS, 14)


def test_the_four_produce_the_same_outputs_and_reserve_as_the_hand_derivation_says():
    four = logs(workload([5, 9]))
    assert len({repr(log.outputs()) for log in four.values()}) == 1
    assert [len(tokens) for tokens in four["Orca-Max"].outputs().values()] == [4 + 5, 4 + 9]  # prompt + answer
    assert reserved(four["Orca-Max"]) == {"r0": 5, "r1": 5}
    assert reserved(four["Orca-Pow2"]) == {"r0": 3, "r1": 5}
    assert reserved(four["Orca-Oracle"]) == {"r0": 3, "r1": 4}


@settings(max_examples=15, deadline=None)
@given(
    count=st.integers(1, 6),
    prompt_len=st.integers(2, 9),
    seed=st.integers(0, 10**6),
    longest=st.integers(1, 24),
    max_tokens=st.integers(1, 20),
)
def test_outputs_identical_across_the_four_and_pow2_reserves_at_least_what_oracle_does(
    count, prompt_len, seed, longest, max_tokens
):
    blocks = -(-(prompt_len + max_tokens) // 4) + 2  # one request fits, with a little room
    four = logs(workload(None, blocks, count, prompt_len, seed, longest, max_tokens))
    assert len({repr(log.outputs()) for log in four.values()}) == 1  # some answers are cut at max_tokens
    pow2, oracle = reserved(four["Orca-Pow2"]), reserved(four["Orca-Oracle"])
    assert set(pow2) == set(oracle) and all(pow2[r] >= oracle[r] for r in pow2)


def test_the_four_need_drawn_answer_lengths_a_pool_and_the_stop_token():
    assert has_true_lengths(workload())
    assert not has_true_lengths(workload().with_engine(kv_blocks=None))
    assert not has_true_lengths(workload().with_engine(stop_token=None))  # the answers would run to max_tokens
    no_lengths = parse_scenario(TWO_ANSWERS.format(blocks=7, count=2, prompt_len=4, seed=0, longest=9, max_tokens=9))
    no_lengths = dataclasses.replace(no_lengths, workload=dataclasses.replace(no_lengths.workload, max_tokens=None))
    assert not has_true_lengths(no_lengths) and paper_systems(no_lengths) == {}


def test_the_reserving_systems_are_checked_against_the_limits_and_ask_for_no_more_work():
    scenario = workload([5, 9])
    whole = check_work(scenario)
    for name, variant in reservation_runs(scenario).items():
        assert variant.explicit_requests is not None and variant.workload == scenario.workload  # (the answer model)
        work = check_work(variant)  # the explicit requests' own estimate, as simulate runs it
        assert work.generated_tokens <= whole.generated_tokens and work.steps <= whole.steps, name


def test_a_workload_with_answer_lengths_fits_the_pool_by_the_max_tokens_its_requests_ask():
    """The requests ask for max_tokens, so that is what must fit (the fit was checked on the drawn
    lengths: 4 + 14 tokens refused a pool that 4 + 1 fits, and 4 + 100 reached the engine's own
    ValueError, without the file or the field)."""
    assert workload(blocks=2, longest=14, max_tokens=1).requests[0].max_tokens == 1  # 5 tokens in 2 blocks of 4
    with pytest.raises(ScenarioError, match=r"^<scenario>: workload.output.max_tokens: prompt \+ max_tokens = 104 "):
        workload(blocks=4, longest=4, max_tokens=100)

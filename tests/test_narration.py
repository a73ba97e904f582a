"""Narration, word for word, for the seeds' examples and the contract's conventions."""

import pytest

from engine.analysis.narration import narrate, tokens_text
from engine.analysis.replay import Replay
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate


def story(name: str) -> list[list[str]]:
    scenario = resolve_scenario(name)
    replay = Replay(simulate(scenario))
    return [narrate(replay, step, scenario.vocabulary) for step in range(len(replay))]


def test_part1_narration():
    assert story("part1-basic-batch") == [
        [
            "Requests A, B arrive and join the queue.",
            "Requests A, B are admitted into slots 0 and 1 from the queue.",
            "The queue is empty.",
            "The model is called with 2 rows.",
            "Slot 0: request A emitted 3.",
            "Slot 1: request B emitted 30.",
        ],
        ["The model is called with 2 rows.", "Slot 0: request A emitted 4.", "Slot 1: request B emitted 40."],
        [
            "The model is called with 2 rows.",
            "Slot 0: request A emitted 5, reaching max_tokens = 3; it is evicted and its callback receives "
            "[1, 2, 3, 4, 5].",
            "Slot 1: request B emitted 50, reaching max_tokens = 3; it is evicted and its callback receives "
            "[10, 20, 30, 40, 50].",
        ],
    ]


def test_part2_narration():
    assert story("part2-slot-refill") == [
        [
            "Requests A, B, C, D arrive and join the queue.",
            "Requests A, B are admitted into slots 0 and 1 from the queue.",
            "2 requests still wait.",
            "The model is called with 2 rows.",
            "Slot 0: request A emitted 11, reaching max_tokens = 1; it is evicted and its callback receives [1, 11].",
            "Slot 1: request B emitted 21.",
        ],
        [
            "Request C is admitted into slot 0 from the queue.",
            "1 request still waits.",
            "The model is called with 2 rows.",
            "Slot 0: request C emitted 31.",
            "Slot 1: request B emitted 22.",
        ],
        [
            "The model is called with 2 rows.",
            "Slot 0: request C emitted 32, reaching max_tokens = 2; it is evicted and its callback receives [3, 31, 32].",
            "Slot 1: request B emitted 23, reaching max_tokens = 3; it is evicted and its callback receives "
            "[2, 21, 22, 23].",
        ],
        [
            "Request D is admitted into slot 0 from the queue.",
            "The queue is empty.",
            "The model is called with 1 row.",
            "Slot 0: request D emitted 41, reaching max_tokens = 1; it is evicted and its callback receives [4, 41].",
        ],
    ]


@pytest.mark.parametrize(
    ("name", "step", "expected"),
    [
        (
            "stop-token-included",
            2,
            [
                "The model is called with 1 row.",
                "Slot 0: request A emitted 0 ('<eos>'), the stop token; it is evicted and its callback receives [9, 5, 5, 0].",
            ],
        ),
        (
            "stop-sequences",
            3,
            [
                "The model is called with 3 rows.",
                "Slot 0: request A emitted 8 ('end'), completing stop sequence [7, 8]; it is evicted and its callback "
                "receives [20, 7, 4, 7, 8].",
                "Slot 1: request B emitted 2, completing stop sequence [1, 1, 2]; it is evicted and its callback "
                "receives [21, 1, 1, 1, 2].",
                "Slot 3: request D emitted 8 ('end'), completing stop sequence [7, 8]; it is evicted and its callback "
                "receives [7, 8, 3, 7, 8].",
            ],
        ),
        (
            "zero-budget-and-empty-prompt",
            0,
            [
                "Requests A, B, C arrive and join the queue.",
                "Request A has max_tokens = 0: it completes at once, without a slot; its callback receives [1, 2, 3].",
                "Requests B, C are admitted into slots 0 and 1 from the queue.",
                "The queue is empty.",
                "The model is called with 2 rows.",
                "Slot 0: request B emitted 7.",
                "Slot 1: request C emitted 5.",
            ],
        ),
        (
            "padded-vs-ragged",
            3,
            [
                "The model is called with 4 rows (the fixed batch shape), 3 of them padding; active mask [0 1 0 0].",
                "Slot 1: request B emitted 24.",
            ],
        ),
        (
            "cancellation",
            1,
            [
                "Request B is cancelled before it was admitted; its callback receives [2].",
                "The model is called with 2 rows.",
                "Slot 0: request A emitted 292.",
                "Slot 1: request C emitted 837.",
            ],
        ),
        (
            "cancellation",
            3,
            [
                "Request A is cancelled: slot 0 is freed and its callback receives [1, 45, 292, 863].",
                "Request D is admitted into slot 0 from the queue.",
                "The queue is empty.",
                "The model is called with 2 rows.",
                "Slot 0: request D emitted 857.",
                "Slot 1: request C emitted 805, reaching max_tokens = 4; it is evicted and its callback receives "
                "[3, 661, 837, 634, 805].",
            ],
        ),
        (
            "static-vs-continuous",
            3,
            [
                "Static batching: the queue waits until every slot is free.",
                "The model is called with 1 row.",
                "Slot 1: request B emitted 399.",
            ],
        ),
        (
            "model-fault",
            2,
            [
                "The model call failed, so no row changed (step 2: model call failed with SimulatedFault: simulated device "
                "fault at model call 2; expected 2 tokens (one per active row)).",
                "The model is called with 2 rows.",
                "Slot 0: request A emitted 863.",
                "Slot 1: request B emitted 418, reaching max_tokens = 3; it is evicted and its callback receives "
                "[2, 912, 701, 418].",
            ],
        ),
        (
            "anyscale-cap32",
            3,
            [  # on OPT-13B's KV pool: about 38 rows of 512 + 32 tokens fit, not 64
                "Requests r44, r45, r46 are admitted into slots 15, 17, 21 from the queue.",
                "Requests r41, r42, r43, r44, r45 and 1 more take 99 blocks between them.",
                "9 blocks of the KV cache are free.",
                "953 requests still wait.",
                "The model is called with 39 rows.",
                "Request r44 prefills 512 tokens (512/512) and gets its first token at this step.",
                "Request r45 prefills 512 tokens (512/512) and gets its first token at this step.",
                "Request r46 prefills 512 tokens (512/512) and gets its first token at this step.",
                "39 rows emitted one token each.",
            ],
        ),
    ],
)
def test_narration_of_one_step(name, step, expected):
    assert story(name)[step] == expected


def test_long_token_lists_are_shortened():
    assert tokens_text(list(range(20))) == "[0, 1, 2, 3, 4, …, 17, 18, 19] (20 tokens)"
    assert tokens_text([1, 2]) == "[1, 2]"


def test_narration_works_on_a_loaded_jsonl_file():
    from engine import EventLog

    log = simulate(resolve_scenario("part2-slot-refill"))
    assert narrate(Replay(EventLog.from_jsonl(log.to_jsonl())), 1) == narrate(Replay(log), 1)


def test_an_idle_step_says_what_the_engine_waits_for():
    replay = Replay(simulate(resolve_scenario("arrivals-mid-run")))
    assert narrate(replay, 8) == ["Idle: nothing runs or waits until step 12, when the next request arrives."]

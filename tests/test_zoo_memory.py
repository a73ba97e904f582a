"""The bug zoo's memory mistakes: each is the engine with one field of its memory policy changed, and on its
demo case (engine/practice/memory_demos.py) it differs from the correct engine exactly as its
Bug.why says. Event sequences are hand-derived: a KV pool of 2 (or 3) blocks of 2 tokens, every
prompt prefilled whole in the step that admits it, a row's next token needing ceil(len / 2) blocks.
"""

import dataclasses

import pytest

from cblab.ui.practice.paired_runs import run_logged
from engine import BatchInferenceEngine
from engine.core.memory_policy import CORRECT, MemoryPolicy
from engine.practice.memory_demos import CANCELLATION, PREEMPTION
from engine.practice.zoo import BUGS, ForgetfulRecompute, LeakedBlocksOnCancel
from tests.helpers import ScriptModel

MEMORY_DECISIONS = {  # bug -> the one field of the memory policy it changes
    "preempted-to-the-back": "to_front",
    "leaked-blocks": "frees_when_cancelled",
    "oldest-preempted": "victim",
    "forgetful-recompute": "kept",
}
VALUE = {"emit": "token", "preempt": "recompute", "kv_free": "blocks", "kv_alloc": "block", "prefill": "tokens"}


def trail(log) -> list[tuple]:
    """(step, kind, slot, request, value) of every event but arrivals and model calls."""
    return [
        (e.step, e.kind, e.slot, e.request_id, getattr(e, VALUE.get(e.kind, "reason")))
        for e in log
        if e.kind not in ("arrive", "model_call")
    ]


# PREEMPTION, step 0 (the same in every run): r0 (prompt 2 tokens) and r1 (1 token) take a block each.
START = [
    (0, "admit", 0, "r0", None),
    (0, "kv_alloc", 0, "r0", 0),
    (0, "admit", 1, "r1", None),
    (0, "kv_alloc", 1, "r1", 1),
    (0, "prefill", 0, "r0", 2),
    (0, "prefill", 1, "r1", 1),
    (0, "emit", 0, "r0", 10),
    (0, "emit", 1, "r1", 20),
]
R1_PREEMPTED = [  # step 1: r0's third token needs a block; r1, the newest, gives its block up
    (1, "preempt", 1, "r1", 2),
    (1, "kv_free", 1, "r1", 1),
    (1, "kv_alloc", 0, "r0", 1),
    (1, "emit", 0, "r0", 11),
    (1, "evict", 0, "r0", "max_tokens"),
    (1, "kv_free", 0, "r0", 2),
]


def r2_runs(step: int) -> list[tuple]:
    """r2 (a 3-token prompt: both blocks) admitted into slot 0 at `step`, finished there."""
    return [
        (step, "admit", 0, "r2", None),
        (step, "kv_alloc", 0, "r2", 0),
        (step, "kv_alloc", 0, "r2", 1),
        (step, "prefill", 0, "r2", 3),
        (step, "emit", 0, "r2", 30),
        (step, "evict", 0, "r2", "max_tokens"),
        (step, "kv_free", 0, "r2", 2),
    ]


def r1_readmitted(step: int) -> list[tuple]:
    """r1 readmitted into slot 0 at `step` with its 2 tokens, then its 3rd token needs its 2nd block."""
    return [
        (step, "admit", 0, "r1", None),
        (step, "kv_alloc", 0, "r1", 0),
        (step, "prefill", 0, "r1", 2),
        (step, "emit", 0, "r1", 21),
        (step + 1, "kv_alloc", 0, "r1", 1),
        (step + 1, "emit", 0, "r1", 22),
        (step + 1, "evict", 0, "r1", "max_tokens"),
        (step + 1, "kv_free", 0, "r1", 2),
    ]


CORRECT_PREEMPTION = START + R1_PREEMPTED + r1_readmitted(2) + r2_runs(4)
BUGGY = {
    "preempted-to-the-back": START + R1_PREEMPTED + r2_runs(2) + r1_readmitted(3),
    "oldest-preempted": START
    + [
        (1, "preempt", 0, "r0", 3),  # r0 itself, the oldest, with 3 tokens to recompute
        (1, "kv_free", 0, "r0", 1),
        (1, "emit", 1, "r1", 21),
        (2, "kv_alloc", 1, "r1", 0),
        (2, "emit", 1, "r1", 22),
        (2, "evict", 1, "r1", "max_tokens"),
        (2, "kv_free", 1, "r1", 2),
        (3, "admit", 0, "r0", None),
        (3, "kv_alloc", 0, "r0", 0),
        (3, "kv_alloc", 0, "r0", 1),
        (3, "prefill", 0, "r0", 3),
        (3, "emit", 0, "r0", 11),
        (3, "evict", 0, "r0", "max_tokens"),
        (3, "kv_free", 0, "r0", 2),
    ]
    + r2_runs(4),
    "forgetful-recompute": START
    + [(1, "preempt", 1, "r1", 1)]  # only its prompt is kept
    + R1_PREEMPTED[1:]
    + [
        (2, "admit", 0, "r1", None),
        (2, "kv_alloc", 0, "r1", 0),
        (2, "prefill", 0, "r1", 1),
        (2, "emit", 0, "r1", 20),  # a second time
        (3, "emit", 0, "r1", 21),
        (4, "kv_alloc", 0, "r1", 1),
        (4, "emit", 0, "r1", 22),
        (4, "evict", 0, "r1", "max_tokens"),
        (4, "kv_free", 0, "r1", 2),
    ]
    + r2_runs(5),
}
CANCELLATION_START = [
    (0, "admit", 0, "r0", None),
    (0, "kv_alloc", 0, "r0", 0),
    (0, "admit", 1, "r1", None),
    (0, "kv_alloc", 1, "r1", 1),
    (0, "prefill", 0, "r0", 1),
    (0, "prefill", 1, "r1", 1),
    (0, "emit", 0, "r0", 10),
    (0, "emit", 1, "r1", 20),
    (1, "evict", 0, "r0", "cancelled"),
]
CORRECT_CANCELLATION = CANCELLATION_START + [
    (1, "kv_free", 0, "r0", 1),
    (1, "admit", 0, "r2", None),
    (1, "kv_alloc", 0, "r2", 0),
    (1, "kv_alloc", 0, "r2", 2),
    (1, "prefill", 0, "r2", 3),
    (1, "emit", 0, "r2", 30),
    (1, "emit", 1, "r1", 21),
    (1, "evict", 0, "r2", "max_tokens"),
    (1, "kv_free", 0, "r2", 2),
    (1, "evict", 1, "r1", "max_tokens"),
    (1, "kv_free", 1, "r1", 1),
]
BUGGY["leaked-blocks"] = CANCELLATION_START + [  # no kv_free for r0: 1 block free, r2 needs 2
    (1, "emit", 1, "r1", 21),
    (1, "evict", 1, "r1", "max_tokens"),
    (1, "kv_free", 1, "r1", 1),
    (2, "admit", 0, "r2", None),
    (2, "kv_alloc", 0, "r2", 1),
    (2, "kv_alloc", 0, "r2", 2),
    (2, "prefill", 0, "r2", 3),
    (2, "emit", 0, "r2", 30),
    (2, "evict", 0, "r2", "max_tokens"),
    (2, "kv_free", 0, "r2", 2),
]
OUTPUTS = {
    PREEMPTION: {"r0": (100, 1, 10, 11), "r1": (101, 20, 21, 22), "r2": (102, 1, 2, 30)},
    CANCELLATION: {"r0": (100, 10), "r1": (101, 20, 21), "r2": (102, 1, 2, 30)},
}


def test_the_memory_bugs_are_those_with_a_demo_case():
    assert {name for name in BUGS if BUGS[name].demo is not None} == set(MEMORY_DECISIONS)
    assert BUGS["leaked-blocks"].demo is CANCELLATION
    assert {BUGS[name].demo for name in MEMORY_DECISIONS} == {PREEMPTION, CANCELLATION}


@pytest.mark.parametrize("name", list(MEMORY_DECISIONS))
def test_each_memory_bug_changes_exactly_its_one_policy_field(name):
    engine = BUGS[name].engine
    assert engine.__bases__ == (BatchInferenceEngine,)
    assert set(vars(engine)) - {"__module__", "__doc__", "__qualname__"} == {"memory_policy"}
    changed = {
        field.name
        for field in dataclasses.fields(MemoryPolicy)
        if getattr(engine.memory_policy, field.name) != getattr(CORRECT, field.name)
    }
    assert changed == {MEMORY_DECISIONS[name]}


def test_the_correct_engine_on_the_demo_cases():
    for demo, expected in ((PREEMPTION, CORRECT_PREEMPTION), (CANCELLATION, CORRECT_CANCELLATION)):
        _, log, received = run_logged(BatchInferenceEngine, demo)
        assert trail(log) == expected
        assert received == OUTPUTS[demo]


@pytest.mark.parametrize("name", list(MEMORY_DECISIONS))
def test_each_memory_bug_differs_exactly_as_described(name):
    """The events differ as hand-derived; what the callbacks receive does not (a deterministic model)."""
    _, log, received = run_logged(BUGS[name].engine, BUGS[name].demo)
    assert trail(log) == BUGGY[name]
    assert received == OUTPUTS[BUGS[name].demo]


def streams(engine_class) -> dict[str, list[int]]:
    """Each request's on_token stream on PREEMPTION's requests and pool."""
    model = ScriptModel({(100, 1): [10, 11], (101,): [20, 21, 22], (102, 1, 2): [30]})
    engine = engine_class(model, 2, None, **PREEMPTION.options)
    stream: dict[str, list[int]] = {}
    for i, request in enumerate(PREEMPTION.case.requests):
        rid = f"r{i}"
        engine.submit_request(
            list(request.prompt), request.max_tokens, request_id=rid, on_token=stream.setdefault(rid, []).append
        )
    engine.run()
    return stream


def test_a_forgetful_recompute_streams_a_token_twice():
    assert streams(BatchInferenceEngine) == {"r0": [10, 11], "r1": [20, 21, 22], "r2": [30]}
    assert streams(ForgetfulRecompute) == {"r0": [10, 11], "r1": [20, 20, 21, 22], "r2": [30]}


def leaking_run(engine_class) -> BatchInferenceEngine:
    """A pool of 2 blocks: r0 holds 1 and is cancelled at step 1; r1 needs both."""
    engine = engine_class(ScriptModel({(1,): [5, 5, 5], (2, 3, 4): [6]}), 2, None, kv_blocks=2, block_size=2)
    engine.submit_request([1], 3, request_id="r0")
    engine.submit_request([2, 3, 4], 1, request_id="r1")
    engine.step()
    engine.cancel("r0")
    return engine


def test_a_pool_leaked_dry_raises_instead_of_stepping_for_ever():
    correct = leaking_run(BatchInferenceEngine)
    correct.run()
    assert correct.event_log.outputs() == {"r0": [1, 5], "r1": [2, 3, 4, 6]}
    leaky = leaking_run(LeakedBlocksOnCancel)
    message = (
        "kv_blocks: request r1 needs 2 blocks and nothing runs, but the pool has only 1 of its 2 free: "
        "blocks were never given back"
    )
    with pytest.raises(RuntimeError, match=message):
        leaky.run()
    with pytest.raises(RuntimeError, match=message):  # and again, not a loop, if stepped once more
        leaky.step()


def counting_policy(asked: dict[str, int]) -> MemoryPolicy:
    """The correct memory policy, counting how often each decision is asked."""

    class Counting:
        def __init__(self, name):
            self.name = name

        def __call__(self, *args):
            asked[self.name] += 1
            return getattr(CORRECT, self.name)(*args)

        def __bool__(self):
            asked[self.name] += 1
            return bool(getattr(CORRECT, self.name))

    return MemoryPolicy(**{name: Counting(name) for name in MEMORY_DECISIONS.values()})


class CountingPolicy(BatchInferenceEngine):
    """The correct engine, counting how often its memory policy is asked."""

    def __init__(self, *args, **options):
        self.asked = dict.fromkeys(MEMORY_DECISIONS.values(), 0)
        self.memory_policy = counting_policy(self.asked)
        super().__init__(*args, **options)


def test_the_memory_policy_is_asked_only_on_a_preemption_or_a_cancellation():
    engine = CountingPolicy(ScriptModel({(100 + i,): [] for i in range(4)}), 2, None, kv_blocks=64, block_size=2)
    for i in range(4):
        engine.submit_request([100 + i], 20)
    engine.run()  # 80 tokens, no preemption, no cancellation
    assert engine.asked == dict.fromkeys(MEMORY_DECISIONS.values(), 0)
    engine = CountingPolicy(
        ScriptModel({(100, 1): [10, 11], (101,): [20, 21, 22], (102, 1, 2): [30]}), 2, None, **PREEMPTION.options
    )
    for request in PREEMPTION.case.requests:
        engine.submit_request(list(request.prompt), request.max_tokens)
    engine.step()
    engine.cancel("r2")  # waiting, without blocks
    engine.run()
    assert engine.asked == {
        "victim": 1,
        "to_front": 1,
        "kept": 1,
        "frees_when_cancelled": 1,
    }

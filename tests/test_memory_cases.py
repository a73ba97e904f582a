"""The KV pool, preemption and chunked prefill on hand-derived cases: exact event sequences."""

import pytest

from engine import BatchInferenceEngine, CallbackError, EventLog, ModelError
from tests.helpers import FlakyModel, HashModel, ScriptModel

FIELDS = ("token", "block", "blocks", "recompute", "tokens", "computed", "reason", "rows", "prefill_tokens")
SCRIPTS = {(1,): [11, 12, 13, 14], (2,): [21, 22, 23, 24], (3,): [31]}


def trace(engine: BatchInferenceEngine, *kinds: str) -> list[tuple]:
    """Each event as (step, kind, slot, request id, field=value...), optionally of these kinds only."""
    return [
        (e.step, e.kind, e.slot, e.request_id, *(f"{k}={getattr(e, k)}" for k in FIELDS if getattr(e, k) is not None))
        for e in engine.event_log
        if not kinds or e.kind in kinds
    ]


def two_rows_three_blocks(model=None) -> BatchInferenceEngine:
    """A and B, 1-token prompts and 4 tokens each, in 3 blocks of 2: at step 2 both need a second block."""
    engine = BatchInferenceEngine(model or ScriptModel(SCRIPTS), 2, None, kv_blocks=3, block_size=2)
    engine.submit_request([1], 4, request_id="A")
    engine.submit_request([2], 4, request_id="B")
    return engine


def test_the_newest_row_is_preempted_goes_to_the_front_and_recomputes_its_tokens():
    engine = two_rows_three_blocks()
    engine.run()
    assert trace(engine)[14:] == [
        (2, "kv_alloc", 0, "A", "block=2"),  # A, the oldest, claims the last free block
        (2, "preempt", 1, "B", "recompute=3"),  # B needs one too: the newest running row is B itself
        (2, "kv_free", 1, "B", "blocks=1"),
        (2, "model_call", None, None, "rows=1", "prefill_tokens=0"),
        (2, "emit", 0, "A", "token=13"),
        (3, "model_call", None, None, "rows=1", "prefill_tokens=0"),  # B needs 2 blocks; 1 is free: it waits
        (3, "emit", 0, "A", "token=14"),
        (3, "evict", 0, "A", "reason=max_tokens"),
        (3, "kv_free", 0, "A", "blocks=2"),
        (4, "admit", 0, "B"),  # readmitted into the lowest free slot
        (4, "kv_alloc", 0, "B", "block=0"),
        (4, "kv_alloc", 0, "B", "block=1"),
        (4, "model_call", None, None, "rows=1", "prefill_tokens=3"),
        (4, "prefill", 0, "B", "tokens=3", "computed=3"),  # prompt + its 2 generated tokens, again
        (4, "emit", 0, "B", "token=23"),
        (5, "model_call", None, None, "rows=1", "prefill_tokens=0"),
        (5, "emit", 0, "B", "token=24"),
        (5, "evict", 0, "B", "reason=max_tokens"),
        (5, "kv_free", 0, "B", "blocks=2"),
    ]
    assert engine.event_log.outputs() == {"A": [1, 11, 12, 13, 14], "B": [2, 21, 22, 23, 24]}


def test_a_preempted_rows_positions_run_on_across_its_two_stints():
    engine = two_rows_three_blocks()
    engine.run()
    log = engine.event_log
    assert [(e.step, e.position) for e in log if e.kind == "emit" and e.request_id == "B"] == [
        (0, 0),
        (1, 1),
        (4, 2),  # readmitted at step 4, it goes on from its third token
        (5, 3),
    ]
    frame = log.to_dataframe()
    assert frame[(frame.kind == "emit") & (frame.request_id == "B")].position.tolist() == [0, 1, 2, 3]
    assert EventLog.from_jsonl(log.to_jsonl()) == log  # JSON Lines writes positions; loading stores them alike


def test_a_preempted_request_goes_back_to_the_front_of_the_queue():
    engine = two_rows_three_blocks()
    engine.submit_request([3], 1, request_id="C")  # waits behind A and B
    engine.step(), engine.step(), engine.step()  # step 2 preempts B
    assert engine.waiting == ["B", "C"]
    assert engine.event_log[len(engine.event_log) - 1].kind == "emit"  # and admits nobody at step 2


def test_a_chunked_prefill_leaves_decoding_rows_their_token_first():
    engine = BatchInferenceEngine(ScriptModel({(1,): [11] * 5, tuple(range(2, 12)): [30]}), 2, None, token_budget=4)
    engine.submit_request([1], 5, request_id="A")
    engine.submit_request(list(range(2, 12)), 1, request_id="B", arrival_step=1)  # a 10-token prompt
    engine.run()
    assert trace(engine, "prefill", "model_call", "evict") == [
        (0, "model_call", None, None, "rows=1", "prefill_tokens=1"),
        (0, "prefill", 0, "A", "tokens=1", "computed=1"),
        (1, "model_call", None, None, "rows=1", "prefill_tokens=3"),  # A decodes (1 of 4), B prefills 3
        (1, "prefill", 1, "B", "tokens=3", "computed=3"),
        (2, "model_call", None, None, "rows=1", "prefill_tokens=3"),
        (2, "prefill", 1, "B", "tokens=3", "computed=6"),
        (3, "model_call", None, None, "rows=1", "prefill_tokens=3"),
        (3, "prefill", 1, "B", "tokens=3", "computed=9"),
        (4, "model_call", None, None, "rows=2", "prefill_tokens=1"),  # B's last token: it is sent too
        (4, "prefill", 1, "B", "tokens=1", "computed=10"),
        (4, "evict", 0, "A", "reason=max_tokens"),
        (4, "evict", 1, "B", "reason=max_tokens"),
    ]


def test_a_step_that_only_prefills_logs_a_call_of_no_rows_and_calls_no_model():
    model = ScriptModel({tuple(range(1, 7)): [9]})
    engine = BatchInferenceEngine(model, 2, None, token_budget=2)
    engine.submit_request(list(range(1, 7)), 1)
    engine.run()
    assert trace(engine, "model_call") == [
        (0, "model_call", None, None, "rows=0", "prefill_tokens=2"),
        (1, "model_call", None, None, "rows=0", "prefill_tokens=2"),
        (2, "model_call", None, None, "rows=1", "prefill_tokens=2"),
    ]
    assert len(model.calls) == 1


def test_a_reserving_head_of_the_queue_blocks_everyone_behind_it():
    model = ScriptModel({(1,): [], (2,): [], (3,): []}, filler=7)
    engine = BatchInferenceEngine(model, 3, None, kv_blocks=4, block_size=2, kv_policy="reserve")
    engine.submit_request([1], 5, request_id="A")  # reserves ceil(6 / 2) = 3 blocks
    engine.submit_request([2], 5, request_id="B")  # needs 3: only 1 is free, so it waits
    engine.submit_request([3], 1, request_id="C")  # would fit in 1, but it is behind B
    engine.run()
    assert trace(engine, "admit", "kv_alloc", "evict") == [
        (0, "admit", 0, "A"),
        (0, "kv_alloc", 0, "A", "block=0"),
        (0, "kv_alloc", 0, "A", "block=1"),
        (0, "kv_alloc", 0, "A", "block=2"),
        (4, "evict", 0, "A", "reason=max_tokens"),
        (5, "admit", 0, "B"),
        (5, "kv_alloc", 0, "B", "block=0"),
        (5, "kv_alloc", 0, "B", "block=1"),
        (5, "kv_alloc", 0, "B", "block=2"),
        (5, "admit", 1, "C"),
        (5, "kv_alloc", 1, "C", "block=3"),
        (5, "evict", 1, "C", "reason=max_tokens"),
        (9, "evict", 0, "B", "reason=max_tokens"),
    ]


def test_cancelling_a_preempted_request_delivers_what_it_generated():
    engine = two_rows_three_blocks()
    got = []
    engine.submit_request([3], 1, got.append, request_id="C")
    engine.step(), engine.step(), engine.step()  # B is preempted at step 2 with 2 generated tokens
    engine.cancel("B")
    engine.run()
    assert (3, "evict", None, "B", "reason=cancelled") in trace(engine)
    assert [t for t in trace(engine, "kv_free") if t[3] == "B"] == [(2, "kv_free", 1, "B", "blocks=1")]
    assert engine.event_log.outputs()["B"] == [2, 21, 22]


def test_a_request_that_could_never_fit_is_refused_and_nothing_is_queued():
    engine = BatchInferenceEngine(HashModel(), 2, None, kv_blocks=3, block_size=2)
    with pytest.raises(ValueError, match=r"^kv_blocks: prompt \+ max_tokens = 7 tokens need 4 blocks of 2, but"):
        engine.submit_request([1, 2, 3], 4)
    assert not engine.has_work()
    engine.submit_request([1, 2, 3], 0)  # max_tokens = 0 never takes a block
    engine.run()
    assert trace(engine, "kv_alloc") == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"kv_blocks": 0}, r"^kv_blocks: must be an integer ≥ 1"),
        ({"block_size": 0}, r"^block_size: must be an integer ≥ 1"),
        ({"kv_policy": "lru"}, r"^kv_policy: must be one of 'paged', 'reserve', got 'lru'"),
        ({"token_budget": 3}, r"^token_budget: must be an integer ≥ 4"),
    ],
)
def test_bad_memory_options_raise_at_construction_naming_the_option(options, message):
    with pytest.raises(ValueError, match=message):
        BatchInferenceEngine(HashModel(), 4, None, **options)


def test_a_model_fault_in_a_step_that_preempted_resumes_to_the_same_results():
    reference = two_rows_three_blocks()
    reference.run()
    engine = two_rows_three_blocks(FlakyModel(ScriptModel(SCRIPTS), {2: "raise"}))  # step 2's call
    with pytest.raises(ModelError, match=r"^step 2: model call failed"):
        engine.run()
    engine.run()
    assert engine.event_log.outputs() == reference.event_log.outputs()
    admitted_at_2 = [t for t in trace(engine, "admit") if t[0] == 2]
    assert admitted_at_2 == []  # the retried step still admits nobody: it preempted


def test_a_raising_callback_during_chunked_prefill_hurts_no_one_else():
    engine = BatchInferenceEngine(HashModel(), 2, None, kv_blocks=4, block_size=2, token_budget=2)
    got = []
    engine.submit_request([1], 1, lambda tokens: 1 / 0)
    engine.submit_request([2, 3, 4], 2, got.append)
    with pytest.raises(CallbackError, match=r"^1 callback\(s\) raised: r0 \(ZeroDivisionError"):
        engine.run()
    assert len(got) == 1 and got[0][:3] == [2, 3, 4] and len(got[0]) == 5
    assert engine._blocks.num_free == 4


def test_a_preemption_shows_in_the_metrics_as_a_stall_and_recomputed_tokens():
    from engine.analysis.metrics import CostModel, step_metrics, summary

    engine = two_rows_three_blocks()
    engine.run()
    one_per_step = CostModel(step_s=1.0, row_s=0.0, prefill_token_s=0.0)
    steps = step_metrics(engine.event_log, one_per_step)
    assert steps.running_rows.tolist() == [2, 2, 1, 1, 1, 1]  # B is preempted before step 2's call, back at 4
    assert steps.prefill_tokens.tolist() == [2, 0, 0, 0, 3, 0]  # B recomputes its prompt and 2 tokens
    figures = summary(engine.event_log, one_per_step)
    assert (figures["preemptions"], figures["recomputed_tokens"], figures["peak_running"]) == (1, 3, 2)
    # A's tokens end steps 0-3 (gaps 1, 1, 1); B's end steps 0, 1, then 4, 5 (gaps 1, 3, 1)
    assert figures["max_tbt_s"] == 3.0
    assert figures["tbt_p99_s"] == pytest.approx(1 + 0.95 * 2)
    # blocks of 2 at each call: A 1 + B 1, A 1 + B 1, A 2 (B's freed), A 2, B 2, B 2
    assert steps.kv_blocks_held.tolist() == [2, 2, 2, 2, 2, 2]
    assert steps.kv_tokens_held.tolist() == [2, 4, 3, 4, 3, 4]  # the prefixes before each new token
    assert figures["kv_utilization"] == pytest.approx((2 / 4 + 1 + 3 / 4 + 1 + 3 / 4 + 1) / 6)
    assert figures["kv_pool_utilization"] == pytest.approx((2 + 4 + 3 + 4 + 3 + 4) / 6 / 6)  # of the pool's 3 × 2

"""The engine's bulk paths (benchmarks/engine_100k.py: the seed's 100k rows) keep the contract's order:
the batch view's slot mask, the arrivals of requests due at once beside later ones, the rows that end
together, a waiting request's prompt and the list its callback gets."""

from hypothesis import given
from hypothesis import strategies as st

from engine import BatchInferenceEngine
from engine.core.config import EngineConfig
from engine.core.request import FinishReason, Status, append_and_check, new_sequence
from engine.core.scheduler import Scheduler, slot_mask


def test_slot_mask_sets_the_bit_of_each_slot():
    assert slot_mask([]) == 0
    assert slot_mask([0, 1, 2]) == 0b111
    assert slot_mask([1, 3]) == 0b1010
    assert slot_mask([9]) == 1 << 9
    assert slot_mask(list(range(65_536))) == (1 << 65_536) - 1


@given(st.sets(st.integers(0, 300)))
def test_slot_mask_equals_the_sum_of_the_slots_bits(slots):
    assert slot_mask(sorted(slots)) == sum(1 << slot for slot in slots)


def _seq(order, arrival_step=None, now=0, max_tokens=4):
    return new_sequence(f"r{order}", [order], max_tokens, None, None, None, arrival_step, order=order, now=now)


def test_requests_due_at_once_and_later_ones_arrive_in_arrival_then_submission_order():
    scheduler = Scheduler(EngineConfig(batch_size=2))
    later, now_a, now_b = _seq(0, arrival_step=3), _seq(1, now=3), _seq(2, now=3)
    scheduler.add(later, now=0)  # (submitted at step 0 for step 3: the heap)
    scheduler.add(now_a, now=3)  # (submitted when the next step is 3: due at once)
    scheduler.add(now_b, now=3)
    assert scheduler.next_arrival() == 3
    assert [seq.request_id for seq in scheduler.due(3)] == ["r0", "r1", "r2"]
    assert scheduler.due(4) == [] and scheduler.next_arrival() is None


def test_a_row_filed_twice_is_not_taken_for_another_row_that_has_not_reached_max_tokens():
    done, short = _seq(0, max_tokens=1), _seq(1, max_tokens=3)
    for seq in (done, short):
        seq.tokens, seq.status = list(seq.tokens), Status.RUNNING
    rows = [done, short]
    ended = append_and_check(rows, [seq.tokens for seq in rows], [5, 5], None, [done, done], False)
    assert ended == [(done, FinishReason.MAX_TOKENS, None)]
    assert short.tokens == [1, 5] and done.tokens == [0, 5]


def test_every_row_of_a_batch_ending_together_ends_in_slot_order_and_each_callback_gets_its_list():
    got = []
    engine = BatchInferenceEngine(lambda batch: [7] * len(batch), 3, 0)
    ids = [engine.submit_request([i], 2, lambda tokens, i=i: got.append((i, tokens))) for i in (2, 0, 1)]
    engine.run()
    evictions = [(e.slot, e.request_id) for e in engine.event_log if e.kind == "evict"]
    assert evictions == [(0, ids[0]), (1, ids[1]), (2, ids[2])]
    assert got == [(2, [2, 7, 7]), (0, [0, 7, 7]), (1, [1, 7, 7])]
    assert all(type(tokens) is list for _, tokens in got)


def test_a_request_that_never_takes_a_slot_delivers_its_prompt_as_a_new_list_and_the_log_keeps_a_tuple():
    got = []
    engine = BatchInferenceEngine(lambda batch: [7] * len(batch), 1, 0)
    prompt = [4, 5]
    engine.submit_request([1], 3, got.append)
    cancelled = engine.submit_request(prompt, 3, got.append)
    engine.submit_request(prompt, 0, got.append)
    engine.step()
    engine.cancel(cancelled)
    engine.run()
    assert got == [[4, 5], [4, 5], [1, 7, 7, 7]]
    assert all(type(tokens) is list and tokens is not prompt for tokens in got)
    assert [info.prompt for info in engine.event_log.requests] == [(1,), (4, 5), (4, 5)]

"""The seeds' worked examples and the contract's conventions, with exact expected values."""

from engine import BatchInferenceEngine, MockModel, Request, SimulatedLLM, generate
from tests.helpers import ScriptModel


def test_first_seed_example_with_scripted_model():
    model = ScriptModel({(1, 2, 3): [4, 5, 6, 7, 8, 9], (10, 20): [21, 0], (100,): [101, 102]}, filler=7)
    engine = BatchInferenceEngine(model, batch_size=4, stop_token=0)
    results = []
    engine.submit_request([1, 2, 3], max_tokens=5, callback=lambda seq: results.append(seq))
    engine.submit_request([10, 20], max_tokens=3, callback=lambda seq: results.append(seq))
    engine.submit_request([100], max_tokens=10, callback=lambda seq: results.append(seq))
    engine.run()
    assert results == [
        [10, 20, 21, 0],  # stop token at step 1, included
        [1, 2, 3, 4, 5, 6, 7, 8],  # max_tokens=5 at step 4
        [100, 101, 102, 7, 7, 7, 7, 7, 7, 7, 7],  # max_tokens=10 at step 9
    ]
    assert [len(call) for call in model.calls] == [3, 3, 2, 2, 2, 1, 1, 1, 1, 1]


def test_first_seed_example_with_simulated_llm_is_pinned():
    engine = BatchInferenceEngine(SimulatedLLM(), batch_size=4, stop_token=0)
    results = []
    for prompt, max_tokens in [([1, 2, 3], 5), ([10, 20], 3), ([100], 10)]:
        engine.submit_request(prompt, max_tokens=max_tokens, callback=results.append)
    engine.run()
    assert results == [
        [10, 20, 401, 792, 819],
        [1, 2, 3, 719, 874, 192, 318, 25],
        [100, 400, 752, 433, 805, 703, 0],
    ]


def test_part1_both_requests_share_every_model_call():
    model = ScriptModel({(1, 2): [3, 4, 5], (10, 20): [30, 40, 50]})
    engine = BatchInferenceEngine(model, batch_size=2, stop_token=0)
    results = []
    engine.submit_request([1, 2], max_tokens=3, callback=lambda s: results.append(s))
    engine.submit_request([10, 20], max_tokens=3, callback=lambda s: results.append(s))
    engine.run()
    assert results == [[1, 2, 3, 4, 5], [10, 20, 30, 40, 50]]
    assert model.calls == [
        [[1, 2], [10, 20]],
        [[1, 2, 3], [10, 20, 30]],
        [[1, 2, 3, 4], [10, 20, 30, 40]],
    ]


def part2_engine(batching="continuous"):
    model = ScriptModel({(1,): [11, 12, 13], (2,): [21, 22, 23], (3,): [31, 32], (4,): [41]})
    engine = BatchInferenceEngine(model, batch_size=2, stop_token=0, batching=batching)
    done = []
    for prompt, max_tokens in [([1], 1), ([2], 3), ([3], 2), ([4], 1)]:
        engine.submit_request(prompt, max_tokens=max_tokens, callback=done.append)
    return engine, model, done


def test_part2_freed_slot_is_refilled_at_the_next_step():
    engine, model, done = part2_engine()
    engine.run()
    assert done == [[1, 11], [3, 31, 32], [2, 21, 22, 23], [4, 41]]  # same-step finishes in slot order
    assert model.calls == [
        [[1], [2]],  # step 0: r0 finishes (max_tokens=1)
        [[3], [2, 21]],  # step 1: r2 took slot 0 at once
        [[3, 31], [2, 21, 22]],  # step 2: r1 and r2 finish together
        [[4]],  # step 3: queue exhausted, the batch runs one row
    ]
    admits = [(e.step, e.slot, e.request_id) for e in engine.event_log if e.kind == "admit"]
    assert admits == [(0, 0, "r0"), (0, 1, "r1"), (1, 0, "r2"), (3, 0, "r3")]


def test_part2_static_batching_waits_for_the_whole_batch():
    engine, model, done = part2_engine("static")
    engine.run()
    assert done == [[1, 11], [2, 21, 22, 23], [4, 41], [3, 31, 32]]
    assert [len(call) for call in model.calls] == [2, 1, 1, 2, 1]


def test_stop_token_is_delivered_inside_the_output():
    model = ScriptModel({(9,): [5, 5, 0, 6]})
    engine = BatchInferenceEngine(model, batch_size=1, stop_token=0)
    out = []
    engine.submit_request([9], max_tokens=10, callback=out.append)
    engine.run()
    assert out == [[9, 5, 5, 0]]
    assert generate(model, [Request("a", [9], 10)], num_slots=1, stop_token=0) == {"a": [5, 5, 0]}


def test_stop_token_in_the_prompt_never_stops_a_row():
    model = ScriptModel({(0, 0): [4, 0]})
    out = []
    engine = BatchInferenceEngine(model, batch_size=1, stop_token=0)
    engine.submit_request([0, 0], max_tokens=5, callback=out.append)
    engine.run()
    assert out == [[0, 0, 4, 0]]


def test_max_tokens_counts_generated_tokens_only():
    model = ScriptModel({(1, 2, 3, 4): [5, 6, 7]})
    assert generate(model, [Request("x", [1, 2, 3, 4], 2)], 1, None) == {"x": [5, 6]}


def test_max_tokens_zero_never_reaches_a_slot_or_the_model():
    model = ScriptModel({(1,): [2]})
    engine = BatchInferenceEngine(model, batch_size=1, stop_token=0)
    out = []
    engine.submit_request([1, 2, 3], max_tokens=0, callback=out.append)
    engine.run()
    assert out == [[1, 2, 3]]
    assert model.calls == []
    assert [(e.kind, e.slot, e.reason) for e in engine.event_log] == [
        ("arrive", None, None),
        ("evict", None, "max_tokens"),
    ]


def test_max_tokens_zero_does_not_wait_behind_a_full_batch():
    model = ScriptModel({(1,): [2, 3, 4], (5,): []})
    engine = BatchInferenceEngine(model, batch_size=1, stop_token=0)
    order = []
    engine.submit_request([1], 3, lambda s: order.append(("long", len(order))))
    engine.submit_request([5], 0, lambda s: order.append(("zero", len(order))))
    engine.run()
    assert order == [("zero", 0), ("long", 1)]


def test_empty_prompt_queries_the_model_with_an_empty_prefix():
    model = ScriptModel({(): [7, 8]})
    assert generate(model, [Request("e", [], 2)], 1, 0) == {"e": [7, 8]}
    assert model.calls == [[[]], [[7]]]
    assert SimulatedLLM().generate_next_tokens([[]]) == SimulatedLLM().generate_next_tokens([[]])


def test_generate_returns_generated_tokens_keyed_by_request_id():
    requests = [Request("a", [1], 1), Request("b", [2], 3), Request("c", [3], 2), Request("d", [4], 1)]
    out = generate(MockModel(stop_chance=0.0), requests, num_slots=2, stop_token=0)
    assert sorted(out) == ["a", "b", "c", "d"]
    assert [len(out[r.request_id]) for r in requests] == [1, 3, 2, 1]
    assert out == generate(MockModel(stop_chance=0.0), requests, num_slots=1, stop_token=0)

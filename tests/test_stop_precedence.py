"""Which stop ends a row, at which step and with which index, when several could."""

import pytest

from tests.helpers import ScriptModel, evict_reasons, recording_engine, stop_matches

CASES = {  # id: (prompt, script, stops, stop_token, output, reason, (step, index, sequence))
    "overlap": ([50], [1, 1, 1, 2, 7], [[1, 1, 2]], None, [50, 1, 1, 1, 2], "stop_sequence", (3, 0, (1, 1, 2))),
    "self-overlap": (
        [50], [1, 2, 1, 2, 1, 2, 3, 7], [[1, 2, 1, 2, 3]], None,
        [50, 1, 2, 1, 2, 1, 2, 3], "stop_sequence", (6, 0, (1, 2, 1, 2, 3)),
    ),
    "prefix-first": ([50], [1, 2, 3], [[1, 2, 3], [1, 2]], None, [50, 1, 2], "stop_sequence", (1, 1, (1, 2))),
    "tie-short-first": ([50], [1, 2, 3], [[2, 3], [1, 2, 3]], None, [50, 1, 2, 3], "stop_sequence", (2, 0, (2, 3))),
    "tie-long-first": ([50], [1, 2, 3], [[1, 2, 3], [2, 3]], None, [50, 1, 2, 3], "stop_sequence", (2, 0, (1, 2, 3))),
    "tie-of-three": ([50], [1, 2, 3], [[3], [2, 3], [1, 2, 3]], None, [50, 1, 2, 3], "stop_sequence", (2, 0, (3,))),
    "duplicate-stops": ([50], [4, 5], [[5], [5]], None, [50, 4, 5], "stop_sequence", (1, 0, (5,))),
    "inner-short-stop": ([50], [1, 2, 3, 4], [[1, 2, 3, 4], [3]], None, [50, 1, 2, 3], "stop_sequence", (2, 1, (3,))),
    "stop-token-beats-both": ([50], [2, 3, 9], [[2, 3], [3]], 3, [50, 2, 3], "stop_token", (1, -1, (3,))),
    "prompt-tail-ignored": (
        [1, 1], [2, 5, 1, 1, 2, 9], [[1, 1, 2]], None, [1, 1, 2, 5, 1, 1, 2], "stop_sequence", (4, 0, (1, 1, 2)),
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    ("prompt", "script", "stops", "stop_token", "output", "reason", "match"), CASES.values(), ids=CASES
)
def test_earliest_completion_wins_then_stop_token_then_listing_order(
    prompt, script, stops, stop_token, output, reason, match
):
    engine, recorder = recording_engine(ScriptModel({tuple(prompt): script}, filler=98), stop_token=stop_token)
    recorder.submit("a", prompt, 20, stops)
    engine.run()
    step, index, sequence = match
    assert (recorder.results["a"], evict_reasons(engine)["a"]) == (output, reason)
    assert stop_matches(engine) == [(step, "a", index, sequence)]


def test_requests_in_one_batch_match_their_own_stops_only():
    engine, recorder = recording_engine(ScriptModel({(10,): [1, 2, 3], (20,): [2, 3, 4]}, filler=98), batch_size=2)
    recorder.submit("A", [10], 5, [[2, 3, 4]])
    recorder.submit("B", [20], 5, [[1, 2, 3]])
    engine.run()
    assert recorder.results == {"A": [10, 1, 2, 3, 98, 98], "B": [20, 2, 3, 4, 98, 98]}

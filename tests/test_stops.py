"""Stop sequences: matched on generated tokens only, across steps, overlaps included."""

import pytest

from engine.core.stops import NO_MATCH, StopMatcher
from tests.helpers import ScriptModel, make_engine


def feed(sequences, tokens):
    """Feed tokens one by one; return (index of the token that completed a match, sequence index)."""
    matcher = StopMatcher(tuple(tuple(s) for s in sequences))
    state = 0
    for i, token in enumerate(tokens):
        state = matcher.advance(state, token)
        if matcher.matched(state) != NO_MATCH:
            return i, matcher.matched(state)
    return None


@pytest.mark.parametrize(
    ("sequences", "tokens", "expected"),
    [
        ([[1, 1, 2]], [1, 1, 1, 2], (3, 0)),  # the contract's overlap example
        ([[1, 2, 1, 2, 3]], [1, 2, 1, 2, 1, 2, 3], (6, 0)),  # self-overlapping
        ([[1, 1]], [2, 1, 3, 1, 1], (4, 0)),
        ([[1, 2, 3], [1, 2]], [1, 2, 3], (1, 1)),  # a shorter stop that is a prefix completes first
        ([[2, 3], [1, 2, 3]], [1, 2, 3], (2, 0)),  # same token: listed first wins
        ([[1, 2, 3], [2, 3]], [1, 2, 3], (2, 0)),
        ([[4, 5], [3]], [1, 3], (1, 1)),
        ([[7, 8]], [7, 9, 8], None),
        ([[5, 6, 7], [6, 8]], [5, 6, 8], (2, 1)),  # failure link into another sequence
    ],
)
def test_matcher_finds_earliest_completion(sequences, tokens, expected):
    assert feed(sequences, tokens) == expected


def run_one(prompt, script, stops, stop_token=None, max_tokens=20):
    model = ScriptModel({tuple(prompt): script})
    engine = make_engine(model, batch_size=1, stop_token=stop_token)
    out = []
    engine.submit_request(prompt, max_tokens, out.append, stops)
    engine.run()
    evict = [e.reason for e in engine.event_log if e.kind == "evict"]
    matches = [(e.step, e.sequence_index, e.sequence) for e in engine.event_log if e.kind == "stop_match"]
    return out[0], evict[0], matches


def test_stop_sequence_completed_across_steps_is_included_in_the_output():
    assert run_one([9], [7, 4, 7, 8, 5], [[7, 8]]) == ([9, 7, 4, 7, 8], "stop_sequence", [(3, 0, (7, 8))])


def test_overlapping_stop_sequence_stops_after_the_two():
    assert run_one([], [1, 1, 1, 2, 5], [[1, 1, 2]])[0] == [1, 1, 1, 2]


def test_stop_sequences_ignore_the_prompt():
    # The prompt ends in 7, so a generated 8 alone does not complete [7, 8].
    assert run_one([7], [8, 3, 7, 8], [[7, 8]], max_tokens=10)[0] == [7, 8, 3, 7, 8]


def test_stop_token_beats_a_sequence_ending_on_the_same_token():
    out, reason, matches = run_one([1], [2, 3], [[2, 3]], stop_token=3)
    assert (out, reason, matches) == ([1, 2, 3], "stop_token", [(1, -1, (3,))])


def test_max_tokens_is_checked_after_the_stops():
    assert run_one([1], [2, 3], [[2, 3]], max_tokens=2)[1] == "stop_sequence"


def test_matching_state_does_not_leak_into_the_next_request_in_the_slot():
    # r0 ends on max_tokens after emitting 7; r1 takes slot 0 and emits 8 first.
    model = ScriptModel({(1,): [7], (2,): [8, 8]})
    engine = make_engine(model, batch_size=1, stop_token=None)
    out = []
    engine.submit_request([1], 1, out.append, [[7, 8]])
    engine.submit_request([2], 2, out.append, [[7, 8]])
    engine.run()
    assert out == [[1, 7], [2, 8, 8]]


def test_identical_stop_lists_share_one_automaton():
    from engine.core.stops import stop_matcher

    assert stop_matcher(((1, 2),)) is stop_matcher(((1, 2),))

"""Prompt tokens from hash ids (engine/lab/trace_tokens.py): equal leading ids give exactly equal leading tokens,
a last partial block is its own, no prompt holds the stop token; exact values and, over generated tables
(hypothesis), the shared prefix of any two requests' prompts."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.lab.trace_file import read_trace
from engine.lab.trace_table import trace_table
from engine.lab.trace_tokens import (
    PRIVATE_BLOCK,
    STOP_TOKEN,
    block_tokens,
    prompt_blocks,
    prompt_tokens,
    request_blocks,
)
from tests.test_trace_file import MOONCAKE_SAMPLE


def shared_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


def test_two_requests_sharing_their_first_12_hash_ids_share_exactly_their_first_6144_tokens():
    """Mooncake's README sample: 6,955 and 6,472 tokens, the same first 12 ids, then 2353 against 2366."""
    table = read_trace(MOONCAKE_SAMPLE.encode())
    first, second = prompt_tokens(table, 0), prompt_tokens(table, 1)
    assert (len(first), len(second)) == (6955, 6472)
    assert shared_prefix(first, second) == 12 * 512
    assert not np.array_equal(first[6144:6160], second[6144:6160])


def test_a_last_partial_block_is_the_requests_own_even_when_its_hash_id_recurs():
    """Two 600-token requests with the same ids [5, 9]: block 5 (512 tokens) is shared, the last 88 are each
    request's own, private ids PRIVATE_BLOCK + i * 512 + 1."""
    table = trace_table("same", [0, 1], [600, 600], [1, 1], [0, 2, 4], [5, 9, 5, 9])
    assert request_blocks(table, 0) == [(5, 512), (PRIVATE_BLOCK + 1, 88)]
    assert request_blocks(table, 1) == [(5, 512), (PRIVATE_BLOCK + 512 + 1, 88)]
    assert shared_prefix(prompt_tokens(table, 0), prompt_tokens(table, 1)) == 512


def test_a_whole_last_block_keeps_its_hash_id_and_rows_without_ids_are_private():
    table = trace_table("mixed", [0, 0, 5], [1024, 3, 3], [1, 1, 1], [0, 2, 2, 2], [7, 8])
    offsets, ids, lengths = prompt_blocks(table)
    assert offsets.tolist() == [0, 2, 3, 4]
    assert ids.tolist() == [7, 8, PRIVATE_BLOCK + 512, PRIVATE_BLOCK + 1024]
    assert lengths.tolist() == [512, 512, 3, 3]
    assert not np.array_equal(prompt_tokens(table, 1), prompt_tokens(table, 2))


def test_a_blocks_tokens_are_fixed_by_its_id_and_never_the_stop_token():
    """Pinned: the same on every machine and run (a pure function of the id)."""
    assert block_tokens(0, 5).tolist() == [737, 546, 383, 505, 608]
    assert block_tokens(0).tolist()[:5] == [737, 546, 383, 505, 608]
    assert block_tokens(2366, 512, vocab_size=2).tolist() == [1] * 512
    tokens = block_tokens(PRIVATE_BLOCK + 12_345, 512, vocab_size=50)
    assert STOP_TOKEN not in tokens and tokens.min() >= 1 and tokens.max() <= 49
    assert block_tokens(46, 512).tolist() == prompt_tokens(read_trace(MOONCAKE_SAMPLE.encode()), 1)[:512].tolist()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: block_tokens(-1), "block_id: must be an integer from 0 to 2**48 - 1, got -1"),
        (lambda: block_tokens(3, 513), "length: must be from 1 to 512, got 513"),
        (lambda: block_tokens(3, 4, vocab_size=1), "vocab_size: must be an integer >= 2, got 1"),
    ],
)
def test_out_of_range_arguments_are_refused(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message


@st.composite
def prefix_sharing_tables(draw):
    """Requests whose ids are drawn from a few, so that prefixes recur."""
    n = draw(st.integers(2, 6))
    inputs = draw(st.lists(st.integers(1, 2600), min_size=n, max_size=n))
    offsets, ids = [0], []
    for length in inputs:
        ids += draw(st.lists(st.integers(0, 3), min_size=-(-length // 512), max_size=-(-length // 512)))
        offsets.append(len(ids))
    return trace_table("generated", [0] * n, inputs, [1] * n, offsets, ids)


@settings(max_examples=60, deadline=None)
@given(prefix_sharing_tables(), st.data())
def test_two_prompts_share_exactly_the_full_blocks_their_leading_ids_share(table, data):
    i, j = data.draw(st.integers(0, len(table) - 1)), data.draw(st.integers(0, len(table) - 1))
    if i == j:
        return
    a, b = prompt_tokens(table, i), prompt_tokens(table, j)
    full = [
        ids[: length // 512].tolist() for ids, length in ((table.hash_ids(k), table.input_length[k]) for k in (i, j))
    ]
    k = next((m for m, (x, y) in enumerate(zip(*full)) if x != y), min(map(len, full)))
    common = shared_prefix(a, b)
    assert common >= 512 * k
    if min(len(a), len(b)) >= 512 * k + 16:  # both continue past the shared blocks: they differ within 16 tokens
        assert common < 512 * k + 16
    assert np.concatenate([block_tokens(b_id, n) for b_id, n in request_blocks(table, i)]).tolist() == a.tolist()

"""The trace's own prefix hit rate (engine/lab/trace_hits.py): exact values on a hand-made 5-request trace,
derived step by step, and the two Mooncake traces' hit tokens at 3M, 50M and unbounded capacity."""

import math

import pytest

from engine.lab.trace_file import read_builtin_trace
from engine.lab.trace_hits import trace_hit_rate, trace_hit_tokens, trace_max_hit_rate
from engine.lab.trace_table import trace_table

# (hash ids, input_length): 1024 + 1300 + 1024 + 1024 + 1300 = 5,672 prompt tokens
HAND = [([1, 2], 1024), ([1, 2, 3], 1300), ([1, 4], 1024), ([5, 2], 1024), ([1, 2, 3], 1300)]


def hand_trace():
    ids = [i for row, _ in HAND for i in row]
    offsets = [0]
    for row, _ in HAND:
        offsets.append(offsets[-1] + len(row))
    return trace_table("hand", range(5), [length for _, length in HAND], [1] * 5, offsets, ids)


@pytest.mark.parametrize(
    "capacity, hit_tokens",
    [
        # unbounded: R2 hits 1, 2 (its partial 3 is its own), R3 hits 1 (then 4 misses), R4 misses 5 first
        # (2 is cached but not leading), R5 hits 1, 2: 1024 + 512 + 1024
        (math.inf, 2560),
        # 4 blocks: after R4 the cache holds [1, 4, 5, 2] (oldest first), nothing left: as unbounded
        (2048, 2560),
        # 2 blocks: R1 leaves [1, 2]; R2 hits both; R3 hits 1, leaves [1, 4]; R4 leaves [5, 2]; R5 misses 1
        (1024, 1536),
        # 3 blocks: R4 leaves [4, 5, 2] (1 is the oldest); R5 misses 1 again
        (1536, 1536),
        # 1 block (and 1023 tokens rounds down to it): each request leaves its last full block, never a first
        (1023, 0),
        (512, 0),
        (0, 0),
    ],
)
def test_hand_made_trace_hits_by_capacity(capacity, hit_tokens):
    table = hand_trace()
    assert trace_hit_tokens(table, capacity) == hit_tokens
    assert trace_hit_rate(table, capacity) == hit_tokens / 5672


def test_the_maximum_is_the_unbounded_cache_and_rows_without_ids_hit_nothing():
    assert trace_max_hit_rate(hand_trace()) == 2560 / 5672
    assert trace_max_hit_rate(trace_table("azure", [0, 1], [1024, 1024], [1, 1])) == 0.0
    for bad in (-1, float("nan")):
        with pytest.raises(ValueError, match="capacity_tokens: must be >= 0"):
            trace_hit_rate(hand_trace(), bad)


@pytest.mark.parametrize(
    "name, blocks_3m, blocks_50m, blocks_max",
    [("mooncake-conversation", 40_557, 104_926, 105_592), ("mooncake-synthetic", 38_303, 77_740, 77_740)],
)
def test_the_mooncake_traces_hit_blocks(name, blocks_3m, blocks_50m, blocks_max):
    """Figure 9's claim holds: 3M tokens reach under half of the maximum (38 % and 49 %), 50M nearly all
    (99.4 % and 100 %). Maxima: 37.3 % and 65.0 % of prompt tokens (Table 2: 40 % and 66 %)."""
    table = read_builtin_trace(name)
    hits = [trace_hit_tokens(table, capacity) // 512 for capacity in (3e6, 5e7, math.inf)]
    assert hits == [blocks_3m, blocks_50m, blocks_max]
    assert hits[0] < hits[2] / 2 and hits[1] > 0.99 * hits[2]

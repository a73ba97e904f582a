"""The prefix-cache hit rate a trace allows, from its hash ids alone: Mooncake's Figure 9 (FAST 2025).

An LRU cache of 512-token blocks, keyed by hash id, holding `capacity_tokens // 512` blocks. Requests are
taken one at a time in arrival order, with no batching and no time: each looks up its full blocks from the
first, and its hit is the leading run of them found cached (a prefix cache stops at the first miss); then all
its full blocks are put in the cache as the most recently used, in prompt order, the least recently used
leaving when it is full. The hit rate is tokens hit / prompt tokens, over the whole trace.

A last partial block never hits: it is the request's own (engine/lab/trace_tokens.py says why), and a
request without hash ids (Azure's traces) hits nothing. A request whose every block is cached hits all its
prompt here, where an engine still computes at least one token. And an engine's running rows hold blocks its
cache cannot give away, which this function, with no running rows, never sees.
"""

from __future__ import annotations

import math
from collections import OrderedDict

from .trace_table import BLOCK_TOKENS, TraceTable


def trace_hit_rate(table: TraceTable, capacity_tokens: float) -> float:
    """Tokens found in an LRU cache of `capacity_tokens` (math.inf: unbounded) / prompt tokens."""
    return trace_hit_tokens(table, capacity_tokens) / table.prompt_tokens


def trace_hit_tokens(table: TraceTable, capacity_tokens: float) -> int:
    """The prompt tokens found in an LRU cache of `capacity_tokens` (math.inf: unbounded), whole blocks."""
    if not capacity_tokens >= 0:
        raise ValueError(f"capacity_tokens: must be >= 0, got {capacity_tokens!r}")
    capacity = math.inf if capacity_tokens == math.inf else int(capacity_tokens) // BLOCK_TOKENS
    cache: OrderedDict[int, None] = OrderedDict()
    hit_blocks = 0
    for i, length in enumerate(table.input_length.tolist()):
        blocks = table.hash_ids(i)[: length // BLOCK_TOKENS].tolist()
        for block in blocks:
            if block not in cache:
                break
            hit_blocks += 1
        for block in blocks:
            cache[block] = None
            cache.move_to_end(block)
        while len(cache) > capacity:
            cache.popitem(last=False)
    return hit_blocks * BLOCK_TOKENS


def trace_max_hit_rate(table: TraceTable) -> float:
    """The hit rate of an unbounded cache: every full block seen before hits."""
    return trace_hit_rate(table, math.inf)

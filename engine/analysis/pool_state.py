"""A prefix-cached KV pool at any step, from the event log alone (`engine/core/log/pool_replay.py`):
each block's reference count, the cached blocks and the eviction queue's order."""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from ..core.log.event_log import EventLog
from ..core.log.events import EventKind
from ..core.log.pool_replay import REFERENCE_KINDS, PoolReplay


def pool_after(log: EventLog, step: int) -> PoolReplay:
    """The pool once every event of step `step` (and before) has happened. O(events so far)."""
    if not log.config.prefix_caching:
        raise ValueError("the log's run has no prefix cache (prefix_caching is off)")
    pool = PoolReplay(log.config.kv_blocks, log.config.block_size)
    for i in range(bisect_right(log.step, step)):
        pool.apply(log, i)
    return pool


def pool_use(log: EventLog, busy: list[int]) -> tuple[list[int], list[int]]:
    """For each busy step (its number, in order), as its model call saw the pool (every event before the
    call; all of a step without one): the blocks in use, and the block references beyond the first
    (a block that 3 rows share counts 2), so that per-row token counts can drop what they share.
    Only the events that move references are replayed (a trace's log is mostly emits)."""
    pool = PoolReplay(log.config.kv_blocks, log.config.block_size, identities=False)
    steps, kinds = np.frombuffer(log.step, np.int32), np.frombuffer(log.kind, np.int8)
    busy_steps = np.asarray(busy, np.int64)
    calls = np.flatnonzero(kinds == EventKind.MODEL_CALL)
    at = np.minimum(np.searchsorted(steps[calls], busy_steps), max(len(calls) - 1, 0))
    has_call = (steps[calls][at] == busy_steps) if len(calls) else np.zeros(len(busy_steps), bool)
    cuts = np.where(has_call, calls[at] if len(calls) else 0, np.searchsorted(steps, busy_steps, side="right"))
    moves = np.flatnonzero(np.isin(kinds, [kind.value for kind in REFERENCE_KINDS])).tolist()
    in_use, shared, j = [], [], 0
    for cut in cuts.tolist():
        while j < len(moves) and moves[j] < cut:
            pool.apply(log, moves[j])
            j += 1
        in_use.append(pool.num_blocks - pool.num_free)
        shared.append(pool.shared)
    return in_use, shared

"""A prefix-cached KV pool at any step, from the event log alone (`engine/core/log/pool_replay.py`):
each block's reference count, the cached blocks and the eviction queue's order."""

from __future__ import annotations

from bisect import bisect_right

from ..core.log.event_log import EventLog
from ..core.log.pool_replay import PoolReplay


def pool_after(log: EventLog, step: int) -> PoolReplay:
    """The pool once every event of step `step` (and before) has happened. O(events so far)."""
    if not log.config.prefix_caching:
        raise ValueError("pool_after: the log's run has no prefix cache (prefix_caching is off)")
    pool = PoolReplay(log.config.kv_blocks, log.config.block_size)
    for i in range(bisect_right(log.step, step)):
        pool.apply(log, i)
    return pool

"""A prefix-cached KV pool at any step, from the event log alone (`engine/core/log/pool_replay.py`):
each block's reference count, the cached blocks and the eviction queue's order."""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from ..core.log.event_log import EventLog
from ..core.log.events import EventKind
from ..core.log.pool_replay import PoolReplay
from .kv_replay import model_calls


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
    (a block that 3 rows share counts 2), so that per-row token counts can drop what they share."""
    pool = pool_after(log, -1)
    steps, kinds = np.frombuffer(log.step, np.int32), np.frombuffer(log.kind, np.int8)
    calls = model_calls(steps, kinds)
    in_use, shared, index = [], [], 0
    for step in busy:
        cut = calls.get(step, log.step_range(step).stop)
        while index < cut:
            pool.apply(log, index)
            index += 1
        in_use.append(pool.num_blocks - pool.num_free)
        shared.append(pool.shared)
    return in_use, shared


def cache_hits(log: EventLog) -> tuple[int, int]:
    """(tokens found in the prefix cache at admissions, tokens looked up there): each admission looks up
    the row's tokens so far (a preempted row's generated ones too). (0, 0) without prefix caching."""
    lookups = admission_lookups(log)
    return sum(hits for *_, hits in lookups) * log.config.block_size, sum(looked_up for _, _, looked_up, _ in lookups)


def admission_lookups(log: EventLog) -> list[list[int]]:
    """[request index, step, tokens looked up, blocks hit] per admission, in the log's order: each looks up the
    row's tokens so far (a preempted row's generated ones too). [] without prefix caching."""
    if not log.config.prefix_caching:
        return []
    emitted: dict[int, int] = {}
    out: list[list[int]] = []
    last: dict[int, list[int]] = {}  # request -> its latest admission's record
    for kind, request, step in zip(log.kind, log.request, log.step):
        if kind == EventKind.EMIT:
            emitted[request] = emitted.get(request, 0) + 1
        elif kind == EventKind.ADMIT:
            last[request] = [request, step, len(log.requests[request].prompt) + emitted.get(request, 0), 0]
            out.append(last[request])
        elif kind == EventKind.PREFIX_HIT and request in last:
            last[request][3] += 1
    return out

"""The KV cache's part of a run's frames: the pool's changes, sent as events, and each prefill.

The stage rebuilds the pool at any step from these (cblab/ui/stage/stage_component/kv.js), so, like the
rest of the frames, they grow with the events, never with steps x blocks:

- `kv` (only for a run with a KV pool): `blocks`, `block_size`, `policy`, `used` (1 + the highest block id
  the run ever takes: the stage may draw only those), and `ops`: per step
  at which the pool changes, `[step, op, op, ...]`, applied in order: the stage draws the pool
  as each step leaves it, after the step's evictions (the blocks a row ending at the step gives
  back are free, and cached if full, at that step, as its narration says; the last step shows
  the cache's final state). An op is
    - `r` (>= 0): request r takes the lowest free block;
    - `[r, n]`: request r takes the lowest free block, n times;
    - `[r, n, b]`: request r takes blocks b .. b+n-1 (a log whose ids are not the lowest free);
    - `~r` (< 0): request r gives all its blocks back.
- with prefix caching (`prefix_caching: true`; engine/analysis/prefix_frames.py builds it), a block
  may be held by several rows and the eviction queue does not hand out the lowest id, so every
  id is sent. A block's state is its references (the rows whose tables hold it) and whether it
  is cached (full and registered under its identity). An op is
    - `[r, n, b]`: request r takes new blocks b .. b+n-1, one reference each (`kv_alloc`); with
      n < 0, the -n blocks b, b-1 .. b+n+1 (a row's blocks join the queue last first);
    - `["h", r, b, ...]`: request r gains a reference to each cached block b, in table order
      (`prefix_hit`, at its admission);
    - `["c", b, ...]`: blocks b, just filled by their row's computed tokens, are cached (the
      log has no event for this: the log's own pool replay derives it from `prefill` and `emit`);
    - `~r` (< 0): request r drops its reference to every block of its table; a block left with
      none is free, and, if cached, "cached, free": a later row may still hit it (`kv_free`);
    - `["e", b, ...]`: blocks b lose their cached identity, taken for a new use (`kv_evict`; one
      op a step, where its first eviction is).
  `most_refs`: the most rows that ever hold one block at once (1: none is ever shared). `admissions`:
  `[request, step, tokens looked up, blocks hit]` per admission (the summary's `prefix_hit_rate` is
  the hit tokens over the looked-up ones, so far).
- `prefills`: `[request, step, tokens, computed]` per `prefill` event (tokens computed at that
  step, and the request's tokens in the cache after it), with a pool or a token budget.

NOTE: the engine's free list hands out the lowest free id (engine/core/block_manager.py), so
an id need not be sent: it follows from the ops before it. The anyscale-cap1536 run's 46,685
allocations take ~0.09 MB this way, against ~0.9 MB as [request, step, block] each.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..core.log.event_log import EventLog
from ..core.log.events import EventKind
from .prefix_frames import admissions, prefix_ops


def kv_section(log: EventLog, steps: np.ndarray, kinds: np.ndarray, requests: np.ndarray) -> dict | None:
    """The pool's ops (see the module docstring), or None for a run without a KV pool."""
    blocks = log.config.kv_blocks
    if blocks is None:
        return None
    taken = np.frombuffer(log.value, np.int64)[(kinds == EventKind.KV_ALLOC) & (requests >= 0)]
    used = int(np.clip(taken, -1, blocks - 1).max(initial=-1)) + 1
    if log.config.prefix_caching:
        ops, most_refs = prefix_ops(log, steps, kinds, requests)
        return {
            "blocks": blocks,
            "block_size": log.config.block_size,
            "policy": log.config.kv_policy,
            "used": used,
            "prefix_caching": True,
            "ops": ops,
            "most_refs": most_refs,
            "admissions": admissions(log),
        }
    pool, ops = LowestFree(blocks), []
    changes = (kinds == EventKind.KV_ALLOC) | (kinds == EventKind.KV_FREE)
    chosen = np.flatnonzero(changes & (requests >= 0) & (requests < len(log.requests)))
    frees = (kinds[chosen] == EventKind.KV_FREE).tolist()
    for i, step, request, free in zip(chosen.tolist(), steps[chosen].tolist(), requests[chosen].tolist(), frees):
        step = max(step, ops[-1][0]) if ops else step  # (a hand-made log's steps may go back)
        if not ops or ops[-1][0] != step:
            ops.append([step])
        if free:
            pool.free(request)
            ops[-1].append(~request)
        elif 0 <= log.value[i] < blocks:
            block = log.value[i]
            _add_take(ops[-1], request, block, block == pool.lowest())
            pool.take(request, block)
    return {
        "blocks": blocks,
        "block_size": log.config.block_size,
        "policy": log.config.kv_policy,
        "used": used,
        "ops": [entry for entry in ops if len(entry) > 1],
    }


def prefill_records(log: EventLog, steps: np.ndarray, kinds: np.ndarray, requests: np.ndarray) -> list[list[int]]:
    """[request, step, tokens computed at the step, tokens in the cache after it] per prefill event."""
    return [
        [int(requests[i]), int(steps[i]), log.value[i], log.detail[i]]
        for i in np.flatnonzero(kinds == EventKind.PREFILL).tolist()
        if 0 <= requests[i] < len(log.requests)
    ]


def _add_take(entry: list, request: int, block: int, lowest: bool) -> None:
    """Append "request takes block" to a step's ops, joining it to the op before when it can."""
    last = entry[-1] if len(entry) > 1 else None
    if lowest and last == request:
        entry[-1] = [request, 2]
    elif lowest and isinstance(last, list) and len(last) == 2 and last[0] == request:
        last[1] += 1
    elif lowest:
        entry.append(request)
    elif isinstance(last, list) and len(last) == 3 and last[0] == request and last[2] + last[1] == block:
        last[1] += 1
    else:
        entry.append([request, 1, block])


class LowestFree:
    """The pool as the ops rebuild it: who holds each block, and the lowest free one.

    A block taken while another request holds it (only a hand-made log does that) changes
    hands; its first holder's later free leaves it alone. kv.js follows the same rules.
    """

    def __init__(self, blocks: int):
        self.owner = [-1] * blocks
        self.tables: dict[int, list[int]] = {}
        self._free = list(range(blocks))  # a heap; may also hold ids taken since (skipped)

    def lowest(self) -> int | None:
        while self._free and self.owner[self._free[0]] != -1:
            heapq.heappop(self._free)
        return self._free[0] if self._free else None

    def take(self, request: int, block: int) -> None:
        self.owner[block] = request
        self.tables.setdefault(request, []).append(block)

    def free(self, request: int) -> None:
        for block in self.tables.pop(request, []):
            if self.owner[block] == request:
                self.owner[block] = -1
                heapq.heappush(self._free, block)

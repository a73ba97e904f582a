"""The KV pool's ops for a run with prefix caching (the vocabulary is in kv_frames.py's docstring).

The log's own replay of the cache (`engine/core/log/pool_replay.py`, `PoolReplay`) is run over
the events, and each change it makes is written as an op: a `kv_alloc` takes a new block, a
`prefix_hit` adds a reference, a `kv_free` drops the row's references, a `kv_evict` drops a
block's cached identity, and a `prefill` or an `emit` that fills blocks registers them (the
log has no event for that: the blocks it registers are the row's table entries its known
identities grew by).
"""

from __future__ import annotations

import numpy as np

from ..core.log.event_log import EventLog
from ..core.log.events import EventKind
from ..core.log.pool_replay import POOL_KINDS, PoolReplay
from .prefix_hits import admission_lookups

HIT, CACHED, EVICTED = "h", "c", "e"


def prefix_ops(log: EventLog, steps: np.ndarray, kinds: np.ndarray, requests: np.ndarray) -> tuple[list[list], int]:
    """Per step at which the pool changes, `[step, op, op, ...]`: every event of a step is shown at that step,
    so the pool is drawn as the step leaves it (after its evictions, as the narration tells it); and the most
    rows that ever hold one block at once (1: no block is ever shared)."""
    pool = PoolReplay(log.config.kv_blocks, log.config.block_size)
    ops: list[list] = []
    most = 1 if log.config.kv_blocks else 0
    evicted: list = []  # the current step's "e" op
    relevant = np.flatnonzero(
        np.isin(kinds, np.array(sorted(POOL_KINDS))) & (requests >= 0) & (requests < len(log.requests))
    )
    filling = (EventKind.PREFILL.value, EventKind.EMIT.value)
    columns = (c[relevant].tolist() for c in (kinds, requests, steps))
    for i, kind, request, step in zip(relevant.tolist(), *columns):
        before = len(pool.known.get(request, ()))
        if pool.apply(log, i) is not None:
            continue  # (a log the reader refused would not get here; a hand-made one may)
        entry = _entry(ops, step)
        if kind in filling:
            new = pool.tables.get(request, [])[before : len(pool.known.get(request, ()))]
            if new:
                _add(entry, CACHED, None, new)
        elif kind == EventKind.KV_FREE:
            entry.append(~request)
        elif kind == EventKind.KV_ALLOC:
            _add_new(entry, request, log.value[i])
        elif kind == EventKind.PREFIX_HIT:
            _add(entry, HIT, request, [log.value[i]])
            most = max(most, pool.references(log.value[i]))
        elif kind == EventKind.KV_EVICT:  # (one op a step, where its first eviction is)
            if evicted and evicted[0] is entry:
                evicted[1].append(log.value[i])
            else:
                evicted[:] = [entry, [EVICTED, log.value[i]]]
                entry.append(evicted[1])
    return [entry for entry in ops if len(entry) > 1], most


def admissions(log: EventLog) -> list[list[int]]:
    """[request, step, tokens looked up in the cache, blocks hit] per admission (prefix_hits.admission_lookups)."""
    return [record for record in admission_lookups(log) if 0 <= record[0] < len(log.requests)]


def _entry(ops: list[list], step: int) -> list:
    step = max(step, ops[-1][0]) if ops else step  # (a hand-made log's steps may go back)
    if not ops or ops[-1][0] != step:
        ops.append([step])
    return ops[-1]


def _add(entry: list, tag: str, request: int | None, blocks: list[int]) -> None:
    """Append a tagged op (`["h", r, b, ...]`, `["c", b, ...]`, `["e", b, ...]`), joining it to the one before."""
    head = [tag] if request is None else [tag, request]
    last = entry[-1] if len(entry) > 1 else None
    if isinstance(last, list) and last[: len(head)] == head:
        last.extend(blocks)
    else:
        entry.append([*head, *blocks])


def _add_new(entry: list, request: int, block: int) -> None:
    """Append "request takes new block `block`", joining a run of ids: `[r, n, b]` is blocks b .. b+n-1, and
    `[r, -n, b]` blocks b, b-1 .. b-n+1 (a row's blocks go back to the queue last first, so they come out so)."""
    last = entry[-1] if len(entry) > 1 else None
    if not (isinstance(last, list) and len(last) == 3 and last[0] == request):
        entry.append([request, 1, block])
    elif last[1] > 0 and last[2] + last[1] == block:
        last[1] += 1
    elif (last[1] < 0 or last[1] == 1) and last[2] - abs(last[1]) == block:
        last[1] = -abs(last[1]) - 1
    else:
        entry.append([request, 1, block])

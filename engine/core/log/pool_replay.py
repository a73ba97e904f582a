"""A prefix-cached KV pool rebuilt from the event log alone, one event at a time.

It follows `engine/core/prefix_cache.py`'s rules from the events that record them: each
block's reference count, which blocks are cached (every block filled by its row's computed
tokens, from `prefill` and `emit` events, until a `kv_evict`), and the eviction queue's
order. The JSONL reader feeds it every event of a log with `prefix_caching`, so a file whose
blocks could not have been taken or shared that way is refused (`check` returns why); the
analysis reads the state at any step from it (`engine/analysis/pool_state.py`).
"""

from __future__ import annotations

from collections import OrderedDict

from .events import EventKind


class PoolReplay:
    def __init__(self, num_blocks: int, block_size: int):
        self.block_size = block_size
        self.queue: OrderedDict[int, None] = OrderedDict.fromkeys(range(num_blocks))  # free blocks, head first
        self.refs = [0] * num_blocks
        self.cached: set[int] = set()
        self.tables: dict[int, list[int]] = {}  # request index -> its block table
        self.registered: dict[int, int] = {}  # request index -> its leading blocks known to be cached

    def check(self, kind: EventKind, request: int, value: int, filled: int = 0) -> str | None:
        """Apply one event; the reason it could not have happened, or None. `value` is the event's block
        (kv_alloc, prefix_hit, kv_evict); `filled` the row's tokens in the cache after a `prefill` or an
        `emit` (its computed tokens; prompt + position for an emit)."""
        if kind is EventKind.KV_EVICT:
            if value not in self.cached or self._head() != value:
                return f"block {value} is not the eviction queue's head with cached tokens"
            self.cached.discard(value)
        elif kind is EventKind.KV_ALLOC:
            if value in self.cached:
                return f"block {value} still holds cached tokens: its kv_evict comes first"
            if self._head() != value:
                return f"a new block comes from the eviction queue's head, block {self._head()}"
            del self.queue[value]
            self.refs[value] = 1
            self.tables.setdefault(request, []).append(value)
        elif kind is EventKind.PREFIX_HIT:
            if value not in self.cached:
                return f"block {value} holds no cached tokens"
            if not self.refs[value]:
                del self.queue[value]
            self.refs[value] += 1
            self.tables.setdefault(request, []).append(value)
            self.registered[request] = self.registered.get(request, 0) + 1
        elif kind is EventKind.KV_FREE:
            for block in reversed(self.tables.pop(request, [])):
                self.refs[block] -= 1
                if not self.refs[block]:
                    self.queue[block] = None
            self.registered.pop(request, None)
        elif kind in (EventKind.PREFILL, EventKind.EMIT):
            table, done = self.tables.get(request, []), self.registered.get(request, 0)
            full = min(filled // self.block_size, len(table))
            self.cached.update(table[done:full])
            self.registered[request] = max(done, full)
        return None

    def _head(self) -> int | None:
        return next(iter(self.queue), None)

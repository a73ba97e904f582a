"""The KV cache at any step, from a log's `kv_alloc` (and `prefix_hit`), `kv_free` and `prefill` events alone:
each request's block table, the pool's free list and the tokens each row has in the cache.

"At step k" means as that step's model call saw it, like the slot table: blocks taken
before the call (admissions, a row's next block) are held; blocks given back before it
(a preemption, a cancellation) are not; blocks of rows evicted after it are still held.
Memory grows with the events: each request keeps the indices of its own events.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

from ..core.log.event_log import EventLog
from ..core.log.events import EventKind


def grouped(mask: np.ndarray, requests: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The event indices where `mask` holds, grouped by request (in log order within each), and
    where each request's group starts: request r's are `indices[bounds[r]:bounds[r + 1]]`."""
    chosen = np.flatnonzero(mask)
    indices = chosen[np.argsort(requests[chosen], kind="stable")]
    return indices, np.searchsorted(requests[indices], np.arange(count + 1))


def model_calls(steps: np.ndarray, kinds: np.ndarray) -> dict[int, int]:
    """Step -> the index of its `model_call` event (the events before it are what that call saw)."""
    calls = np.flatnonzero(kinds == EventKind.MODEL_CALL)
    return dict(zip(steps[calls].tolist(), calls.tolist()))


class KVReplay:
    def __init__(self, log: EventLog, steps: np.ndarray, kinds: np.ndarray, requests: np.ndarray):
        self.log, self._steps = log, steps
        count = len(log.requests)
        taken = (kinds == EventKind.KV_ALLOC) | (kinds == EventKind.PREFIX_HIT)  # (a hit block joins the table too)
        self._allocs, self._alloc_bounds = grouped(taken, requests, count)
        self._frees, self._free_bounds = grouped(kinds == EventKind.KV_FREE, requests, count)
        self._prefills, self._prefill_bounds = grouped(kinds == EventKind.PREFILL, requests, count)
        self._emits, self._emit_bounds = grouped(kinds == EventKind.EMIT, requests, count)
        self._call_index = model_calls(steps, kinds)

    def cut(self, step: int) -> int:
        """The first event not yet seen by step `step`'s model call (its index, or the step's end)."""
        return self._call_index.get(step, self.log.step_range(step).stop)

    def blocks(self, request: int, step: int) -> tuple[int, ...]:
        """Request `request`'s block table at `step` (logical order)."""
        held = self._held(request, step)
        return tuple(self.log.value[i] for i in held)

    def count(self, request: int, step: int) -> int:
        """How many blocks request `request` holds at `step`: len(blocks(request, step))."""
        return len(self._held(request, step))

    def _held(self, request: int, step: int) -> np.ndarray:
        """The `kv_alloc` (and `prefix_hit`) event indices of the request's blocks at `step`."""
        cut = self.cut(step)
        frees = self._frees[self._free_bounds[request] : self._free_bounds[request + 1]]
        last_free = frees[bisect_left(frees, cut) - 1] if bisect_left(frees, cut) else -1
        allocs = self._allocs[self._alloc_bounds[request] : self._alloc_bounds[request + 1]]
        return allocs[bisect_right(allocs, last_free) : bisect_left(allocs, cut)]

    def free_blocks(self, held: list[tuple[int, ...]]) -> tuple[int, ...]:
        """The pool's free list, lowest id first, given every row's block table."""
        taken = {block for table in held for block in table}
        return tuple(block for block in range(self.log.config.kv_blocks or 0) if block not in taken)

    def prefill(self, request: int, step: int) -> tuple[int, int] | None:
        """(tokens prefilled at `step`, tokens in the cache after it) if the request prefilled then."""
        last = self._last_prefill(request, step)
        if last is None or self._steps[last] != step:
            return None
        return self.log.value[last], self.log.detail[last]

    def computed(self, request: int, step: int) -> int | None:
        """Tokens of the request in the cache after `step`: its last prefill's total, plus one a
        decoding step since (each step writes the token sampled the step before)."""
        last = self._last_prefill(request, step)
        if last is None:
            return None
        emits = self._emits[self._emit_bounds[request] : self._emit_bounds[request + 1]]
        decoded = np.searchsorted(self._steps[emits], step, side="right") - np.searchsorted(
            self._steps[emits], self._steps[last], side="right"
        )
        return self.log.detail[last] + int(decoded)

    def _last_prefill(self, request: int, step: int) -> int | None:
        prefills = self._prefills[self._prefill_bounds[request] : self._prefill_bounds[request + 1]]
        k = np.searchsorted(self._steps[prefills], step, side="right")
        return int(prefills[k - 1]) if k else None

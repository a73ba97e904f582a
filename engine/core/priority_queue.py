"""The waiting queue once requests carry priorities: a heap on (priority, place in line).

Priorities follow vLLM's priority scheduling (`--scheduling-policy priority`; `SchedulerConfig.policy`
in vllm/config/scheduler.py and `PriorityRequestQueue` in vllm/v1/core/sched/request_queue.py):
the lower value is admitted first, and requests of equal priority in arrival order. A priority
only orders admission: a running row is never preempted for a better one waiting.

`PriorityQueue` has the deque methods the schedulers use (`append`, `appendleft`, `popleft`,
`[0]`, iteration in queue order, `len`), so `Scheduler.waiting` swaps its FIFO deque for one
the first time a request with a priority other than 0 arrives (`Scheduler.enqueue`). With every
priority 0 the queue stays the deque it always was, and every log is byte-identical.

Within one priority the place in line keeps the deque's order exactly: `append` goes behind
everyone, `appendleft` (a preempted row, `memory_scheduler.py`) ahead of everyone of its own
priority, never ahead of a better one. O(log n) a push or a pop.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from .request import Sequence


class PriorityQueue:
    __slots__ = ("_heap", "_front", "_back")

    def __init__(self, rows: Iterable[Sequence] = ()):
        self._heap = [(seq.priority, place, seq) for place, seq in enumerate(rows)]  # (priority, place, row)
        heapq.heapify(self._heap)
        self._front, self._back = 0, len(self._heap)  # the next places at the front and at the back

    def append(self, seq: Sequence) -> None:
        heapq.heappush(self._heap, (seq.priority, self._back, seq))
        self._back += 1

    def appendleft(self, seq: Sequence) -> None:
        self._front -= 1
        heapq.heappush(self._heap, (seq.priority, self._front, seq))

    def popleft(self) -> Sequence:
        return heapq.heappop(self._heap)[2]

    def __getitem__(self, index: int) -> Sequence:
        """Only the head, `[0]` (a heap has no cheap i-th element)."""
        if index != 0 or not self._heap:
            raise IndexError("a PriorityQueue gives only its head, [0], and only when not empty")
        return self._heap[0][2]

    def __iter__(self):
        """Every row, in queue order (O(n log n): for display, not for the step loop)."""
        return (seq for _, _, seq in sorted(self._heap, key=lambda entry: entry[:2]))

    def __len__(self) -> int:
        return len(self._heap)

"""Slots, the waiting queue and the admission policy.

Requests not yet arrived wait in `pending` (a heap on arrival step, then submission
order); arrived ones in the FIFO `waiting` deque. A request keeps its slot for its whole
life; freed slots are refilled lowest id first (a heap of free ids).
"""

from __future__ import annotations

import heapq
from collections import deque

from .request import Sequence


class Scheduler:
    def __init__(self, batch_size: int, static: bool):
        self.static = static  # static batching: admit only into an empty batch
        self.slots: list[Sequence | None] = [None] * batch_size
        self.free: list[int] = list(range(batch_size))  # heap of free slot ids
        self.waiting: deque[Sequence] = deque()
        self.pending: list[tuple[int, int, Sequence]] = []  # (arrival_step, order, seq)
        self.num_running = 0
        self.active_mask = 0  # bit i set: slot i is occupied
        self.version = 0  # changes whenever a slot is taken or freed

    def add(self, seq: Sequence) -> None:
        heapq.heappush(self.pending, (seq.arrival_step, seq.order, seq))

    def next_arrival(self) -> int | None:
        return self.pending[0][0] if self.pending else None

    def due(self, step: int) -> list[Sequence]:
        """Pop the requests whose arrival step has come, in arrival then submission order."""
        arrived = []
        while self.pending and self.pending[0][0] <= step:
            arrived.append(heapq.heappop(self.pending)[2])
        return arrived

    def admit(self) -> list[Sequence]:
        """Fill free slots from the head of the queue (static: only an empty batch)."""
        if self.static and self.num_running:
            return []
        admitted = []
        while self.waiting and self.free:
            seq = self.waiting.popleft()
            seq.slot = heapq.heappop(self.free)
            self.slots[seq.slot] = seq
            self.active_mask |= 1 << seq.slot
            admitted.append(seq)
        self.num_running += len(admitted)
        self.version += bool(admitted)
        return admitted

    def release(self, seq: Sequence) -> None:
        self.slots[seq.slot] = None
        self.active_mask &= ~(1 << seq.slot)
        self.version += 1
        heapq.heappush(self.free, seq.slot)
        self.num_running -= 1

    def withdraw(self, seq: Sequence) -> None:
        """Take a request that holds no slot out of the queue (cancellation)."""
        if seq in self.waiting:
            self.waiting.remove(seq)
        else:
            self.pending = [entry for entry in self.pending if entry[2] is not seq]
            heapq.heapify(self.pending)

    def running(self) -> list[Sequence]:
        """Occupied slots, in slot order: the ragged batch's rows."""
        return [seq for seq in self.slots if seq is not None]

    def has_work(self) -> bool:
        return bool(self.num_running or self.waiting or self.pending)

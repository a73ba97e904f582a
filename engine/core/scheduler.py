"""Slots, the waiting queue and the admission policy.

Requests not yet arrived wait in `pending` (a heap on arrival step, then submission
order); arrived ones in the FIFO `waiting` deque. A request keeps its slot for its whole
life; freed slots are refilled lowest id first (a heap of free ids).

A cancelled request is only marked FINISHED; the queues skip it when it reaches their
head (lazy deletion), so a cancel costs O(1) however long the queue is.
"""

from __future__ import annotations

import heapq
from collections import deque

from .request import Sequence, Status


class Scheduler:
    def __init__(self, batch_size: int):
        self.slots: list[Sequence | None] = [None] * batch_size
        self.previous: list[Sequence | None] = [None] * batch_size  # the last request each slot held
        self.free: list[int] = list(range(batch_size))  # heap of free slot ids
        self.held: list[int] = []  # freed slots returned only after the next admission (the zoo's idle slot)
        self.waiting: deque[Sequence] = deque()  # may hold FINISHED (cancelled) requests, skipped
        self.pending: list[tuple[int, int, Sequence]] = []  # (arrival_step, order, seq), ditto
        self.num_waiting = 0  # WAITING requests in `waiting`
        self.num_running = 0
        self.active_mask = 0  # bit i set: slot i is occupied
        self.version = 0  # changes whenever a slot is taken or freed

    def add(self, seq: Sequence) -> None:
        heapq.heappush(self.pending, (seq.arrival_step, seq.order, seq))

    def next_arrival(self) -> int | None:
        """The arrival step of the next request still to arrive, or None."""
        while self.pending and self.pending[0][2].status is Status.FINISHED:
            heapq.heappop(self.pending)
        return self.pending[0][0] if self.pending else None

    def due(self, step: int) -> list[Sequence]:
        """Pop the requests whose arrival step has come, in arrival then submission order."""
        arrived = []
        while self.pending and self.pending[0][0] <= step:
            seq = heapq.heappop(self.pending)[2]
            if seq.status is Status.PENDING:
                arrived.append(seq)
        return arrived

    def enqueue(self, seq: Sequence) -> None:
        seq.status = Status.WAITING
        self.waiting.append(seq)
        self.num_waiting += 1

    def admit(self) -> list[Sequence]:
        """Fill free slots from the head of the queue."""
        admitted = []
        while self.num_waiting and self.free:
            seq = self.waiting.popleft()
            if seq.status is not Status.WAITING:
                continue  # cancelled while it waited
            seq.slot = heapq.heappop(self.free)
            seq.status = Status.RUNNING
            self.slots[seq.slot] = seq
            self.active_mask |= 1 << seq.slot
            admitted.append(seq)
            self.num_waiting -= 1
        self.num_running += len(admitted)
        self.version += bool(admitted)
        return admitted

    def finished(self, seq: Sequence, hold_slot: bool = False) -> None:
        """`seq` has finished: free its slot (or hold it until after the next admission),
        or forget its place in the queue."""
        if seq.status is Status.RUNNING:
            self.slots[seq.slot] = None
            self.previous[seq.slot] = seq
            self.active_mask &= ~(1 << seq.slot)
            self.version += 1
            if hold_slot:
                self.held.append(seq.slot)
            else:
                heapq.heappush(self.free, seq.slot)
            self.num_running -= 1
        elif seq.status is Status.WAITING:
            self.num_waiting -= 1
        seq.status = Status.FINISHED

    def return_held_slots(self) -> None:
        for slot in self.held:
            heapq.heappush(self.free, slot)
        self.held.clear()

    def running(self) -> list[Sequence]:
        """Occupied slots, in slot order: the ragged batch's rows."""
        return [seq for seq in self.slots if seq is not None]

    def queued(self) -> list[Sequence]:
        """The WAITING requests, in queue order."""
        return [seq for seq in self.waiting if seq.status is Status.WAITING]

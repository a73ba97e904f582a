"""Slots, the waiting queue and the admission policy.

Requests not yet arrived wait in `pending` (a heap on arrival step, then submission
order); arrived ones in the FIFO `waiting` deque, which becomes a heap on (priority, place
in line) once a request with a priority other than 0 arrives (`priority_queue.py`: lower
first, vLLM's priority scheduling). A request keeps its slot for its whole
life (or, with a KV pool, until it is preempted: `memory_scheduler.py`); freed slots are
refilled lowest id first (a heap of free ids). `schedule()` decides, once a step, who is
admitted; its `Plan` is what the engine logs and sends to the model.

A cancelled request is only marked FINISHED; the queues skip it when it reaches their
head (lazy deletion), so a cancel costs O(1) however long the queue is.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from .log.events import EventKind
from .priority_queue import PriorityQueue
from .request import Sequence, Status


class Action(NamedTuple):
    """One change a step makes to a request before its model call; the engine logs it as events."""

    kind: EventKind  # ADMIT (into `slot`), KV_ALLOC (a running row's new blocks) or PREEMPT (out of `slot`)
    seq: Sequence
    slot: int  # the slot it holds (ADMIT, KV_ALLOC) or held (PREEMPT)
    blocks: list[int] | tuple = ()  # ADMIT, KV_ALLOC: the KV block ids it takes (none without a KV pool)
    freed: int = 0  # PREEMPT: how many blocks it gave back


@dataclass
class Plan:
    """What one step does before its model call."""

    actions: list[Action] = field(default_factory=list)  # in order
    work: list[Sequence] = field(default_factory=list)  # rows prefilling this step (`scheduled` tokens each)
    grown: tuple | None = None  # decoding rows' new blocks, before `actions`: (slot ids, log indices, block ids)
    preempted: bool = False

    def prefill_tokens(self) -> int:
        """The prompt (and recomputed) tokens this step prefills."""
        return sum(seq.scheduled for seq in self.work) if self.work else 0  # SPEED: most steps prefill none


NOTHING = Plan()  # a step with nothing to do before its model call (never changed)


class Scheduler:
    def __init__(self, batch_size: int):
        self.prefilling: list[Sequence] = []  # rows part-way through a prefill (only with a token budget or a KV pool)
        self.slots: list[Sequence | None] = [None] * batch_size
        self.previous: list[Sequence | None] = [None] * batch_size  # the last request each slot held
        self.free: list[int] = list(range(batch_size))  # heap of free slot ids
        self.held: list[int] = []  # freed slots returned only after the next admission (the zoo's idle slot)
        self.waiting: deque[Sequence] | PriorityQueue = deque()  # may hold FINISHED (cancelled) requests, skipped
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
        if seq.priority and type(self.waiting) is deque:  # the first priority other than 0: a heap from now on
            self.waiting = PriorityQueue(self.waiting)
        self.waiting.append(seq)
        self.num_waiting += 1

    def schedule(self, step: int, may_admit: bool) -> Plan:
        """Admit from the head of the queue into every free slot (when `may_admit`)."""
        if not (may_admit and self.free and self.head() is not None):
            return NOTHING  # SPEED: most steps admit nobody
        plan = Plan()
        while self.free and (seq := self.head()) is not None:
            self.take_slot(seq)
            plan.actions.append(Action(EventKind.ADMIT, seq, seq.slot))
        return plan

    def batch_fills_at(self, now: int, fill_timeout: int) -> int:
        """Static batching with a fill timeout: the first step at which an empty batch admits. `now`,
        if the queue can fill every slot; else when the oldest waiting request has waited
        `fill_timeout` steps (the scan reads fewer than batch_size requests, once a step that the
        batch is empty)."""
        if self.num_waiting >= len(self.slots) or not self.num_waiting:
            return now
        return min(seq.arrival_step for seq in self.queued()) + fill_timeout

    def head(self) -> Sequence | None:
        """The first WAITING request of the queue (cancelled ones before it are dropped), or None."""
        while self.num_waiting:
            if self.waiting[0].status is Status.WAITING:
                return self.waiting[0]
            self.waiting.popleft()  # cancelled while it waited
        return None

    def take_slot(self, seq: Sequence) -> None:
        """The head of the queue, `seq`, takes the lowest free slot."""
        self.waiting.popleft()
        self.num_waiting -= 1
        seq.slot = heapq.heappop(self.free)
        seq.status = Status.RUNNING
        self.slots[seq.slot] = seq
        self.active_mask |= 1 << seq.slot
        self.num_running += 1
        self.version += 1

    def leave_slot(self, seq: Sequence, hold_slot: bool = False) -> None:
        """`seq` leaves its slot, which is free again (or held until after the next admission)."""
        self.slots[seq.slot] = None
        self.previous[seq.slot] = seq
        self.active_mask &= ~(1 << seq.slot)
        self.version += 1
        if hold_slot:
            self.held.append(seq.slot)
        else:
            heapq.heappush(self.free, seq.slot)
        self.num_running -= 1

    def finished(self, seq: Sequence, hold_slot: bool = False) -> int:
        """`seq` has finished: free its slot (or hold it), or forget its place in the queue.
        Returns the KV blocks it gave back (none here: memory is unlimited)."""
        if seq.status is Status.RUNNING:
            self.leave_slot(seq, hold_slot)
        elif seq.status is Status.WAITING:
            self.num_waiting -= 1
        seq.status = Status.FINISHED
        return 0

    def rows_to_send(self) -> list[Sequence] | None:
        """The rows the model gets this step, in slot order; None when that is every running row."""
        return None

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

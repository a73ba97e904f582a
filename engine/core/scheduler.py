"""Slots, the waiting queue and the admission policy: who runs each step, and what their tokens do.

Requests not yet arrived wait in `pending` (a heap on arrival step, then submission
order), or in `arriving` when their arrival step had come when they were submitted (every
request of a plain run: the next step takes them all, already in order, without the heap);
arrived ones in the FIFO `waiting` deque, which becomes a heap on (priority, place
in line) once a request with a priority other than 0 arrives (`priority_queue.py`: lower
first, vLLM's priority scheduling). A request keeps its slot for its whole
life (or, with a KV pool, until it is preempted: `memory_scheduler.py`); freed slots are
refilled lowest id first (a heap of free ids).

Each step the engine asks twice, as nano-vllm's does:
  - `schedule(step, may_admit)`: admit from the head of the queue into free slots and say
    which rows the model gets; the `Plan` is what the engine logs and sends;
  - `postprocess(plan, tokens)`: append each row's token, check termination (stop token,
    stop sequence, max_tokens) and evict the rows that end.

What a step decides is kept as plain records, below: a `Plan` (who was admitted, preempted
or given blocks, as `Action`s in order; who prefills; the `Batch` the model gets) and, for
each row that ends, a `Finished`.

A cancelled request is only marked FINISHED; the queues skip it when it reaches their
head (lazy deletion), so a cancel costs O(1) however long the queue is.
"""

from __future__ import annotations

import heapq
from collections import deque
from functools import partial
from operator import attrgetter
from typing import NamedTuple

from .block_prompt import as_list
from .config import EngineConfig
from .log.events import EventKind
from .priority_queue import PriorityQueue
from .request import FinishReason, Sequence, Status, append_and_check

ARRIVAL, PRIORITY = attrgetter("arrival_step", "order"), attrgetter("priority")


class Action(NamedTuple):
    """One change a step makes to a request before its model call."""

    kind: EventKind  # ADMIT (into `slot`), KV_ALLOC (a running row's new blocks) or PREEMPT (out of `slot`)
    seq: Sequence
    slot: int  # the slot it holds (ADMIT, KV_ALLOC) or held (PREEMPT)
    blocks: list[int] | tuple = ()  # ADMIT, KV_ALLOC: the KV block ids it takes (none without a KV pool)
    freed: int = 0  # PREEMPT: how many blocks it gave back
    hits: list[int] | tuple = ()  # ADMIT, with prefix caching: the cached blocks its table starts with


class Batch(NamedTuple):
    """The rows of one model call, in slot order."""

    rows: list[Sequence]
    prefixes: list[list[int]]  # each row's token list: the ragged batch, as the model gets it
    mask: int  # bit i set: slot i sends a row
    slots: list[int] | range  # each row's slot; range(batch_size) when every slot sends a row, in slot order

    @classmethod
    def of(cls, rows: list[Sequence]) -> Batch:
        slots = [seq.slot for seq in rows]
        return cls(rows, [seq.tokens for seq in rows], slot_mask(slots), slots)

    @classmethod
    def full(cls, table: list[Sequence]) -> Batch:
        """Every slot of the slot table `table` sends its row. SPEED: no slot to look up and no mask to work out
        (1.5 µs a batch view of 64 rows, against 3.9 µs for `of`; rows end and join nearly every step when their
        lengths vary)."""
        rows = list(table)
        return cls(rows, [seq.tokens for seq in rows], (1 << len(rows)) - 1, range(len(rows)))


def slot_mask(slots: list[int]) -> int:
    """The int whose bit i is set for each of the (distinct) `slots`, in O(len(slots)): at once when they are
    0 .. n - 1 (a full batch), else through a bytearray. (Adding up 1 << slot copies the growing int each time:
    O(n²), 90 ms a batch view at 65,536 rows.)"""
    if not slots:
        return 0
    top = max(slots)
    if top == len(slots) - 1:
        return (1 << len(slots)) - 1
    bits = bytearray(top // 8 + 1)
    for slot in slots:
        bits[slot >> 3] |= 1 << (slot & 7)
    return int.from_bytes(bits, "little")


class Plan:
    """One step's decisions, in the order the event log records them."""

    __slots__ = ("step", "joined", "actions", "grown", "work", "started", "batch", "evicted")

    def __init__(self, step: int, started: list[Sequence]):
        self.step = step
        self.joined: list[Sequence] | tuple = ()  # admissions that take no blocks (`Scheduler`), in order
        self.actions: list[Action] = []  # admissions, running rows' new blocks, preemptions, in order
        self.grown: tuple | None = None  # decoding rows' new blocks, before `actions`: (slots, log indices, blocks)
        self.work: list[Sequence] = []  # rows prefilling this step (`scheduled` tokens each)
        self.started = started  # rows whose first token since their admission is this step's (or was to be that
        # of a step whose model call failed: the scheduler's `started`)
        self.batch: Batch | None = None  # the rows the model gets; None: no row holds a slot
        self.evicted: set[int] | tuple = ()  # with prefix caching: blocks taken whose cached identity was dropped

    def admitted(self) -> list[Action]:
        joined = [Action(EventKind.ADMIT, seq, seq.slot) for seq in self.joined]
        return joined + [action for action in self.actions if action.kind is EventKind.ADMIT]

    def prefill_tokens(self) -> int:
        """The prompt (and recomputed) tokens this step prefills."""
        return sum(seq.scheduled for seq in self.work)


class Finished(NamedTuple):
    """A row that ended this step (or a request that ended without one)."""

    seq: Sequence
    reason: FinishReason
    matched: int | None  # the stop sequence's index, -1 for the stop token, None otherwise
    freed: int  # the KV blocks it gave back


FINISHED = partial(tuple.__new__, Finished)  # SPEED: a `Finished` from a tuple in C, without its Python `__new__`


class Scheduler:
    def __init__(self, config: EngineConfig):
        self.stop_token = config.stop_token
        # static batching with a fill timeout: an empty batch waits to fill (continuous batching never does)
        self.fill_timeout = config.fill_timeout if config.batching == "static" and config.fill_timeout else None
        self.prefilling: list[Sequence] = []  # rows part-way through a prefill (only with a token budget or a KV pool)
        self.slots: list[Sequence | None] = [None] * config.batch_size
        self.free: list[int] = list(range(config.batch_size))  # heap of free slot ids
        self.waiting: deque[Sequence] | PriorityQueue = deque()  # may hold FINISHED (cancelled) requests, skipped
        self.pending: list[tuple[int, int, Sequence]] = []  # (arrival_step, order, seq), ditto
        self.arriving: deque[Sequence] = deque()  # due at the next step, in submission order, ditto
        self.num_waiting = 0  # WAITING requests in `waiting`
        self.num_running = 0
        self.preempted_at = -1  # the last step that preempted: it admits nobody, even when retried
        # SPEED: the batch view is made again only when a slot was taken or freed (named in `changed`), so
        # a step of decoding rows costs nothing per row here (benchmarks/run.py's headline: 392 ns/token
        # with it, 774 without, on 2 December 2026)
        self.changed: list[int] = []  # slots taken or freed since the batch view was made
        self._batch: Batch | None = None
        # SPEED (`append_and_check`): decoding rows filed under the step at which they reach max_tokens
        # (`start_decoding`; rows that end sooner stay filed until their step comes, or the engine goes), and how
        # many running rows have stop sequences
        self.ends_at: dict[int, list[Sequence]] = {}
        self.watching = 0
        self.started: list[Sequence] = []  # rows that started decoding since the last step that had its tokens

    # -- the queue ---------------------------------------------------------------
    def add(self, seq: Sequence, now: int) -> None:
        """Queue a submission for its arrival step; `now` is the step the engine runs next."""
        if seq.arrival_step <= now:  # (the next step is at least `now`: it takes this one)
            self.arriving.append(seq)
        else:
            heapq.heappush(self.pending, (seq.arrival_step, seq.order, seq))

    def next_arrival(self) -> int | None:
        """The arrival step of the next request still to arrive, or None."""
        while self.arriving and self.arriving[0].status is Status.FINISHED:
            self.arriving.popleft()
        if self.arriving:
            return self.arriving[0].arrival_step
        while self.pending and self.pending[0][2].status is Status.FINISHED:
            heapq.heappop(self.pending)
        return self.pending[0][0] if self.pending else None

    def due(self, step: int) -> list[Sequence]:
        """Pop the requests whose arrival step has come, in arrival then submission order."""
        arrived = []
        while self.pending and self.pending[0][0] <= step:
            arrived.append(heapq.heappop(self.pending)[2])
        if self.arriving:  # (all due: `add`)
            arrived = sorted([*arrived, *self.arriving], key=ARRIVAL) if arrived else list(self.arriving)
            self.arriving.clear()
        elif not arrived:  # (most steps)
            return arrived
        return [seq for seq in arrived if seq.status is Status.PENDING]

    def enqueue(self, arrived: list[Sequence]) -> None:
        """Arrived requests join the back of the queue, in order."""
        queued = Status.WAITING
        for seq in arrived:
            seq.status = queued
        if type(self.waiting) is deque and any(map(PRIORITY, arrived)):  # the first priority other than 0: a heap
            self.waiting = PriorityQueue(self.waiting)  # from now on (it numbers the rows in line as they stand)
        if type(self.waiting) is deque:
            self.waiting.extend(arrived)
        else:
            for seq in arrived:
                self.waiting.append(seq)
        self.num_waiting += len(arrived)

    def head(self) -> Sequence | None:
        """The first WAITING request of the queue (cancelled ones before it are dropped), or None."""
        while self.num_waiting:
            if self.waiting[0].status is Status.WAITING:
                return self.waiting[0]
            self.waiting.popleft()  # cancelled while it waited
        return None

    # -- schedule ----------------------------------------------------------------
    def schedule(self, step: int, may_admit: bool) -> Plan:
        """Admit from the head of the queue into every free slot (when `may_admit`, the engine's
        batching rule, and the fill timeout allow), and name the rows the model gets."""
        plan = Plan(step, self.started)
        if not self.num_running:
            self.forget_filed()
        if self.free and self.num_waiting and self.admits(step, may_admit):
            plan.joined = joined = self.take_slots(len(self.free))
            self.start_decoding(joined, plan)  # (their prompts are computed and sent this step)
        plan.batch = self.batch() if self.num_running else None
        return plan

    def forget_filed(self) -> None:
        """No row runs, so every row still filed has ended (or left its slot): drop them, and their tokens. (Each
        list goes when its step comes; an idle engine jumps over steps, and a trace's tokens are many.)"""
        self.ends_at.clear()

    def admits(self, step: int, may_admit: bool) -> bool:
        """Whether waiting requests may take free slots this step: the batching rule allows it, this
        step has not preempted, and an empty static batch with a fill timeout is full or has waited."""
        if not may_admit or self.preempted_at == step:
            return False
        return self.fill_timeout is None or self.num_running or self.batch_fills_at(step) <= step

    def batch_fills_at(self, now: int) -> int:
        """Static batching with a fill timeout: the first step at which an empty batch admits. `now`,
        if the queue can fill every slot; else when the oldest waiting request has waited
        `fill_timeout` steps (the scan reads fewer than batch_size requests, once a step that the
        batch is empty)."""
        if self.num_waiting >= len(self.slots) or not self.num_waiting:
            return now
        return min(seq.arrival_step for seq in self.queued()) + self.fill_timeout

    def take_slots(self, count: int) -> list[Sequence]:
        """Up to `count` requests from the head of the queue (cancelled ones are dropped) take the lowest free
        slots, one each, in queue order (`count` slots at least are free); returns them."""
        waiting, free, slots, queued, running = self.waiting, self.free, self.slots, Status.WAITING, Status.RUNNING
        joined = []
        for _ in range(min(count, self.num_waiting)):
            seq = waiting.popleft()
            while seq.status is not queued:  # cancelled while it waited
                seq = waiting.popleft()
            seq.slot = slot = heapq.heappop(free)
            seq.status = running
            if not isinstance(seq.tokens, list):  # (its prompt: `Sequence.tokens`; a preempted row keeps its list)
                seq.tokens = as_list(seq.tokens)
            slots[slot] = seq
            joined.append(seq)
            self.changed.append(slot)
        self.watching += len(joined) - [seq.stops for seq in joined].count(None)
        self.num_waiting -= len(joined)
        self.num_running += len(joined)
        return joined

    def batch(self) -> Batch:
        """The rows the model gets this step, in slot order (every running row; see MemoryScheduler)."""
        if self.changed or self._batch is None:
            self._batch = self._new_batch()
            self.changed = []
        return self._batch

    def _new_batch(self) -> Batch:
        """The batch view of the slot table as it is now."""
        table, last = self.slots, self._batch
        if self.num_running < len(table):
            return Batch.of(self.running())
        if last is None or type(last.slots) is not range:
            return Batch.full(table)
        # SPEED: the table was full at the last view and is again: that view, with the rows of the slots taken
        # since (benchmarks/run.py's requests of 64 to 192 tokens, where rows end and join nearly every step:
        # 0.3 µs a batch view of 64 rows, against 1.5 µs for `Batch.full`)
        rows, prefixes = list(last.rows), list(last.prefixes)
        for slot in self.changed:
            rows[slot] = seq = table[slot]
            prefixes[slot] = seq.tokens
        return Batch(rows, prefixes, last.mask, last.slots)

    # -- postprocess -------------------------------------------------------------
    def start_decoding(self, rows: list[Sequence], plan: Plan) -> None:
        """Each row gets its first token of this admission at the plan's step, then one every step until it ends
        or is preempted (and filed again when it decodes again): it is filed under the step at which it reaches
        max_tokens, and named in the plan's `started`."""
        plan.started += rows
        step, ends_at, filed, last = plan.step, self.ends_at, None, None
        for seq in rows:
            at = step + seq.end - len(seq.tokens) - 1
            if at < step:  # (never before this step)
                at = step
            if at != last:  # (rows admitted together often end together)
                filed, last = ends_at.setdefault(at, []), at
            filed.append(seq)

    def postprocess(self, plan: Plan, tokens) -> list[Finished]:
        """After the model call: append each row's token, check termination, evict the rows that end."""
        self.started = []  # (the plan keeps this step's)
        due = self.ends_at.pop(plan.step, ())
        batch = plan.batch
        ended = append_and_check(batch.rows, batch.prefixes, tokens, self.stop_token, due, self.watching > 0)
        return self.evict(ended) if ended else ended

    def evict(self, ended: list[tuple]) -> list[Finished]:
        """Rows of the batch end, each (row, reason, what matched): they leave their slots."""
        release, finished, done = self.release, [], Status.FINISHED
        for seq, reason, matched in ended:
            seq.finish_reason = reason
            finished.append(FINISHED((seq, reason, matched, release(seq))))
            seq.status = done
        self.leave_slots([seq for seq, _, _ in ended])
        return finished

    def finish(self, seq: Sequence, reason: FinishReason, matched: int | None = None) -> Finished:
        """`seq` ends for `reason`: it leaves its slot, or its place in the queue."""
        if seq.status is Status.RUNNING:
            return self.evict([(seq, reason, matched)])[0]
        seq.finish_reason = reason
        freed = self.release(seq)
        if seq.status is Status.WAITING:
            self.num_waiting -= 1
        seq.status = Status.FINISHED
        seq.tokens = as_list(seq.tokens)  # (never admitted: its prompt, as the list its callback gets)
        return Finished(seq, reason, matched, freed)

    def release(self, seq: Sequence) -> int:
        """What an ending row gives back besides its slot: its KV blocks (none here: memory is unlimited)."""
        return 0

    def leave_slots(self, rows: list[Sequence]) -> None:
        """The rows leave their slots, which are free again at once."""
        slots, free = self.slots, self.free
        for seq in rows:
            slots[seq.slot] = None
            heapq.heappush(free, seq.slot)
            self.watching -= seq.stops is not None
            self.changed.append(seq.slot)
        self.num_running -= len(rows)

    # -- what a front end may read -------------------------------------------------
    def running(self) -> list[Sequence]:
        """Occupied slots, in slot order: the ragged batch's rows."""
        return [seq for seq in self.slots if seq is not None]

    def queued(self) -> list[Sequence]:
        """The WAITING requests, in queue order."""
        return [seq for seq in self.waiting if seq.status is Status.WAITING]

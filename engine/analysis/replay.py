"""Rebuild the slot table and the waiting queue at any step, from the event log alone.

`StepState.slots` is the slot table as the model call of that step saw it (after
admission), with each row's token of this step and, for rows evicted at the end of the
step, why. `waiting` is the queue after admission. A loaded JSONL file replays exactly
like a live run, because this module never touches the engine.

NOTE: states are computed when asked for, from indices of the changes (who held which
slot from when to when, when each request waited, when it emitted), never stored step by
step: memory grows with the number of events, not with steps × slots or steps × queue,
so a log whose steps run into the millions costs no more than its events.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..core.log.event_log import EventLog
from ..core.log.events import ABSENT, EventKind
from .array_sets import unique
from .kv_replay import KVReplay
from .outputs import Outputs
from .prefix_hits import admission_lookups
from .step_counts import StepCounts

CACHED_STATES = 512  # recently asked-for steps kept (playback asks for neighbours)


@dataclass(frozen=True, slots=True)
class SlotState:
    request_id: str
    prompt_len: int
    generated: int  # tokens generated so far, this step's included
    token: int | None = None  # emitted at this step
    admitted: bool = False  # admitted at this step
    stop_sequence: tuple[int, ...] | None = None  # matched at this step
    finish_reason: str | None = None  # evicted at the end of this step
    # With a KV pool or a token budget (the log's config.memory), else None / ():
    computed: int | None = None  # tokens of the row in the KV cache after this step
    prefill: int | None = None  # prompt (or recomputed) tokens prefilled at this step
    blocks: tuple[int, ...] = ()  # the row's block table: physical block ids, logical order


@dataclass(frozen=True, slots=True)
class StepState:
    step: int
    slots: tuple[SlotState | None, ...]
    waiting: tuple[str, ...]
    rows_sent: int  # 0 when no model call was made
    active_mask: tuple[bool, ...] | None
    finished: tuple[str, ...]  # every request delivered at this step, with or without a slot
    errors: tuple[str, ...]
    preempted: tuple[str, ...] = ()  # back to the front of the queue at this step
    free_blocks: tuple[int, ...] | None = None  # the KV pool's free list (a log with kv_blocks)


@dataclass(frozen=True, slots=True)
class Occupancy:
    """One request in one slot: admitted at `start`, shown until `last` (inclusive)."""

    request: int  # index in the log's request table
    start: int
    last: int  # the eviction step if evicted after that step's model call, else the step before


FOREVER = 2**62  # `last` of a row never evicted (a log that ends mid-run)


class Replay:
    """`replay[k]` is step k's state (0 <= k < len(replay)), computed on demand."""

    def __init__(self, log: EventLog):
        self.log = log
        self.outputs = Outputs(log)  # request id -> prompt + generated tokens (made when asked for)
        self.prompt_len = {info.request_id: len(info.prompt) for info in log.requests}
        self._ids = [info.request_id for info in log.requests]
        steps, kinds, slots, requests = _columns(log)
        self._occupancy, self._starts = _occupancies(log, steps, kinds, slots, requests)
        self._queue = _queue_intervals(steps, kinds, slots, requests)  # (request, from, until, order key) arrays
        priorities = [info.priority for info in log.requests]
        if any(priorities):  # the order key ranks (priority, place in line), as the engine's queue does
            request, start, until, order = self._queue
            rank = np.empty_like(order)
            rank[np.lexsort((order, np.array(priorities, np.int64)[request]))] = np.arange(len(order))
            self._queue = (request, start, until, rank)
        self.kv = KVReplay(log, steps, kinds, requests) if log.config.memory else None
        emits = np.flatnonzero(kinds == EventKind.EMIT)
        order = emits[np.argsort(requests[emits], kind="stable")]
        self._emit_steps = steps[order]  # grouped by request, in step order within each
        self._emit_bounds = np.searchsorted(requests[order], np.arange(len(log.requests) + 1))
        self._cache: dict[int, StepState] = {}

    def __len__(self) -> int:
        return self.log.num_steps

    def __getitem__(self, step: int) -> StepState:
        if not 0 <= step < len(self):
            raise IndexError(f"step {step} is not in this log (0..{len(self) - 1})")
        state = self._cache.get(step)
        if state is None:
            if len(self._cache) >= CACHED_STATES:
                self._cache.clear()
            state = self._cache[step] = self._state(step)
        return state

    def __iter__(self):
        return (self[step] for step in range(len(self)))

    def prefix(self, request_id: str, generated: int) -> list[int]:
        """The request's prompt plus its first `generated` tokens: a row of the model input."""
        return (
            list(self.log.requests[self.log.request_index[request_id]].prompt)
            + self.outputs.generated(request_id)[:generated]
        )

    def occupancies(self) -> list[list[Occupancy]]:
        """Per slot, every stretch a request held it, in admission order."""
        return self._occupancy

    def waits(self) -> list[tuple[int, int, int, int]]:
        """Every stretch a request waited: (request, from step, until step, place in the queue: lower
        first). With priorities the place ranks (priority, place in line), as the queue does."""
        return [tuple(map(int, row)) for row in zip(*self._queue)]

    @cached_property
    def counts(self) -> StepCounts:
        """Requests waiting, slots taken and KV blocks free at any step, without building its state."""
        return StepCounts(self)

    @cached_property
    def _found_at_admissions(self) -> dict[int, tuple[list[int], list[int]]]:
        """Prefix caching: request index -> (its admission steps, the tokens each found in the cache)."""
        out: dict[int, tuple[list[int], list[int]]] = {}
        for request, step, _, hits in admission_lookups(self.log):
            steps, tokens = out.setdefault(request, ([], []))
            steps.append(step)
            tokens.append(hits * self.log.config.block_size)
        return out

    def found_in_cache(self, request_id: str, step: int) -> int:
        """Tokens the request found in the prefix cache at its latest admission up to `step` (0 without one)."""
        steps, tokens = self._found_at_admissions.get(self.log.request_index.get(request_id, -1), ((), ()))
        latest = bisect_right(steps, step) - 1
        return tokens[latest] if latest >= 0 else 0

    def busy_steps(self) -> np.ndarray:
        """The steps that have events (the others are idle: the engine's clock jumped over them)."""
        return unique(np.frombuffer(self.log.step, dtype=np.int32)) if len(self.log) else np.zeros(0, np.int32)

    def _state(self, step: int) -> StepState:
        log = self.log
        events = log.step_range(step)
        call, matches, finished, errors, preempted = None, {}, [], [], []
        for i in events:
            kind = log.kind[i]
            if kind == EventKind.MODEL_CALL:
                call = log[i]
            elif kind == EventKind.STOP_MATCH:
                matches[log.slot[i]] = log[i].sequence
            elif kind == EventKind.EVICT:
                finished.append(self._ids[log.request[i]])
            elif kind == EventKind.ERROR:
                errors.append(log.message_at(i))
            elif kind == EventKind.PREEMPT:
                preempted.append(self._ids[log.request[i]])
        reasons = {log.slot[i]: log[i].reason for i in events if log.kind[i] == EventKind.EVICT}
        slots = tuple(self.slot_state(slot, step, matches, reasons) for slot in range(log.config.batch_size))
        request, start, until, order = self._queue
        waiting = np.flatnonzero((start <= step) & (until > step))
        queued = request[waiting[np.argsort(order[waiting], kind="stable")]]
        free = None
        if self.kv is not None and log.config.kv_blocks is not None:
            free = self.kv.free_blocks([row.blocks for row in slots if row is not None])
        return StepState(
            step,
            slots,
            tuple(self._ids[r] for r in queued),
            call.rows if call else 0,
            call.active_mask if call else None,
            tuple(finished),
            tuple(errors),
            tuple(preempted),
            free,
        )

    def holder(self, slot: int, step: int) -> int | None:
        """The request (its index in the log's request table) holding `slot` at `step`, if any."""
        k = bisect_right(self._starts[slot], step) - 1
        return self._occupancy[slot][k].request if k >= 0 and self._occupancy[slot][k].last >= step else None

    def slot_state(self, slot: int, step: int, matches: dict, reasons: dict) -> SlotState | None:
        """One slot's row at `step` (None: empty), given the step's stop sequences matched and finish
        reasons, by slot (from its `stop_match` and `evict` events)."""
        k = bisect_right(self._starts[slot], step) - 1
        if k < 0:
            return None
        held = self._occupancy[slot][k]
        if held.last < step:
            return None
        emitted = self._emit_steps[self._emit_bounds[held.request] : self._emit_bounds[held.request + 1]]
        generated = int(np.searchsorted(emitted, step, side="right"))
        rid = self._ids[held.request]
        token = None
        if generated and emitted[generated - 1] == step:
            token = self.outputs.token(held.request, generated - 1)
        memory = {}
        if self.kv is not None:
            prefill = self.kv.prefill(held.request, step)
            memory = {
                "computed": self.kv.computed(held.request, step),
                "prefill": prefill[0] if prefill else None,
                "blocks": self.kv.blocks(held.request, step),
            }
        return SlotState(
            rid,
            self.prompt_len[rid],
            generated,
            token,
            admitted=held.start == step,
            stop_sequence=matches.get(slot),
            finish_reason=reasons.get(slot) if held.last == step else None,
            **memory,
        )


def _columns(log: EventLog):
    if not len(log):
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, empty
    return tuple(
        np.frombuffer(column, dtype=dtype).astype(np.int64)
        for column, dtype in ((log.step, np.int32), (log.kind, np.int8), (log.slot, np.int32), (log.request, np.int32))
    )


def _occupancies(log: EventLog, steps, kinds, slots, requests):
    """Per slot, every occupancy in admission order, and their start steps (for bisection)."""
    size = log.config.batch_size
    occupancy: list[list[Occupancy]] = [[] for _ in range(size)]
    open_since: dict[int, tuple[int, int]] = {}  # slot -> (request, admission step)
    calls = set(steps[kinds == EventKind.MODEL_CALL].tolist())
    call_index = {int(steps[i]): int(i) for i in np.flatnonzero(kinds == EventKind.MODEL_CALL)}
    leaves = (kinds == EventKind.EVICT) | (kinds == EventKind.PREEMPT)
    for i in np.flatnonzero(((kinds == EventKind.ADMIT) | leaves) & (slots != ABSENT)).tolist():
        slot, step = int(slots[i]), int(steps[i])
        if kinds[i] == EventKind.ADMIT:
            open_since[slot] = (int(requests[i]), step)
            continue
        request, start = open_since.pop(slot)
        after_call = step in calls and call_index[step] < i
        occupancy[slot].append(Occupancy(request, start, step if after_call else step - 1))
    for slot, (request, start) in open_since.items():
        occupancy[slot].append(Occupancy(request, start, FOREVER))
    for held in occupancy:
        held.sort(key=lambda o: o.start)
    return occupancy, [[o.start for o in held] for held in occupancy]


def _queue_intervals(steps, kinds, slots, requests):
    """Every stretch a request waited, as arrays: request, from step, until step (the queue after
    admission: [from, until)), and its place in the queue (lower first). A request waits from its
    arrival, in arrival order; a preempted one waits again from its preemption, at the front, the
    last preempted first."""
    waits: list[list[int]] = []  # [request, from, until, key]
    open_wait: dict[int, list[int]] = {}
    front = 0
    joins = (kinds == EventKind.ARRIVE) | (kinds == EventKind.PREEMPT)
    leaves = (kinds == EventKind.ADMIT) | ((kinds == EventKind.EVICT) & (slots == ABSENT))
    for i in np.flatnonzero(joins | leaves).tolist():
        request, step = int(requests[i]), int(steps[i])
        if joins[i]:
            front -= kinds[i] == EventKind.PREEMPT
            open_wait[request] = [request, step, FOREVER, front if kinds[i] == EventKind.PREEMPT else request]
            waits.append(open_wait[request])
        elif request in open_wait:
            open_wait.pop(request)[2] = step
    columns = np.array(waits, dtype=np.int64).reshape(-1, 4).T
    return tuple(columns)

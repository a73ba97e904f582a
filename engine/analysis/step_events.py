"""A step's events, grouped the way the narration's sentences need them (`narration.py`).

A step's emits, stop matches and block allocations, most of a long run's events, are read
from the log's columns instead of as `Event`s, and only the rows a sentence names are
rebuilt (`Replay.slot_state`): a 64-slot step is told without building its 64 rows, and
without the block table of each (`replay[step]` builds both).
"""

from __future__ import annotations

from ..core.log.events import Event, EventKind
from .replay import Replay, SlotState

EMIT, STOP_MATCH, KV_ALLOC, MODEL_CALL = EventKind.EMIT, EventKind.STOP_MATCH, EventKind.KV_ALLOC, EventKind.MODEL_CALL


class StepEvents:
    """The events of one step: the others before and after its model call, and what it emitted,
    matched and allocated; `row` and `row_of` rebuild one row."""

    def __init__(self, replay: Replay, step: int):
        log, events = replay.log, replay.log.step_range(step)
        self.replay, self.step, self.any = replay, step, bool(events)
        self.before: list[Event] = []  # before the model call (all of them, without one)
        self.after: list[Event] = []
        self.call: int | None = None  # the model call's event index
        self.emitted: list[int] = []  # slots that emitted, in slot order
        self.matches: dict[int, tuple[int, ...]] = {}  # slot -> the stop sequence it completed
        self.taken: dict[str, list[int]] = {}  # request id -> blocks taken before the call, in order
        self._slot_of: dict[str, int] = {}  # request id -> its slot, for the requests taking blocks or prefilling
        lo, hi = events.start, events.stop
        for i, kind, slot in zip(events, log.kind[lo:hi], log.slot[lo:hi]):
            if kind == EMIT:
                self.emitted.append(slot)
            elif kind == STOP_MATCH:
                self.matches[slot] = log[i].sequence
            elif kind == KV_ALLOC:
                if self.call is None:
                    rid = log.request_id(log.request[i])
                    self.taken.setdefault(rid, []).append(log.value[i])
                    self._slot_of[rid] = slot
            elif kind == MODEL_CALL and self.call is None:
                self.call = i
            else:
                (self.before if self.call is None else self.after).append(log[i])
        self.emitted.sort()
        self.reasons = {e.slot: e.reason for e in self.before + self.after if e.kind == "evict"}
        self._slot_of.update((e.request_id, e.slot) for e in self.after if e.kind == "prefill")

    def row(self, slot: int) -> SlotState | None:
        return self.replay.slot_state(slot, self.step, self.matches, self.reasons)

    def row_of(self, request_id: str) -> SlotState | None:
        """The row of a request that takes blocks or prefills at this step, if it holds a slot."""
        slot = self._slot_of.get(request_id)
        row = self.row(slot) if slot is not None else None
        return row if row is not None and row.request_id == request_id else None

    def blocks_of(self, request_id: str) -> int | None:
        """How many blocks a request that takes blocks at this step holds, if it holds a slot."""
        slot, replay = self._slot_of.get(request_id), self.replay
        request = replay.holder(slot, self.step) if slot is not None else None
        if request is None or replay.log.requests[request].request_id != request_id:
            return None
        return replay.kv.count(request, self.step)

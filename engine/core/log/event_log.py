"""The event log: append-only, columnar (one `array` per field, about 25 bytes an event).

The columns and what `value` and `detail` mean for each kind are described in `events.py`.
The log also carries its header: the engine's settings (`config`), the model's name when it
can be re-run, and the words of token ids (`vocabulary`) when a scenario gave them.

The engine writes it once per phase of its step (`arrived` and `ended` at intake,
`scheduled`, `model_called`, `postprocessed`), each a column at a time: this file is the
one place that knows how the columns are packed. The jsonl reader and the checker write
one event at a time (`append`, `arrive`, `emit`, `model_call`, `error`).
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_left, bisect_right
from functools import partial
from operator import attrgetter
from typing import TYPE_CHECKING

from ..config import EngineConfig
from ..request import FinishReason
from .events import ABSENT, Event, EventKind, RequestInfo, mask_tuple
from .jsonl import dump_jsonl, load_jsonl

if TYPE_CHECKING:  # (the plan's records are read here, never built)
    from ..model_call import Answer
    from ..request import Sequence
    from ..scheduler import Finished, Plan

# SPEED: a column grows from bytes or a list, not from a new array (an array costs about 300 ns to make, as
# much as writing a few events): `n` events' steps are `STEP(step) * n`, their kinds `KIND[kind] * n`.
STEP = struct.Struct("i").pack  # (the "i" column's native int)
KIND = {kind: bytes((kind,)) for kind in EventKind}
# SPEED: an arrival's `RequestInfo` from its request's fields in C, without the named tuple's Python `__new__`
INFO_FIELDS = attrgetter("request_id", "tokens", "max_tokens", "stop_sequences", "priority")
REQUEST_INFO, REQUEST_ID = partial(tuple.__new__, RequestInfo), attrgetter("request_id")
KIND_EMIT, KIND_ADMIT, KIND_HIT = KIND[EventKind.EMIT], KIND[EventKind.ADMIT], KIND[EventKind.PREFIX_HIT]
KIND_ALLOC, KIND_EVICT = KIND[EventKind.KV_ALLOC], KIND[EventKind.EVICT]
KIND_EVICT_THEN_ALLOC = KIND[EventKind.KV_EVICT] + KIND_ALLOC  # (a cached block's kv_evict, then its kv_alloc)
KIND_EVICT_THEN_FREE = KIND_EVICT + KIND[EventKind.KV_FREE]  # (an ending row's evict, then its kv_free)
KIND_PREEMPT_THEN_FREE = KIND[EventKind.PREEMPT] + KIND[EventKind.KV_FREE]
KIND_MODEL_CALL, ABSENT_INT = KIND[EventKind.MODEL_CALL], STEP(ABSENT)  # (ABSENT as the "i" columns hold it)


class EventLog:
    """Append-only, columnar record of one engine's run."""

    def __init__(self, config: EngineConfig, model: str | None = None, vocabulary: dict[int, str] | None = None):
        self.config = config
        self.model = model  # set by logs whose model can be re-run (the checker's)
        self.vocabulary: dict[int, str] = dict(vocabulary or {})  # token id -> word, for people
        self.requests: list[RequestInfo] = []
        self.request_index: dict[str, int] = {}
        self.step = array("i")
        self.kind = array("b")
        self.slot = array("i")
        self.request = array("i")
        self.value = array("q")
        self.detail = array("i")
        self.attachments: list[object] = []  # what fits no int column: active masks (int bitmasks), error messages
        self._columns_of, self._columns = None, ()  # the last batch's emit columns (`_emit_columns`)
        # the request and step − position of the emits of each slot's row: set when the row starts decoding
        self._slot_numbers = array("i", range(config.batch_size))
        self._slot_requests, self._slot_starts = array("i", self._slot_numbers), array("i", self._slot_numbers)
        self._with_prefills = config.memory  # a model call also records the prompt tokens its step computed

    # -- the engine's writers: one a phase of its step ---------------------------------
    def arrived(self, step: int, arrived: list[Sequence]) -> None:
        """Intake: requests arrive; each takes the next index of the request table (its `log_index`)."""
        start = len(self.requests)
        indices = list(range(start, start + len(arrived)))
        for seq, index in zip(arrived, indices):
            seq.log_index = index
        self.requests += map(REQUEST_INFO, map(INFO_FIELDS, arrived))  # (its tokens are its prompt, a tuple)
        self.request_index.update(zip(map(REQUEST_ID, arrived), indices))
        self._write_columns(step, EventKind.ARRIVE, [ABSENT] * len(arrived), indices, [0] * len(arrived))

    def ended(self, step: int, ended: list[Finished]) -> None:
        """Intake or postprocess: each request's `evict`, then its `kv_free` if it gave blocks back."""
        if self.config.kv_blocks is None:  # nothing to give back: the evictions as columns
            slots = [ABSENT if seq.slot is None else seq.slot for seq, _, _, _ in ended]
            requests = [seq.log_index for seq, _, _, _ in ended]
            self._write_columns(step, EventKind.EVICT, slots, requests, [reason for _, reason, _, _ in ended])
            return
        kinds, slots, requests, values = bytearray(), [], [], []  # (the events as columns, as `scheduled` makes them)
        for seq, reason, _, freed in ended:
            slot, request = ABSENT if seq.slot is None else seq.slot, seq.log_index
            if freed:
                kinds += KIND_EVICT_THEN_FREE
                slots += slot, slot
                requests += request, request
                values += reason, freed
            else:
                kinds += KIND_EVICT
                slots.append(slot)
                requests.append(request)
                values.append(reason)
        self._extend(step, kinds, slots, requests, values)

    def scheduled(self, plan: Plan) -> None:
        """Schedule: the admissions that take no blocks (without a KV pool); else the decoding rows' new blocks,
        then each admission (with its cached and new blocks), running row's new blocks and preemption (with the
        blocks it gave back), in the scheduler's order. With prefix caching, a block whose cached identity was
        dropped to reuse it has its `kv_evict` just before its `kv_alloc`."""
        if plan.joined:  # admissions without blocks, as columns
            rows = plan.joined
            self._write_columns(
                plan.step, EventKind.ADMIT, [seq.slot for seq in rows], [seq.log_index for seq in rows], [0] * len(rows)
            )
        if not (plan.grown or plan.actions):  # (most steps)
            return
        # SPEED: the events made as columns, for one write (a tuple an event turned into columns: 13.2k instructions
        # for two events, against 6.9k; callgrind)
        evicted = plan.evicted  # (this step's: each is written once, then dropped)
        if plan.grown:  # decoding rows' new blocks
            slots, requests, blocks = plan.grown
            kinds, slots, requests, values = _allocations(slots, requests, blocks, evicted)
            if not plan.actions:  # (most steps that have any)
                self._extend(plan.step, kinds, slots, requests, values)
                return
            kinds, slots, requests, values = bytearray(kinds), list(slots), list(requests), list(values)
        else:
            kinds, slots, requests, values = bytearray(), [], [], []
        for kind, seq, slot, blocks, freed, hits in plan.actions:
            request = seq.log_index
            if kind is EventKind.PREEMPT:  # with the blocks it gave back
                kinds += KIND_PREEMPT_THEN_FREE
                slots += slot, slot
                requests += request, request
                values += len(seq.tokens), freed
                continue
            if kind is EventKind.ADMIT:  # with its cached blocks
                kinds += KIND_ADMIT + KIND_HIT * len(hits)
                slots += [slot] * (1 + len(hits))
                requests += [request] * (1 + len(hits))
                values.append(0)
                values += hits
            if blocks:  # its new blocks, as the decoding rows' (each kv_alloc after its kv_evict, if any)
                allocations = _allocations([slot] * len(blocks), [request] * len(blocks), blocks, evicted)
                for column, events in zip((kinds, slots, requests, values), allocations):
                    column.extend(events)
        self._extend(plan.step, kinds, slots, requests, values)

    def model_called(self, plan: Plan) -> None:
        """Run: the step's model call (0 rows when every row is still prefilling: the model was not called)."""
        batch, config = plan.batch, self.config
        rows = config.batch_size if config.padded and batch.rows else len(batch.rows)
        if self._with_prefills:  # (a decoding step computes no prompt tokens: no call to count them)
            self.attachments.append((batch.mask, plan.prefill_tokens() if plan.work else 0))
        else:
            self.attachments.append(batch.mask)
        # (as `append` would; SPEED: the constant columns from bytes, one event a step: 1.6k instructions fewer)
        self.step.append(plan.step)
        self.kind.frombytes(KIND_MODEL_CALL)
        self.slot.frombytes(ABSENT_INT)
        self.request.frombytes(ABSENT_INT)
        self.value.append(rows)
        self.detail.append(len(self.attachments) - 1)

    def postprocessed(self, plan: Plan, answer: Answer, ended: list[Finished]) -> None:
        """Postprocess: each prefilling row's `prefill`, each row's `emit`, then each ending row's `stop_match`
        (if a stop matched), `evict` and `kv_free`."""
        step = plan.step
        if plan.work:
            rows = plan.work
            self._write_columns(
                step, EventKind.PREFILL, [seq.slot for seq in rows], [seq.log_index for seq in rows],
                [seq.scheduled for seq in rows], [seq.computed for seq in rows],
            )  # fmt: skip
        if plan.started:
            self._start_emitting(plan)
        batch = plan.batch
        if batch is not self._columns_of:  # SPEED: see _emit_columns
            self._columns_of, self._columns = batch, self._emit_columns(batch.slots)
        slots, requests, starts = self._columns  # SPEED: written here, not through _write_columns (1.4 % fewer
        n = len(answer[0])  # instructions for a paged run: callgrind, 100 x 128 tokens, 49.4M against 50.1M)
        self.step.frombytes(STEP(step) * n)
        self.kind.frombytes(KIND_EMIT * n)
        self.slot.extend(slots)
        self.request.extend(requests)
        self.value.frombytes(answer[1])
        self.detail.extend(starts)
        if not ended:
            return
        for seq, _, matched, _ in ended:
            if matched is not None:
                self.append(step, EventKind.STOP_MATCH, seq.slot, seq.log_index, matched)
        self.ended(step, ended)

    def _start_emitting(self, plan: Plan) -> None:
        """The rows that start decoding this step: their slots' entries of the emit columns (`_emit_columns`). A row
        emits once a step from now until it leaves its slot, so the step − position of its emits stays the same."""
        step, requests, starts = plan.step, self._slot_requests, self._slot_starts
        for seq in plan.started:
            requests[seq.slot] = seq.log_index
            starts[seq.slot] = step + 1 + seq.prompt_len - len(seq.tokens)  # step - (generated - 1)

    def _emit_columns(self, slots: list[int] | range) -> tuple[array, array, array]:
        """The slot, request and step − position columns of a batch's emits (`events.py`), for the rows of `slots`.

        SPEED: the scheduler keeps one `Batch` while no slot is taken or freed, and a row emits once a step
        while it decodes, so each column is the same every step: built once per batch, not per token
        (benchmarks/run.py's headline: 392 ns/token with it, 633 built every step, on 2 December 2026). And each
        is read from the slots' entries (`_start_emitting`), which change only for the rows that join: rows end
        and join nearly every step when their lengths vary, and a full batch's columns are three copies
        (0.3 µs, against 13.6 µs for three list comprehensions over its 64 rows)."""
        if type(slots) is range:  # every slot, in slot order
            n = len(slots)
            return self._slot_numbers[:n], self._slot_requests[:n], self._slot_starts[:n]
        requests, starts = self._slot_requests, self._slot_starts
        return (
            array("i", slots),
            array("i", [requests[slot] for slot in slots]),
            array("i", [starts[slot] for slot in slots]),
        )

    # -- writing, one event or one column at a time ----------------------------------
    def append(self, step: int, kind: EventKind, slot: int, request: int, value: int = 0, detail: int = 0) -> None:
        self.step.append(step)
        self.kind.append(kind)
        self.slot.append(slot)
        self.request.append(request)
        self.value.append(value)
        self.detail.append(detail)

    def arrive(self, step: int, info: RequestInfo) -> int:
        """Record an arrival and return the request's index in the request table."""
        index = len(self.requests)
        self.requests.append(info)
        self.request_index[info.request_id] = index
        self.append(step, EventKind.ARRIVE, ABSENT, index)
        return index

    def _write_columns(self, step: int, kind: EventKind, slots: list, requests: list, values: list, details=None):
        """Events of one kind and step, a column at a time (SPEED: the engine's hot path)."""
        self._extend(step, KIND[kind] * len(values), slots, requests, values, details)

    def _extend(self, step: int, kinds: bytes, slots: list, requests: list, values: list, details=None) -> None:
        """Events of one step, given as columns (`details` None: all 0)."""
        self.step.frombytes(STEP(step) * len(kinds))
        self.kind.frombytes(kinds)
        self.slot.fromlist(slots)
        self.request.fromlist(requests)
        self.value.fromlist(values)
        if details is None:
            self.detail.frombytes(bytes(4 * len(kinds)))
        else:
            self.detail.fromlist(details)

    def emit(self, step: int, slot: int, request: int, token: int, position: int) -> None:
        """One `emit` given its position (for writers off the hot path)."""
        self.append(step, EventKind.EMIT, slot, request, token, step - position)

    @staticmethod
    def emit_position(step, detail):
        """An emit's position from its step and `detail` columns (ints, or numpy arrays of them)."""
        return step - detail

    def model_call(self, step: int, rows: int, active_mask: int, prefill_tokens: int | None = None) -> None:
        self.attachments.append(active_mask if prefill_tokens is None else (active_mask, prefill_tokens))
        self.append(step, EventKind.MODEL_CALL, ABSENT, ABSENT, rows, len(self.attachments) - 1)

    def call_mask(self, attachment: int) -> tuple[int, int | None]:
        """A model call's (active mask bits, prefill tokens or None), from its attachment's index."""
        value = self.attachments[attachment]
        return value if isinstance(value, tuple) else (value, None)

    def call_at(self, i: int) -> tuple[int, int | None]:
        """Event `i`, a model call: its (active mask bits, prefill tokens or None)."""
        return self.call_mask(self.detail[i])

    def message_at(self, i: int) -> str:
        """Event `i`, an error: its message."""
        return self.attachments[self.detail[i]]

    def error(self, step: int, slot: int, request: int, message: str) -> None:
        self.attachments.append(message)
        self.append(step, EventKind.ERROR, slot, request, 0, len(self.attachments) - 1)

    # -- reading -----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.kind)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EventLog):
            return NotImplemented
        fields = (
            "config", "model", "vocabulary", "requests", "step", "kind", "slot", "request", "value", "detail",
            "attachments",
        )  # fmt: skip
        return all(getattr(self, name) == getattr(other, name) for name in fields)

    @property
    def num_steps(self) -> int:
        """Steps that have events: the last event's step + 1 (0 when empty)."""
        return self.step[-1] + 1 if len(self) else 0

    def step_range(self, step: int) -> range:
        """Indices of the events of one step (the step column is sorted)."""
        return range(bisect_left(self.step, step), bisect_right(self.step, step))

    def request_id(self, index: int) -> str | None:
        return None if index == ABSENT else self.requests[index].request_id

    def __getitem__(self, i: int) -> Event:
        kind = EventKind(self.kind[i])
        slot = self.slot[i]
        request = self.request[i]
        value, detail = self.value[i], self.detail[i]
        fields: dict[str, object] = {}
        if kind is EventKind.EMIT:
            fields = {"token": value, "position": self.emit_position(self.step[i], detail)}
        elif kind is EventKind.MODEL_CALL:
            bits, prefill = self.call_mask(detail)
            mask = mask_tuple(bits, self.config.batch_size)
            fields = {"rows": value, "padded_rows": value - sum(mask), "active_mask": mask, "prefill_tokens": prefill}
        elif kind is EventKind.STOP_MATCH:
            fields = {"sequence_index": value, "sequence": self._stop_sequence(request, value)}
        elif kind is EventKind.EVICT:
            fields = {"reason": FinishReason(value).label}
        elif kind is EventKind.ERROR:
            fields = {"message": self.attachments[detail]}
        elif kind is EventKind.PREFILL:
            fields = {"tokens": value, "computed": detail}
        elif kind in (EventKind.KV_ALLOC, EventKind.PREFIX_HIT, EventKind.KV_EVICT):
            fields = {"block": value}
        elif kind is EventKind.KV_FREE:
            fields = {"blocks": value}
        elif kind is EventKind.PREEMPT:
            fields = {"recompute": value}
        return Event(self.step[i], kind.label, None if slot == ABSENT else slot, self.request_id(request), **fields)

    def _stop_sequence(self, request: int, index: int) -> tuple[int, ...]:
        if index == -1:
            return (self.config.stop_token,)
        return self.requests[request].stop_sequences[index]

    def outputs(self) -> dict[str, list[int]]:
        """Each arrived request's prompt + emitted tokens, rebuilt from the log alone."""
        out = {info.request_id: list(info.prompt) for info in self.requests}
        emit = EventKind.EMIT
        for kind, request, token in zip(self.kind, self.request, self.value):
            if kind == emit:
                out[self.requests[request].request_id].append(token)
        return out

    # -- exports -------------------------------------------------------------------
    def to_dataframe(self):
        """One row per event; columns as in `Event`, plus `prompt` etc. on arrive rows."""
        from .dataframe import events_frame  # pandas is imported only when a DataFrame is asked for

        return events_frame(self)

    def to_jsonl(self) -> str:
        return dump_jsonl(self)

    @classmethod
    def from_jsonl(cls, text: str) -> EventLog:
        """Load a log written by `to_jsonl`; raises ValueError naming the bad line and the reason."""
        return load_jsonl(text, cls)


def _twice(column: list) -> list:
    """Each entry twice in a row."""
    both = column * 2
    both[::2] = both[1::2] = column
    return both


def _allocations(slots: list, requests: list, blocks: list, evicted: set | tuple) -> tuple[bytes, list, list, list]:
    """The events (kinds, slots, requests, values) of new blocks: each block's `kv_alloc` (the row of slots[i] and
    requests[i]), after its `kv_evict` if taking it dropped a cached identity (written once: it leaves `evicted`),
    for the decoding rows' blocks and for an admission's or a claim's alike. SPEED: with prefix caching most new
    blocks were cached: when all were, each column takes them as pairs (kv_evict, kv_alloc), in C; else the events
    are made in one pass (cutting the pairs of the blocks not cached out of the columns took 40.8k instructions a
    call for 4 blocks, one not cached, against 25.0k: callgrind)."""
    if not evicted or evicted.isdisjoint(blocks):  # (without prefix caching, always)
        return KIND_ALLOC * len(blocks), slots, requests, blocks
    if evicted.issuperset(blocks):
        evicted.difference_update(blocks)
        return KIND_EVICT_THEN_ALLOC * len(blocks), _twice(slots), _twice(requests), _twice(blocks)
    kinds, slot_column, request_column, value_column = bytearray(), [], [], []
    for slot, request, block in zip(slots, requests, blocks):
        if block in evicted:
            evicted.discard(block)
            kinds += KIND_EVICT_THEN_ALLOC
            slot_column += slot, slot
            request_column += request, request
            value_column += block, block
        else:
            kinds += KIND_ALLOC
            slot_column.append(slot)
            request_column.append(request)
            value_column.append(block)
    return kinds, slot_column, request_column, value_column

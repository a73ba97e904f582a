"""The event log: append-only, columnar (one `array` per field, about 25 bytes an event).

The columns and what `a` and `b` mean for each kind are described in `events.py`. The
log also carries its header: the engine's settings (`config`), the model's name when it
can be re-run, and the words of token ids (`vocabulary`) when a scenario gave them.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right

from ..config import EngineConfig
from ..request import FinishReason
from .events import ABSENT, Event, EventKind, RequestInfo, mask_tuple
from .jsonl import dump_jsonl, load_jsonl


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
        self.a = array("q")
        self.b = array("i")
        self.blobs: list[object] = []  # active masks (int bitmasks) and error messages

    # -- writing -----------------------------------------------------------------
    def append(self, step: int, kind: EventKind, slot: int, request: int, a: int = 0, b: int = 0) -> None:
        self.step.append(step)
        self.kind.append(kind)
        self.slot.append(slot)
        self.request.append(request)
        self.a.append(a)
        self.b.append(b)

    def arrive(self, step: int, info: RequestInfo) -> int:
        """Record an arrival and return the request's index in the request table."""
        index = len(self.requests)
        self.requests.append(info)
        self.request_index[info.request_id] = index
        self.append(step, EventKind.ARRIVE, ABSENT, index)
        return index

    def emits(self, step: int, slots: array, requests: array, tokens: array, starts: array) -> None:
        """One `emit` per row of a step, written a column at a time (the engine's hot path).

        `slots` and `requests` are the rows' slot ids and request-table indices; `starts`
        each row's step − position (`events.py`: the same every step while it decodes, so the
        engine keeps it with its batch and nothing is computed per token here).
        """
        n = len(tokens)
        self.step.extend(array("i", (step,)) * n)
        self.kind.extend(array("b", (EventKind.EMIT,)) * n)
        self.slot.extend(slots)
        self.request.extend(requests)
        self.a.extend(tokens)
        self.b.extend(starts)

    def kv_allocs(self, step: int, slots: list[int], requests: list[int], blocks: list[int]) -> None:
        """One `kv_alloc` per block, written a column at a time (the engine's hot path)."""
        n = len(blocks)
        self.step.extend(array("i", (step,)) * n)
        self.kind.extend(array("b", (EventKind.KV_ALLOC,)) * n)
        self.slot.extend(array("i", slots))
        self.request.extend(array("i", requests))
        self.a.extend(array("q", blocks))
        self.b.extend(array("i", bytes(4 * n)))

    def extend(self, step: int, events: list[tuple[int, int, int, int]]) -> None:
        """Several events of one step, each (kind, slot, request, a), written a column at a time."""
        if not events:
            return
        kinds, slots, requests, values = zip(*events)
        n = len(events)
        self.step.extend(array("i", (step,)) * n)
        self.kind.extend(array("b", kinds))
        self.slot.extend(array("i", slots))
        self.request.extend(array("i", requests))
        self.a.extend(array("q", values))
        self.b.extend(array("i", bytes(4 * n)))

    def prefills(self, step: int, rows) -> None:
        """One `prefill` per row (`Sequence`s: tokens scheduled this step, computed in all), a column at a time."""
        n = len(rows)
        self.step.extend(array("i", (step,)) * n)
        self.kind.extend(array("b", (EventKind.PREFILL,)) * n)
        self.slot.extend(array("i", [seq.slot for seq in rows]))
        self.request.extend(array("i", [seq.log_index for seq in rows]))
        self.a.extend(array("q", [seq.scheduled for seq in rows]))
        self.b.extend(array("i", [seq.computed for seq in rows]))

    def emit(self, step: int, slot: int, request: int, token: int, position: int) -> None:
        """One `emit` given its position (for writers off the hot path)."""
        self.append(step, EventKind.EMIT, slot, request, token, step - position)

    def model_call(self, step: int, rows: int, active_mask: int, prefill_tokens: int | None = None) -> None:
        self.blobs.append(active_mask if prefill_tokens is None else (active_mask, prefill_tokens))
        self.append(step, EventKind.MODEL_CALL, ABSENT, ABSENT, rows, len(self.blobs) - 1)

    def call_mask(self, blob: int) -> tuple[int, int | None]:
        """A model call's (active mask bits, prefill tokens or None), from its blob index."""
        value = self.blobs[blob]
        return value if isinstance(value, tuple) else (value, None)

    def error(self, step: int, slot: int, request: int, message: str) -> None:
        self.blobs.append(message)
        self.append(step, EventKind.ERROR, slot, request, 0, len(self.blobs) - 1)

    # -- reading -----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.kind)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EventLog):
            return NotImplemented
        fields = ("config", "model", "vocabulary", "requests", "step", "kind", "slot", "request", "a", "b", "blobs")
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
        a, b = self.a[i], self.b[i]
        fields: dict[str, object] = {}
        if kind is EventKind.EMIT:
            fields = {"token": a, "position": self.step[i] - b}
        elif kind is EventKind.MODEL_CALL:
            bits, prefill = self.call_mask(b)
            mask = mask_tuple(bits, self.config.batch_size)
            fields = {"rows": a, "padded_rows": a - sum(mask), "active_mask": mask, "prefill_tokens": prefill}
        elif kind is EventKind.STOP_MATCH:
            fields = {"sequence_index": a, "sequence": self._stop_sequence(request, a)}
        elif kind is EventKind.EVICT:
            fields = {"reason": FinishReason(a).label}
        elif kind is EventKind.ERROR:
            fields = {"message": self.blobs[b]}
        elif kind is EventKind.PREFILL:
            fields = {"tokens": a, "computed": b}
        elif kind is EventKind.KV_ALLOC:
            fields = {"block": a}
        elif kind is EventKind.KV_FREE:
            fields = {"blocks": a}
        elif kind is EventKind.PREEMPT:
            fields = {"recompute": a}
        return Event(self.step[i], kind.label, None if slot == ABSENT else slot, self.request_id(request), **fields)

    def _stop_sequence(self, request: int, index: int) -> tuple[int, ...]:
        if index == -1:
            return (self.config.stop_token,)
        return self.requests[request].stop_sequences[index]

    def outputs(self) -> dict[str, list[int]]:
        """Each arrived request's prompt + emitted tokens, rebuilt from the log alone."""
        out = {info.request_id: list(info.prompt) for info in self.requests}
        emit = EventKind.EMIT
        for kind, request, token in zip(self.kind, self.request, self.a):
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

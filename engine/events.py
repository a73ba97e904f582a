"""The event log: the single record of a run, from which everything downstream is drawn.

Storage is columnar (one `array` per field, about 25 bytes an event) because a long run
writes one `emit` per generated token. `Event` is the typed row view for reading.

Each event has `step`, `kind`, `slot` and `request_id`; the two int columns `a` and `b`
hold the kind's own fields:

| kind         | a                              | b                             |
|--------------|--------------------------------|-------------------------------|
| `arrive`     | -                              | -                             |
| `admit`      | -                              | -                             |
| `model_call` | rows sent                      | index of the active mask blob |
| `emit`       | token                          | prefix length after the token |
| `stop_match` | stop sequence index, -1 = stop token | -                       |
| `evict`      | `FinishReason` value           | -                             |
| `error`      | -                              | index of the message blob     |

An emit's position (0 = first generated token) is its `b` minus the prompt length minus
one: the engine writes lengths because it can take them all at once with `map(len, ...)`.

A request's prompt, budget and stop sequences are stored once, in the request table,
when it arrives. JSON Lines starts with one header line (engine settings), then one line
per event; `arrive` lines carry the request's table entry.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from enum import IntEnum

from .request import FinishReason

FORMAT = "continuous-batching-lab/event-log"
VERSION = 1
NONE = -1  # stands for "no slot" / "no request" in the int columns


class EventKind(IntEnum):
    ARRIVE = 0
    ADMIT = 1
    MODEL_CALL = 2
    EMIT = 3
    STOP_MATCH = 4
    EVICT = 5
    ERROR = 6

    @property
    def label(self) -> str:
        return self.name.lower()


KIND_BY_LABEL = {kind.label: kind for kind in EventKind}
REASON_BY_LABEL = {reason.label: reason for reason in FinishReason}


@dataclass(frozen=True, slots=True)
class RequestInfo:
    request_id: str
    prompt: tuple[int, ...]
    max_tokens: int
    stop_sequences: tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True)
class Event:
    """One event, read back from the columns; fields not of its kind are None."""

    step: int
    kind: str
    slot: int | None
    request_id: str | None
    token: int | None = None  # emit
    position: int | None = None  # emit
    rows: int | None = None  # model_call: rows sent to the model
    padded_rows: int | None = None  # model_call: rows sent that hold no request
    active_mask: tuple[bool, ...] | None = None  # model_call
    sequence_index: int | None = None  # stop_match: -1 for the engine's stop token
    sequence: tuple[int, ...] | None = None  # stop_match
    reason: str | None = None  # evict
    message: str | None = None  # error


@dataclass(frozen=True, slots=True)
class LogSettings:
    batch_size: int
    stop_token: int | None
    batching: str  # "continuous" | "static"
    padded: bool
    model: str | None = None  # set by logs whose model can be re-run (the checker's)


class EventLog:
    """Append-only, columnar record of one engine's run."""

    def __init__(self, settings: LogSettings):
        self.settings = settings
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
        self.append(step, EventKind.ARRIVE, NONE, index)
        return index

    def emits(self, step: int, slots: array, requests: array, tokens: array, lengths) -> None:
        """One `emit` per row of a step, written a column at a time (the engine's hot path).

        `slots` and `requests` are the rows' slot ids and request-table indices; `lengths`
        their prefix lengths after the new token.
        """
        n = len(tokens)
        self.step.extend(array("i", (step,)) * n)
        self.kind.extend(array("b", (EventKind.EMIT,)) * n)
        self.slot.extend(slots)
        self.request.extend(requests)
        self.a.extend(tokens)
        self.b.extend(lengths)

    def emit(self, step: int, slot: int, request: int, token: int, position: int) -> None:
        """One `emit` given its position (for writers off the hot path)."""
        self.append(step, EventKind.EMIT, slot, request, token, position + len(self.requests[request].prompt) + 1)

    def model_call(self, step: int, rows: int, active_mask: int) -> None:
        self.blobs.append(active_mask)
        self.append(step, EventKind.MODEL_CALL, NONE, NONE, rows, len(self.blobs) - 1)

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
        fields = ("settings", "requests", "step", "kind", "slot", "request", "a", "b", "blobs")
        return all(getattr(self, name) == getattr(other, name) for name in fields)

    @property
    def num_steps(self) -> int:
        """Steps that have events: the last event's step + 1 (0 when empty)."""
        return self.step[-1] + 1 if len(self) else 0

    def step_range(self, step: int) -> range:
        """Indices of the events of one step (the step column is sorted)."""
        return range(bisect_left(self.step, step), bisect_right(self.step, step))

    def request_id(self, index: int) -> str | None:
        return None if index == NONE else self.requests[index].request_id

    def __getitem__(self, i: int) -> Event:
        kind = EventKind(self.kind[i])
        slot = self.slot[i]
        request = self.request[i]
        a, b = self.a[i], self.b[i]
        fields: dict[str, object] = {}
        if kind is EventKind.EMIT:
            fields = {"token": a, "position": b - len(self.requests[request].prompt) - 1}
        elif kind is EventKind.MODEL_CALL:
            mask = mask_tuple(self.blobs[b], self.settings.batch_size)
            fields = {"rows": a, "padded_rows": a - sum(mask), "active_mask": mask}
        elif kind is EventKind.STOP_MATCH:
            fields = {"sequence_index": a, "sequence": self._stop_sequence(request, a)}
        elif kind is EventKind.EVICT:
            fields = {"reason": FinishReason(a).label}
        elif kind is EventKind.ERROR:
            fields = {"message": self.blobs[b]}
        return Event(self.step[i], kind.label, None if slot == NONE else slot, self.request_id(request), **fields)

    def _stop_sequence(self, request: int, index: int) -> tuple[int, ...]:
        if index == -1:
            return (self.settings.stop_token,)
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
        from .frames import events_frame

        return events_frame(self)

    def to_jsonl(self) -> str:
        from .log_io import dump_jsonl

        return dump_jsonl(self)

    @classmethod
    def from_jsonl(cls, text: str) -> EventLog:
        """Load a log written by `to_jsonl`; raises ValueError naming the bad line."""
        from .log_io import load_jsonl

        return load_jsonl(text)


def mask_tuple(bits: int, width: int) -> tuple[bool, ...]:
    return tuple(bool(bits >> i & 1) for i in range(width))


def mask_bits(mask: list[bool] | tuple[bool, ...]) -> int:
    return sum(1 << i for i, active in enumerate(mask) if active)

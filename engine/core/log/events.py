"""The event log's vocabulary: event kinds, the request table's entries, the typed row view.

The log itself (`event_log.py`) is the single record of a run, from which everything
downstream is drawn. Its storage is columnar (one `array` per field, about 25 bytes an event) because a long run
writes one `emit` per generated token. `Event` is the typed row view for reading.

Each event has `step`, `kind`, `slot` and `request_id`; two int columns hold the kind's
own fields, `value` (its main number) and `detail` (a second one, or the index of an
attachment that does not fit an int: a model call's active mask, an error's message):

| kind         | value                          | detail                        |
|--------------|--------------------------------|-------------------------------|
| `arrive`     | -                              | -                             |
| `admit`      | -                              | -                             |
| `model_call` | rows sent                      | its attachment: the active mask, or (mask, prefill tokens) |
| `emit`       | token                          | step − position               |
| `stop_match` | stop sequence index, -1 = stop token | -                       |
| `evict`      | `FinishReason` value           | -                             |
| `error`      | -                              | its attachment: the message   |
| `prefill`    | tokens computed this step      | tokens computed so far        |
| `kv_alloc`   | physical block id              | -                             |
| `kv_free`    | blocks given back              | -                             |
| `preempt`    | tokens to compute again        | -                             |
| `prefix_hit` | physical block id              | -                             |
| `kv_evict`   | physical block id              | -                             |

The last four, and `model_call`'s prefill tokens, appear only with a KV pool or a token
budget (`EngineConfig.memory`), so a log without them reads exactly as before. `prefix_hit`
(a cached block a row's table starts with, one event per block, just after its `admit`) and
`kv_evict` (a free cached block losing its identity, just before the `kv_alloc` that reuses
it) appear only with `prefix_caching`.

An emit's position (0 = first generated token) is its step minus its `detail`. A row emits
once a step from its first token to its eviction or preemption, so `detail` stays the same
while it decodes in its slot, and the log writes a step's whole `detail` column from the
batch it was given instead of computing a value per token (`EventLog._emit_columns`). Its
prefix length after the token is prompt length + position + 1.

A request's prompt, budget and stop sequences are stored once, in the request table,
when it arrives. JSON Lines starts with one header line (the engine's `EngineConfig`, and
the model's name and the token words when known), then one line per event; `arrive`
lines carry the request's table entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from ..request import FinishReason

FORMAT = "continuous-batching-lab/event-log"
VERSION = 1
ABSENT = -1  # an int column's "no slot" / "no request" (the JSONL and the Event say None)


class EventKind(IntEnum):
    ARRIVE = 0
    ADMIT = 1
    MODEL_CALL = 2
    EMIT = 3
    STOP_MATCH = 4
    EVICT = 5
    ERROR = 6
    PREFILL = 7
    KV_ALLOC = 8
    KV_FREE = 9
    PREEMPT = 10
    PREFIX_HIT = 11
    KV_EVICT = 12

    @property
    def label(self) -> str:
        return self.name.lower()


KIND_BY_LABEL = {kind.label: kind for kind in EventKind}
REASON_BY_LABEL = {reason.label: reason for reason in FinishReason}


class RequestInfo(NamedTuple):
    """A request as the event log records it at arrival: immutable, and all a replay needs
    (no callbacks, no engine state, unlike `Sequence`). (A named tuple, not a frozen dataclass:
    a frozen dataclass sets each field through `object.__setattr__`, and one is made a request.)"""

    request_id: str
    prompt: tuple[int, ...]
    max_tokens: int
    stop_sequences: tuple[tuple[int, ...], ...]
    priority: int = 0  # admission order, lower first (in JSON Lines only when not 0, so older logs load)


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
    prefill_tokens: int | None = None  # model_call, with memory: prompt tokens the step computed
    tokens: int | None = None  # prefill: tokens computed for the row this step
    computed: int | None = None  # prefill: the row's tokens in the cache after it
    block: int | None = None  # kv_alloc, prefix_hit, kv_evict: the physical block id
    blocks: int | None = None  # kv_free: how many blocks the row gave back
    recompute: int | None = None  # preempt: tokens (prompt + generated) the row must compute again


def mask_tuple(bits: int, width: int) -> tuple[bool, ...]:
    return tuple(bool(bits >> i & 1) for i in range(width))


def mask_bits(mask: list[bool] | tuple[bool, ...]) -> int:
    return sum(1 << i for i, active in enumerate(mask) if active)

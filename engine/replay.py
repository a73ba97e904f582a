"""Rebuild the slot table and the waiting queue at every step, from the event log alone.

`StepState.slots` is the slot table as the model call of that step saw it (after
admission), with each row's token of this step and, for rows evicted at the end of the
step, why. `waiting` is the queue after admission. A loaded JSONL file replays exactly
like a live run, because this module never touches the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .events import EventLog


@dataclass(frozen=True, slots=True)
class SlotState:
    request_id: str
    prompt_len: int
    generated: int  # tokens generated so far, this step's included
    token: int | None = None  # emitted at this step
    admitted: bool = False  # admitted at this step
    stop_sequence: tuple[int, ...] | None = None  # matched at this step
    finish_reason: str | None = None  # evicted at the end of this step


@dataclass(frozen=True, slots=True)
class StepState:
    step: int
    slots: tuple[SlotState | None, ...]
    waiting: tuple[str, ...]
    rows_sent: int  # 0 when no model call was made
    active_mask: tuple[bool, ...] | None
    finished: tuple[str, ...]  # every request delivered at this step, with or without a slot
    errors: tuple[str, ...]


class Replay:
    """Every step's state, computed once: `replay[k]` is step k (0 <= k < len(replay))."""

    def __init__(self, log: EventLog):
        self.log = log
        self.outputs = log.outputs()  # request id -> prompt + generated tokens
        self.prompt_len = {info.request_id: len(info.prompt) for info in log.requests}
        self.states: list[StepState] = []
        slots: list[SlotState | None] = [None] * log.settings.batch_size
        waiting: dict[str, None] = {}  # insertion-ordered set
        events = iter(log)
        event = next(events, None)
        for step in range(log.num_steps):
            slots = [
                None if s is None or s.finish_reason else replace(s, token=None, admitted=False, stop_sequence=None)
                for s in slots
            ]
            call, finished, errors = None, [], []
            while event is not None and event.step == step:
                rid = event.request_id
                if event.kind == "arrive":
                    waiting[rid] = None
                elif event.kind == "admit":
                    waiting.pop(rid, None)
                    slots[event.slot] = SlotState(rid, self.prompt_len[rid], 0, admitted=True)
                elif event.kind == "model_call":
                    call = event
                elif event.kind == "emit":
                    row = slots[event.slot]
                    slots[event.slot] = replace(row, token=event.token, generated=row.generated + 1)
                elif event.kind == "stop_match":
                    slots[event.slot] = replace(slots[event.slot], stop_sequence=event.sequence)
                elif event.kind == "evict":
                    finished.append(rid)
                    if event.slot is None:
                        waiting.pop(rid, None)
                    elif call is None:  # cancelled at the step boundary: the slot is free now
                        slots[event.slot] = None
                    else:
                        slots[event.slot] = replace(slots[event.slot], finish_reason=event.reason)
                elif event.kind == "error":
                    errors.append(event.message)
                event = next(events, None)
            self.states.append(
                StepState(
                    step,
                    tuple(slots),
                    tuple(waiting),
                    call.rows if call else 0,
                    call.active_mask if call else None,
                    tuple(finished),
                    tuple(errors),
                )
            )

    def __len__(self) -> int:
        return len(self.states)

    def __getitem__(self, step: int) -> StepState:
        return self.states[step]

    def prefix(self, request_id: str, generated: int) -> list[int]:
        """The request's prompt plus its first `generated` tokens: a row of the model input."""
        return self.outputs[request_id][: self.prompt_len[request_id] + generated]

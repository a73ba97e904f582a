"""What one step does, as plain records: the scheduler makes them, the engine runs them, the log writes them.

- `Plan`: one step's decisions, before its model call: who was admitted, preempted or given
  blocks (`Action`s, in order), who prefills, and the `Batch` the model gets.
- `Finished`: a row that ended, why, and what it gave back.
"""

from __future__ import annotations

from typing import NamedTuple

from .log.events import EventKind
from .request import FinishReason, Sequence


class Action(NamedTuple):
    """One change a step makes to a request before its model call."""

    kind: EventKind  # ADMIT (into `slot`), KV_ALLOC (a running row's new blocks) or PREEMPT (out of `slot`)
    seq: Sequence
    slot: int  # the slot it holds (ADMIT, KV_ALLOC) or held (PREEMPT)
    blocks: list[int] | tuple = ()  # ADMIT, KV_ALLOC: the KV block ids it takes (none without a KV pool)
    freed: int = 0  # PREEMPT: how many blocks it gave back


class Batch(NamedTuple):
    """The rows of one model call, in slot order."""

    rows: list[Sequence]
    prefixes: list[list[int]]  # each row's token list: the ragged batch, as the model gets it
    mask: int  # bit i set: slot i sends a row

    @classmethod
    def of(cls, rows: list[Sequence]) -> Batch:
        return cls(rows, [seq.tokens for seq in rows], sum(1 << seq.slot for seq in rows))


class Plan:
    """One step's decisions, in the order the event log records them."""

    __slots__ = ("step", "actions", "grown", "work", "batch")

    def __init__(self, step: int):
        self.step = step
        self.actions: list[Action] = []  # admissions, running rows' new blocks, preemptions, in order
        self.grown: tuple | None = None  # decoding rows' new blocks, before `actions`: (slots, log indices, blocks)
        self.work: list[Sequence] = []  # rows prefilling this step (`scheduled` tokens each)
        self.batch: Batch | None = None  # the rows the model gets; None: no row holds a slot

    def admitted(self) -> list[Action]:
        return [action for action in self.actions if action.kind is EventKind.ADMIT]

    def prefill_tokens(self) -> int:
        """The prompt (and recomputed) tokens this step prefills."""
        return sum(seq.scheduled for seq in self.work)


class Finished(NamedTuple):
    """A row that ended this step (or a request that ended without one)."""

    seq: Sequence
    reason: FinishReason
    matched: int | None  # the stop sequence's index, -1 for the stop token, None otherwise
    freed: int  # the KV blocks it gave back

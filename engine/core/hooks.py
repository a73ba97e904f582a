"""The points where the engine's behaviour can be varied: the bug zoo overrides one each.

Every default here is the correct behaviour, and each is a decision, not an action: the
engine asks, then acts itself. Each runs once per request or once per step, never per
token, so the hot path pays nothing for them. `engine/practice/zoo.py` subclasses the
engine and overrides exactly one hook per classic mistake (a test holds it to that).

One more, `_may_admit`, is the engine's own (`engine.py`), since it is where static and
continuous batching differ. The last four are asked by the KV-cache scheduler (`memory_scheduler.py`), only when a row
is preempted or a request with blocks is cancelled (docs/conventions.md, "Memory").
"""

from __future__ import annotations

from .request import Sequence
from .stops import stop_matcher

HOOKS = (
    "_matcher",
    "_limit",
    "_may_admit",
    "_stop_state_at_admission",
    "_answer_order",
    "_returns_slot_at_once",
    "_delivered",
    "_preemption_victim",
    "_preempted_to_front",
    "_kept_when_preempted",
    "_frees_blocks_when_cancelled",
)


class EngineHooks:
    _matcher = staticmethod(stop_matcher)  # stop-sequence automaton factory, called per distinct stop list

    def _limit(self, max_tokens: int, prompt_len: int) -> int:
        """Generated tokens after which the row stops (at submission)."""
        return max_tokens  # generated tokens only

    def _stop_state_at_admission(self, seq: Sequence, previous: Sequence | None) -> int:
        """The stop matcher's state a request starts from; `previous` last held its slot."""
        return 0  # fresh: nothing of the slot's last request carries over

    def _answer_order(self, rows: list[Sequence]) -> list[Sequence]:
        """The rows that the model's answers belong to, in answer order (once per step)."""
        return rows  # exactly the rows sent, in the order they were sent

    def _returns_slot_at_once(self) -> bool:
        """Whether a finished row's slot is free for this step's admissions (else: after the next step's)."""
        return True

    def _delivered(self, seq: Sequence) -> list[int]:
        """What the callback receives."""
        return seq.tokens  # prompt + generated, stop token included

    def _preemption_victim(self, running: list[Sequence]) -> Sequence:
        """The running row preempted when a row needs a block and none is free (it may be that row)."""
        # the newest admitted (it has done the least work), among the lowest priority (the highest value),
        # as vLLM's priority scheduling does
        return max(running, key=lambda row: (row.priority, row.admitted_at))

    def _preempted_to_front(self) -> bool:
        """Whether a preempted row goes back to the front of the queue (else: to its back)."""
        return True  # it was running before anyone waiting

    def _kept_when_preempted(self, seq: Sequence) -> list[int]:
        """The tokens a preempted row keeps: readmitted, it prefills them again, then continues."""
        return seq.tokens  # prompt + generated: nothing it generated is lost or generated twice

    def _frees_blocks_when_cancelled(self) -> bool:
        """Whether a cancelled row gives its KV blocks back to the pool."""
        return True

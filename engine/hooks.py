"""The points where the engine's behaviour can be varied: the bug zoo overrides one each.

Every default here is the correct behaviour. Each hook runs once per request or once per
step, never per token, so the engine's hot path pays nothing for them. `engine/zoo.py`
subclasses the engine and overrides exactly one hook per classic mistake.
"""

from __future__ import annotations

from .request import Sequence
from .stops import stop_matcher


class EngineHooks:
    _matcher = staticmethod(stop_matcher)  # stop-sequence automaton factory, called per distinct stop list

    def _limit(self, seq: Sequence) -> int:
        """Generated tokens after which the row stops (at submission)."""
        return seq.max_tokens  # generated tokens only

    def _admitted(self, seq: Sequence) -> None:
        """Called after `seq` takes its slot."""

    def _answer_order(self, rows: list[Sequence]) -> list[Sequence]:
        """The rows that the model's answers belong to, in answer order (once per step)."""
        return rows  # exactly the rows sent, in the order they were sent

    def _release(self, seq: Sequence) -> None:
        """Free a finished row's slot (at eviction)."""
        self._scheduler.finished(seq)

    def _delivered(self, seq: Sequence) -> list[int]:
        """What the callback receives."""
        return seq.tokens  # prompt + generated, stop token included

"""Incremental multi-token stop matching: an Aho–Corasick automaton over token ids.

Feeding one token costs O(1) amortised, whatever the number and length of the stop
sequences: the automaton's state (one int) stands for the longest suffix of the output
that is a prefix of some stop sequence, so overlaps such as stop [1, 1, 2] on output
1, 1, 1, 2 are found. When several sequences end on the same token, the one listed first
wins. The state belongs to the request, not to the slot.

Reference: A. V. Aho and M. J. Corasick, "Efficient string matching: an aid to
bibliographic search", CACM 18(6), 1975.
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache

NO_MATCH = -1


class StopMatcher:
    """An immutable automaton for one list of stop sequences; share it freely."""

    __slots__ = ("sequences", "_goto", "_fail", "_match")

    def __init__(self, sequences: tuple[tuple[int, ...], ...]):
        self.sequences = sequences
        self._goto: list[dict[int, int]] = [{}]
        self._match: list[int] = [NO_MATCH]
        for index, sequence in enumerate(sequences):
            node = 0
            for token in sequence:
                nxt = self._goto[node].get(token)
                if nxt is None:
                    nxt = len(self._goto)
                    self._goto[node][token] = nxt
                    self._goto.append({})
                    self._match.append(NO_MATCH)
                node = nxt
            if self._match[node] == NO_MATCH:
                self._match[node] = index
        self._fail = [0] * len(self._goto)
        self._link_failures()

    def _link_failures(self) -> None:
        # Breadth-first, so a node's failure target is final before its children need it.
        queue = deque(self._goto[0].values())
        while queue:
            node = queue.popleft()
            for token, child in self._goto[node].items():
                queue.append(child)
                self._fail[child] = self.advance(self._fail[node], token)
                inherited = self._match[self._fail[child]]
                if inherited != NO_MATCH and (self._match[child] == NO_MATCH or inherited < self._match[child]):
                    self._match[child] = inherited

    def advance(self, state: int, token: int) -> int:
        """The state after `token`; amortised O(1) over a stream of tokens."""
        goto, fail = self._goto, self._fail
        while True:
            nxt = goto[state].get(token)
            if nxt is not None:
                return nxt
            if state == 0:
                return 0
            state = fail[state]

    def matched(self, state: int) -> int:
        """Index of the (earliest-listed) sequence completed at `state`, or NO_MATCH."""
        return self._match[state]


@lru_cache(maxsize=1024)
def stop_matcher(sequences: tuple[tuple[int, ...], ...]) -> StopMatcher:
    """The shared automaton for a list of stop sequences (built once per distinct list)."""
    return StopMatcher(sequences)

"""A list of stop sequences as a dense transition table, to advance every row of a batch at once.

The automaton is the engine's own Aho–Corasick matcher (`engine/core/stops.py`), so overlaps
and "the earliest completion wins" mean exactly what they mean there. Here its transitions
are laid out as a table: one row per state, one column per token of the list's alphabet
(the tokens that occur in some stop sequence, sorted), plus column 0 for every other token,
which always leads back to the root. Advancing a batch is then one gather for the tokens'
columns (a lookup table indexed by token id, or a `searchsorted` for large or negative ids) and
one for the states (`goto[states, columns]`), with no loop over rows.

The table has `states x (alphabet + 1)` entries; a list whose table would pass
`MAX_TABLE_ENTRIES` is refused with a `ValueError` naming `stop_sequences` (the loop
engine takes any list; this one trades that for speed).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine.core.stops import NO_MATCH, stop_matcher

MAX_TABLE_ENTRIES = 1 << 22  # 16 MiB of int32 transitions
MAX_LOOKUP = 1 << 20  # a list whose tokens are all in [0, MAX_LOOKUP) finds columns in a lookup table


class StopTable:
    """The dense automaton of one list of stop sequences; immutable, shared by every row that uses the list."""

    __slots__ = ("alphabet", "goto", "ends", "column_of")

    def __init__(self, sequences: tuple[tuple[int, ...], ...]):
        matcher = stop_matcher(sequences)
        alphabet = sorted({token for sequence in sequences for token in sequence})
        dense = {0: 0}  # the matcher's state -> this table's row, numbered breadth first
        states, rows = [0], []
        for state in states:  # `states` grows while it is read: a breadth-first walk
            row = [0]
            for token in alphabet:
                target = matcher.advance(state, token)
                if target not in dense:
                    dense[target] = len(states)
                    states.append(target)
                row.append(dense[target])
            rows.append(row)
            if len(states) * (len(alphabet) + 1) > MAX_TABLE_ENTRIES:
                raise ValueError(
                    f"stop_sequences: {len(sequences)} sequences need a table of more than {MAX_TABLE_ENTRIES:,} "
                    "entries; the vectorised engine takes shorter lists"
                )
        self.alphabet = np.array(alphabet, dtype=np.int64)
        self.goto = np.array(rows, dtype=np.int32)
        self.ends = np.array([matcher.matched(state) != NO_MATCH for state in states])  # a stop sequence ends here
        self.column_of = None  # SPEED: token + 1 -> column, when the alphabet is small non-negative ids
        if alphabet[0] >= 0 and alphabet[-1] < MAX_LOOKUP:
            self.column_of = np.zeros(alphabet[-1] + 3, dtype=np.intp)  # -1 and largest + 1 stand for the others
            self.column_of[self.alphabet + 1] = np.arange(1, len(alphabet) + 1)

    def advance(self, states: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        """Each row's state after its token (`states` and `tokens` of the same length)."""
        if self.column_of is not None:  # tokens clipped to [-1, largest + 1] first, so nothing overflows
            return self.goto[states, self.column_of[np.clip(tokens, -1, len(self.column_of) - 2) + 1]]
        columns = np.searchsorted(self.alphabet, tokens)
        known = self.alphabet[np.minimum(columns, len(self.alphabet) - 1)] == tokens
        return self.goto[states, np.where(known, columns + 1, 0)]


@lru_cache(maxsize=256)
def stop_table(sequences: tuple[tuple[int, ...], ...]) -> StopTable:
    """The shared table of one list of stop sequences (built once per distinct list)."""
    return StopTable(sequences)

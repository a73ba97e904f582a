"""A list of stop sequences as a dense transition table, to advance every row of a batch at once.

The automaton is the engine's own Aho–Corasick matcher (`engine/core/stops.py`), so overlaps
and "the earliest completion wins" mean exactly what they mean there. Here its transitions
are laid out as a table: one row per state, one column per token of the list's alphabet
(the tokens that occur in some stop sequence, sorted), plus column 0 for every other token,
which always leads back to the root. Advancing a batch is then one `searchsorted` (the
token's column) and one gather (`goto[states, columns]`), with no loop over rows.

The table has `states x (alphabet + 1)` entries; a list whose table would pass
`MAX_TABLE_ENTRIES` is refused with a `ValueError` naming `stop_sequences` (the loop
engine takes any list; this one trades that for speed).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine.core.stops import NO_MATCH, stop_matcher

MAX_TABLE_ENTRIES = 1 << 22  # 16 MiB of int32 transitions


class StopTable:
    """The dense automaton of one list of stop sequences; immutable, shared by every row that uses the list."""

    __slots__ = ("alphabet", "goto", "ends")

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

    def advance(self, states: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        """Each row's state after its token (`states` and `tokens` of the same length)."""
        columns = np.searchsorted(self.alphabet, tokens)
        known = self.alphabet[np.minimum(columns, len(self.alphabet) - 1)] == tokens
        return self.goto[states, np.where(known, columns + 1, 0)]


@lru_cache(maxsize=256)
def stop_table(sequences: tuple[tuple[int, ...], ...]) -> StopTable:
    """The shared table of one list of stop sequences (built once per distinct list)."""
    return StopTable(sequences)

"""Set operations on int arrays by sorting: `np.unique` and `np.isin` hash in NumPy 2.3 and later, which on
a trace's log (millions of events) costs seconds where a sort costs tens of milliseconds (4.9 s against
0.03 s for `np.unique` of 5.6M sorted steps, numpy 2.4.6)."""

from __future__ import annotations

import numpy as np


def unique(values: np.ndarray) -> np.ndarray:
    """The distinct values, in increasing order (as `np.unique`)."""
    ordered = np.sort(values)
    if not len(ordered):
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def isin(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """Whether each of `values` is in `pool` (as `np.isin`)."""
    ordered = np.sort(pool)
    if not len(ordered):
        return np.zeros(len(values), bool)
    at = np.minimum(np.searchsorted(ordered, values), len(ordered) - 1)
    return ordered[at] == values

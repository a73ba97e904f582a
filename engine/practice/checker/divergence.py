"""Where the solution's model calls first differ from the reference's, in words.

In a ragged batch the order of the rows is the engine's own business (only the mapping of
answers back to rows matters), so each step's rows are compared as a multiset of
(request, prefix): a solution that sends rows in admission order instead of slot order is
not reported at that harmless reorder, but where a request is first wrongly sent. A
padded call's rows are its slots, so they are compared in order.
"""

from __future__ import annotations

from collections import Counter

from .cases import Case
from .rows import owner
from .trace import Trace


def _label(case: Case, trace: Trace, n: int) -> list[str] | None:
    return [f"r{owner(case, row)}:{row}" for row in trace.rows(n)] if n < len(trace.calls) else None


def first_divergence(case: Case, got: Trace, expected: Trace) -> str:
    reordered = []
    for n in range(max(len(got.calls), len(expected.calls))):
        a, b = _label(case, got, n), _label(case, expected, n)
        if a == b:
            continue
        padded = (n < len(got.calls) and got.padded(n)) or (n < len(expected.calls) and expected.padded(n))
        if a is not None and b is not None and not padded and Counter(a) == Counter(b):
            reordered.append(n)
            continue
        text = (
            f"step {n}: the reference sends {'no model call' if b is None else b}, "
            f"the solution sends {'no model call' if a is None else a}"
        )
        return text + _which(a, b) + _reorder_note(reordered)
    return "the model calls match; the difference is in what the callbacks receive" + _reorder_note(reordered)


def _which(a: list[str] | None, b: list[str] | None) -> str:
    """The rows that differ, when the two calls share some."""
    if not a or not b:
        return ""
    missing, extra = Counter(b) - Counter(a), Counter(a) - Counter(b)
    if sum(missing.values()) + sum(extra.values()) >= len(a) + len(b):
        return ""
    parts = [f"not sent: {', '.join(missing.elements())}"] if missing else []
    parts += [f"sent instead: {', '.join(extra.elements())}"] if extra else []
    return " (" + "; ".join(parts) + ")"


def _reorder_note(steps: list[int]) -> str:
    if not steps:
        return ""
    named = ", ".join(map(str, steps))
    return (
        f"; before that, step{'s' * (len(steps) > 1)} {named} sent the same rows in another order, which a ragged "
        "batch allows"
    )

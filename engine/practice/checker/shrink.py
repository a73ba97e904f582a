"""Shrink a failing generated case to a minimal one that still fails the same check.

Greedy delta debugging: try removing a request, lowering the batch size, a budget or a
prompt, or dropping stop sequences; keep any change after which the same check still
fails; stop when nothing helps or after `MAX_RUNS` runs of the solution.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from .cases import Case, renumbered

MAX_RUNS = 500


def candidates(case: Case) -> Iterator[Case]:
    """Smaller variants of `case`, the biggest cuts first."""
    requests = list(case.requests)

    def with_request(i: int, **changes) -> Case:
        return renumbered(case, requests[:i] + [replace(requests[i], **changes)] + requests[i + 1 :])

    for i in range(len(requests)):
        if len(requests) > 1:
            yield renumbered(case, requests[:i] + requests[i + 1 :])
    if case.batch_size > 1:
        yield replace(case, batch_size=case.batch_size - 1)
    for i, r in enumerate(requests):
        if r.stops:
            yield with_request(i, stops=())
        if len(r.prompt) > 1:
            yield with_request(i, prompt=r.prompt[:1])
        if r.max_tokens > 1:
            yield with_request(i, max_tokens=1)
            yield with_request(i, max_tokens=r.max_tokens - 1)
        if len(r.stops) > 1:
            yield with_request(i, stops=r.stops[:-1])
        if len(r.prompt) > 2:
            yield with_request(i, prompt=r.prompt[:-1])
    if case.stop_token is not None:
        yield replace(case, stop_token=None)


def shrink(case: Case, still_fails: Callable[[Case], bool]) -> Case:
    runs = 0
    improved = True
    while improved and runs < MAX_RUNS:
        improved = False
        for smaller in candidates(case):
            runs += 1
            if still_fails(smaller):
                case, improved = smaller, True
                break
            if runs >= MAX_RUNS:
                break
    return replace(case, name=f"{case.name} (shrunk)")

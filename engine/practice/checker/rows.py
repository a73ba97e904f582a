"""Reading a trace: whose row is whose, when each request reached the model, and the slots it held.

A solution's own slots are invisible to the checker, so they are inferred the way the
contract assigns them (`slot_steps`): a request takes the lowest free slot when it first
reaches the model and frees it when its callback fires. The rebuilt event log
(`reconstruct.py`) and the hints (`hints.py`: who held a slot before a request) both read
that one inference.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from ...core.request import FinishReason
from .cases import Case
from .trace import Trace


def owner(case: Case, prefix: list[int]) -> int | None:
    """The request a row belongs to: its prompt starts with the request's id token."""
    matches = [i for i, r in enumerate(case.requests) if r.prompt and prefix[: len(r.prompt)] == list(r.prompt)]
    if matches:
        return max(matches, key=lambda i: len(case.requests[i].prompt))
    empty = [i for i, r in enumerate(case.requests) if not r.prompt]
    return empty[0] if empty else None


def appearances(case: Case, trace: Trace) -> tuple[dict[int, int], dict[int, int]]:
    """First and last model call in which each request had a row."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for n in range(len(trace.calls)):
        for row in trace.rows(n):
            i = owner(case, row)
            if i is not None:
                first.setdefault(i, n)
                last[i] = n
    return first, last


def outputs(trace: Trace) -> dict[int, list]:
    """What each request's callback received (its last call, if it was called more than once)."""
    return {i: tokens for i, tokens, _ in trace.callbacks}


class SlotStep(NamedTuple):
    step: int  # the model call this step makes (len(trace.calls): after the last one)
    evicted: list[tuple[int, int | None]]  # (request, its slot, None if it never held one), delivered before it
    admitted: list[tuple[int, int]]  # (request, slot) taking a slot at this call
    slots: dict[int, int]  # request -> slot during this call


def slot_steps(case: Case, trace: Trace, owned: list[list[tuple[int | None, list]]]) -> Iterator[SlotStep]:
    """The inferred slots, one `SlotStep` per model call and one after the last; `owned` is each
    call's rows with their owners (`owner`)."""
    finishing: dict[int, list[int]] = {}  # model calls made before -> requests delivered then (their last callback)
    for i, before in {i: before for i, _, before in trace.callbacks}.items():
        finishing.setdefault(before, []).append(i)
    slots: dict[int, int] = {}
    for step in range(len(trace.calls) + 1):
        evicted = [(i, slots.pop(i, None)) for i in sorted(finishing.get(step, []))]
        admitted = []
        for i, _ in owned[step] if step < len(trace.calls) else ():
            if i is not None and i not in slots and len(slots) < case.batch_size:
                slots[i] = min(set(range(case.batch_size)) - set(slots.values()))
                admitted.append((i, slots[i]))
        yield SlotStep(step, evicted, admitted, dict(slots))


def previous_holders(case: Case, trace: Trace) -> dict[int, int]:
    """Request -> the request that held its (inferred) slot just before it, for those that had one."""
    owned = [[(owner(case, row), row) for row in trace.rows(n)] for n in range(len(trace.calls))]
    last_in: dict[int, int] = {}  # slot -> the request that last held it
    previous: dict[int, int] = {}
    for step in slot_steps(case, trace, owned):
        for i, slot in step.evicted:
            if slot is not None:
                last_in[slot] = i
        for i, slot in step.admitted:
            if slot in last_in:
                previous[i] = last_in[slot]
    return previous


def stop_matched(case: Case, i: int, tokens: list) -> tuple[int, ...] | None:
    """The stop sequence `tokens` (prompt + generated) ends with, the earliest listed, if any."""
    generated = tokens[len(case.requests[i].prompt) :]
    ends = (s for s in case.requests[i].stops if len(generated) >= len(s) and generated[-len(s) :] == list(s))
    return next(ends, None)


def finish_reason(case: Case, i: int, tokens: list) -> FinishReason:
    """Why a row delivered as `tokens` ended, by the contract's order: stop token, stop sequence, max_tokens."""
    generated = tokens[len(case.requests[i].prompt) :]
    if generated and case.stop_token is not None and generated[-1] == case.stop_token:
        return FinishReason.STOP_TOKEN
    return FinishReason.MAX_TOKENS if stop_matched(case, i, tokens) is None else FinishReason.STOP_SEQUENCE

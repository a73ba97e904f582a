"""A run that did not finish: who never got a result, after how many model calls, and its shape.

When a case hangs or raises, the report names the request the run failed on and how far
it got (`left_behind`), and the checker keeps going: generated workloads still run, but
not those of the same shape (`shape`, `has_shape`), since they would only hang again. A
shape is what is special about the request the run failed on (its `max_tokens = 0`, an
empty prompt, stop sequences, the stop token inside its prompt); a request with nothing
special has the empty shape, which excludes nothing.
"""

from __future__ import annotations

import re

from .cases import Case
from .rows import outputs, owner
from .trace import MAX_CALLS, Trace

ZERO_BUDGET = "max_tokens = 0"
EMPTY_PROMPT = "an empty prompt"
STOPS = "stop sequences"
STOP_IN_PROMPT = "the stop token inside its prompt"


def undelivered(case: Case, trace: Trace) -> list[int]:
    """Requests whose callback never fired."""
    done = outputs(trace)
    return [i for i in range(len(case.requests)) if i not in done]


def culprit(case: Case, trace: Trace) -> int | None:
    """The request the run failed on: the one being submitted when submit_request raised, else the
    first one never delivered (None if every request was delivered)."""
    submitting = re.fullmatch(r"submit_request r(\d{1,5})", trace.failed_at or "")  # the worker's word: checked
    if submitting and int(submitting[1]) < len(case.requests):
        return int(submitting[1])
    left = undelivered(case, trace)
    return left[0] if left else None


def shape(case: Case, i: int | None) -> frozenset[str]:
    if i is None:
        return frozenset()
    request = case.requests[i]
    features = {
        ZERO_BUDGET: request.max_tokens == 0,
        EMPTY_PROMPT: not request.prompt,
        STOPS: bool(request.stops),
        STOP_IN_PROMPT: case.stop_token is not None and case.stop_token in request.prompt,
    }
    return frozenset(name for name, present in features.items() if present)


def has_shape(case: Case, features: frozenset[str]) -> bool:
    """Whether some request of `case` has every feature of a shape (never, for the empty shape)."""
    return bool(features) and any(features <= shape(case, i) for i in range(len(case.requests)))


def named(case: Case, i: int) -> str:
    """r0, with what is special about it: r0 (max_tokens = 0)."""
    features = sorted(shape(case, i))
    return f"r{i}" + (f" ({', '.join(features)})" if features else "")


def left_behind(case: Case, trace: Trace) -> str:
    """How far a run that was stopped got, in words."""
    calls = len(trace.calls)
    limit = f" (the checker's limit: it refuses any call past {MAX_CALLS})" if calls >= MAX_CALLS else ""
    sent = {i: 0 for i in range(len(case.requests))}  # model calls with a row of each request
    for n in range(calls):
        for i in {owner(case, row) for row in trace.rows(n)} - {None}:
            sent[i] += 1
    left = undelivered(case, trace)
    stuck = [join([f"{named(case, i)}, whose row was in {sent[i]} of them" for i in left if sent[i]], "and")]
    unsent = [named(case, i) for i in left if not sent[i]]
    stuck = [group for group in (*stuck, join(unsent, "and") + " (never sent to the model)" if unsent else "") if group]
    done = [f"r{i}" for i in sorted(outputs(trace))]
    head = f"when it was stopped, the model had been called {calls} time{'s' * (calls != 1)}{limit}"
    if not stuck:
        return head + ", and every request had been delivered, yet run() had not returned"
    delivered = f"; {join(done, 'and')} {'was' if len(done) == 1 else 'were'} delivered" if done else ""
    return f"{head}, and no result had come for {', nor for '.join(stuck)}{delivered}"


def join(items: list[str], word: str) -> str:
    """a; a and b; a, b and c ("" for none)."""
    if not items:
        return ""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {word} " + items[-1]

"""Two runs of one checker case, each with the engine's own event log, and where they first differ.

Spot the bug runs one zoo engine (the project's engine with one hook overridden) and the
correct engine on the same checker case, with the checker's recording model (`run_logged`),
and keeps each engine's *own* event log: the narration then gives the engine's real reasons
(a stop sequence it matched, the budget it reached), not reasons guessed from outputs. What
each callback really received is kept beside the log, because one mistake (a trimmed stop
token) changes only the delivery. The first (step, slot) where the runs differ (the request,
its token, a stop match, an eviction and its reason, what the callback received, a
preemption and what it recomputes, the blocks a row gives back) is `first_difference`.
A memory mistake's demo case (`engine/practice/memory_demos.py`) runs the same way, on an
engine with a KV pool and with its cancellations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from engine import EventLog
from engine.core.engine import BatchInferenceEngine
from engine.practice.checker.trace import CheckModel, Trace
from engine.practice.memory_demos import DemoCase

CELL_EVENTS = ("admit", "emit", "stop_match", "evict", "preempt", "kv_free")  # what happens in a (step, slot) cell

Received = dict[str, tuple[int, ...]]  # request id -> what its callback received
Answer = Callable[[list[int]], int]  # the checker model's next token for a row (prompt + generated so far)


class Demo(NamedTuple):
    """One bug's demo: the case, both engines' own logs, what their callbacks received, and what the
    case's model answers for any row (it is deterministic: one answer per prefix)."""

    title: str
    buggy: EventLog
    correct: EventLog
    received: tuple[Received, Received]
    answer: Answer


def cells(log: EventLog, received: Received | None = None) -> dict[tuple[int, int], frozenset]:
    """What happens in each (step, slot) cell: who is admitted, emits which token, matches which
    stop, is evicted why (and delivered what: `received`, else the log's own outputs)."""
    if received is None:
        received = {rid: tuple(tokens) for rid, tokens in log.outputs().items()}
    out: dict[tuple[int, int], set] = {}
    for e in log:
        if e.slot is None or e.kind not in CELL_EVENTS:
            continue
        value = {"emit": e.token, "stop_match": e.sequence, "preempt": e.recompute, "kv_free": e.blocks}.get(e.kind)
        if e.kind == "evict":
            value = (e.reason, tuple(received.get(e.request_id, ())))
        out.setdefault((e.step, e.slot), set()).add((e.kind, e.request_id, value))
    return {key: frozenset(facts) for key, facts in out.items()}


def first_difference(
    a: EventLog, b: EventLog, received: tuple[Received | None, Received | None] = (None, None)
) -> tuple[int, int] | None:
    """The earliest (step, slot) where the two runs differ: the request there, its token, a stop
    match, an eviction and its reason, or what the evicted request's callback received."""
    left, right = cells(a, received[0]), cells(b, received[1])
    differing = [key for key in left.keys() | right.keys() if left.get(key) != right.get(key)]
    return min(differing) if differing else None


def run_logged(engine_class: type[BatchInferenceEngine], demo: DemoCase) -> tuple[Trace, EventLog, Received]:
    """Run `demo.case` on `engine_class` the way the checker's `run_case` does (its recording model,
    the same submissions and callbacks), with the demo's engine options (a KV pool) and cancellations,
    and keep the engine's own event log too."""
    data = demo.case.to_json()
    model = CheckModel(data)
    trace, received, ids = Trace(model.calls), {}, []
    engine = engine_class(model, data["batch_size"], data["stop_token"], **demo.options)
    for i, request in enumerate(data["requests"]):

        def deliver(tokens, i=i):
            trace.callbacks.append([i, [int(t) for t in tokens], len(model.calls)])
            received[ids[i]] = tuple(int(t) for t in tokens)

        stops = {"stop_sequences": [list(s) for s in request["stops"]]} if request["stops"] else {}
        ids.append(engine.submit_request(list(request["prompt"]), request["max_tokens"], deliver, **stops))
    for step, index in demo.cancels:
        while engine.next_step < step and engine.step():
            pass
        engine.cancel(ids[index])
    engine.run()
    return trace, engine.event_log, received

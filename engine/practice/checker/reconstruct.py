"""An event log of a solution's run, rebuilt from the recording model's calls and the callbacks.

The solution's own slots are invisible, so slots are assigned the way the contract does:
a request takes the lowest free slot when it first reaches the model and frees it when
its callback fires. The result loads in the app like any other log. A run that ended
early (it hung or raised) ends with an `error` event that says so.

Rebuilding is linear in the trace (each row's owner is found once, and what the model
answered it is read off the request's next row in one backward pass), and a log that
claims to come from the checker is refused unless its case and its size are a checker's.
"""

from __future__ import annotations

import json

from ...core.config import EngineConfig
from ...core.log.event_log import EventLog
from ...core.log.events import ABSENT, EventKind, RequestInfo, mask_bits
from .cases import MAX_BATCH_SIZE, MAX_REQUESTS, Case
from .rows import finish_reason, outputs, owner, slot_steps
from .stuck import culprit, join, undelivered
from .trace import MAX_CALLS, Trace

MODEL_NAME = "checker"  # the header's model starts with this, then the case as JSON
MAX_CASE_CHARS = 64 * 1024  # the case's JSON in a header; the largest case within the bounds is 16 KB
MAX_LOG_STEPS = MAX_CALLS + 1  # a rebuilt log has one step per model call (the trace stops at MAX_CALLS)
# arrivals and evictions (one each per request), plus per step a model call, and at most one
# admission and one emit per slot, and the error event that marks a run that ended early
MAX_LOG_EVENTS = 2 * MAX_REQUESTS + MAX_LOG_STEPS * (1 + 2 * MAX_BATCH_SIZE) + 1


def case_from_log(log: EventLog) -> Case | None:
    """The checker case a reconstructed log was made from (None for other logs).

    ValueError, naming what is wrong, if the header's case is not a valid checker case or
    the log does not fit it (its settings, or more steps or events than a rebuilt run has).
    """
    model = log.model or ""
    if not model.startswith(MODEL_NAME + " "):
        return None
    text = model[len(MODEL_NAME) + 1 :]
    if len(text) > MAX_CASE_CHARS:
        raise ValueError(
            f"the checker case in this log is {len(text):,} characters long; the limit is {MAX_CASE_CHARS:,}"
        )
    try:
        case = Case.from_json(json.loads(text))
    except (json.JSONDecodeError, RecursionError):
        raise ValueError("the checker case in this log is not valid JSON") from None
    except ValueError as exc:
        raise ValueError(f"the checker case in this log: {exc}") from None
    if (log.config.batch_size, log.config.stop_token) != (case.batch_size, case.stop_token):
        raise ValueError(
            f"this log's batch_size and stop_token ({log.config.batch_size}, {log.config.stop_token}) "
            f"are not its checker case's ({case.batch_size}, {case.stop_token})"
        )
    if log.num_steps > MAX_LOG_STEPS or len(log) > MAX_LOG_EVENTS:
        raise ValueError(
            f"this log has {log.num_steps:,} steps and {len(log):,} events; a checker's run has at most "
            f"{MAX_LOG_STEPS:,} steps and {MAX_LOG_EVENTS:,} events"
        )
    return case


def reconstruct(case: Case, trace: Trace) -> EventLog:
    model = f"{MODEL_NAME} {json.dumps(case.to_json())}"  # enough to re-run the reference
    log = EventLog(EngineConfig(case.batch_size, case.stop_token, "continuous", False), model=model)
    for i, r in enumerate(case.requests):
        log.arrive(0, RequestInfo(f"r{i}", tuple(r.prompt), r.max_tokens, tuple(r.stops)))
    owned = [[(owner(case, row), row) for row in trace.rows(n)] for n in range(len(trace.calls))]
    answers = _answers(trace, owned)
    delivered = outputs(trace)
    for step, evicted, admitted, slots in slot_steps(case, trace, owned):
        for i, slot in evicted:  # slot None: delivered without ever holding one (max_tokens = 0, or never run)
            reason = finish_reason(case, i, delivered[i])
            log.append(max(step - 1, 0), EventKind.EVICT, ABSENT if slot is None else slot, i, reason)
        if step == len(trace.calls):
            break
        for i, slot in admitted:
            log.append(step, EventKind.ADMIT, slot, i)
        rows = owned[step]
        known: dict[int, int] = {}  # request -> its first row in this call (one token per slot and step)
        for k, (i, _) in enumerate(rows):
            if i in slots:
                known.setdefault(i, k)
        held = set(slots[i] for i in known)
        log.model_call(step, max(len(rows), 1), mask_bits([s in held for s in range(case.batch_size)]))
        for i, k in known.items():
            log.emit(step, slots[i], i, answers[step][k], len(rows[k][1]) - len(case.requests[i].prompt))
    if trace.error:
        _mark_the_end(log, case, trace)
    return log


def _answers(trace: Trace, owned: list[list[tuple[int | None, list]]]) -> list[list[int]]:
    """What the model answered each row of each call (-1 if unknown): the token after the row in the
    request's next row, or in what its (first) callback received if it has no later row."""
    nearest: dict[int, list] = {}  # request -> its row in the nearest later call, else its first callback's tokens
    for i, tokens, _ in reversed(trace.callbacks):
        nearest[i] = tokens
    out: list[list[int]] = [[] for _ in owned]
    for n in range(len(owned) - 1, -1, -1):
        out[n] = [_token_after(nearest.get(i), row) for i, row in owned[n]]
        for i, row in reversed(owned[n]):
            if i is not None:
                nearest[i] = row
    return out


def _token_after(source: list | None, row: list) -> int:
    token = source[len(row)] if source is not None and len(source) > len(row) else None
    return token if type(token) is int else -1


def ended_early(case: Case, trace: Trace) -> str:
    """Why a rebuilt log ends before its run did, in words ("" when the run finished)."""
    if not trace.error:
        return ""
    why = "it did not finish in time" if trace.timeout else "it failed"
    left = undelivered(case, trace)
    never = f"; {join([f'r{i}' for i in left], 'and')} never delivered" if left else ""
    return f"the solution's run was stopped after {len(trace.calls)} model calls ({why}), so this log ends early{never}"


def _mark_the_end(log: EventLog, case: Case, trace: Trace) -> None:
    """An `error` event on the request the run failed on, at the last step: the log ends before the run did."""
    i = culprit(case, trace)
    log.error(max(len(trace.calls) - 1, 0), ABSENT, 0 if i is None else i, ended_early(case, trace))

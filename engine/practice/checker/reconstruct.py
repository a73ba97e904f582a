"""An event log of a solution's run, rebuilt from the recording model's calls and the callbacks.

The solution's own slots are invisible, so slots are assigned the way the contract does:
a request takes the lowest free slot when it first reaches the model and frees it when
its callback fires. The result loads in the app like any other log.

Rebuilding is linear in the trace (each row's owner is found once, and what the model
answered it is read off the request's next row in one backward pass), and a log that
claims to come from the checker is refused unless its case and its size are a checker's.
"""

from __future__ import annotations

import json

from ...core.config import EngineConfig
from ...core.event_log import EventLog
from ...core.events import NONE, EventKind, RequestInfo, mask_bits
from ...core.request import FinishReason
from .cases import MAX_BATCH_SIZE, MAX_REQUESTS, Case
from .checks import owner
from .trace import MAX_CALLS, Trace

MODEL_NAME = "checker"  # the header's model starts with this, then the case as JSON
MAX_CASE_CHARS = 64 * 1024  # the case's JSON in a header; the largest case within the bounds is 16 KB
MAX_LOG_STEPS = MAX_CALLS + 1  # a rebuilt log has one step per model call (the trace stops at MAX_CALLS)
# arrivals and evictions (one each per request), plus per step a model call, and at most one
# admission and one emit per slot
MAX_LOG_EVENTS = 2 * MAX_REQUESTS + MAX_LOG_STEPS * (1 + 2 * MAX_BATCH_SIZE)


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
    finishing: dict[int, list[tuple[int, list]]] = {}  # model calls made before -> (request, tokens)
    for i, tokens, before in {i: (i, tokens, before) for i, tokens, before in trace.callbacks}.values():
        finishing.setdefault(before, []).append((i, tokens))  # each request's last callback
    slots: dict[int, int] = {}
    for step in range(len(trace.calls) + 1):
        for i, tokens in sorted(finishing.get(step, []), key=lambda item: item[0]):
            if i in slots:
                log.append(step - 1, EventKind.EVICT, slots.pop(i), i, _reason(case, i, tokens))
            else:  # delivered without ever holding a slot (max_tokens = 0, or never run)
                log.append(max(step - 1, 0), EventKind.EVICT, NONE, i, _reason(case, i, tokens))
        if step == len(trace.calls):
            break
        rows = owned[step]
        for i, _ in rows:
            if i is not None and i not in slots and len(slots) < case.batch_size:
                slots[i] = min(set(range(case.batch_size)) - set(slots.values()))
                log.append(step, EventKind.ADMIT, slots[i], i)
        known: dict[int, int] = {}  # request -> its first row in this call (one token per slot and step)
        for k, (i, _) in enumerate(rows):
            if i in slots:
                known.setdefault(i, k)
        held = set(slots[i] for i in known)
        log.model_call(step, max(len(rows), 1), mask_bits([s in held for s in range(case.batch_size)]))
        for i, k in known.items():
            log.emit(step, slots[i], i, answers[step][k], len(rows[k][1]) - len(case.requests[i].prompt))
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


def _reason(case: Case, i: int, tokens: list) -> FinishReason:
    generated = tokens[len(case.requests[i].prompt) :]
    if generated and case.stop_token is not None and generated[-1] == case.stop_token:
        return FinishReason.STOP_TOKEN
    if any(generated[-len(s) :] == list(s) for s in case.requests[i].stops if len(generated) >= len(s)):
        return FinishReason.STOP_SEQUENCE
    return FinishReason.MAX_TOKENS

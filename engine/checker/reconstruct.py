"""An event log of a solution's run, rebuilt from the recording model's calls and the callbacks.

The solution's own slots are invisible, so slots are assigned the way the contract does:
a request takes the lowest free slot when it first reaches the model and frees it when
its callback fires. The result loads in the app like any other log.
"""

from __future__ import annotations

import json

from ..events import NONE, EventKind, EventLog, LogSettings, RequestInfo, mask_bits
from ..request import FinishReason
from .cases import Case
from .checks import owner
from .trace import Trace

MODEL_NAME = "checker"  # the header's model starts with this, then the case as JSON


def case_from_log(log: EventLog) -> Case | None:
    """The checker case a reconstructed log was made from (None for other logs)."""
    model = log.settings.model or ""
    if not model.startswith(MODEL_NAME + " "):
        return None
    try:
        data = json.loads(model[len(MODEL_NAME) + 1 :])
    except json.JSONDecodeError:
        raise ValueError("the checker case in this log is not valid JSON") from None
    return Case.from_json(data)


def reconstruct(case: Case, trace: Trace) -> EventLog:
    model = f"{MODEL_NAME} {json.dumps(case.to_json())}"  # enough to re-run the reference
    log = EventLog(LogSettings(case.batch_size, case.stop_token, "continuous", False, model=model))
    for i, r in enumerate(case.requests):
        log.arrive(0, RequestInfo(f"r{i}", tuple(r.prompt), r.max_tokens, tuple(r.stops)))
    slots: dict[int, int] = {}
    delivered = {i: (tokens, before) for i, tokens, before in trace.callbacks}
    for step in range(len(trace.calls) + 1):
        for i, (tokens, before) in sorted(delivered.items()):
            if before != step:
                continue
            if i in slots:
                log.append(step - 1, EventKind.EVICT, slots.pop(i), i, _reason(case, i, tokens))
            else:  # delivered without ever holding a slot (max_tokens = 0, or never run)
                log.append(max(step - 1, 0), EventKind.EVICT, NONE, i, _reason(case, i, tokens))
        if step == len(trace.calls):
            break
        rows = [(owner(case, row), row) for row in trace.rows(step)]
        for i, _ in rows:
            if i is not None and i not in slots and len(slots) < case.batch_size:
                slots[i] = min(set(range(case.batch_size)) - set(slots.values()))
                log.append(step, EventKind.ADMIT, slots[i], i)
        known = [(i, row) for i, row in rows if i in slots]
        log.model_call(
            step, max(len(rows), 1), mask_bits([s in {slots[i] for i, _ in known} for s in range(case.batch_size)])
        )
        answers = _answers(case, trace, step, known)
        for (i, row), token in zip(known, answers):
            log.emit(step, slots[i], i, token, len(row) - len(case.requests[i].prompt))
    return log


def _answers(case: Case, trace: Trace, step: int, known) -> list[int]:
    """What the model answered each row: the next row of the same request holds it."""
    out = []
    for i, row in known:
        following = next(
            (r for n in range(step + 1, len(trace.calls)) for r in trace.rows(n) if owner(case, r) == i), None
        )
        delivered = next((t for j, t, _ in trace.callbacks if j == i), None)
        source = following if following is not None else delivered
        token = source[len(row)] if source is not None and len(source) > len(row) else None
        out.append(token if type(token) is int else -1)
    return out


def _reason(case: Case, i: int, tokens: list) -> FinishReason:
    generated = tokens[len(case.requests[i].prompt) :]
    if generated and case.stop_token is not None and generated[-1] == case.stop_token:
        return FinishReason.STOP_TOKEN
    if any(generated[-len(s) :] == list(s) for s in case.requests[i].stops if len(generated) >= len(s)):
        return FinishReason.STOP_SEQUENCE
    return FinishReason.MAX_TOKENS

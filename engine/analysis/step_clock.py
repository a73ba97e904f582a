"""The simulated clock of a run while it goes: each step the log records, priced by the cost model.

`step_metrics` (metrics.py) prices a finished log all at once; a trace replay needs the same times while
the run goes, to know which step a request arriving at 12.345 s joins. `StepClock` reads the events the
engine wrote since it last looked (one step's), prices that step as `step_metrics` does, and adds it up in
the same order, so its times are `step_metrics`' `end_s` exactly (tests/test_trace_replay.py holds them
equal):

- a busy step (one with events) costs `CostModel.busy_seconds(rows sent, context, prefill)` if it sends rows
  or prefills, else `step_s`; a step with no events is idle and ticks `step_s`;
- context: each emitted token's prefix before it (prompt + position); prefill: the `prefill` events' tokens.

It reads runs with a KV pool or a token budget (their `prefill` events say what each step computed) and a
ragged batch, which is what a trace replay runs; `StepClock` refuses others.
"""

from __future__ import annotations

from ..core.log.event_log import EventLog
from ..core.log.events import EventKind
from .metrics import CostModel

MODEL_CALL, PREFILL, EMIT = EventKind.MODEL_CALL.value, EventKind.PREFILL.value, EventKind.EMIT.value


class StepClock:
    def __init__(self, log: EventLog, cost: CostModel):
        if not log.config.memory or log.config.padded:
            raise ValueError("StepClock: reads runs with a KV pool or a token budget, and a ragged batch")
        self.log, self.cost = log, cost
        self.read = 0  # events priced so far
        self.last_step = -1  # the last busy step
        self.end_s = 0.0  # when it ended

    def start_of(self, step: int) -> float:
        """When `step` starts if no busy step comes before it: the steps since the last busy one tick idle."""
        return self.end_s + (step - self.last_step - 1) * self.cost.step_s

    def advance(self) -> None:
        """Price the step whose events the engine wrote since the last call (none: it was idle)."""
        log, end = self.log, len(self.log)
        if end == self.read:
            return
        step = log.step[self.read]
        rows = prefill = context = 0
        requests = log.requests
        for i in range(self.read, end):
            kind = log.kind[i]
            if kind == EMIT:
                context += len(requests[log.request[i]].prompt) + EventLog.emit_position(step, log.detail[i])
            elif kind == PREFILL:
                prefill += log.value[i]
            elif kind == MODEL_CALL:
                rows += log.value[i]
        cost = self.cost
        duration = cost.busy_seconds(rows, context, prefill) if rows or prefill else cost.step_s
        self.end_s += duration + (step - self.last_step - 1) * cost.step_s
        self.last_step, self.read = step, end

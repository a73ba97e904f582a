"""Replay a trace through the engine: trace time becomes steps through the cost model's step durations.

A trace says when each request arrived, in milliseconds; the engine counts steps. The cost model prices
each step (engine/analysis/step_clock.py, as the metrics do), so the run has a clock: a request joins the
first step that starts at or after its arrival time. Before each step, every request whose time has come
is submitted; when the engine has nothing to do, it skips ahead (idle steps, `step_s` each) to the first
step that starts at or after the next arrival, as a server waits for its next request.

The engine is the ordinary one, with the scenario's settings; the requests' prompts stay `BlockPrompt`s
(a few hundred block ids, not 100,000 ints) until they take a slot.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..analysis.hardware import cost_model
from ..analysis.step_clock import StepClock
from ..core.engine import BatchInferenceEngine
from ..core.log.event_log import EventLog
from .limits import MAX_TRACE_EVENTS, MAX_TRACE_STEPS
from .scenario_types import Scenario
from .toml_reader import ScenarioError
from .trace_workload import trace_model

PROGRESS_EVERY = 5_000  # steps between progress reports


def replay_trace(
    scenario: Scenario,
    progress: Callable[[int, int], None] | None = None,
    engine_class: type[BatchInferenceEngine] = BatchInferenceEngine,
) -> EventLog:
    """Run the scenario's trace to the end; `progress(step, requests_done)` is called now and then."""
    model = scenario.model
    engine = engine_class.from_config(trace_model(model.seed, model.vocab_size, model.eos_token), scenario.engine)
    clock = StepClock(engine.event_log, cost_model(scenario.cost))
    requests, arrivals = scenario.requests, [spec.arrival_ms / 1000 for spec in scenario.requests]
    submitted, steps = 0, 0
    while True:
        step = engine.clock
        if not engine.has_work() and submitted < len(requests):  # idle: wait for the next arrival
            step = first_step_at(clock, step, arrivals[submitted])
        start = clock.start_of(step)
        while submitted < len(requests) and arrivals[submitted] <= start:
            spec = requests[submitted]
            engine.submit_request(spec.prompt, spec.max_tokens, None, request_id=spec.request_id, arrival_step=step)
            submitted += 1
        if not engine.step():
            return engine.event_log
        clock.advance()
        steps += 1
        if len(engine.event_log) > MAX_TRACE_EVENTS or steps > MAX_TRACE_STEPS:  # (the estimate's backstop)
            raise ScenarioError(
                f"{scenario.source}: the replay passed {MAX_TRACE_EVENTS:,} events or {MAX_TRACE_STEPS:,} steps, "
                "the limits, and was stopped"
            )
        if progress is not None and steps % PROGRESS_EVERY == 0:
            progress(engine.clock, submitted - engine.num_unfinished)


def first_step_at(clock: StepClock, step: int, time_s: float) -> int:
    """The first step from `step` on that starts at or after `time_s`."""
    if clock.start_of(step) >= time_s:
        return step
    step += max(0, math.ceil((time_s - clock.start_of(step)) / clock.cost.step_s) - 1)
    while clock.start_of(step) < time_s:  # (the division's rounding, by a step at most)
        step += 1
    return step

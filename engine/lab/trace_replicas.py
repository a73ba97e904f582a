"""A trace replayed on several replicas behind a router, each on its own clock: where one engine cannot keep up.

`[replicas] initial = N` with a `[workload.trace]`: N copies of the scenario's engine, and the router of
lesson 8.6 (engine/lab/replicas.py): each request goes, at its arrival time, to the replica with the
fewest outstanding requests (waiting plus running; ties to the lowest id). There is no autoscaler here
(it reads a signal once a step, and replicas on a real clock do not step together): the number is fixed.

Each replica prices its own steps (engine/analysis/step_clock.py) and so has its own clock: the replay
always advances the replica whose next step starts first, after routing every request that arrives by
then; a request joins its replica's first step that starts at or after its arrival, as in a one-engine
replay (engine/lab/trace_replay.py). The result is one event log a replica; `replicas_summary` reads them
as one service (a request's latency is its own replica's; the hour ends when the last replica is done).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..analysis.hardware import cost_model
from ..analysis.metrics import request_metrics, step_metrics, summary, token_gaps
from ..analysis.step_clock import StepClock
from ..core.engine import BatchInferenceEngine
from ..core.log.event_log import EventLog
from .scenario_types import Scenario
from .trace_replay import first_step_at
from .trace_workload import trace_model


def replay_trace_replicas(scenario: Scenario) -> list[EventLog]:
    """The scenario's trace on its `[replicas] initial` engines; one log each, in replica order."""
    model, cost = scenario.model, cost_model(scenario.cost)
    engines = [
        BatchInferenceEngine.from_config(trace_model(model.seed, model.vocab_size, model.eos_token), scenario.engine)
        for _ in range(scenario.replicas.initial)
    ]
    clocks = [StepClock(engine.event_log, cost) for engine in engines]
    requests = scenario.requests
    arrivals = [spec.arrival_ms / 1000 for spec in requests]
    routed = 0
    while True:
        starts = [clock.start_of(e.clock) if e.has_work() else math.inf for e, clock in zip(engines, clocks)]
        first = min(range(len(engines)), key=starts.__getitem__)
        if routed < len(requests) and arrivals[routed] <= starts[first]:
            engine = min(engines, key=lambda e: e.num_unfinished)  # (min keeps the lowest id on ties)
            clock = clocks[engines.index(engine)]
            step = engine.clock if engine.has_work() else first_step_at(clock, engine.clock, arrivals[routed])
            spec = requests[routed]
            engine.submit_request(spec.prompt, spec.max_tokens, None, request_id=spec.request_id, arrival_step=step)
            routed += 1
        elif starts[first] == math.inf:
            return [engine.event_log for engine in engines]
        else:
            engines[first].step()
            clocks[first].advance()


def replicas_summary(scenario: Scenario, logs: list[EventLog]) -> dict[str, float | int | list]:
    """The service's figures over every replica, and each replica's share of the requests and busy time."""
    cost = cost_model(scenario.cost)
    steps = [step_metrics(log, cost) for log in logs]
    requests = pd.concat([request_metrics(log, cost, s) for log, s in zip(logs, steps)])
    gaps = np.concatenate([token_gaps(log, s) for log, s in zip(logs, steps)])
    each = [summary(log, cost) for log in logs]
    hour = max(s.end_s.iloc[-1] if len(s) else 0.0 for s in steps)
    looked_up = [f["cached_tokens"] / f["prefix_hit_rate"] if f["prefix_hit_rate"] else 0.0 for f in each]
    percentile = lambda values, q: float(np.nanpercentile(values, q)) if len(values) else None  # noqa: E731
    return {
        "replicas": len(logs),
        "requests": len(requests),
        "generated_tokens": int(requests.output_tokens.sum()),
        "total_time_s": float(hour),
        "throughput_tokens_per_s": float(requests.output_tokens.sum() / hour) if hour else 0.0,
        "ttft_p50_s": percentile(requests.ttft_s, 50),
        "ttft_p99_s": percentile(requests.ttft_s, 99),
        "e2e_p50_s": percentile(requests.e2e_s, 50),
        "e2e_p99_s": percentile(requests.e2e_s, 99),
        "tbt_p99_s": percentile(gaps, 99),
        "prefix_hit_rate": sum(f["cached_tokens"] for f in each) / sum(looked_up) if sum(looked_up) else 0.0,
        "requests_per_replica": [f["requests"] for f in each],
        "busy_share_per_replica": [min(1.0, _busy(s) / hour) if hour else 0.0 for s in steps],  # (min: rounding)
    }


def _busy(steps: pd.DataFrame) -> float:
    """Seconds of steps that sent rows or prefilled."""
    busy = (steps.rows_sent.to_numpy() > 0) | (steps.prefill_tokens.to_numpy() > 0)
    return float(steps.duration_s.to_numpy()[busy].sum())

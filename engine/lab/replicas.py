"""Several engines behind a router, and an autoscaler that adds replicas when the queue backs up
(seed 004: scale on queue depth, not on GPU utilisation alone). Simulated, on one clock: no
cluster, no network, just copies of the scenario's engine stepped in turn.

- The router sends each request, at its arrival step, to the serving replica with the fewest
  outstanding requests (waiting plus running: "join the shortest queue"; ties to the lowest id).
  Counting running rows too sends work to free slots before anyone queues.
- The autoscaler reads one signal after every step: the mean queue depth per serving replica
  (`signal = "queue_depth"`), or the mean share of busy slots (`"utilization"`). When it stays
  above `threshold` for `window` consecutive steps, a replica is started (up to `max`); it serves
  from `startup_steps` later, and no other is started until it does (a cooldown: the signal cannot
  fall before the new capacity serves). With `idle_steps`, a replica with nothing to do is stopped once no
  request has waited anywhere for that many steps (never below `initial`).

Why queue depth: continuous batching keeps every slot busy whenever anything waits, so a replica
that copes (a short queue) and one that drowns (a queue growing without end) both read ~100%
busy. Utilisation cannot tell them apart; the queue can, and it moves first.

Time is in steps (each replica makes one model call a step); latencies are in steps too. The
work, replicas × steps, is estimated against the limits before anything runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..analysis.metrics import request_metrics
from ..core.engine import BatchInferenceEngine
from ..core.log.events import EventKind
from .limits import MAX_REPLICA_STEPS
from .scenario_types import ReplicaConfig, Scenario
from .scenario_work import check_work
from .simulate import build_model
from .toml_reader import ScenarioError


@dataclass
class Replica:
    engine: BatchInferenceEngine
    ready_at: int  # the first step it serves
    stopped: bool = False


@dataclass
class ReplicaRun:
    """What the replica simulation reports."""

    steps: pd.DataFrame  # per step: serving replicas, queue depth, utilisation, tokens
    latency_steps: pd.Series  # end-to-end steps per request (arrival -> delivery), all replicas
    scaling: list[tuple[int, int]] = field(default_factory=list)  # (step, replicas started or stopped: +1 / -1)

    @property
    def tokens_per_step(self) -> float:
        return float(self.steps.tokens.sum() / len(self.steps)) if len(self.steps) else 0.0

    @property
    def replica_steps(self) -> int:
        """What the run cost: the sum over steps of the replicas started (serving or starting)."""
        return int(self.steps.replicas.sum())

    def latency(self, q: float) -> float | None:
        return float(np.percentile(self.latency_steps, q)) if len(self.latency_steps) else None


def check_replica_work(scenario: Scenario, config: ReplicaConfig) -> int:
    """Replicas × steps in the worst case (every step emits a token, prefills or finishes a
    request on some replica, so steps <= one engine's worst-case steps, or tokens + requests);
    ScenarioError over the limit, naming `replicas.max`. A static batch's `fill_timeout` (idle
    steps each replica would skip on its own clock) is refused: the replicas share one clock."""
    if scenario.engine.fill_timeout and scenario.engine.batching == "static":
        raise ScenarioError(
            f"{scenario.source}: engine.fill_timeout: a static batch waiting to fill is not simulated across "
            "replicas (they share one clock); leave it out, or use continuous batching"
        )
    work = check_work(scenario)
    steps = max(work.steps, work.generated_tokens + work.requests)
    bound = config.max * (steps + config.startup_steps + 1)
    if bound > MAX_REPLICA_STEPS:
        raise ScenarioError(
            f"{scenario.source}: replicas.max: {config.max} replica{'s' * (config.max != 1)} × up to "
            f"{bound // config.max:,} steps "
            f"would step up to {bound:,} replica-steps; the limit is {MAX_REPLICA_STEPS:,}"
        )
    return bound


def simulate_replicas(scenario: Scenario, config: ReplicaConfig | None = None) -> ReplicaRun:
    """Run the scenario's requests through the replicas (config: the scenario's `[replicas]`), each
    at its arrival step (cancellations and model faults are not simulated here)."""
    config = config or scenario.replicas or ReplicaConfig()
    if scenario.trace is not None:
        raise ScenarioError(
            f"{scenario.source}: a trace's replicas run on their own clocks (engine/lab/trace_replicas.py)"
        )
    check_replica_work(scenario, config)
    start = lambda step: Replica(  # noqa: E731
        BatchInferenceEngine.from_config(build_model(scenario, faults=False), scenario.engine), step
    )
    replicas = [start(0) for _ in range(config.initial)]
    arrivals = sorted(enumerate(scenario.requests), key=lambda item: (item[1].arrival_step or 0, item[0]))
    rows, scaling, above, calm, step, k = [], [], 0, 0, 0, 0
    batch_size = scenario.engine.batch_size
    while k < len(arrivals) or any(r.engine.has_work() for r in replicas):
        if k < len(arrivals) and not any(r.engine.has_work() for r in replicas):
            step = max(step, arrivals[k][1].arrival_step or 0)  # nothing to do until the next arrival
        serving = [r for r in replicas if not r.stopped and r.ready_at <= step]
        while k < len(arrivals) and (arrivals[k][1].arrival_step or 0) <= step:
            index, spec = arrivals[k]
            target = min(serving, key=lambda r: r.engine.num_unfinished)  # (min keeps the lowest id on ties)
            target.engine.submit_request(
                spec.prompt,
                spec.max_tokens,
                None,
                spec.stop_sequences,
                request_id=spec.request_id or f"r{index}",
                arrival_step=step,
                priority=spec.priority,
            )
            k += 1
        tokens = busy = 0
        for replica in replicas:
            if replica.engine.has_work():
                replica.engine.step()
                sent = _rows_sent(replica.engine, step)
                tokens, busy = tokens + sent, busy + sent
        queue = sum(r.engine.num_unfinished - len(r.engine.slot_table) for r in serving)
        started = [r for r in replicas if not r.stopped]
        utilization = busy / (batch_size * len(serving))
        signal = queue / len(serving) if config.signal == "queue_depth" else utilization
        rows.append((step, len(started), len(serving), queue, queue / len(serving), utilization, tokens))
        above = above + 1 if signal > config.threshold else 0
        calm = calm + 1 if queue == 0 else 0
        if above >= config.window and len(started) < config.max and len(serving) == len(started):
            replicas.append(start(step + 1 + config.startup_steps))
            scaling.append((step, 1))
            above = 0
        elif config.idle_steps and calm >= config.idle_steps and len(started) > config.initial:
            idle = [r for r in serving if not r.engine.has_work()]
            if idle and len(serving) > 1:  # someone must still serve
                idle[-1].stopped = True
                scaling.append((step, -1))
                calm = 0
        step += 1
    return ReplicaRun(_frame(rows), _latencies(replicas), scaling)


def _rows_sent(engine: BatchInferenceEngine, step: int) -> int:
    """Rows the engine's model call of `step` sent (0 without one): its active rows, ragged."""
    log = engine.event_log
    for i in reversed(log.step_range(step)):
        if log.kind[i] == EventKind.MODEL_CALL:
            return bin(log.call_at(i)[0]).count("1")
    return 0


def _frame(rows: list[tuple]) -> pd.DataFrame:
    columns = ["step", "replicas", "serving", "queue_depth", "queue_per_replica", "utilization", "tokens"]
    return pd.DataFrame(rows, columns=columns)


def _latencies(replicas: list[Replica]) -> pd.Series:
    frames = [request_metrics(r.engine.event_log).e2e_steps for r in replicas if len(r.engine.event_log)]
    return pd.concat(frames).dropna() if frames else pd.Series(dtype=float)


UTILIZATION_THRESHOLD = 0.8  # the utilisation autoscaler `contrast` runs beside the queue-depth one


def contrast(scenario: Scenario) -> dict[str, ReplicaRun]:
    """The lesson's three runs: one replica, no autoscaler; the scenario's `[replicas]` scaling on
    queue depth; and the same scaling on utilisation (above UTILIZATION_THRESHOLD)."""
    config = scenario.replicas or ReplicaConfig()
    return {
        "one replica": simulate_replicas(scenario, dataclasses.replace(config, initial=1, max=1)),
        "queue depth": simulate_replicas(scenario, dataclasses.replace(config, signal="queue_depth")),
        "utilization": simulate_replicas(
            scenario, dataclasses.replace(config, signal="utilization", threshold=UTILIZATION_THRESHOLD)
        ),
    }


def run_summary(run: ReplicaRun) -> dict[str, float | int | None]:
    """The figures a comparison shows (CLI and app)."""
    steps = run.steps
    return {
        "steps": len(steps),
        "peak_replicas": int(steps.replicas.max()) if len(steps) else 0,
        "replica_steps": run.replica_steps,
        "scale_ups": sum(change > 0 for _, change in run.scaling),
        "tokens_per_step": run.tokens_per_step,
        "max_queue": int(steps.queue_depth.max()) if len(steps) else 0,
        "mean_utilization": float(steps.utilization.mean()) if len(steps) else 0.0,
        "latency_p50_steps": run.latency(50),
        "latency_p99_steps": run.latency(99),
    }

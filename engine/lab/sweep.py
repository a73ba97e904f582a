"""A batch-size sweep: throughput and end-to-end latency (p50, p99) of one workload at each batch size.

Each point is a closed loop, the way benchmark clients measure a server (vLLM's
`benchmark_serving.py --max-concurrency`, LLMPerf's concurrent requests): as many clients as
slots, each sending its next request (the scenario's requests, in order) the moment its last one
is delivered, so the batch stays full until the requests run out. The scenario's arrival steps,
cancellations and simulated faults are not used: the clients decide when a request arrives.

A bigger batch serves more rows per model call, so throughput rises, and it flattens once the
rows, not the fixed cost of a step (reading the weights), dominate the step's time (the cost
model's `step_s / row_s` rows: 70 by default). Every step takes longer with more rows, so each
request's latency rises with the batch size. The knee is where the throughput bought per unit of
latency falls off.

The work of every point is estimated against the limits (engine/lab/limits.py) before any runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..analysis.hardware import cost_model
from ..analysis.metrics import CostModel, summary
from ..core.engine import BatchInferenceEngine
from ..core.log.event_log import EventLog
from .limits import LIMITS, MAX_SWEEP_RUNS, Work, check_batch_sizes
from .scenario_types import Scenario
from .scenario_work import check_work
from .simulate import build_model
from .toml_reader import ScenarioError

DEFAULT_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


@dataclass(frozen=True, slots=True)
class SweepPoint:
    batch_size: int
    throughput_tokens_per_s: float
    e2e_p50_s: float | None  # end to end: submission -> delivery
    e2e_p99_s: float | None
    tpot_p50_s: float | None  # time per output token: how fast a request streams
    steps: int
    model_calls: int


def check_sweep_work(scenario: Scenario, batch_sizes: tuple[int, ...]) -> Work:
    """Every point's worst case against the per-run limits, and their sum against MAX_SWEEP_RUNS runs' worth."""
    points = [check_work(scenario.with_engine(batch_size=b)) for b in batch_sizes]
    total = Work(*(sum(getattr(w, f.name) for w in points) for f in dataclasses.fields(Work)))
    for name, (limit, unit) in LIMITS.items():
        value = getattr(total, name)
        if value > MAX_SWEEP_RUNS * limit:
            raise ScenarioError(
                f"{scenario.source}: batch_sizes: {len(batch_sizes)} points would take up to {value:,} {unit} "
                f"in all; the limit is {MAX_SWEEP_RUNS * limit:,} ({MAX_SWEEP_RUNS} runs' worth)"
            )
    return total


def closed_loop(scenario: Scenario, batch_size: int) -> EventLog:
    """The scenario's requests sent by `batch_size` clients, each one request at a time, in file
    order (their arrival steps, priorities and cancellations are not used; model faults neither)."""
    model = build_model(scenario, faults=False)
    engine = BatchInferenceEngine.from_config(model, dataclasses.replace(scenario.engine, batch_size=batch_size))
    queue = iter(scenario.requests)

    def send(_tokens=None) -> None:
        spec = next(queue, None)
        if spec is not None:
            engine.submit_request(spec.prompt, spec.max_tokens, send, spec.stop_sequences, request_id=spec.request_id)

    for _ in range(batch_size):
        send()
    engine.run()
    return engine.event_log


def sweep(scenario: Scenario, batch_sizes=None, cost: CostModel | None = None) -> list[SweepPoint]:
    """One point per batch size (default: the scenario's `[sweep]`, else 1, 2, 4, ..., 256), priced by
    `cost` (default: the scenario's cost model)."""
    default = scenario.sweep or DEFAULT_BATCH_SIZES
    sizes = check_batch_sizes("batch_sizes", default if batch_sizes is None else batch_sizes)
    check_sweep_work(scenario, sizes)
    cost = cost or cost_model(scenario.cost)
    points = []
    for batch_size in sizes:
        figures = summary(closed_loop(scenario, batch_size), cost)
        points.append(
            SweepPoint(
                batch_size,
                figures["throughput_tokens_per_s"],
                figures["e2e_p50_s"],
                figures["e2e_p99_s"],
                figures["tpot_p50_s"],
                figures["steps"],
                figures["model_calls"],
            )
        )
    return points


def knee(points: list[SweepPoint]) -> int | None:
    """The batch size after which the next point raises the median latency by a larger factor than
    the throughput: up to the knee a bigger batch is nearly free, past it each gain costs more
    latency than it buys. None if no such point (or a figure is missing)."""
    for here, after in zip(points, points[1:]):
        if not (here.throughput_tokens_per_s and here.e2e_p50_s and after.e2e_p50_s):
            return None
        gain = after.throughput_tokens_per_s / here.throughput_tokens_per_s
        if after.e2e_p50_s / here.e2e_p50_s >= gain:
            return here.batch_size
    return None

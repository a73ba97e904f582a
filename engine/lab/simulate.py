"""Run a scenario through the engine and return its event log.

Cancellations happen on cue (`cancel_step`), streamed requests get an `on_token`
callback, and a model listed with `fail_calls` raises once at those calls; the run
then resumes, as a server's retry would, so the log shows the `error` event and a
result identical to a fault-free run.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.engine import BatchInferenceEngine
from ..core.errors import ModelError
from ..core.log.event_log import EventLog
from ..core.models import ScriptedLLM, SimulatedLLM
from .answer_model import AnswerLengthLLM
from .limits import MAX_EVENTS, MAX_STEPS
from .scenario import ModelConfig, Scenario
from .scenario_work import check_work
from .toml_reader import ScenarioError
from .trace_replay import replay_trace

PROGRESS_EVERY = 2_000  # steps between progress reports


class SimulatedFault(RuntimeError):
    """The fault a scenario's `fail_calls` asks for; the only model error `simulate` retries."""


class FaultyModel:
    """Wraps a model so that the listed call attempts raise (a simulated GPU fault)."""

    def __init__(self, inner, fail_calls: tuple[int, ...]):
        self.inner, self.fail_calls, self.attempts = inner, set(fail_calls), 0

    def _attempt(self) -> None:
        self.attempts += 1
        if self.attempts - 1 in self.fail_calls:
            raise SimulatedFault(f"simulated device fault at model call {self.attempts - 1}")

    def generate_next_tokens(self, batch_prefixes):
        self._attempt()
        return self.inner.generate_next_tokens(batch_prefixes)

    def generate_next_tokens_padded(self, batch_prefixes, active_mask):
        self._attempt()
        return self.inner.generate_next_tokens_padded(batch_prefixes, active_mask)


def build_model(scenario: Scenario, faults: bool = True):
    """The scenario's model; with its `fail_calls` faults unless `faults` is False (the sweep and the
    replicas, which do not simulate faults)."""
    config: ModelConfig = scenario.model
    if config.kind == "scripted":
        try:
            model = ScriptedLLM([(r.prompt, r.script) for r in scenario.requests], filler=config.filler)
        except ValueError as exc:  # "scripts[i]: ..." -> "requests[i].script: ..."
            message = str(exc).replace("scripts[", "requests[", 2).replace("]:", "].script:", 1)
            raise ScenarioError(f"{scenario.source}: {message}") from None
    elif scenario.workload is not None and scenario.workload.max_tokens is not None:
        model = AnswerLengthLLM(scenario.requests, config.seed, config.vocab_size, config.eos_token)
    else:
        model = SimulatedLLM(config.seed, config.vocab_size, config.eos_token, config.stop_chance)
    return FaultyModel(model, config.fail_calls) if config.fail_calls and faults else model


def simulate(
    scenario: Scenario,
    progress: Callable[[int, int], None] | None = None,
    engine_class: type[BatchInferenceEngine] = BatchInferenceEngine,
) -> EventLog:
    """Run to the end; `progress(step, requests_done)` is called every few thousand steps.
    `engine_class` may be a variant of the engine (a zoo bug, `engine/practice/zoo.py`).

    The run's worst case is checked against the limits first (ScenarioError if over one). A trace's requests
    join as their times come (engine/lab/trace_replay.py).
    """
    check_work(scenario)
    if scenario.trace is not None and scenario.replicas is not None:
        raise ScenarioError(
            f"{scenario.source}: replicas: a trace on several replicas makes one log a replica, which the command line "
            f"reads: python -m engine run {scenario.name}"
        )
    if scenario.trace is not None:
        return replay_trace(scenario, progress, engine_class)
    engine = engine_class.from_config(build_model(scenario), scenario.engine)
    cancels: dict[int, list[str]] = {}
    steps = 0
    for spec in scenario.requests:
        rid = engine.submit_request(
            spec.prompt,
            spec.max_tokens,
            None,
            spec.stop_sequences,
            request_id=spec.request_id,
            arrival_step=spec.arrival_step,
            on_token=_ignore if spec.stream else None,
            priority=spec.priority,
        )
        if spec.cancel_step is not None:
            cancels.setdefault(spec.cancel_step, []).append(rid)
    while True:
        for step in sorted(s for s in cancels if s <= engine.next_step):
            engine.clock = max(engine.clock, step)  # an idle engine waits for the cancel's step
            for rid in cancels.pop(step):
                engine.cancel(rid)
        try:
            if not engine.step():
                break
        except ModelError as exc:
            if not isinstance(exc.__cause__, SimulatedFault):
                raise ScenarioError(f"{scenario.source}: model: {exc}") from None
            continue  # the fault is in the log; retry the step, as a server would
        steps += 1
        if len(engine.event_log) > MAX_EVENTS or steps > MAX_STEPS:  # the backstop of the estimate (and of
            # preemptions, which it cannot foresee)
            raise ScenarioError(
                f"{scenario.source}: the run passed {MAX_EVENTS:,} events or {MAX_STEPS:,} steps, the limits, "
                "and was stopped"
            )
        if progress is not None and engine.clock % PROGRESS_EVERY == 0:
            progress(engine.clock, len(scenario.requests) - engine.num_unfinished)
    return engine.event_log


def _ignore(token: int) -> None:
    """A streaming consumer that drops tokens: the log's emit events are the stream."""

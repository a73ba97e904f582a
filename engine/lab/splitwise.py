"""Splitwise's characterisation of the Azure traces (Patel et al., ISCA 2024), reproduced by the engine.

For each Azure trace (the scenarios trace-azure-code and trace-azure-conversation, whose deployment is
Llama-2-7B on one H100): its prompt and output lengths (median, p90, p99) beside the paper's medians, then
the whole hour replayed twice, with continuous and with static batching, and for each:

- time to first token and time between tokens, p50 and p99, in simulated seconds;
- prefill's share of the busy time: the seconds the cost model charges for prompt tokens over the seconds
  of every step that did work (Splitwise's point: prompt phases are compute-bound, token phases
  memory-bound, and they share the GPU);
- throughput, tokens generated a second over the hour.

Static batching here is the seeds' Part 1 on a live stream: a batch is admitted only once the last one has
left, so a long answer holds the whole GPU; under the same trace its queue grows while continuous batching
keeps up.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ..analysis.hardware import cost_model
from ..analysis.metrics import percentile, prefill_share, request_metrics, step_metrics, token_gaps
from .scenario import resolve_scenario
from .trace_replay import replay_trace
from .trace_stats import length_statistics
from .trace_workload import trace_of

TRACES = {  # scenario -> the paper's medians (prompt, output tokens)
    "trace-azure-code": (1500, 13),
    "trace-azure-conversation": (1020, 129),
}
BATCHING = ("continuous", "static")


def splitwise_table(progress: Callable[[str], None] | None = None, first: int | None = None) -> list[dict]:
    """One row per trace and batching mode; `first` replays only the first requests (tests)."""
    rows = []
    for name, (paper_prompt, paper_output) in TRACES.items():
        scenario = resolve_scenario(name)
        if first is not None:
            scenario = dataclasses.replace(scenario, trace=dataclasses.replace(scenario.trace, first=first))
        lengths = length_statistics(trace_of(scenario.trace))
        for batching in BATCHING:
            if progress is not None:
                progress(f"{name}, {batching} batching")
            run = scenario.with_engine(batching=batching)
            figures = replay_figures(run, replay_trace(run))
            rows.append(
                {
                    "trace": scenario.trace.label,
                    "batching": batching,
                    "prompt": lengths["prompt"],
                    "output": lengths["output"],
                    "paper_median_prompt": paper_prompt,
                    "paper_median_output": paper_output,
                    **figures,
                }
            )
    return rows


def replay_figures(scenario, log) -> dict[str, float]:
    """TTFT and TBT percentiles, prefill's share of the busy time and throughput of one replay."""
    cost = cost_model(scenario.cost)
    steps = step_metrics(log, cost)
    requests = request_metrics(log, cost, steps)
    gaps = token_gaps(log, steps)
    return {
        "ttft_p50_s": percentile(requests.ttft_s, 50),
        "ttft_p99_s": percentile(requests.ttft_s, 99),
        "tbt_p50_s": float(np.percentile(gaps, 50)) if len(gaps) else 0.0,
        "tbt_p99_s": float(np.percentile(gaps, 99)) if len(gaps) else 0.0,
        "prefill_share": prefill_share(steps, cost),
        "throughput_tokens_per_s": float(requests.output_tokens.sum() / steps.end_s.iloc[-1]),
        "hour_s": float(steps.end_s.iloc[-1]),
    }

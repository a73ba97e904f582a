"""One workload under the four configurations: continuous/static × ragged/padded."""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.hardware import cost_model
from ..analysis.metrics import CostModel, summary
from .scenario import Scenario
from .simulate import simulate

CONFIGURATIONS = {
    "continuous-ragged": {"batching": "continuous", "padded": False},
    "continuous-padded": {"batching": "continuous", "padded": True},
    "static-ragged": {"batching": "static", "padded": False},
    "static-padded": {"batching": "static", "padded": True},
}
COMPARED = {  # the summary figures a comparison shows, with their headings (CLI and app)
    "steps": "steps",
    "throughput_tokens_per_s": "throughput",
    "slot_utilization": "slot util",
    "padding_waste": "pad waste",
    "ttft_p50_s": "TTFT p50",
    "ttft_p99_s": "TTFT p99",
    "tpot_p50_s": "TPOT p50",
    "e2e_p50_s": "E2E p50",
}


def compare(
    scenario: Scenario,
    cost: CostModel | None = None,
    progress: Callable[[str], Callable[[int, int], None]] | None = None,
) -> dict[str, dict]:
    """Summary metrics per configuration, keyed as in CONFIGURATIONS, priced by `cost` (by
    default the scenario's own cost model)."""
    cost = cost or cost_model(scenario.cost)
    results = {}
    for name, settings in CONFIGURATIONS.items():
        log = simulate(scenario.with_engine(**settings), progress=progress(name) if progress else None)
        results[name] = summary(log, cost)
    return results


def continuous_speedup(results: dict[str, dict]) -> float | None:
    """Throughput of continuous over static batching (ragged both); None when nothing was generated."""
    static = results["static-ragged"]["throughput_tokens_per_s"]
    return results["continuous-ragged"]["throughput_tokens_per_s"] / static if static else None

"""One workload under the four configurations: continuous/static × ragged/padded; and,
when the scenario has a KV pool, under three more that the pool bounds.

The four run with unlimited memory. The memory three (ragged, the scenario's pool and
block size) are the systems the Anyscale benchmark and the vLLM paper compare:
`static-reserve` (each row reserves `prompt + max_tokens` and a batch waits for its
slowest row: what forced the benchmark's small static batches), `continuous-reserve`
(Orca-style iteration-level scheduling with the same reservation) and `continuous-paged`
(vLLM: blocks as tokens need them, preemption by recompute)."""

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
MEMORY_CONFIGURATIONS = {
    "static-reserve": {"batching": "static", "padded": False, "kv_policy": "reserve"},
    "continuous-reserve": {"batching": "continuous", "padded": False, "kv_policy": "reserve"},
    "continuous-paged": {"batching": "continuous", "padded": False, "kv_policy": "paged"},
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
MEMORY_COMPARED = {  # shown beside COMPARED when the memory configurations ran
    "kv_utilization": "KV util",
    "peak_running": "peak rows",
    "preemptions": "preempted",
    "recomputed_tokens": "recomputed",
    "tbt_p99_s": "TBT p99",
    "max_tbt_s": "TBT max",
}


def compare(
    scenario: Scenario,
    cost: CostModel | None = None,
    progress: Callable[[str], Callable[[int, int], None]] | None = None,
) -> dict[str, dict]:
    """Summary metrics per configuration, keyed as in CONFIGURATIONS, priced by `cost` (by
    default the scenario's own cost model)."""
    cost = cost or cost_model(scenario.cost)
    runs = configurations(scenario)
    results = {}
    for name, settings in runs.items():
        log = simulate(scenario.with_engine(**settings), progress=progress(name) if progress else None)
        results[name] = summary(log, cost)
    return results


def configurations(scenario: Scenario) -> dict[str, dict]:
    """The engine settings of each configuration `compare` runs for `scenario`, by name."""
    unlimited = {"kv_blocks": None} if scenario.engine.kv_blocks is not None else {}
    runs = {name: {**settings, **unlimited} for name, settings in CONFIGURATIONS.items()}
    if scenario.engine.kv_blocks is not None:
        runs.update(MEMORY_CONFIGURATIONS)
    return runs


def memory_speedups(results: dict[str, dict]) -> dict[str, float | None]:
    """Throughput of paged continuous batching over each reserving system ({} without them)."""
    if "continuous-paged" not in results:
        return {}
    paged = results["continuous-paged"]["throughput_tokens_per_s"]
    return {
        name: paged / results[name]["throughput_tokens_per_s"] if results[name]["throughput_tokens_per_s"] else None
        for name in ("static-reserve", "continuous-reserve")
    }


def continuous_speedup(results: dict[str, dict]) -> float | None:
    """Throughput of continuous over static batching (ragged both); None when nothing was generated."""
    static = results["static-ragged"]["throughput_tokens_per_s"]
    return results["continuous-ragged"]["throughput_tokens_per_s"] / static if static else None

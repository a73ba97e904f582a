"""One workload under every configuration of `configurations.py`, and the figures shown side
by side (CLI and app): the four with unlimited memory; with a KV pool, the memory three,
the prefix cache where the workload shares prefixes, the watermark, and the vLLM paper's
reserving systems where the answers' lengths are known (`paper_systems.py`). Compare leads
with the scenario's own configuration (`own_configuration`): the throughput ratios that
involve it come first (`headline_ratios`), so a lesson run with the prefix cache is not
headed by a ratio of two runs without it."""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.hardware import cost_model
from ..analysis.metrics import CostModel
from .configurations import (  # noqa: F401  (compare's configurations, imported from here by the CLI, app and tests)
    CACHED,
    CONFIGURATIONS,
    MEMORY_CONFIGURATIONS,
    configurations,
    summaries,
    watermark_name,
)
from .paper_systems import reservation_runs
from .scenario_types import Scenario

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
MEMORY_COMPARED = {  # shown beside COMPARED for the configurations on the pool
    "kv_utilization": "KV util",
    "kv_pool_utilization": "pool util",
    "peak_running": "peak rows",
    "preemptions": "preempted",
    "recomputed_tokens": "recomputed",
    "tbt_p99_s": "TBT p99",
    "max_tbt_s": "TBT max",
}
PREFIX_COMPARED = {"cached_tokens": "cached", "prefix_hit_rate": "hit rate"}  # shown when the cache ran


def compare(
    scenario: Scenario,
    cost: CostModel | None = None,
    progress: Callable[[str], Callable[[int, int], None]] | None = None,
) -> dict[str, dict]:
    """Summary metrics per configuration, by name, in `runs`' order, priced by `cost` (by default
    the scenario's own cost model). `progress(name)` gives each run's progress callback."""
    return summaries(runs(scenario), cost or cost_model(scenario.cost), progress)


def runs(scenario: Scenario) -> dict[str, Scenario]:
    """The scenario each configuration runs, by name: at most 12 (four, the memory three, the
    cache, two watermarks, Orca-Pow2 and Orca-Oracle), each within the run limits."""
    planned = {name: scenario.with_engine(**settings) for name, settings in configurations(scenario).items()}
    return planned | reservation_runs(scenario)


def on_the_pool(results: dict[str, dict]) -> list[str]:
    """The configurations that ran on the KV pool, in order (those with a KV utilisation)."""
    return [name for name in results if name not in CONFIGURATIONS]


def pool_figures(results: dict[str, dict]) -> dict[str, str]:
    """The figures shown for the configurations on the pool: the cache's too when it ran."""
    return MEMORY_COMPARED | (PREFIX_COMPARED if CACHED in results else {})


def own_configuration(scenario: Scenario) -> str | None:
    """The configuration that runs exactly as the scenario's own engine does (7.6: `continuous-paged-cached`),
    or None when none does (its own watermark and the cache together, say)."""
    planned = configurations(scenario)
    return next((n for n, settings in planned.items() if scenario.with_engine(**settings) == scenario), None)


def headline_ratios(results: dict[str, dict], own: str | None) -> list[tuple[str, float | None]]:
    """(label, throughput ratio) for each pair of configurations that ran, the pairs with `own` first;
    None where the second generated nothing."""
    pairs = [
        ("Continuous / static throughput (ragged, unlimited memory)", "continuous-ragged", "static-ragged"),
        ("Paged / static-reserve throughput", "continuous-paged", "static-reserve"),
        ("Paged / continuous-reserve throughput", "continuous-paged", "continuous-reserve"),
        ("Prefix cache on / off throughput (paged)", CACHED, "continuous-paged"),
    ]
    watermarked = watermark_name(0).removesuffix("0")  # "continuous-paged-wm-", then the watermark
    pairs += [
        (f"Watermark {name.removeprefix(watermarked)} / none throughput (paged)", name, "continuous-paged")
        for name in results
        if name.startswith(watermarked)
    ]
    ran = [pair for pair in pairs if pair[1] in results and pair[2] in results]
    ran.sort(key=lambda pair: own not in pair[1:])  # (stable: the pairs with `own` first, each in its order)
    return [(label, _ratio(results[a], results[b])) for label, a, b in ran]


def _ratio(a: dict, b: dict) -> float | None:
    b_throughput = b["throughput_tokens_per_s"]
    return a["throughput_tokens_per_s"] / b_throughput if b_throughput else None

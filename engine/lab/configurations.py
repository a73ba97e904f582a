"""The configurations `compare` runs one scenario under, by name, and the loop that runs them.

Four run with unlimited memory: continuous/static × ragged/padded. With a KV pool, three
more share it (ragged, the scenario's pool and block size): `static-reserve` (each row
reserves `prompt + max_tokens`, and a batch waits for its slowest row), `continuous-reserve`
(Orca-style iteration-level scheduling with the same reservation) and `continuous-paged`
(vLLM: blocks as tokens need them, preemption by recompute). These three run bare, without
the prefix cache or the watermark the scenario may set, so each option shows as one change
beside them: `continuous-paged-cached` when the workload shares prefixes, and
`continuous-paged-wm-0.01` (vLLM v0's default watermark), plus one at the scenario's own
watermark if it sets another (each only if it holds back at least one block). The vLLM
paper's reserving systems are in `paper_systems.py`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.metrics import CostModel, summary
from .scenario_types import Scenario
from .simulate import simulate

CONFIGURATIONS = {
    "continuous-ragged": {"batching": "continuous", "padded": False},
    "continuous-padded": {"batching": "continuous", "padded": True},
    "static-ragged": {"batching": "static", "padded": False},
    "static-padded": {"batching": "static", "padded": True},
}
BARE = {"prefix_caching": False, "kv_watermark": 0.0}  # the memory three: neither option of the pool
MEMORY_CONFIGURATIONS = {
    "static-reserve": {"batching": "static", "padded": False, "kv_policy": "reserve"},
    "continuous-reserve": {"batching": "continuous", "padded": False, "kv_policy": "reserve"},
    "continuous-paged": {"batching": "continuous", "padded": False, "kv_policy": "paged"},
}
CACHED = "continuous-paged-cached"  # continuous-paged with vLLM's automatic prefix caching
V0_WATERMARK = 0.01  # vLLM v0's default share of the pool held back from admissions


def configurations(scenario: Scenario) -> dict[str, dict]:
    """The engine settings of each configuration that changes only the engine, by name, in the
    order `compare` shows them: the four; with a pool, the memory three, the prefix cache when
    `shares_prefixes`, and the watermarks."""
    unlimited = {"kv_blocks": None} if scenario.engine.kv_blocks is not None else {}
    runs = {name: {**settings, **unlimited} for name, settings in CONFIGURATIONS.items()}
    if scenario.engine.kv_blocks is None:
        return runs
    runs.update({name: {**settings, **BARE} for name, settings in MEMORY_CONFIGURATIONS.items()})
    paged = runs["continuous-paged"]
    if shares_prefixes(scenario):
        runs[CACHED] = {**paged, "prefix_caching": True}
    for watermark in watermarks(scenario):
        runs[watermark_name(watermark)] = {**paged, "kv_watermark": watermark}
    return runs


def shares_prefixes(scenario: Scenario) -> bool:
    """Whether a prefix cache has anything to find: the scenario turns it on, or two prompts share
    their first full block (a shared system prompt, or a chat's later turn). A preempted row may
    also hit its own blocks, but a workload without shared prefixes is compared without the cache."""
    if scenario.engine.prefix_caching:
        return True
    size, seen = scenario.engine.block_size, set()
    for spec in scenario.requests:
        if len(spec.prompt) >= size:
            first = tuple(spec.prompt[:size])
            if first in seen:
                return True
            seen.add(first)
    return False


def watermarks(scenario: Scenario) -> list[float]:
    """vLLM v0's 0.01, and the scenario's own watermark if it sets another; only those that hold back
    a block (`int(watermark * kv_blocks)` ≥ 1: below that, the run is continuous-paged's)."""
    engine = scenario.engine
    chosen = [V0_WATERMARK] + ([engine.kv_watermark] if engine.kv_watermark not in (0.0, V0_WATERMARK) else [])
    return [watermark for watermark in chosen if int(watermark * engine.kv_blocks) >= 1]


def watermark_name(watermark: float) -> str:
    return f"continuous-paged-wm-{watermark:g}"


def summaries(
    runs: dict[str, Scenario], cost: CostModel, progress: Callable[[str], Callable[[int, int], None]] | None = None
) -> dict[str, dict]:
    """Each scenario run to the end (each within the run limits: `simulate`) and summarised, by name."""
    return {
        name: summary(simulate(scenario, progress=progress(name) if progress else None), cost)
        for name, scenario in runs.items()
    }

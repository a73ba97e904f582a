"""One workload under the four configurations: continuous/static × ragged/padded."""

from __future__ import annotations

from collections.abc import Callable

from .metrics import CostModel, summary
from .scenario import Scenario
from .simulate import simulate

CONFIGURATIONS = {
    "continuous-ragged": {"batching": "continuous", "padded": False},
    "continuous-padded": {"batching": "continuous", "padded": True},
    "static-ragged": {"batching": "static", "padded": False},
    "static-padded": {"batching": "static", "padded": True},
}


def compare(
    scenario: Scenario,
    cost: CostModel | None = None,
    progress: Callable[[str], Callable[[int, int], None]] | None = None,
) -> dict[str, dict]:
    """Summary metrics per configuration, keyed as in CONFIGURATIONS."""
    results = {}
    for name, settings in CONFIGURATIONS.items():
        log = simulate(scenario.with_engine(**settings), progress=progress(name) if progress else None)
        results[name] = summary(log, cost or CostModel())
    return results

"""Compare's runs: one scenario under every configuration (`engine/lab/compare.py`), made once for
the class, with a progress bar naming each configuration as it runs, and for a built-in lesson
kept on disk beside its runs (`cblab/ui/runs/run_cache.py`).

8.4's ten configurations took 20 s the first time Compare opened on a loaded server, behind one spinner. Now
the bar says which configuration runs ("continuous-paged-cached, 5 of 12"), the figures are
kept in memory for every session (`COMPARISONS`) and on disk for a restarted server or a
sibling worker, and `cb-lab serve` makes every built-in lesson's figures ahead, at its start
(`python -m cblab.ui.frame.precompute`), so a class never waits for them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from cblab.ui.cache import SizedCache
from cblab.ui.runs import run_cache
from cblab.ui.runs.runs import Overrides, apply_overrides, scenario_digest
from engine.lab.compare import compare
from engine.lab.compare import runs as configuration_runs
from engine.lab.scenario import Scenario, parse_scenario, resolve_scenario

COMPARISONS = SizedCache(max_bytes=16 * 2**20)  # every session's comparisons together
FIGURE_BYTES = 4096  # an estimate of one configuration's summary in memory
Started = Callable[[str, int, int], Callable[[int, int], None] | None]  # (configuration, i, of) -> its progress


def compared_scenario(name: str, toml_text: str | None, overrides: Overrides) -> Scenario:
    """The scenario Compare runs: the built-in lesson `name` (or the uploaded text) with the sidebar's settings."""
    scenario = resolve_scenario(name) if toml_text is None else parse_scenario(toml_text, name)
    return apply_overrides(scenario, overrides)


def figures_key(scenario: Scenario) -> str:
    """The key of a built-in lesson's figures on disk (beside its runs, another key than any run's)."""
    return run_cache.key("compare|" + scenario_digest(scenario))


def comparison(name: str, toml_text: str | None, overrides: Overrides, started: Started | None = None) -> dict:
    """Every configuration's summary figures, by name; `started(configuration, i, of)` is called as
    each begins (1-based `i`) and may return its progress callback (steps, requests done)."""
    upload = None if toml_text is None else hashlib.sha256(toml_text.encode()).hexdigest()

    def make() -> dict:
        scenario = compared_scenario(name, toml_text, overrides)
        kept = figures_key(scenario) if toml_text is None else None  # (an upload is never kept on disk)
        found = run_cache.load_figures(kept) if kept else None
        if found is not None:
            return found
        results = compare(scenario, progress=_counted(scenario, started))
        if kept:
            run_cache.store_figures(kept, results)
        return results

    return COMPARISONS.get(("compare", name, upload, overrides), make, lambda found: FIGURE_BYTES * len(found))


def _counted(scenario: Scenario, started: Started | None):
    """`compare`'s progress argument: `started` with each configuration's place among them."""
    if started is None:
        return None
    names = list(configuration_runs(scenario))
    return lambda configuration: started(configuration, names.index(configuration) + 1, len(names))

"""Mooncake's Figure 9 from the engine: the prefix-cache hit rate of a trace against the cache's capacity.

For each capacity (in tokens) the trace is replayed through the engine with a KV pool that holds that many
tokens (`capacity // block_size` blocks; `inf`: enough for every prompt and answer), the scenario's other
settings unchanged, and its hit rate is the prompt tokens found in the cache at each request's first
admission over all prompt tokens. Beside it stands the trace's own figure (engine/lab/trace_hits.py): an LRU
over hash ids, requests in order, no batching. The two differ for three reasons:

- running rows hold their blocks, which the engine's cache cannot give away, so a full pool caches less
  than its capacity (the trace's LRU has no running rows: every block it holds can be reused);
- the engine computes at least one token of every prompt (a whole-prompt hit leaves its last block);
- a block is cached only once its tokens are computed: a request admitted while another still prefills the
  same prefix misses it (the LRU sees the earlier request whole first).

So the engine's figure sits a little under the trace's; tests/test_cache_curve.py holds them within
TOLERANCE on the shipped traces.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..core.log.event_log import EventLog
from ..core.log.events import EventKind
from .scenario_types import Scenario
from .toml_reader import ScenarioError
from .trace_hits import trace_hit_rate
from .trace_replay import replay_trace
from .trace_workload import trace_of

CAPACITIES = (1e6, 3e6, 1e7, 5e7, math.inf)  # Figure 9's range that matters: 1M to 50M tokens, and unbounded
TOLERANCE = 0.03  # the engine's hit rate is within this of the trace's (absolute), at every capacity


def cache_curve(
    scenario: Scenario, capacities=CAPACITIES, progress: Callable[[float], None] | None = None
) -> list[dict[str, float]]:
    """[{capacity_tokens, engine_hit_rate, trace_hit_rate}, ...] for a trace scenario with prefix caching."""
    if scenario.trace is None or not scenario.engine.prefix_caching:
        raise ScenarioError(f"{scenario.source}: cache-curve needs a trace scenario with prefix caching on")
    table = trace_of(scenario.trace)
    size = scenario.engine.block_size
    longest = int((table.input_length + table.output_length).max())
    points = []
    for capacity in capacities:
        if capacity < longest:
            raise ScenarioError(
                f"--capacities: {capacity:g} tokens cannot hold the trace's longest request ({longest:,} tokens)"
            )
        if progress is not None:
            progress(capacity)
        blocks = int(capacity) // size if math.isfinite(capacity) else _every_block(table, size)
        log = replay_trace(scenario.with_engine(kv_blocks=blocks))
        points.append(
            {
                "capacity_tokens": capacity,
                "engine_hit_rate": first_admission_hits(log) / table.prompt_tokens,
                "trace_hit_rate": trace_hit_rate(table, capacity),
            }
        )
    return points


def _every_block(table, size: int) -> int:
    """A pool that never evicts: every request's prompt and answer in blocks of their own."""
    return int((-(-(table.input_length + table.output_length) // size)).sum())


def first_admission_hits(log: EventLog) -> int:
    """Prompt tokens found in the prefix cache when each request was first admitted (a preempted row's hits
    on its own blocks when it comes back are not counted: the trace has no preemptions)."""
    kind = np.frombuffer(log.kind, np.int8)
    request = np.frombuffer(log.request, np.int32)
    admits = np.flatnonzero(kind == EventKind.ADMIT)
    first_admit = np.full(len(log.requests), len(kind), np.int64)
    np.minimum.at(first_admit, request[admits], admits)
    hits = np.flatnonzero(kind == EventKind.PREFIX_HIT)
    own = admits[np.searchsorted(admits, hits) - 1]  # a hit is logged just after its row's admit
    return int(np.count_nonzero(own == first_admit[request[hits]])) * log.config.block_size

"""The vLLM paper's four systems on one workload: how much of the KV memory holds tokens.

Kwon et al., "Efficient Memory Management for Large Language Model Serving with
PagedAttention", SOSP 2023, Fig. 2, measured the share of KV memory holding token states
in three Orca-style systems that reserve each request's memory at admission, and in vLLM:
Orca-Max reserves the request's `max_tokens` (20.4 %), Orca-Pow2 the next power of two of
its true output length (26.8 %), Orca-Oracle the true length itself (38.2 %), and vLLM
allocates blocks as tokens need them (96.3 %).

Here the three Orca systems are `continuous-reserve` (configurations.py) with each
request's `max_tokens` set to what it reserves for, so the engine needs no new policy, and
vLLM is `continuous-paged`. The true output length is known only for a workload whose
answers have drawn lengths (`[workload.output] max_tokens`, answer_model.py): the answer's
drawn length, or `max_tokens` if that is shorter (the model stops there). Decision:
Orca-Pow2 is capped at the request's `max_tokens` too, since no server reserves room for
tokens the request may not generate. Every request keeps `max_tokens` at least its true
length and the workload (so its answer model) stays, so the four produce the same outputs
and differ only in what they reserve; a workload's stop sequences could end an answer
sooner, which only makes Oracle reserve a little more than it uses.

Fig. 2 splits the KV memory a busy server's requests hold into token states, reservation and
fragmentation; the summary's `kv_utilization` is that share here (tokens in the cache over the
room of the blocks held, reserved or allocated, averaged over the steps that hold any).
Decision: it is the figure shown beside the paper's. `kv_pool_utilization` counts free blocks
as waste too, which a saturated server has none of, but a burst's last steps have many.

Decision (`unlike_the_paper`): the paper's figures are shown beside a workload's only where it
is a busy server as in the paper's experiment, one whose memory, not its slots, limits the
batch: a full batch of its first requests (`batch_size` of them, in arrival order) reserving
as Orca-Max does (prompt + `max_tokens`, in blocks) needs more than the pool. Elsewhere (7.6's
4 slots on 400 blocks) every system holds all the rows it has slots for, so its utilisation
says how full the slots leave the pool, not how a reservation wastes it, and 89 % beside the
paper's 20.4 % would compare unlike things; the reason is shown instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from math import ceil

from ..analysis.hardware import cost_model
from ..analysis.metrics import CostModel
from .configurations import BARE, MEMORY_CONFIGURATIONS, summaries
from .request_spec import RequestSpec
from .scenario_types import Scenario

SYSTEMS = {  # the paper's name -> the configuration `compare` runs it as
    "Orca-Max": "continuous-reserve",
    "Orca-Pow2": "orca-pow2",
    "Orca-Oracle": "orca-oracle",
    "vLLM": "continuous-paged",
}
TOKEN_STATES = {"Orca-Max": 0.204, "Orca-Pow2": 0.268, "Orca-Oracle": 0.382, "vLLM": 0.963}  # Fig. 2


def true_length(spec: RequestSpec) -> int:
    """The output's length: where the answer model stops it, or `max_tokens`."""
    return min(spec.answer_len, spec.max_tokens)


def pow2_length(spec: RequestSpec) -> int:
    """The next power of two at least the true length, capped at `max_tokens`."""
    return min(1 << (true_length(spec) - 1).bit_length(), spec.max_tokens)


RESERVED_FOR: dict[str, Callable[[RequestSpec], int]] = {"orca-pow2": pow2_length, "orca-oracle": true_length}


def has_true_lengths(scenario: Scenario) -> bool:
    """Whether the four can run: a KV pool, and answers whose lengths were drawn in advance and
    end there (the engine stops at the answer model's stop token)."""
    engine, workload = scenario.engine, scenario.workload
    drawn = workload is not None and workload.max_tokens is not None
    return drawn and engine.kv_blocks is not None and engine.stop_token == scenario.model.eos_token


def unlike_the_paper(scenario: Scenario) -> str | None:
    """Why the paper's Fig. 2 figures do not compare with this workload's, or None where they do:
    a full batch of its first requests, reserving as Orca-Max does, needs more than its pool."""
    engine = scenario.engine
    if engine.kv_blocks is None:
        return "this scenario has no KV pool."
    first = sorted(scenario.requests, key=lambda spec: spec.arrival_step or 0)[: engine.batch_size]
    reserved = sum(ceil((len(spec.prompt) + spec.max_tokens) / engine.block_size) for spec in first)
    if reserved > engine.kv_blocks:
        return None
    rows = f"its first {len(first):,} requests" if len(first) == engine.batch_size else f"all {len(first):,} requests"
    return (
        f"the paper measured a busy server whose memory limits the batch, but here {rows} reserve only "
        f"{reserved:,} of the {engine.kv_blocks:,} blocks as Orca-Max (prompt + max_tokens) on "
        f"{engine.batch_size:,} slots: the slots limit the batch, so each system's utilisation says how full "
        "the slots leave the pool, not how much its reservations waste."
    )


def reservation_runs(scenario: Scenario) -> dict[str, Scenario]:
    """Orca-Pow2 and Orca-Oracle, by configuration name ({} unless `has_true_lengths`): continuous
    reservation, with each request's `max_tokens` set to what it reserves for."""
    if not has_true_lengths(scenario):
        return {}
    reserving = scenario.with_engine(**MEMORY_CONFIGURATIONS["continuous-reserve"], **BARE)
    return {
        name: replace(reserving, explicit_requests=tuple(replace(s, max_tokens=length(s)) for s in reserving.requests))
        for name, length in RESERVED_FOR.items()
    }


def paper_systems(
    scenario: Scenario,
    cost: CostModel | None = None,
    progress: Callable[[str], Callable[[int, int], None]] | None = None,
) -> dict[str, dict]:
    """The summary of each of the four systems, by the paper's name ({} unless `has_true_lengths`),
    priced by `cost` (by default the scenario's own cost model)."""
    if not has_true_lengths(scenario):
        return {}
    runs = reservation_runs(scenario)
    for name in ("continuous-reserve", "continuous-paged"):
        runs[name] = scenario.with_engine(**MEMORY_CONFIGURATIONS[name], **BARE)
    results = summaries(runs, cost or cost_model(scenario.cost), progress)
    return {paper: results[name] for paper, name in SYSTEMS.items()}

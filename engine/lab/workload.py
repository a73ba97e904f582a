"""Seeded, generated workloads: prompt lengths, output-length distributions, arrivals.

The Anyscale benchmark's workload is `capped_exponential` output lengths (mean 128,
resampled while above the cap) with 512-token prompts, all arriving at once (`burst`).
Reference: C. Daniel et al., "How continuous batching enables 23x throughput in LLM
inference while reducing p50 latency", Anyscale blog, 2023.
"""

from __future__ import annotations

import math
import random

from .limits import MAX_ARRIVAL_STEP, MAX_SAMPLING_DRAWS
from .request_spec import RequestSpec

DISTRIBUTIONS = {"fixed": ("value",), "uniform": ("min", "max"), "capped_exponential": ("mean", "cap")}
ARRIVALS = {"burst": (), "poisson": ("rate",)}


class WorkloadTooLarge(ValueError):
    """A workload whose generation would exceed a limit; `field` names the parameter to blame."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def expected_draws(count: int, mean: float, cap: int) -> float:
    """Draws the capped exponential needs on average: a draw is kept when it rounds to <= cap."""
    kept = -math.expm1(-(cap + 0.5) / mean)
    return count / kept if kept > 0 else math.inf


def output_lengths(rng: random.Random, count: int, distribution: str, params: dict) -> list[int]:
    """Generated-token budgets, each >= 1."""
    if distribution == "fixed":
        return [params["value"]] * count
    if distribution == "uniform":
        return [rng.randint(params["min"], params["max"]) for _ in range(count)]
    mean, cap = params["mean"], params["cap"]
    draws = expected_draws(count, mean, cap)
    if draws > MAX_SAMPLING_DRAWS:
        raise WorkloadTooLarge(
            "output.cap",
            f"cap {cap:,} keeps 1 draw in {draws / count:,.0f} of an exponential with mean {mean:,}, so "
            f"{count:,} lengths need about {draws:,.0f} draws; the limit is {MAX_SAMPLING_DRAWS:,} draws",
        )
    lengths = []
    while len(lengths) < count:
        length = max(1, round(rng.expovariate(1.0 / mean)))
        if length <= cap:  # resample while above the cap, as the benchmark did
            lengths.append(length)
    return lengths


def arrival_steps(rng: random.Random, count: int, process: str, params: dict) -> list[int]:
    """Arrival step of each request: all at 0 (`burst`), or a Poisson process of `rate` per step."""
    if process == "burst":
        return [0] * count
    steps, clock = [], 0.0
    for _ in range(count):
        clock += rng.expovariate(params["rate"])
        if clock > MAX_ARRIVAL_STEP:
            raise WorkloadTooLarge(
                "arrival.rate",
                f"rate {params['rate']:g} puts request {len(steps):,} past step {MAX_ARRIVAL_STEP:,}, "
                "the latest arrival step allowed",
            )
        steps.append(int(clock))
    return steps


def workload_shape(
    count: int, *, seed: int, output: tuple[str, dict], arrival: tuple[str, dict] = ("burst", {})
) -> tuple[list[int], list[int]]:
    """The budgets and arrival steps `generated_workload` will draw, without its prompts (cheap)."""
    return _shape(random.Random(seed), count, output, arrival)


def _shape(rng: random.Random, count: int, output: tuple[str, dict], arrival: tuple[str, dict]):
    return output_lengths(rng, count, *output), arrival_steps(rng, count, *arrival)


def generated_workload(
    count: int,
    *,
    seed: int,
    prompt_len: tuple[int, int],
    vocab_size: int,
    output: tuple[str, dict],
    arrival: tuple[str, dict] = ("burst", {}),
    stop_sequences: list[list[int]] | None = None,
    max_tokens: int | None = None,
) -> list[RequestSpec]:
    """Seeded requests. The drawn output lengths are the requests' `max_tokens`; or, with
    `max_tokens` given, every request asks for that and the drawn length is its answer's
    length, where the model emits its stop token (a server cannot know it in advance).
    Then each prompt starts with a 2-token id (`answer_id`) the answer model reads."""
    rng = random.Random(seed)
    lengths, arrivals = _shape(rng, count, output, arrival)
    low, high = prompt_len
    requests = []
    for i, (length, arrives) in enumerate(zip(lengths, arrivals)):
        prompt = [rng.randrange(1, vocab_size) for _ in range(rng.randint(low, high))]
        if max_tokens is None:
            requests.append(RequestSpec(None, prompt, length, stop_sequences, arrives))
        else:
            prompt[:2] = answer_id(i, vocab_size)
            requests.append(RequestSpec(None, prompt, max_tokens, stop_sequences, arrives, answer_len=length))
    return requests


def answer_id(index: int, vocab_size: int) -> list[int]:
    """Two non-zero tokens naming request `index` (unique below (vocab_size − 1)² requests)."""
    return [1 + index // (vocab_size - 1), 1 + index % (vocab_size - 1)]

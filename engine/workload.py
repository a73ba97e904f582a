"""Seeded, generated workloads: prompt lengths, output-length distributions, arrivals.

The Anyscale benchmark's workload is `capped_exponential` output lengths (mean 128,
resampled while above the cap) with 512-token prompts, all arriving at once (`burst`).
Reference: C. Daniel et al., "How continuous batching enables 23x throughput in LLM
inference while reducing p50 latency", Anyscale blog, 2023.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

DISTRIBUTIONS = {"fixed": ("value",), "uniform": ("min", "max"), "capped_exponential": ("mean", "cap")}
ARRIVALS = {"burst": (), "poisson": ("rate",)}


@dataclass(frozen=True, slots=True)
class WorkloadRequest:
    prompt: list[int]
    max_tokens: int
    stop_sequences: list[list[int]] | None = None
    arrival_step: int | None = None


def output_lengths(rng: random.Random, count: int, distribution: str, params: dict) -> list[int]:
    """Generated-token budgets, each >= 1."""
    if distribution == "fixed":
        return [params["value"]] * count
    if distribution == "uniform":
        return [rng.randint(params["min"], params["max"]) for _ in range(count)]
    lengths = []
    mean, cap = params["mean"], params["cap"]
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
        steps.append(int(clock))
    return steps


def generated_workload(
    count: int,
    *,
    seed: int,
    prompt_len: tuple[int, int],
    vocab_size: int,
    output: tuple[str, dict],
    arrival: tuple[str, dict] = ("burst", {}),
    stop_sequences: list[list[int]] | None = None,
) -> list[WorkloadRequest]:
    rng = random.Random(seed)
    lengths = output_lengths(rng, count, *output)
    arrivals = arrival_steps(rng, count, *arrival)
    low, high = prompt_len
    return [
        WorkloadRequest(
            [rng.randrange(1, vocab_size) for _ in range(rng.randint(low, high))], budget, stop_sequences, arrives
        )
        for budget, arrives in zip(lengths, arrivals)
    ]


def uniform_workload(
    count: int, *, seed: int = 0, max_tokens: int = 64, prompt_len: int = 16, vocab_size: int = 1000
) -> list[WorkloadRequest]:
    """`count` requests with prompts of 1..prompt_len tokens and budgets of 1..max_tokens."""
    return generated_workload(
        count,
        seed=seed,
        prompt_len=(1, prompt_len),
        vocab_size=vocab_size,
        output=("uniform", {"min": 1, "max": max_tokens}),
    )


def submit_all(engine, workload: list[WorkloadRequest], callback=None) -> None:
    for request in workload:
        engine.submit_request(
            request.prompt, request.max_tokens, callback, request.stop_sequences, arrival_step=request.arrival_step
        )

"""Seeded, generated workloads: many requests of varied prompt and output lengths."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WorkloadRequest:
    prompt: list[int]
    max_tokens: int
    stop_sequences: list[list[int]] | None = None
    arrival_step: int | None = None


def uniform_workload(
    count: int, *, seed: int = 0, max_tokens: int = 64, prompt_len: int = 16, vocab_size: int = 1000
) -> list[WorkloadRequest]:
    """`count` requests with prompts of 1..prompt_len tokens and budgets of 1..max_tokens."""
    rng = random.Random(seed)
    return [
        WorkloadRequest(
            [rng.randrange(1, vocab_size) for _ in range(rng.randint(1, prompt_len))],
            rng.randint(1, max_tokens),
        )
        for _ in range(count)
    ]


def submit_all(engine, workload: list[WorkloadRequest], callback=None) -> None:
    for request in workload:
        engine.submit_request(
            request.prompt, request.max_tokens, callback, request.stop_sequences, arrival_step=request.arrival_step
        )

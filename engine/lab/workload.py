"""Seeded, generated workloads: prompt lengths, output-length distributions, arrivals.

The Anyscale benchmark's workload is `capped_exponential` output lengths (mean 128,
resampled while above the cap) with 512-token prompts, all arriving at once (`burst`).
Reference: C. Daniel et al., "How continuous batching enables 23x throughput in LLM
inference while reducing p50 latency", Anyscale blog, 2023. A shared system prompt and
multi-turn chats (`conversation.py`) are drawn from generators of their own, so a workload
without them draws exactly what it always did.
"""

from __future__ import annotations

import math
import random

from .answer_model import answer, answer_id, plain_model
from .conversation import Chat, SystemPrompt, questions, system_prompt, turns_in_order
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


def check_draws(count: int, distribution: str, params: dict) -> None:
    """Raises WorkloadTooLarge if `count` lengths would need more than MAX_SAMPLING_DRAWS draws."""
    if distribution != "capped_exponential":
        return
    mean, cap = params["mean"], params["cap"]
    draws = expected_draws(count, mean, cap)
    if draws > MAX_SAMPLING_DRAWS:
        raise WorkloadTooLarge(
            "output.cap",
            f"cap {cap:,} keeps 1 draw in {draws / count:,.0f} of an exponential with mean {mean:,}, so "
            f"{count:,} lengths need about {draws:,.0f} draws; the limit is {MAX_SAMPLING_DRAWS:,} draws",
        )


def output_lengths(rng: random.Random, count: int, distribution: str, params: dict) -> list[int]:
    """Generated-token budgets, each >= 1."""
    if distribution == "fixed":
        return [params["value"]] * count
    if distribution == "uniform":
        return [rng.randint(params["min"], params["max"]) for _ in range(count)]
    check_draws(count, distribution, params)
    mean, cap = params["mean"], params["cap"]
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
    count: int,
    *,
    seed: int,
    output: tuple[str, dict],
    arrival: tuple[str, dict] = ("burst", {}),
    chat: Chat | None = None,
) -> tuple[list[int], list[int]]:
    """The lengths and arrival steps `generated_workload` will draw, in its request order, without its
    prompts (cheap)."""
    return _shape(random.Random(seed), count, output, arrival, seed, chat)


def _shape(rng: random.Random, count: int, output: tuple[str, dict], arrival: tuple[str, dict], seed: int, chat):
    if chat is None or chat.turns == 1:
        return output_lengths(rng, count, *output), arrival_steps(rng, count, *arrival)
    check_draws(count * chat.turns, *output)
    firsts, arrivals = output_lengths(rng, count, *output), arrival_steps(rng, count, *arrival)
    last = max(arrivals) + (chat.turns - 1) * chat.gap
    if last > MAX_ARRIVAL_STEP:
        raise WorkloadTooLarge(
            "chat.gap",
            f"gap {chat.gap:,} puts turn {chat.turns:,} of the last conversation at step {last:,}, past step "
            f"{MAX_ARRIVAL_STEP:,}, the latest arrival step allowed",
        )
    later = output_lengths(random.Random(f"{seed}/chat"), count * (chat.turns - 1), *output)
    return turns_in_order(firsts, later, arrivals, chat)


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
    system: SystemPrompt | None = None,
    chat: Chat | None = None,
    model: tuple[int, int] = (0, 0),
) -> list[RequestSpec]:
    """Seeded requests. The drawn output lengths are the requests' `max_tokens`; or, with
    `max_tokens` given, every request asks for that and the drawn length is its answer's
    length, where the model emits its stop token (a server cannot know it in advance).
    Then each request's own prompt starts with a 2-token id (`answer_id`) the answer model
    reads. `system` and `chat` (which needs `max_tokens`) are conversation.py's; `model` is the
    answer model's (seed, eos_token), which writes a chat's answers into its next prompts."""
    rng = random.Random(seed)
    lengths, arrivals = _shape(rng, count, output, arrival, seed, chat)
    turns = chat.turns if chat else 1
    members, shared = system_prompt(seed, count, system, vocab_size, with_id=max_tokens is not None)
    asked = questions(seed, chat, vocab_size) if turns > 1 else None
    answers = plain_model(model[0], vocab_size, model[1]) if turns > 1 else None
    low, high = prompt_len
    requests = []
    for c in range(count):
        prompt = [rng.randrange(1, vocab_size) for _ in range(rng.randint(low, high))]
        if max_tokens is not None:
            prompt[:2] = answer_id(c, vocab_size)
        at = len(shared) if c in members else 0
        prompt = shared + prompt if at else prompt
        for i in range(c * turns, c * turns + turns):
            length, arrives = lengths[i], arrivals[i]
            if i > c * turns:  # a later turn: the last prompt, its answer, a new question
                prompt = prompt + answer(answers, prompt, lengths[i - 1], max_tokens) + next(asked)
            if max_tokens is None:
                requests.append(RequestSpec(None, prompt, length, stop_sequences, arrives))
            else:
                spec = RequestSpec(
                    None, prompt, max_tokens, stop_sequences, arrives, answer_len=length, answer_id_at=at
                )
                requests.append(spec)
    return requests

"""The mock model of a workload whose answers have lengths drawn in advance.

A real server does not know how long an answer will be, so every request asks for its
`max_tokens` and the model decides when to stop. To replay a benchmark's output-length
distribution, this model is told each answer's length: a request's prompt holds a 2-token
id (`answer_id`), and the model emits its stop token as the answer's `answer_len`-th token.
Every other token comes from `SimulatedLLM` (never the stop token), so it stays O(1) a row:
it reads the prefix's length and its first two tokens (and, after a system prompt, the two
tokens where the id sits).

Where the id sits (engine/lab/conversation.py): at the start of the request's own prompt,
so at `prompt[:2]` without a shared system prompt and right after it with one
(`RequestSpec.answer_id_at`). A system prompt starts with an id of its own, one that no
request has, so the model knows from a prefix's first two tokens whether a system prompt
comes first and how long it is. The turns of one conversation share their id (each turn's
prompt starts with the one before), so the model keys its stops by (id, prefix length):
turn k+1's prompt holds turn k's whole answer, so its prefixes are all longer than turn
k's stop and shorter than turn k+2's.
"""

from __future__ import annotations

from ..core.models import SimulatedLLM
from .request_spec import RequestSpec


def answer_id(index: int, vocab_size: int) -> list[int]:
    """Two non-zero tokens naming request (or conversation) `index`; unique below (vocab_size − 1)² of them."""
    return [1 + index // (vocab_size - 1), 1 + index % (vocab_size - 1)]


def answer_ids(vocab_size: int) -> int:
    """How many distinct answer ids a vocabulary has."""
    return (vocab_size - 1) ** 2


def plain_model(seed: int, vocab_size: int, eos_token: int) -> SimulatedLLM:
    """The model behind every answer token but the stop token: `SimulatedLLM` that never stops by itself."""
    return SimulatedLLM(seed, vocab_size, eos_token, stop_chance=0.0)


def answer(model: SimulatedLLM, prompt: list[int], answer_len: int, max_tokens: int) -> list[int]:
    """The tokens `AnswerLengthLLM` generates after `prompt` for an answer `answer_len` long: `model`'s
    tokens, then the stop token as token `answer_len`, unless `max_tokens` ends the answer first."""
    prefix = list(prompt)
    stops = answer_len <= max_tokens
    for _ in range(min(answer_len, max_tokens) - stops):
        prefix.append(model.next_token(prefix))
    if stops:
        prefix.append(model.eos_token)
    return prefix[len(prompt) :]


class AnswerLengthLLM:
    def __init__(self, requests: list[RequestSpec], seed: int, vocab_size: int, eos_token: int):
        self.inner = plain_model(seed, vocab_size, eos_token)
        self.eos_token = eos_token
        answered = [spec for spec in requests if spec.answer_len is not None]
        # a system prompt's first two tokens -> where the answer id sits after it
        self.id_at = {tuple(spec.prompt[:2]): spec.answer_id_at for spec in answered if spec.answer_id_at}
        # (answer id, prefix length) at which the model answers its stop token; one a request reaches
        self.stops: set[tuple[int, int, int]] = set()
        for spec in answered:
            at = spec.answer_id_at
            if not at and tuple(spec.prompt[:2]) in self.id_at:
                raise ValueError(f"answer id {spec.prompt[:2]} is also a system prompt's: the answers are ambiguous")
            if spec.answer_len <= spec.max_tokens:
                self.stops.add((spec.prompt[at], spec.prompt[at + 1], len(spec.prompt) + spec.answer_len - 1))

    def next_token(self, prefix: list[int]) -> int:
        n = len(prefix)
        at = self.id_at.get((prefix[0], prefix[1]), 0) if self.id_at and n >= 2 else 0
        if n >= at + 2 and (prefix[at], prefix[at + 1], n) in self.stops:
            return self.eos_token
        return self.inner.next_token(prefix)

    def generate_next_tokens(self, batch_prefixes: list[list[int]]) -> list[int]:
        return [self.next_token(p) for p in batch_prefixes]

    def generate_next_tokens_padded(self, batch_prefixes: list[list[int]], active_mask: list[bool]) -> list[int]:
        return [self.next_token(p) if m else self.eos_token for p, m in zip(batch_prefixes, active_mask)]

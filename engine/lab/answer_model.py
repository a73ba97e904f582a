"""The mock model of a workload whose answers have lengths drawn in advance.

A real server does not know how long an answer will be, so every request asks for its
`max_tokens` and the model decides when to stop. To replay a benchmark's output-length
distribution, this model is told each answer's length: a request's prompt starts with a
2-token id (`workload.answer_id`), and the model emits its stop token as the answer's
`answer_len`-th token. Every other token comes from `SimulatedLLM` (never the stop
token), so it stays O(1) a row: it reads the prefix's length and its first two tokens.
"""

from __future__ import annotations

from ..core.models import SimulatedLLM
from .request_spec import RequestSpec


class AnswerLengthLLM:
    def __init__(self, requests: list[RequestSpec], seed: int, vocab_size: int, eos_token: int):
        self.inner = SimulatedLLM(seed, vocab_size, eos_token, stop_chance=0.0)
        self.eos_token = eos_token
        # answer id -> the prefix length at which the model answers its stop token
        self.stop_at = {
            tuple(spec.prompt[:2]): len(spec.prompt) + spec.answer_len - 1
            for spec in requests
            if spec.answer_len is not None
        }

    def next_token(self, prefix: list[int]) -> int:
        stop_at = self.stop_at.get((prefix[0], prefix[1])) if len(prefix) >= 2 else None
        return self.eos_token if len(prefix) == stop_at else self.inner.next_token(prefix)

    def generate_next_tokens(self, batch_prefixes: list[list[int]]) -> list[int]:
        return [self.next_token(p) for p in batch_prefixes]

    def generate_next_tokens_padded(self, batch_prefixes: list[list[int]], active_mask: list[bool]) -> list[int]:
        return [self.next_token(p) if m else self.eos_token for p, m in zip(batch_prefixes, active_mask)]

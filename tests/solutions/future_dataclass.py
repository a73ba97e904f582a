"""A correct solution with `from __future__ import annotations` and a dataclass (needs sys.modules)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class Sequence:
    tokens: list[int]
    prompt_len: int
    max_tokens: int
    callback: object
    stops: list[list[int]] = field(default_factory=list)


class BatchInferenceEngine:
    def __init__(self, model, batch_size, stop_token):
        self.model, self.batch_size, self.stop_token = model, batch_size, stop_token
        self.waiting: deque[Sequence] = deque()
        self.running: dict[int, Sequence] = {}

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        if max_tokens == 0:
            callback(list(prompt_tokens))
            return
        stops = [list(s) for s in stop_sequences or []]
        self.waiting.append(Sequence(list(prompt_tokens), len(prompt_tokens), max_tokens, callback, stops))

    def _finished(self, seq: Sequence, token: int) -> bool:
        generated = seq.tokens[seq.prompt_len :]
        if token == self.stop_token:
            return True
        if any(len(generated) >= len(s) and generated[-len(s) :] == s for s in seq.stops):
            return True
        return len(generated) >= seq.max_tokens

    def run(self):
        while self.waiting or self.running:
            for slot in range(self.batch_size):
                if slot not in self.running and self.waiting:
                    self.running[slot] = self.waiting.popleft()
            slots = sorted(self.running)
            for slot, token in zip(slots, self.model.generate_next_tokens([self.running[s].tokens for s in slots])):
                seq = self.running[slot]
                seq.tokens.append(token)
                if self._finished(seq, token):
                    del self.running[slot]
                    seq.callback(seq.tokens)

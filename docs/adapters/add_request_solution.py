"""An engine in the shape of vLLM's and nano-vllm's: `add_request(Request)`, `step()`, no callbacks.

Requests are records with their own stop sequences; `step()` makes one model call and
returns the requests it finished, each with its completion (the generated tokens only);
`has_unfinished()` says whether to go on. The model is any callable `model(batch)`. It
refuses `max_new_tokens < 1`, as vLLM's sampling parameters do. `add_request_adapter.py`
checks it. (No import from this project.)
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class Request:
    request_id: str
    prompt_ids: list[int]
    max_new_tokens: int
    stop: list[list[int]] = field(default_factory=list)  # stop sequences, matched on generated tokens


@dataclass
class Sequence:
    request: Request
    completion: list[int] = field(default_factory=list)

    @property
    def ids(self) -> list[int]:
        return self.request.prompt_ids + self.completion


class LLMEngine:
    def __init__(self, model, max_num_seqs: int, eos_token_id: int | None = None):
        self.model, self.max_num_seqs, self.eos_token_id = model, max_num_seqs, eos_token_id
        self.waiting: deque[Sequence] = deque()
        self.running: dict[int, Sequence] = {}  # slot -> sequence

    def add_request(self, request: Request) -> None:
        if request.max_new_tokens < 1:
            raise ValueError(f"{request.request_id}: max_new_tokens must be at least 1")
        self.waiting.append(Sequence(request))

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    def _is_finished(self, seq: Sequence) -> bool:
        out = seq.completion
        if out[-1] == self.eos_token_id or len(out) >= seq.request.max_new_tokens:
            return True
        return any(out[-len(s) :] == s for s in seq.request.stop if len(out) >= len(s))

    def step(self) -> list[tuple[str, list[int]]]:
        for slot in range(self.max_num_seqs):
            if slot not in self.running and self.waiting:
                self.running[slot] = self.waiting.popleft()
        slots = sorted(self.running)
        finished = []
        for slot, token in zip(slots, self.model([self.running[s].ids for s in slots])):
            seq = self.running[slot]
            seq.completion.append(token)
            if self._is_finished(seq):
                del self.running[slot]
                finished.append((seq.request.request_id, seq.completion))
        return finished

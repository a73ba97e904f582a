"""An engine of dataclasses with `from __future__ import annotations`: requests and slots are records.

With string annotations, `@dataclass` looks the module up in `sys.modules` to tell a
`ClassVar` field from the others, so loading this file by path without registering it
there fails (`AttributeError: 'NoneType' object has no attribute '__dict__'`).
`GenerationRequest` carries its own stop sequences and `on_done(request, generated)`;
`DataclassEngine.step()` makes one model call. `dataclass_adapter.py` checks it.
(No import from this project.)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar


@dataclass
class GenerationRequest:
    prompt: list[int]
    max_new_tokens: int
    on_done: Callable[[GenerationRequest, list[int]], None]
    stop_sequences: list[list[int]] = field(default_factory=list)
    generated: list[int] = field(default_factory=list)

    @property
    def tokens(self) -> list[int]:
        return self.prompt + self.generated


@dataclass
class DataclassEngine:
    model: Callable[[list[list[int]]], list[int]]
    num_slots: int
    eos_token: int | None = None
    waiting: deque[GenerationRequest] = field(default_factory=deque)
    slots: dict[int, GenerationRequest] = field(default_factory=dict)
    name: ClassVar[str] = "dataclass engine"

    def add(self, request: GenerationRequest) -> None:
        if request.max_new_tokens == 0:
            request.on_done(request, request.generated)
        else:
            self.waiting.append(request)

    def busy(self) -> bool:
        return bool(self.waiting or self.slots)

    def _stops(self, request: GenerationRequest) -> bool:
        out = request.generated
        if out[-1] == self.eos_token or len(out) >= request.max_new_tokens:
            return True
        return any(len(out) >= len(s) and out[-len(s) :] == s for s in request.stop_sequences)

    def step(self) -> None:
        for slot in range(self.num_slots):
            if slot not in self.slots and self.waiting:
                self.slots[slot] = self.waiting.popleft()
        order = sorted(self.slots)
        for slot, token in zip(order, self.model([self.slots[s].tokens for s in order])):
            request = self.slots[slot]
            request.generated.append(token)
            if self._stops(request):
                del self.slots[slot]
                request.on_done(request, request.generated)

"""A solution to the seeds' third statement, in the shape a candidate writes it (no import from this project).

The statement: a black-box `model_next(batch_prefixes)` returns one next token per active
sequence; each request carries a `max_tokens` limit, a stop condition (either one
`stop_token` or one `stop_sequence`) and a callback for its result; a batch of fixed
capacity B is refilled from a waiting queue whenever a slot frees up. Here the callback
receives the generated tokens (not the prompt), and there is no engine class: one function
runs the whole thing. `model_next_adapter.py` checks it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Request:
    request_id: str
    prompt: list[int]
    max_tokens: int
    callback: Callable[[list[int]], object]  # receives the generated tokens
    stop_token: int | None = None
    stop_sequence: list[int] | None = None


def _finished(request: Request, generated: list[int]) -> bool:
    if request.stop_token is not None and generated[-1] == request.stop_token:
        return True
    stop = request.stop_sequence
    if stop and generated[-len(stop) :] == stop:
        return True
    return len(generated) >= request.max_tokens


def dynamic_batching_decode(model_next: Callable, requests: list[Request], capacity: int) -> None:
    waiting = deque(requests)
    slots: list[tuple[Request, list[int]] | None] = [None] * capacity  # slot id -> (request, generated so far)
    while waiting or any(slots):
        for slot in range(capacity):
            while slots[slot] is None and waiting:
                request = waiting.popleft()
                if request.max_tokens == 0:
                    request.callback([])
                else:
                    slots[slot] = (request, [])
        active = [slot for slot in range(capacity) if slots[slot] is not None]
        next_tokens = model_next([slots[s][0].prompt + slots[s][1] for s in active])
        for slot, token in zip(active, next_tokens):
            request, generated = slots[slot]
            generated.append(token)
            if _finished(request, generated):
                slots[slot] = None
                request.callback(generated)

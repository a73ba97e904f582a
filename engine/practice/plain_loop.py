"""A correct continuous-batching engine of the size a candidate writes in an interview.

About 100 lines in the seeds' API, with nothing of the project's engine: no event log, no
memory, no checks of the model's answers. Every decision costs O(1) a token, whatever
the number of requests, the length of the answers, the number of stop sequences or the
batch size:

- the waiting queue is a `deque` (`popleft`, never `list.pop(0)`);
- free slots are a heap, so the lowest free slot is refilled first;
- a row's tokens are one list, appended to in place and handed to the model without a copy;
- a stop sequence is looked up by the row's tail: one tuple of each distinct length,
  looked up in a dict, instead of comparing the tail with every stop sequence.

`benchmarks/run.py` measures the project's engine against it on 100,000 requests, and the
slow zoo (`slow_zoo.py`) is this engine with one of those decisions undone.
"""

from __future__ import annotations

import heapq
from collections import deque


def stop_index(stop_sequences) -> dict[int, dict[tuple, int]]:
    """For each length, the stop sequences of that length and the position each was listed at."""
    index: dict[int, dict[tuple, int]] = {}
    for i, stop in enumerate(stop_sequences or ()):
        index.setdefault(len(stop), {}).setdefault(tuple(stop), i)
    return index


class Row:
    __slots__ = ("tokens", "prompt_len", "max_tokens", "callback", "stops")

    def __init__(self, prompt_tokens, max_tokens, callback, stop_sequences):
        self.tokens = list(prompt_tokens)
        self.prompt_len = len(self.tokens)
        self.max_tokens, self.callback = max_tokens, callback
        self.stops = stop_index(stop_sequences)

    def finished(self, stop_token) -> bool:
        generated = len(self.tokens) - self.prompt_len
        if self.tokens[-1] == stop_token:
            return True
        for length, stops in self.stops.items():
            if length <= generated and tuple(self.tokens[-length:]) in stops:
                return True
        return generated >= self.max_tokens


class PlainLoopEngine:
    """Each decision is a method of its own, so that a slow zoo engine can replace exactly one."""

    row_type = Row  # what submit_request builds

    def __init__(self, model, batch_size: int, stop_token: int | None):
        self.model = getattr(model, "generate_next_tokens", None) or getattr(model, "next_tokens", model)
        self.batch_size, self.stop_token = batch_size, stop_token
        self.waiting: deque[Row] = deque()
        self.slots: list[Row | None] = [None] * batch_size
        self.free = list(range(batch_size))  # a heap: the lowest free slot first
        self.submitted = 0

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None) -> str:
        self.submitted += 1
        row = self.row_type(prompt_tokens, max_tokens, callback, stop_sequences)
        if max_tokens == 0:
            callback(list(row.tokens))
        else:
            self.enqueue(row)
        return f"r{self.submitted - 1}"

    def run(self) -> None:
        while self.waiting or len(self.free) < self.batch_size:
            self.step()

    def step(self) -> None:
        self.admit()
        running = self.running()
        tokens = self.model(self.batch(running))
        finished = []
        for slot, token in zip(running, tokens):
            row = self.slots[slot]
            row.tokens.append(token)
            if row.finished(self.stop_token):
                self.evict(slot)
                finished.append(row)
        for row in finished:
            row.callback(list(row.tokens))

    def enqueue(self, row: Row) -> None:
        self.waiting.append(row)

    def admit(self) -> None:
        while self.waiting and self.free:
            self.slots[heapq.heappop(self.free)] = self.next_waiting()

    def next_waiting(self) -> Row:
        return self.waiting.popleft()

    def running(self) -> list[int]:
        """The occupied slots, in slot order."""
        return [slot for slot, row in enumerate(self.slots) if row is not None]

    def batch(self, running: list[int]) -> list[list[int]]:
        """The model's input: each running row's tokens, in place, no copy."""
        return [self.slots[slot].tokens for slot in running]

    def evict(self, slot: int) -> None:
        self.slots[slot] = None
        heapq.heappush(self.free, slot)

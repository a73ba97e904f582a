"""`PlainLoopEngine` with each of its decisions a method of its own, so a slow engine can replace one.

The same engine, token for token and callback for callback (a test holds it to that): its
`step` is cut into `admit` (which calls `next_waiting`), `running`, `batch` and `evict`, a
submitted row is built by `row_type` and queued by `enqueue`, and a row's own `finished`
check stays on `Row`. The slow zoo (`slow_zoo.py`) overrides exactly one of these decisions
in each of its engines.
"""

from __future__ import annotations

import heapq

from .plain_loop import PlainLoopEngine, Row


class PlainLoopInParts(PlainLoopEngine):
    row_type = Row  # what submit_request builds

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None) -> str:
        self.submitted += 1
        row = self.row_type(prompt_tokens, max_tokens, callback, stop_sequences)
        if max_tokens == 0:
            callback(list(row.tokens))
        else:
            self.enqueue(row)
        return f"r{self.submitted - 1}"

    def enqueue(self, row: Row) -> None:
        self.waiting.append(row)

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

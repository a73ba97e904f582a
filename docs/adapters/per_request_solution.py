"""An engine whose model is a per-request function: `next_token(tokens) -> int`, one sequence at a time.

The statement it was written for gave a model that answers one sequence, so each step
asks it for every running sequence in turn. Requests stop at `max_new_tokens` or at one
of their stop sequences (there is no end-of-sequence id); `on_finish` receives the
generated tokens. `per_request_adapter.py` checks it. (No import from this project.)
"""

from __future__ import annotations

from collections import deque


class Engine:
    def __init__(self, next_token, num_slots: int):
        self.next_token, self.num_slots = next_token, num_slots
        self.queue = deque()
        self.slots = {}  # slot -> [tokens, prompt length, max_new_tokens, stops, on_finish]

    def add(self, prompt, max_new_tokens, on_finish, stop=()):
        if max_new_tokens == 0:
            on_finish([])
        else:
            self.queue.append([list(prompt), len(prompt), max_new_tokens, [list(s) for s in stop], on_finish])

    def running(self) -> list[list[int]]:
        """The token lists of the running sequences, in slot order."""
        return [self.slots[slot][0] for slot in sorted(self.slots)]

    def step(self) -> None:
        for slot in range(self.num_slots):
            if slot not in self.slots and self.queue:
                self.slots[slot] = self.queue.popleft()
        for slot in sorted(self.slots):
            tokens, prompt_len, max_new_tokens, stops, on_finish = self.slots[slot]
            tokens.append(self.next_token(tokens))
            generated = tokens[prompt_len:]
            if len(generated) >= max_new_tokens or any(generated[-len(s) :] == s for s in stops):
                del self.slots[slot]
                on_finish(generated)

    def run(self) -> None:
        while self.queue or self.slots:
            self.step()

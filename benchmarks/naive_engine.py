"""A deliberately straightforward engine, kept only to show what each design choice gains.

Events are a list of dicts, stop matching compares a tail slice with every stop sequence
after each token, and the batch is rebuilt by copying every prefix each step. Correct,
and about what one writes first in an interview.
"""

from __future__ import annotations

from collections import deque


class NaiveEngine:
    def __init__(self, model, batch_size: int, stop_token: int | None):
        self.model, self.batch_size, self.stop_token = model, batch_size, stop_token
        self.waiting: deque = deque()
        self.slots: dict[int, dict] = {}
        self.events: list[dict] = []
        self.step_number = 0

    def submit_request(self, prompt_tokens, max_tokens, callback=None, stop_sequences=None):
        self.waiting.append(
            {
                "tokens": list(prompt_tokens),
                "prompt_len": len(prompt_tokens),
                "max_tokens": max_tokens,
                "callback": callback,
                "stops": stop_sequences or [],
            }
        )

    def run(self) -> None:
        while self.waiting or self.slots:
            for slot in range(self.batch_size):
                if slot not in self.slots and self.waiting:
                    self.slots[slot] = self.waiting.popleft()
                    self.events.append({"step": self.step_number, "kind": "admit", "slot": slot})
            order = sorted(self.slots)
            batch = [list(self.slots[s]["tokens"]) for s in order]  # a copy of every prefix
            answers = self.model(batch)
            self.events.append({"step": self.step_number, "kind": "model_call", "rows": len(batch)})
            for slot, token in zip(order, answers):
                state = self.slots[slot]
                state["tokens"].append(token)
                generated = state["tokens"][state["prompt_len"] :]
                self.events.append(
                    {
                        "step": self.step_number,
                        "kind": "emit",
                        "slot": slot,
                        "token": token,
                        "position": len(generated) - 1,
                    }
                )
                done = token == self.stop_token or len(generated) >= state["max_tokens"]
                for stop in state["stops"]:
                    if generated[-len(stop) :] == stop:
                        done = True
                if done:
                    del self.slots[slot]
                    self.events.append({"step": self.step_number, "kind": "evict", "slot": slot})
                    if state["callback"]:
                        state["callback"](state["tokens"])
            self.step_number += 1

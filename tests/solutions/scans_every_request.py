"""Correct but slow: keeps every request it was given in one list and scans all of them each step."""

import heapq

from engine.practice.plain_loop import PlainLoopEngine
from engine.practice.plain_loop import Row as PlainRow


class Row(PlainRow):
    __slots__ = ("state",)


class ScansEveryRequest(PlainLoopEngine):
    def __init__(self, model, batch_size, stop_token):
        super().__init__(model, batch_size, stop_token)
        self.requests = []

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        row = Row(prompt_tokens, max_tokens, callback, stop_sequences)
        row.state = "waiting"
        if max_tokens == 0:
            callback(list(row.tokens))
            return
        self.requests.append(row)

    def run(self):
        while any(r.state != "done" for r in self.requests):
            self.step()

    def step(self):
        for request in self.requests:
            if request.state == "waiting" and self.free:
                self.slots[heapq.heappop(self.free)] = request
                request.state = "running"
        running = [slot for slot, row in enumerate(self.slots) if row is not None]
        tokens = self.model([self.slots[slot].tokens for slot in running])
        finished = []
        for slot, token in zip(running, tokens):
            row = self.slots[slot]
            row.tokens.append(token)
            if row.finished(self.stop_token):
                self.slots[slot] = None
                heapq.heappush(self.free, slot)
                row.state = "done"
                finished.append(row)
        for row in finished:
            row.callback(list(row.tokens))

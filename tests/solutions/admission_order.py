"""Rows kept in admission order, with a count of generated tokens kept per slot and never reset.

Sending rows in admission order rather than slot order is harmless in a ragged batch. The
real mistake is the per-slot counter: a request that takes a freed slot starts counting from
where the slot's previous request stopped, so it ends early.
"""

from collections import deque


class BatchInferenceEngine:
    def __init__(self, model, batch_size, stop_token):
        self.model, self.batch_size, self.stop_token = model, batch_size, stop_token
        self.waiting = deque()
        self.active = []  # [slot, tokens, max_tokens, stops, callback], in admission order
        self.generated = [0] * batch_size  # slot id -> tokens generated in it

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        stops = [list(s) for s in stop_sequences or []]
        self.waiting.append({"prompt": list(prompt_tokens), "max_tokens": max_tokens, "stops": stops, "done": callback})

    def _admit(self):
        taken = {row[0] for row in self.active}
        for slot in range(self.batch_size):
            while slot not in taken and self.waiting:
                request = self.waiting.popleft()
                if request["max_tokens"] == 0:
                    request["done"](request["prompt"])
                    continue
                prompt = request["prompt"]
                self.active.append(
                    [slot, prompt, len(prompt), request["max_tokens"], request["stops"], request["done"]]
                )
                taken.add(slot)

    def run(self):
        while self.waiting or self.active:
            self._admit()
            tokens = self.model.generate_next_tokens([row[1] for row in self.active])
            still = []
            for row, token in zip(self.active, tokens):
                slot, sequence, prompt_len, max_tokens, stops, callback = row
                sequence.append(token)
                self.generated[slot] += 1
                output = sequence[prompt_len:]
                matched = any(output[-len(s) :] == s for s in stops if len(output) >= len(s))
                if token == self.stop_token or matched or self.generated[slot] >= max_tokens:
                    callback(sequence)
                else:
                    still.append(row)
            self.active = still

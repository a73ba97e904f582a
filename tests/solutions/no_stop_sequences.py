"""A correct solution without stop sequences: the checker skips those cases and says so."""

from collections import deque


class Engine:
    def __init__(self, model, batch_size, stop_token):
        self.model, self.batch_size, self.stop_token = model, batch_size, stop_token
        self.waiting, self.slots = deque(), {}

    def submit_request(self, prompt_tokens, max_tokens, callback):
        if max_tokens == 0:
            callback(list(prompt_tokens))
        else:
            self.waiting.append([list(prompt_tokens), len(prompt_tokens), max_tokens, callback])

    def run(self):
        while self.waiting or self.slots:
            for slot in range(self.batch_size):
                if slot not in self.slots and self.waiting:
                    self.slots[slot] = self.waiting.popleft()
            order = sorted(self.slots)
            for slot, token in zip(order, self.model.next_tokens([self.slots[s][0] for s in order])):
                tokens, prompt_len, budget, callback = self.slots[slot]
                tokens.append(token)
                if token == self.stop_token or len(tokens) - prompt_len >= budget:
                    del self.slots[slot]
                    callback(tokens)

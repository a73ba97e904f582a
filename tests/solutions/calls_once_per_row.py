"""A solution that calls the model once per row: each slot asks for its own next token.

Its outputs are right, but a step costs as many model calls as there are rows, which is
what batching is meant to avoid (no import from this project).
"""

from collections import deque


class BatchInferenceEngine:
    def __init__(self, model, batch_size, stop_token):
        self.model, self.batch_size, self.stop_token = model, batch_size, stop_token
        self.waiting = deque()
        self.running = {}  # slot id -> [tokens, prompt length, max_tokens, callback, stops]

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        if max_tokens == 0:
            callback(list(prompt_tokens))
            return
        stops = [list(s) for s in stop_sequences or []]
        self.waiting.append([list(prompt_tokens), len(prompt_tokens), max_tokens, callback, stops])

    def _finished(self, tokens, prompt_len, max_tokens, stops):
        generated = tokens[prompt_len:]
        if generated[-1] == self.stop_token:
            return True
        if any(len(generated) >= len(s) and generated[-len(s) :] == s for s in stops):
            return True
        return len(generated) >= max_tokens

    def run(self):
        while self.waiting or self.running:
            for slot in range(self.batch_size):
                if slot not in self.running and self.waiting:
                    self.running[slot] = self.waiting.popleft()
            for slot in sorted(self.running):
                tokens, prompt_len, max_tokens, callback, stops = self.running[slot]
                tokens.append(self.model.generate_next_tokens([tokens])[0])
                if self._finished(tokens, prompt_len, max_tokens, stops):
                    del self.running[slot]
                    callback(tokens)

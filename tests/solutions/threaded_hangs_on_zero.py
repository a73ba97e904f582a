"""A threaded engine: a decode thread serves the batch, run() waits for every request's event.

Its budget check runs after a token is appended and asks `generated == max_tokens`, which
never holds for max_tokens = 0: that row is decoded until the model refuses to go on, the
decode thread dies of the error, and run() waits for an event nobody will set.
"""

import threading
from collections import deque


class BatchInferenceEngine:
    def __init__(self, model, batch_size, stop_token):
        self.model, self.batch_size, self.stop_token = model, batch_size, stop_token
        self.waiting = deque()
        self.lock = threading.Lock()
        self.events = []

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        done = threading.Event()
        self.events.append(done)
        request = [list(prompt_tokens), len(prompt_tokens), max_tokens, [list(s) for s in stop_sequences or []]]
        self.waiting.append((request, callback, done))

    def _finished(self, request):
        tokens, prompt_len, max_tokens, stops = request
        generated = tokens[prompt_len:]
        if generated[-1] == self.stop_token or len(generated) == max_tokens:
            return True
        return any(generated[-len(s) :] == s for s in stops if len(generated) >= len(s))

    def _decode(self):
        slots = {}
        while True:
            with self.lock:
                for slot in range(self.batch_size):
                    if slot not in slots and self.waiting:
                        slots[slot] = self.waiting.popleft()
            if not slots:
                return
            order = sorted(slots)
            tokens = self.model.generate_next_tokens([slots[s][0][0] for s in order])
            for slot, token in zip(order, tokens):
                request, callback, done = slots[slot]
                request[0].append(token)
                if self._finished(request):
                    del slots[slot]
                    callback(request[0])
                    done.set()

    def run(self):
        threading.Thread(target=self._decode, daemon=True).start()
        for done in self.events:
            done.wait()

"""One token buffer per slot, reused on refill (clear() + extend()), and handed itself to the callback.

What each callback sees when it fires is right, so an engine like this passes a checker that
copies the tokens at callback time; a caller that keeps its list finds the next request's
tokens in it once the slot is refilled.
"""

from collections import deque


class BatchInferenceEngine:
    def __init__(self, model, batch_size, stop_token):
        self.model, self.batch_size, self.stop_token = model, batch_size, stop_token
        self.buffers = [[] for _ in range(batch_size)]  # slot id -> its token buffer, for the engine's whole life
        self.running = {}  # slot id -> [prompt length, max_tokens, stop sequences, callback]
        self.waiting = deque()

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        if max_tokens == 0:
            callback(list(prompt_tokens))
        else:
            self.waiting.append((list(prompt_tokens), max_tokens, [list(s) for s in stop_sequences or []], callback))

    def _admit(self):
        for slot in range(self.batch_size):
            if slot not in self.running and self.waiting:
                prompt, max_tokens, stops, callback = self.waiting.popleft()
                buffer = self.buffers[slot]
                buffer.clear()
                buffer.extend(prompt)
                self.running[slot] = [len(prompt), max_tokens, stops, callback]

    def _done(self, slot, token):
        prompt_len, max_tokens, stops, _ = self.running[slot]
        generated = self.buffers[slot][prompt_len:]
        if token == self.stop_token or len(generated) >= max_tokens:
            return True
        return any(generated[-len(s) :] == s for s in stops if len(generated) >= len(s))

    def run(self):
        while self.waiting or self.running:
            self._admit()
            slots = sorted(self.running)
            for slot, token in zip(slots, self.model.generate_next_tokens([self.buffers[s] for s in slots])):
                self.buffers[slot].append(token)
                if self._done(slot, token):
                    callback = self.running.pop(slot)[3]
                    callback(self.buffers[slot])

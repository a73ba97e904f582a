"""A correct outside solution in the seeds' style (no import from this project)."""

from collections import deque


class BatchInferenceEngine:
    def __init__(self, model, batch_size, stop_token):
        self.model = model
        self.batch_size = batch_size
        self.stop_token = stop_token
        self.waiting = deque()
        self.running = {}  # slot id -> sequence state

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        state = {
            "tokens": list(prompt_tokens),
            "prompt_len": len(prompt_tokens),
            "max_tokens": max_tokens,
            "callback": callback,
            "stops": [list(s) for s in stop_sequences or []],
        }
        if max_tokens == 0:
            callback(list(prompt_tokens))
        else:
            self.waiting.append(state)

    def _finished(self, state, token):
        generated = state["tokens"][state["prompt_len"] :]
        if token == self.stop_token:
            return True
        if any(len(generated) >= len(s) and generated[-len(s) :] == s for s in state["stops"]):
            return True
        return len(generated) >= state["max_tokens"]

    def run(self):
        while self.waiting or self.running:
            for slot in range(self.batch_size):
                if slot not in self.running and self.waiting:
                    self.running[slot] = self.waiting.popleft()
            slots = sorted(self.running)
            next_tokens = self.model.generate_next_tokens([self.running[s]["tokens"] for s in slots])
            for slot, token in zip(slots, next_tokens):
                state = self.running[slot]
                state["tokens"].append(token)
                if self._finished(state, token):
                    del self.running[slot]
                    state["callback"](state["tokens"])

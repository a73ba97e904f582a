"""Continuous batching, as exported from a numbered notebook (`01_batching.ipynb`): a file name no import can name.

`ContinuousBatcher(model, max_batch, eos_id)` takes `add_request(prompt, max_new_tokens,
on_complete, stop=None)` and serves everything in `run_all()`; `on_complete` receives
prompt + generated tokens. `digit_name_adapter.py` checks it, loading it by its path.
(No import from this project.)
"""

from collections import deque


class ContinuousBatcher:
    def __init__(self, model, max_batch, eos_id):
        self.model, self.max_batch, self.eos_id = model, max_batch, eos_id
        self.pending = deque()
        self.active = [None] * max_batch  # slot -> [tokens, prompt length, max_new_tokens, stop, on_complete]

    def add_request(self, prompt, max_new_tokens, on_complete, stop=None):
        if max_new_tokens == 0:
            on_complete(list(prompt))
        else:
            self.pending.append([list(prompt), len(prompt), max_new_tokens, [list(s) for s in stop or []], on_complete])

    def _finished(self, tokens, prompt_len, max_new_tokens, stop):
        new = tokens[prompt_len:]
        if new[-1] == self.eos_id or any(len(new) >= len(s) and new[-len(s) :] == s for s in stop):
            return True
        return len(new) >= max_new_tokens

    def run_all(self):
        while self.pending or any(self.active):
            for slot in range(self.max_batch):
                if self.active[slot] is None and self.pending:
                    self.active[slot] = self.pending.popleft()
            slots = [slot for slot in range(self.max_batch) if self.active[slot] is not None]
            for slot, token in zip(slots, self.model.generate_next_tokens([self.active[s][0] for s in slots])):
                row = self.active[slot]
                row[0].append(token)
                if self._finished(*row[:4]):
                    self.active[slot] = None
                    row[4](row[0])

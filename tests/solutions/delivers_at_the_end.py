"""An asyncio engine that collects finished results and calls every callback after its last model call.

Each result is right; but a request that finishes at the first step waits for the slowest
one before anyone hears of it, where the seeds say a finished row delivers its result and
frees its slot.
"""

import asyncio
from collections import deque


class BatchInferenceEngine:
    def __init__(self, model, batch_size, stop_token):
        self.model, self.batch_size, self.stop_token = model, batch_size, stop_token
        self.waiting = deque()
        self.finished = []  # (callback, tokens), delivered when the loop is over

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        self.waiting.append(
            {
                "tokens": list(prompt_tokens),
                "prompt_len": len(prompt_tokens),
                "max_tokens": max_tokens,
                "stops": [list(s) for s in stop_sequences or []],
                "callback": callback,
            }
        )

    def _finished(self, row):
        generated = row["tokens"][row["prompt_len"] :]
        if len(generated) >= row["max_tokens"]:
            return True
        if generated and generated[-1] == self.stop_token:
            return True
        return any(generated[-len(s) :] == s for s in row["stops"] if len(generated) >= len(s))

    async def _decode(self):
        slots = {}
        while self.waiting or slots:
            for slot in range(self.batch_size):
                while slot not in slots and self.waiting:
                    row = self.waiting.popleft()
                    if self._finished(row):  # max_tokens = 0
                        self.finished.append((row["callback"], row["tokens"]))
                    else:
                        slots[slot] = row
            if not slots:
                continue
            order = sorted(slots)
            tokens = await asyncio.to_thread(self.model.generate_next_tokens, [slots[s]["tokens"] for s in order])
            for slot, token in zip(order, tokens):
                slots[slot]["tokens"].append(token)
                if self._finished(slots[slot]):
                    row = slots.pop(slot)
                    self.finished.append((row["callback"], row["tokens"]))

    def run(self):
        asyncio.run(self._decode())
        for callback, tokens in self.finished:
            callback(tokens)
        self.finished.clear()

"""A threaded engine that gives up waiting on a request it hangs on, and leaves its thread running.

One decoder may hold the device at a time (a module-level lock, as a GPU would impose),
so a second engine in the same process cannot start while the first one's decode thread
lives. Its budget check asks `generated == max_tokens` after a token is appended, which
never holds for max_tokens = 0: the decode thread retries that row for ever, holding the
device, while run() gives up on each request after `PATIENCE` seconds and returns. Every
later engine in that process then fails in `__init__`.
"""

import threading
import time
from collections import deque

PATIENCE = 0.3  # seconds run() waits for one request
_DEVICE = threading.Lock()  # one decoder on the device at a time


class BatchInferenceEngine:
    def __init__(self, model, batch_size, stop_token):
        if not _DEVICE.acquire(timeout=PATIENCE):
            raise RuntimeError("can't start new thread: another decoder holds the device")
        self.model, self.batch_size, self.stop_token = model, batch_size, stop_token
        self.waiting = deque()
        self.events = []

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        done = threading.Event()
        self.events.append(done)
        stops = [list(s) for s in stop_sequences or []]
        self.waiting.append(([*prompt_tokens], len(prompt_tokens), max_tokens, stops, callback, done))

    def _finished(self, tokens, prompt_len, max_tokens, stops):
        generated = tokens[prompt_len:]
        if generated[-1] == self.stop_token or len(generated) == max_tokens:
            return True
        return any(generated[-len(s) :] == s for s in stops if len(generated) >= len(s))

    def _decode(self):
        slots = {}
        try:
            while self.waiting or slots:
                for slot in range(self.batch_size):
                    if slot not in slots and self.waiting:
                        slots[slot] = self.waiting.popleft()
                order = sorted(slots)
                try:
                    tokens = self.model.generate_next_tokens([slots[s][0] for s in order])
                except Exception:  # the model refused: wait a little and retry
                    time.sleep(0.01)
                    continue
                for slot, token in zip(order, tokens):
                    request = slots[slot]
                    request[0].append(token)
                    if self._finished(*request[:4]):
                        del slots[slot]
                        request[4](request[0])
                        request[5].set()
        finally:
            _DEVICE.release()

    def run(self):
        threading.Thread(target=self._decode, daemon=True).start()
        for done in self.events:
            done.wait(PATIENCE)

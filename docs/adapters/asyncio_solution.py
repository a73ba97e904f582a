"""An asyncio engine: a background task serves the batch, each request is a future.

`submit(prompt, max_tokens, stops)` returns an `asyncio.Future` of the generated tokens;
`serve()`, run as a background task, makes one model call a step on every running
sequence, resolves the futures of the ones that finished, and yields to the event loop
after each step (so whoever awaits a result hears of it before the next step), until
`close()` is called and nothing is left. `asyncio_adapter.py` checks it. (No import from
this project.)
"""

from __future__ import annotations

import asyncio
from collections import deque


class AsyncEngine:
    def __init__(self, model, max_batch: int, eos: int | None = None):
        self.model, self.max_batch, self.eos = model, max_batch, eos
        self.queue: deque = deque()
        self.running: list = []  # [tokens, prompt length, max_tokens, stops, future]
        self.wakeup = asyncio.Event()
        self.closing = False

    def submit(self, prompt, max_tokens, stops=()) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        if max_tokens == 0:
            future.set_result([])
        else:
            self.queue.append([list(prompt), len(prompt), max_tokens, [list(s) for s in stops], future])
            self.wakeup.set()
        return future

    def close(self) -> None:
        self.closing = True
        self.wakeup.set()

    def _done(self, seq) -> bool:
        tokens, prompt_len, max_tokens, stops, _ = seq
        out = tokens[prompt_len:]
        if out[-1] == self.eos or any(len(out) >= len(s) and out[-len(s) :] == s for s in stops):
            return True
        return len(out) >= max_tokens

    async def serve(self) -> None:
        while True:
            while len(self.running) < self.max_batch and self.queue:
                self.running.append(self.queue.popleft())
            if not self.running:
                if self.closing:
                    return
                self.wakeup.clear()
                await self.wakeup.wait()
                continue
            for seq, token in zip(self.running, self.model([seq[0] for seq in self.running])):
                seq[0].append(token)
            finished = [seq for seq in self.running if self._done(seq)]
            self.running = [seq for seq in self.running if seq not in finished]
            for tokens, prompt_len, *_, future in finished:
                future.set_result(tokens[prompt_len:])
            await asyncio.sleep(0)  # let those awaiting the results run before the next step

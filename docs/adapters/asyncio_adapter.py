"""Check an asyncio engine (`asyncio_solution.py`) with the checker:

    python -m engine check docs/adapters/asyncio_adapter.py --class AsyncioAdapter

The checker's `run()` is a plain call, so the adapter runs an event loop of its own for
it: it starts the solution's background task, submits every request, and hangs each
callback on its future (`add_done_callback`, which runs as soon as the step that resolved
it yields, before the next model call), then waits until every future is resolved and
the background task has ended. If the background task dies (a model that raises), run()
raises its error instead of waiting for ever.
"""

from __future__ import annotations

import asyncio

from asyncio_solution import AsyncEngine

from engine.practice.checker.adapting import with_prompt


class AsyncioAdapter:
    engine_type = AsyncEngine  # the solution's engine

    def __init__(self, model, batch_size, stop_token):
        self.model, self.batch_size, self.stop_token = model.generate_next_tokens, batch_size, stop_token
        self.requests = []  # (prompt, max_tokens, stop sequences, the checker's callback)

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        self.requests.append((list(prompt_tokens), max_tokens, [list(s) for s in stop_sequences or []], callback))

    def run(self):
        requests, self.requests = self.requests, []
        asyncio.run(self._serve(requests))

    async def _serve(self, requests):
        engine = self.engine_type(self.model, self.batch_size, self.stop_token)
        server = asyncio.create_task(engine.serve())
        futures = []
        for prompt, max_tokens, stops, callback in requests:
            future = engine.submit(prompt, max_tokens, stops)
            future.add_done_callback(lambda f, p=prompt, c=callback: c(with_prompt(p, f.result())))
            futures.append(future)
        engine.close()  # serve() ends once every request is done
        await server  # raises what killed the background task
        await asyncio.gather(*futures)

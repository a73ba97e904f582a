"""Check an engine with a per-request model function (`per_request_solution.py`) with the checker:

    python -m engine check docs/adapters/per_request_adapter.py --class PerRequestAdapter

The solution asks `next_token(tokens)` for one sequence at a time. Handing it
`lambda tokens: model([tokens])[0]` would make one model call per row, which the checker
reports as the fault it is; the solution's steps do batch, though, so the adapter hands
it `row_by_row(model, engine.running)`: the first row asked for in a step makes the step's
one batched call on the rows the engine holds, and each row then gets its own answer. The
solution has no end-of-sequence id, so the adapter declines a stop token (`Unsupported`):
the checker runs the cases that do not need one without it, and skips the others.
"""

from __future__ import annotations

from per_request_solution import Engine

from engine.practice.checker.adapting import Unsupported, row_by_row, with_prompt


class PerRequestAdapter:
    engine_type = Engine  # the solution's engine

    def __init__(self, model, batch_size, stop_token):
        if stop_token is not None:
            raise Unsupported("a stop token (the engine has no end-of-sequence id)")
        self.engine = self.engine_type(None, batch_size)
        self.engine.next_token = row_by_row(model.generate_next_tokens, self.engine.running)

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        prompt = list(prompt_tokens)
        on_finish = lambda generated: callback(with_prompt(prompt, generated))  # noqa: E731
        self.engine.add(prompt, max_tokens, on_finish, [list(s) for s in stop_sequences or []])

    def run(self):
        self.engine.run()

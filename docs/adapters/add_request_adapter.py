"""Check an `add_request(Request)` engine (`add_request_solution.py`) with the checker:

    python -m engine check docs/adapters/add_request_adapter.py --class AddRequestAdapter

The engine has no callbacks: `step()` returns the requests it finished. The adapter calls
each one's callback right after the step that finished it, before the next model call,
so an engine whose `step()` reports a request late is still caught; it hands the checker
`with_prompt(prompt, completion)`, a live view of the engine's own list. The engine
refuses `max_new_tokens < 1` by design, so the adapter declares `max_tokens = 0`
`Unsupported` and the checker skips those cases, saying why.
"""

from __future__ import annotations

from add_request_solution import LLMEngine, Request

from engine.practice.checker.adapting import Unsupported, with_prompt


class AddRequestAdapter:
    engine_type = LLMEngine  # the solution's engine
    request_type = Request  # the solution's request record

    def __init__(self, model, batch_size, stop_token):
        self.engine = self.engine_type(model, max_num_seqs=batch_size, eos_token_id=stop_token)
        self.callbacks = {}  # request id -> (prompt, the checker's callback)

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        if max_tokens == 0:
            raise Unsupported("max_tokens = 0 (add_request refuses max_new_tokens < 1)")
        request_id = f"r{len(self.callbacks)}"
        prompt = list(prompt_tokens)
        self.callbacks[request_id] = (prompt, callback)
        stops = [list(s) for s in stop_sequences or []]
        self.engine.add_request(self.request_type(request_id, prompt, max_tokens, stops))

    def run(self):
        while self.engine.has_unfinished():
            for request_id, completion in self.engine.step():
                prompt, callback = self.callbacks[request_id]
                callback(with_prompt(prompt, completion))

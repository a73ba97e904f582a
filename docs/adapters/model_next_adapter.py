"""Check the seeds' third statement's solution (`model_next_solution.py`) with the checker:

    python -m engine check docs/adapters/model_next_adapter.py --class ModelNextAdapter

The checker drives a class of the seeds' shape; this one turns each call into what the
solution takes. Its model is `model_next`; each request gets the case's stop token or its
one stop sequence; its callback gets the generated tokens, so the adapter hands the
checker `with_prompt(prompt, generated)`, a live view of the solution's own list (a copy
would hide a solution that reuses that list). A request with two stop sequences, or with
both a stop token and a stop sequence, cannot be expressed: `Unsupported` says so, and the
checker skips that case instead of failing it.
"""

from __future__ import annotations

from model_next_solution import Request, dynamic_batching_decode

from engine.practice.checker.adapting import Unsupported, with_prompt


class ModelNextAdapter:
    decode = staticmethod(dynamic_batching_decode)  # the solution's entry point
    request_type = Request  # the solution's request record

    def __init__(self, model, batch_size, stop_token):
        self.model_next = model.generate_next_tokens
        self.batch_size, self.stop_token = batch_size, stop_token
        self.requests = []

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        stops = list(stop_sequences or [])
        if len(stops) > 1:
            raise Unsupported("several stop sequences for one request")
        if stops and self.stop_token is not None:
            raise Unsupported("a stop token and a stop sequence for one request")
        prompt = list(prompt_tokens)
        self.requests.append(
            self.request_type(
                request_id=f"r{len(self.requests)}",
                prompt=prompt,
                max_tokens=max_tokens,
                callback=lambda generated: callback(with_prompt(prompt, generated)),
                stop_token=None if stops else self.stop_token,
                stop_sequence=list(stops[0]) if stops else None,
            )
        )

    def run(self):
        requests, self.requests = self.requests, []
        self.decode(self.model_next, requests, self.batch_size)

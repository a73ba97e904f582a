"""The second seed's functional form: `generate(model, requests, num_slots, stop_token)`."""

from __future__ import annotations

from .engine import BatchInferenceEngine
from .request import Request


def generate(model, requests: list[Request], num_slots: int, stop_token: int | None) -> dict[str, list[int]]:
    """Serve `requests` with continuous batching; return each one's generated tokens only.

    Requests are admitted in list order. The stop token, when generated, is included.
    """
    engine = BatchInferenceEngine(model, num_slots, stop_token)
    results: dict[str, list[int]] = {}

    def keep_generated(request: Request):
        return lambda tokens: results.__setitem__(request.request_id, tokens[len(request.prompt) :])

    for i, request in enumerate(requests):
        if not isinstance(request, Request):
            raise TypeError(f"requests[{i}]: must be a Request, got {type(request).__name__}")
        rid = request.request_id
        engine.submit_request(request.prompt, request.max_tokens, keep_generated(request), request_id=rid)
    engine.run()
    return results

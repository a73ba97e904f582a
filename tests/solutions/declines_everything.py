"""An adapter that can run nothing: it declines every case in `__init__` (its solution did not load right)."""

from engine.practice.checker.adapting import Unsupported


class Adapter:
    def __init__(self, model, batch_size, stop_token):
        raise Unsupported("the solution's engine could not be built")

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        raise AssertionError("never reached")

    def run(self):
        raise AssertionError("never reached")

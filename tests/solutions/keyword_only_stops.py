"""Correct, with stop_sequences keyword-only: the checker must pass it by name."""

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    def submit_request(self, prompt_tokens, max_tokens, callback, *, stop_sequences=None):
        super().submit_request(prompt_tokens, max_tokens, callback, stop_sequences)

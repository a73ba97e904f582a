"""Correct, except that it refuses max_tokens = 0 (the seeds leave it open): the checker says so plainly."""

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        super().submit_request(prompt_tokens, max_tokens, callback, stop_sequences)

"""Correct, taking stop sequences through **options: the checker must pass `stop_sequences=` by name."""

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    def submit_request(self, prompt_tokens, max_tokens, callback, **options):
        super().submit_request(prompt_tokens, max_tokens, callback, options.get("stop_sequences"))

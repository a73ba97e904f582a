"""Correct, except that with 4 slots the fifth request's callback is never called."""

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    def __init__(self, model, batch_size, stop_token):
        super().__init__(model, batch_size, stop_token)
        self.submitted = 0

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        self.submitted += 1
        if self.batch_size == 4 and self.submitted == 5:
            callback = lambda tokens: None  # noqa: E731
        super().submit_request(prompt_tokens, max_tokens, callback, stop_sequences)

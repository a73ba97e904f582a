"""Correct, with a `cancel(request_id)` that drops the request without calling its callback."""

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        super().submit_request(prompt_tokens, max_tokens, callback, stop_sequences)
        return self.waiting[-1]["callback"] if self.waiting else None  # the callback is its id

    def cancel(self, request_id):
        for state in list(self.waiting):
            if state["callback"] is request_id:
                self.waiting.remove(state)
        for slot, state in list(self.running.items()):
            if state["callback"] is request_id:
                del self.running[slot]

"""A solution that takes its whole process down."""

import os


class BatchInferenceEngine:
    def __init__(self, model, batch_size, stop_token):
        pass

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        pass

    def run(self):
        os._exit(3)

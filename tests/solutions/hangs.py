"""A solution whose run() never returns."""


class BatchInferenceEngine:
    def __init__(self, model, batch_size, stop_token):
        self.requests = []

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        self.requests.append(callback)

    def run(self):
        while True:
            pass

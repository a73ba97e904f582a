"""A class whose constructor does not take the seeds' arguments."""


class BatchInferenceEngine:
    def __init__(self, model):
        self.model = model

    def submit_request(self, prompt_tokens, max_tokens, callback):
        pass

    def run(self):
        pass

"""Calls the model forever, with three copies of every row: the trace stops at MAX_CALLS calls."""


class BatchInferenceEngine:
    def __init__(self, model, batch_size, stop_token):
        self.model, self.rows = model, []

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        self.rows.append(list(prompt_tokens))

    def run(self):
        while True:
            for row, token in zip(self.rows, self.model.generate_next_tokens(self.rows * 3)):
                row.append(token)

"""A correct solution that keeps rows as numpy arrays and gets numpy integers back."""

import numpy as np

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    def run(self):
        model = self.model

        class NumpyModel:
            def generate_next_tokens(self, batch):
                return np.array(model.generate_next_tokens([np.array(row, dtype=np.int64) for row in batch]))

        self.model = NumpyModel()
        super().run()
